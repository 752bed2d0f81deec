package dev.tailor.heart;

import java.util.Arrays;

/**
 * One call edge's flow problem: sources (caller nodes) with integer supplies, sinks (callee groups)
 * with integer demands of the same total, and uncapacitated links between them that can be
 * switched off. Answers NTAM's two questions: can the active links carry all demand (max-flow), and
 * what is the cheapest way to do it (min-cost flow).
 *
 * <p>Not thread-safe; one instance per call edge and thread.
 */
/*
 * Maintainer note. Links have no capacity of their own (link bandwidth is not HEART's concern), so
 * the max-flow network is super source → source i (capacity supply_i) → sink j over every active
 * link (capacity = the total, so never binding) → super sink (capacity demand_j); demand is met iff
 * the max-flow value equals the total. The min-cost flow problem is the bipartite part alone with supplies +supply_i / −demand_j
 * and cost = link delay. Links are arcs 0..L-1 of one FlowNetwork, so a link's index is its arc's.
 *
 * The solver gets each delay in whole microseconds, because JGraphT's min-cost flow mis-solves
 * fractional costs (FlowNetwork's note: phantom flows, false infeasibility). A microsecond is finer
 * than the delay probes HEART reads resolve, so a plan's mean delay is within 0.5 µs of the optimum
 * for the exact delays, and delays less than a microsecond apart count as equal. Delays above
 * 100 s are capped there (such a link is unusable anyway). The cost returned is Σ flow × the exact
 * delay.
 */
final class TransportNetwork {

    /** Largest cost handed to the solver: 100 s, in microseconds. */
    static final double MAX_COST_MICROS = 1e8;

    private final FlowNetwork network;
    private final double[] linkCostMillis;
    private final int links;
    private final int total;
    private final int superSource;
    private final int superSink;
    /** Per arc: active in max-flow queries (links as switched, super arcs always). */
    private final boolean[] maxFlowActive;
    /** Per arc: active in min-cost queries (links as switched, super arcs never). */
    private final boolean[] minCostActive;

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
        int sources = supply.length;
        int sinks = demand.length;
        this.total = (int) s;
        this.links = linkSource.length;
        this.linkCostMillis = linkCost.clone();
        this.superSource = sources + sinks;
        this.superSink = superSource + 1;
        this.network = new FlowNetwork(sources + sinks + 2);
        for (int l = 0; l < links; l++) {
            // Capacity = the total, which never binds; not FlowNetwork.UNBOUNDED (see FlowNetwork).
            network.addArc(linkSource[l], sources + linkSink[l], 0, total, micros(linkCost[l]));
        }
        for (int i = 0; i < sources; i++) {
            network.addArc(superSource, i, 0, supply[i], 0);
            network.setSupply(i, supply[i]);
        }
        for (int j = 0; j < sinks; j++) {
            network.addArc(sources + j, superSink, 0, demand[j], 0);
            network.setSupply(sources + j, -demand[j]);
        }
        maxFlowActive = new boolean[network.arcs()];
        minCostActive = new boolean[network.arcs()];
        Arrays.fill(maxFlowActive, true);
        Arrays.fill(minCostActive, 0, links, true);
    }

    int links() {
        return links;
    }

    int totalUnits() {
        return total;
    }

    void setActive(int link, boolean on) {
        maxFlowActive[link] = on;
        minCostActive[link] = on;
    }

    /**
     * Maximum flow over the active links.
     *
     * @param flowOut per link, the flow the maximum flow found sends over it (inactive links: 0)
     * @return the max-flow value in units; equal to {@link #totalUnits()} iff all demand is met
     */
    long maxFlow(double[] flowOut) {
        double[] all = new double[network.arcs()];
        double value = network.maxFlow(superSource, superSink, maxFlowActive, all);
        System.arraycopy(all, 0, flowOut, 0, links);
        return Math.round(value);
    }

    /**
     * Minimum-cost flow over the active links, meeting every supply and demand exactly.
     *
     * @param flowOut per link, its flow in units (inactive links: 0)
     * @return the total cost, Σ flow × cost (the exact delays, not the solver's microseconds)
     * @throws IllegalStateException when the active links cannot carry all demand
     */
    double minCostFlow(double[] flowOut) {
        FlowNetwork.MinCostFlow result = network.minCostFlow(minCostActive);
        System.arraycopy(result.flow(), 0, flowOut, 0, links);
        double cost = 0;
        for (int l = 0; l < links; l++) {
            cost += flowOut[l] * linkCostMillis[l];
        }
        return cost;
    }

    /** A delay in ms as the solver's whole-number cost: microseconds, at most {@link #MAX_COST_MICROS}. */
    static double micros(double millis) {
        return Math.min(Math.rint(millis * 1000), MAX_COST_MICROS);
    }
}
