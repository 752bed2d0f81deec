package dev.tailor.heart;

import com.google.ortools.graph.MaxFlow;
import java.util.Arrays;

/**
 * One call edge's flow problem: sources (caller nodes) with integer supplies, sinks (callee groups)
 * with integer demands of the same total, and uncapacitated links between them that can be
 * switched off. Answers NTAM's two questions: can the active links carry all demand (max-flow), and
 * what is the cheapest way to do it (min-cost flow).
 *
 * <p>Not thread-safe; one instance per call edge and thread. Holds a native OR-tools solver between
 * max-flow queries: {@link #close()} frees it (a finalizer would too, later).
 */
/*
 * Maintainer note. Links have no capacity of their own (link bandwidth is not HEART's concern), so
 * the max-flow network is super source → source i (capacity supply_i) → sink j over every active
 * link (capacity min(supply_i, demand_j), so never binding) → super sink (capacity demand_j); demand is met iff
 * the max-flow value equals the total. The slow-link filter asks this question many times with a
 * few links switched, so the OR-tools max-flow is built once and a switch only sets that arc's
 * capacity to 0 or back: one JNI call instead of rebuilding 10,000 arcs. Reading flows back costs a
 * JNI call per link, so callers read only the links they need (flowOf).
 *
 * The min-cost flow problem is the bipartite part alone with supplies +supply_i / −demand_j and
 * cost = link delay in whole microseconds (OR-tools takes integer costs; a microsecond is finer than
 * the delay probes HEART reads resolve, so a plan's mean delay is within 0.5 µs of the optimum for
 * the exact delays), solved by SparseMinCostFlow on a few candidate links per node and priced
 * against the rest: optimal over every active link. The cost returned is Σ flow × the exact delay.
 */
final class TransportNetwork implements AutoCloseable {

    /** Delays above this many microseconds (100 s) are capped there; such a link is unusable anyway. */
    static final double MAX_COST_MICROS = 1e8;

    private final int[] supply;
    private final int[] demand;
    private final int[] linkSource;
    private final int[] linkSink;
    private final double[] linkCostMillis;
    private final long[] linkCostMicros;
    private final boolean[] active;
    private final int links;
    private final int total;
    /** Links ascending by (cost in µs, index), computed on first use. */
    private int[] byCost;
    /** The native max-flow network, built on the first max-flow query; arc l = link l. */
    private MaxFlow maxFlow;

    /**
     * @param supply     units per source, each &gt; 0
     * @param demand     units per sink, each &gt; 0, same sum as {@code supply}
     * @param linkSource source index of each link
     * @param linkSink   sink index of each link
     * @param linkCost   cost of each link (its delay in ms)
     */
    TransportNetwork(int[] supply, int[] demand, int[] linkSource, int[] linkSink, double[] linkCost) {
        long s = Arrays.stream(supply).asLongStream().sum();
        long d = Arrays.stream(demand).asLongStream().sum();
        if (s != d) {
            throw new IllegalArgumentException("supply : " + s + " units (expected: equal to demand, " + d + " units)");
        }
        this.supply = supply.clone();
        this.demand = demand.clone();
        this.linkSource = linkSource.clone();
        this.linkSink = linkSink.clone();
        this.linkCostMillis = linkCost.clone();
        this.links = linkSource.length;
        this.total = (int) s;
        this.linkCostMicros = new long[links];
        for (int l = 0; l < links; l++) {
            linkCostMicros[l] = (long) micros(linkCost[l]);
        }
        this.active = new boolean[links];
        Arrays.fill(active, true);
    }

    int links() {
        return links;
    }

    int totalUnits() {
        return total;
    }

    /** A link's cost as the solvers see it: its delay in whole microseconds (see {@link #micros}). */
    long costMicros(int link) {
        return linkCostMicros[link];
    }

    /**
     * Every link once, ascending by cost in whole microseconds, ties in link order: the slow-link
     * filter's order and the min-cost flow's candidate order. Computed once; do not modify.
     */
    int[] linksByCost() {
        if (byCost == null) {
            // A primitive sort of (µs << 32 | link): boxing 10,000 links per edge cost more than the
            // max-flow runs.
            long[] keys = new long[links];
            for (int l = 0; l < links; l++) {
                keys[l] = linkCostMicros[l] << 32 | l;
            }
            Arrays.sort(keys);
            byCost = new int[links];
            for (int k = 0; k < links; k++) {
                byCost[k] = (int) keys[k];
            }
        }
        return byCost;
    }

    void setActive(int link, boolean on) {
        if (active[link] != on) {
            active[link] = on;
            if (maxFlow != null) {
                maxFlow.setArcCapacity(link, on ? bound(link) : 0);
            }
        }
    }

    boolean isActive(int link) {
        return active[link];
    }

    /**
     * Maximum flow over the active links.
     *
     * @param flowOut per link, the flow the maximum flow found sends over it (inactive links: 0), or
     *                {@code null} to read flows later with {@link #flowOf}
     * @return the max-flow value in units; equal to {@link #totalUnits()} iff all demand is met
     */
    long maxFlow(double[] flowOut) {
        if (maxFlow == null) {
            OrTools.ensureLoaded();
            int sources = supply.length;
            int superSource = sources + demand.length;
            maxFlow = new MaxFlow();
            for (int l = 0; l < links; l++) {
                maxFlow.addArcWithCapacity(linkSource[l], sources + linkSink[l], active[l] ? bound(l) : 0);
            }
            for (int i = 0; i < sources; i++) {
                maxFlow.addArcWithCapacity(superSource, i, supply[i]);
            }
            for (int j = 0; j < demand.length; j++) {
                maxFlow.addArcWithCapacity(sources + j, superSource + 1, demand[j]);
            }
        }
        int superSource = supply.length + demand.length;
        MaxFlow.Status status = maxFlow.solve(superSource, superSource + 1);
        if (status != MaxFlow.Status.OPTIMAL) {
            throw new IllegalStateException("max-flow: " + status);
        }
        if (flowOut != null) {
            for (int l = 0; l < links; l++) {
                flowOut[l] = flowOf(l);
            }
        }
        return maxFlow.getOptimalFlow();
    }

    /** The flow the last {@link #maxFlow} sent over {@code link}. */
    double flowOf(int link) {
        return maxFlow.getFlow(link);
    }

    /**
     * What {@link #minCostFlow} computed.
     *
     * @param costMillis     Σ flow × the exact delay, in unit-milliseconds
     * @param candidateLinks links the final OR-tools solve was given (the rest priced out)
     * @param solves         OR-tools min-cost flow solves it took
     */
    record MinCostFlowResult(double costMillis, int candidateLinks, int solves) {
    }

    /**
     * Minimum-cost flow over the active links, meeting every supply and demand exactly, with delays
     * in whole microseconds as costs (see the note above).
     *
     * @param flowOut per link, its flow in units (inactive links: 0)
     * @return the total cost in exact delays, and how it was found
     * @throws IllegalStateException when the active links cannot carry all demand
     */
    MinCostFlowResult minCostFlow(double[] flowOut) {
        return minCostFlow(flowOut, SparseMinCostFlow.CANDIDATES_PER_NODE);
    }

    /** {@link #minCostFlow(double[])} starting from {@code candidatesPerNode} candidates per node. */
    MinCostFlowResult minCostFlow(double[] flowOut, int candidatesPerNode) {
        SparseMinCostFlow.Result result = SparseMinCostFlow.solve(supply, demand, linkSource, linkSink,
                linkCostMicros, active, linksByCost(), candidatesPerNode, flowOut);
        double cost = 0;
        for (int l = 0; l < links; l++) {
            if (flowOut[l] != 0) {
                cost += flowOut[l] * linkCostMillis[l];
            }
        }
        return new MinCostFlowResult(cost, result.candidateLinks(), result.solves());
    }

    /**
     * A link's capacity: it can never carry more than its source supplies or its sink takes, so
     * this bound never binds, and the solvers settle sooner than with the total (about 15 % of a
     * 10,000-replica round).
     */
    private int bound(int link) {
        return Math.min(supply[linkSource[link]], demand[linkSink[link]]);
    }

    /** Frees the native max-flow solver. */
    @Override
    public void close() {
        if (maxFlow != null) {
            maxFlow.delete();
            maxFlow = null;
        }
    }

    /** A delay in ms as the solver's whole-number cost: microseconds, at most {@link #MAX_COST_MICROS}. */
    static double micros(double millis) {
        return Math.min(Math.rint(millis * 1000), MAX_COST_MICROS);
    }
}
