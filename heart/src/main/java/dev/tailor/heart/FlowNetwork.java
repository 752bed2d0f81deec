package dev.tailor.heart;

import java.util.Arrays;
import java.util.Map;
import org.jgrapht.Graph;
import org.jgrapht.alg.flow.PushRelabelMFImpl;
import org.jgrapht.alg.flow.mincost.CapacityScalingMinimumCostFlow;
import org.jgrapht.alg.flow.mincost.MinimumCostFlowProblem;
import org.jgrapht.alg.interfaces.MaximumFlowAlgorithm;
import org.jgrapht.alg.interfaces.MinimumCostFlowAlgorithm;
import org.jgrapht.graph.DefaultWeightedEdge;
import org.jgrapht.graph.DirectedWeightedPseudograph;

/**
 * A directed network on vertices {@code 0..n-1} with integer supplies (positive = supply, negative
 * = demand) and arcs with integer bounds and a whole-number cost, solved with JGraphT: min-cost flow
 * by capacity scaling, max-flow by push-relabel. Parallel arcs and negative costs are allowed; this
 * is what the DIMACS {@code .min} instances in the tests exercise.
 *
 * <p>Not thread-safe. Arcs are never removed; build a new network instead.
 */
/*
 * Maintainer note. JGraphT's min-cost flow takes integer supplies and capacities (Function<V,
 * Integer>), double costs; its max-flow takes double capacities as edge weights. We keep our arcs in
 * flat arrays and build the JGraphT graph once per query with our own edge objects that carry the
 * arc index, so mapping flows back costs no hash lookups. JGraphT's CapacityScalingMinimumCostFlow
 * rejects unbalanced supplies with IllegalArgumentException; we check balance ourselves first so
 * the message names the sums. Careful: both algorithms read the graph's edge weights, the min-cost
 * flow as costs (it ignores MinimumCostFlowProblem's cost function in 1.5.3), the max-flow as
 * capacities, so each query builds its graph with the weights it needs.
 *
 * Whole-number costs only. JGraphT's capacity scaling (1.5.3; its master branch too) compares
 * reduced costs, cost + potential(head) − potential(tail), against 0, and potentials are sums of
 * costs. With fractional costs rounding leaves about ±1e-17 where exact arithmetic gives 0
 * (0.1 + 0.2 − 0.3 != 0), and the algorithm then (a) "saturates" an arc of capacity CAP_INF whose
 * reduced cost looks negative, booking 1e9 phantom units that the flow map reports, or (b) does the
 * same to its own artificial arcs and declares a feasible problem infeasible. Delays of 0.1, 0.2,
 * 0.3 or 2.3 ms did both on ordinary NTAM edges (found by HeartPropertiesTest). With whole-number
 * costs every potential is an exact integer (far below 2^53), so no rounding can occur; addArc
 * rejects any other cost, and TransportNetwork passes delays in whole microseconds. |cost| must also
 * stay below JGraphT's COST_INF (1e9), the cost of its artificial arcs.
 */
final class FlowNetwork {

    /**
     * JGraphT's "infinite" capacity. With fractional costs it is where phantom flow lands (see the
     * note above); NTAM's links use the total supply instead, which never binds either.
     */
    static final int UNBOUNDED = CapacityScalingMinimumCostFlow.CAP_INF;

    /** Costs must stay below this in magnitude: JGraphT's cost of "no way through". */
    static final double MAX_COST = CapacityScalingMinimumCostFlow.COST_INF;

    private final int vertices;
    private final int[] supply;
    private int arcs;
    private int[] from = new int[16];
    private int[] to = new int[16];
    private int[] lower = new int[16];
    private int[] upper = new int[16];
    private double[] cost = new double[16];

    FlowNetwork(int vertices) {
        if (vertices < 1) {
            throw new IllegalArgumentException("vertices : " + vertices + " (expected: >= 1)");
        }
        this.vertices = vertices;
        this.supply = new int[vertices];
    }

    int vertices() {
        return vertices;
    }

    int arcs() {
        return arcs;
    }

    /** Sets the supply of {@code vertex} in units: positive supplies, negative demands. */
    void setSupply(int vertex, int units) {
        checkVertex("vertex", vertex);
        supply[vertex] = units;
    }

    /** Adds an arc with flow bounds [lower, upper] and a cost per unit; returns its index. */
    int addArc(int tail, int head, int lowerUnits, int upperUnits, double costPerUnit) {
        checkVertex("tail", tail);
        checkVertex("head", head);
        if (lowerUnits < 0 || upperUnits < lowerUnits) {
            throw new IllegalArgumentException("bounds : [" + lowerUnits + ", " + upperUnits
                    + "] (expected: 0 <= lower <= upper)");
        }
        if (costPerUnit != Math.rint(costPerUnit) || Math.abs(costPerUnit) >= MAX_COST) {
            throw new IllegalArgumentException("cost : " + costPerUnit + " (expected: a whole number, |cost| < "
                    + MAX_COST + "; JGraphT's min-cost flow mis-solves fractional costs)");
        }
        if (arcs == from.length) {
            int n = arcs * 2;
            from = Arrays.copyOf(from, n);
            to = Arrays.copyOf(to, n);
            lower = Arrays.copyOf(lower, n);
            upper = Arrays.copyOf(upper, n);
            cost = Arrays.copyOf(cost, n);
        }
        from[arcs] = tail;
        to[arcs] = head;
        lower[arcs] = lowerUnits;
        upper[arcs] = upperUnits;
        cost[arcs] = costPerUnit;
        return arcs++;
    }

    /** An arc of the JGraphT graph that knows its index here. */
    private static final class Arc extends DefaultWeightedEdge {
        private static final long serialVersionUID = 1L;
        final int index;

        Arc(int index) {
            this.index = index;
        }
    }

    /** Result of a min-cost flow: the flow on each arc (by index) and Σ flow × cost. */
    record MinCostFlow(double[] flow, double cost) {
    }

    /**
     * The minimum-cost flow that meets every supply and demand and respects every arc's bounds.
     *
     * @param active which arcs may carry flow (by index), or {@code null} for all
     * @throws IllegalArgumentException when supplies do not sum to zero
     * @throws IllegalStateException    when no flow meets all demand over the arcs
     */
    MinCostFlow minCostFlow(boolean[] active) {
        long balance = 0;
        for (int v : supply) {
            balance += v;
        }
        if (balance != 0) {
            throw new IllegalArgumentException("supplies : sum " + balance + " (expected: 0, supplies equal demands)");
        }
        Graph<Integer, DefaultWeightedEdge> graph = graph(active, cost);
        MinimumCostFlowProblem<Integer, DefaultWeightedEdge> problem =
                new MinimumCostFlowProblem.MinimumCostFlowProblemImpl<>(
                        graph,
                        v -> supply[v],
                        e -> upper[((Arc) e).index],
                        e -> lower[((Arc) e).index],
                        e -> cost[((Arc) e).index]);
        MinimumCostFlowAlgorithm.MinimumCostFlow<DefaultWeightedEdge> result;
        try {
            result = new CapacityScalingMinimumCostFlow<Integer, DefaultWeightedEdge>().getMinimumCostFlow(problem);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("min-cost flow: no flow meets all demand (" + e.getMessage() + ")", e);
        }
        double[] flow = new double[arcs];
        for (Map.Entry<DefaultWeightedEdge, Double> e : result.getFlowMap().entrySet()) {
            flow[((Arc) e.getKey()).index] = e.getValue();
        }
        return new MinCostFlow(flow, result.getCost());
    }

    /**
     * A maximum flow from {@code source} to {@code sink} with arc capacities {@code upper} (lower
     * bounds and supplies are ignored).
     *
     * @param active  which arcs exist (by index), or {@code null} for all
     * @param flowOut receives the flow on each arc, by index
     * @return the flow value
     */
    double maxFlow(int source, int sink, boolean[] active, double[] flowOut) {
        checkVertex("source", source);
        checkVertex("sink", sink);
        double[] capacity = new double[arcs];
        for (int a = 0; a < arcs; a++) {
            capacity[a] = upper[a];
        }
        Graph<Integer, DefaultWeightedEdge> graph = graph(active, capacity);
        MaximumFlowAlgorithm.MaximumFlow<DefaultWeightedEdge> result =
                new PushRelabelMFImpl<>(graph).getMaximumFlow(source, sink);
        Arrays.fill(flowOut, 0, arcs, 0);
        for (Map.Entry<DefaultWeightedEdge, Double> e : result.getFlowMap().entrySet()) {
            flowOut[((Arc) e.getKey()).index] = e.getValue();
        }
        return result.getValue();
    }

    /** The JGraphT graph of the active arcs, with {@code weights} (per arc) as edge weights. */
    private Graph<Integer, DefaultWeightedEdge> graph(boolean[] active, double[] weights) {
        Graph<Integer, DefaultWeightedEdge> graph = new DirectedWeightedPseudograph<>(null, null);
        for (int v = 0; v < vertices; v++) {
            graph.addVertex(v);
        }
        for (int a = 0; a < arcs; a++) {
            if (active == null || active[a]) {
                Arc arc = new Arc(a);
                graph.addEdge(from[a], to[a], arc);
                graph.setEdgeWeight(arc, weights[a]);
            }
        }
        return graph;
    }

    private void checkVertex(String name, int v) {
        if (v < 0 || v >= vertices) {
            throw new IllegalArgumentException(name + " : " + v + " (expected: 0 .. " + (vertices - 1) + ")");
        }
    }

    @Override
    public String toString() {
        return "FlowNetwork[" + vertices + " vertices, " + arcs + " arcs]";
    }
}
