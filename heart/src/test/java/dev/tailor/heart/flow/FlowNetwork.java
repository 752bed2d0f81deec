package dev.tailor.heart.flow;

import com.google.ortools.graph.MaxFlow;
import com.google.ortools.graph.MinCostFlow;
import com.google.ortools.graph.MinCostFlowBase;
import dev.tailor.common.Numbers;
import java.util.Arrays;

/**
 * A directed network on vertices {@code 0..n-1} with integer supplies (positive = supply, negative
 * = demand) and arcs with integer bounds and an integer cost, solved with Google OR-tools: min-cost
 * flow by cost scaling ({@code SimpleMinCostFlow}), max-flow by push-relabel
 * ({@code SimpleMaxFlow}). Parallel arcs, self-loops and negative costs are allowed; the DIMACS
 * {@code .min} instances in the tests exercise them.
 *
 * <p>Not thread-safe. Arcs are never removed; queries take an {@code active} mask instead.
 */
/*
 * Maintainer note. Arcs live in flat arrays here and are handed to OR-tools per query; its Java API
 * adds one arc per JNI call (about 50 ns), well below the solve. Lower bounds, which OR-tools does
 * not take, are removed the textbook way: flow' = flow − lower, the tail supplies `lower` less and
 * the head `lower` more, capacity becomes upper − lower, and Σ lower × cost is added back to the cost.
 *
 * Why not JGraphT, which we used first: its CapacityScalingMinimumCostFlow (1.5.3) compares reduced
 * costs built from floating-point sums against 0, so fractional delays (0.1 + 0.2 − 0.3 != 0) made it
 * book 10^9 phantom units on uncapacitated arcs or declare feasible problems infeasible (our
 * property tests found both), it reads costs from edge weights and ignores the problem's cost
 * function (jgrapht#1139), and its hash-map graphs made one HEART round on 10,000 replicas take
 * about 10 s. OR-tools solves integer problems exactly, in arrays.
 */
final class FlowNetwork {

    /** Largest |cost| per unit: keeps Σ flow × cost far from overflowing OR-tools' int64. */
    static final double MAX_COST = 1e12;

    private final int vertices;
    private final int[] supply;
    private int arcs;
    private int[] from = new int[16];
    private int[] to = new int[16];
    private int[] lower = new int[16];
    private int[] upper = new int[16];
    private long[] cost = new long[16];

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

    /**
     * Adds an arc with flow bounds [lower, upper] and a cost per unit; returns its index.
     *
     * @throws IllegalArgumentException naming a bound or a cost that is not a whole number below
     *                                  {@link #MAX_COST} in magnitude
     */
    int addArc(int tail, int head, int lowerUnits, int upperUnits, double costPerUnit) {
        checkVertex("tail", tail);
        checkVertex("head", head);
        if (lowerUnits < 0 || upperUnits < lowerUnits) {
            throw new IllegalArgumentException(
                    "bounds : [" + lowerUnits + ", " + upperUnits + "] (expected: 0 <= lower <= upper)");
        }
        if (costPerUnit != Math.rint(costPerUnit) || Math.abs(costPerUnit) >= MAX_COST) {
            throw new IllegalArgumentException(
                    "cost : " + Numbers.written(costPerUnit) + " (expected: a whole number, |cost| < 1e12)");
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
        cost[arcs] = (long) costPerUnit;
        return arcs++;
    }

    /** Result of a min-cost flow: the flow on each arc (by index) and Σ flow × cost. */
    record MinCostFlow(double[] flow, double cost) {}

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
        OrTools.ensureLoaded();
        com.google.ortools.graph.MinCostFlow solver = new com.google.ortools.graph.MinCostFlow(vertices, arcs);
        try {
            long[] adjusted = new long[vertices];
            for (int v = 0; v < vertices; v++) {
                adjusted[v] = supply[v];
            }
            long fixedCost = 0;
            int[] ids = new int[arcs];
            for (int a = 0; a < arcs; a++) {
                if (active != null && !active[a]) {
                    ids[a] = -1;
                    continue;
                }
                adjusted[from[a]] -= lower[a];
                adjusted[to[a]] += lower[a];
                fixedCost += (long) lower[a] * cost[a];
                ids[a] = solver.addArcWithCapacityAndUnitCost(from[a], to[a], (long) upper[a] - lower[a], cost[a]);
            }
            for (int v = 0; v < vertices; v++) {
                solver.setNodeSupply(v, adjusted[v]);
            }
            MinCostFlowBase.Status status = solver.solve();
            if (status != MinCostFlowBase.Status.OPTIMAL) {
                throw new IllegalStateException(
                        "min-cost flow: " + status.name().toLowerCase(java.util.Locale.ROOT)
                                + (status == MinCostFlowBase.Status.INFEASIBLE ? ", no flow meets all demand" : ""));
            }
            double[] flow = new double[arcs];
            for (int a = 0; a < arcs; a++) {
                flow[a] = ids[a] < 0 ? 0 : solver.getFlow(ids[a]) + lower[a];
            }
            return new MinCostFlow(flow, (double) solver.getOptimalCost() + fixedCost);
        } finally {
            solver.delete();
        }
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
        OrTools.ensureLoaded();
        if (arcs == 0 || (active != null && !contains(active))) {
            Arrays.fill(flowOut, 0, arcs, 0);
            return 0;
        }
        MaxFlow solver = new MaxFlow();
        try {
            int[] ids = new int[arcs];
            for (int a = 0; a < arcs; a++) {
                ids[a] = active == null || active[a] ? solver.addArcWithCapacity(from[a], to[a], upper[a]) : -1;
            }
            MaxFlow.Status status = solver.solve(source, sink);
            if (status != MaxFlow.Status.OPTIMAL) {
                throw new IllegalStateException("max-flow: " + status);
            }
            Arrays.fill(flowOut, 0, arcs, 0);
            for (int a = 0; a < arcs; a++) {
                if (ids[a] >= 0) {
                    flowOut[a] = solver.getFlow(ids[a]);
                }
            }
            return solver.getOptimalFlow();
        } finally {
            solver.delete();
        }
    }

    private static boolean contains(boolean[] active) {
        for (boolean on : active) {
            if (on) {
                return true;
            }
        }
        return false;
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
