package dev.tailor.heart.flow;

import java.util.Arrays;

/**
 * One call edge's flow problem: sources (caller nodes) with integer supplies, sinks (callee groups)
 * with integer demands of the same total, and uncapacitated links between them that can be
 * switched off. Answers NTAM's two questions: can the active links carry all demand (max-flow), and
 * what is the cheapest way to do it (min-cost flow).
 *
 * <p>Not thread-safe; one instance per call edge and thread. Keeps its max-flow network between
 * queries; {@link #close()} drops it.
 */
/*
 * Maintainer note. Links have no capacity of their own (link bandwidth is not HEART's concern), so
 * the max-flow network is super source → source i (capacity supply_i) → sink j over every active
 * link (capacity min(supply_i, demand_j), so never binding) → super sink (capacity demand_j); demand
 * is met iff the max-flow value equals the total. The slow-link filter asks this question several
 * times with a few links switched, so the max-flow network (MaxFlow, Dinic's) is built once, from the
 * links active at the first query; a switch sets an arc's capacity, and a link switched on that was
 * never in the network is added then. Arcs that stay off still cost every solve a look, so the batch
 * filter's slow cluster (most of which never returns) is left out.
 * Most questions never reach that network: demandCarried first tries to prove feasibility on a
 * subgraph (a flow on some links is a flow on all), nodeShortfall proves infeasibility from single
 * nodes (each is a cut) without a solver, and canMeetAllDemandSolving answers by solving the
 * min-cost flow itself, kept for minCostFlow while the same links stay active, so the filter's
 * likeliest final link set is solved once.
 *
 * The min-cost flow problem is the bipartite part alone with supplies +supply_i / −demand_j and
 * cost = link delay in whole microseconds (the solvers take integer costs; a microsecond is finer
 * than the delay probes HEART reads resolve, so a plan's mean delay is within 0.5 µs of the optimum
 * for the exact delays), solved by TransportSimplex, a network simplex started from the greedy flow
 * (about 0.4 ms on a 100 × 100 edge, where OR-tools took 2.5 ms: see its note); where it declines
 * (costs too large for its exact arithmetic, impossible with delays capped at MAX_COST_MICROS, or
 * its pivot guard) SparseMinCostFlow solves it on candidate links with MinCostTransport instead.
 * Either way the flow is optimal over every active link. The cost returned is Σ flow × the exact delay.
 */
public final class TransportNetwork implements AutoCloseable {

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
    /** The max-flow network, built on the first max-flow query. */
    private MaxFlow maxFlow;
    /** Arc of each link in {@link #maxFlow}, -1 while it has none. */
    private int[] arcOf;
    /** The active links {@link #canMeetAllDemandSolving} last found a min-cost flow for, or null. */
    private boolean[] solvedFor;
    /** That min-cost flow, per link, and how it was found. */
    private double[] solvedFlow;

    private Solved solved;

    /**
     * @param supply     units per source, each &gt; 0
     * @param demand     units per sink, each &gt; 0, same sum as {@code supply}
     * @param linkSource source index of each link
     * @param linkSink   sink index of each link
     * @param linkCost   cost of each link (its delay in ms)
     * @throws IllegalArgumentException when supplies and demands differ in total
     */
    public TransportNetwork(int[] supply, int[] demand, int[] linkSource, int[] linkSink, double[] linkCost) {
        long s = 0;
        for (int v : supply) {
            s += v;
        }
        long d = 0;
        for (int v : demand) {
            d += v;
        }
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

    public int links() {
        return links;
    }

    public int totalUnits() {
        return total;
    }

    /** A link's cost as the solvers see it: its delay in whole microseconds (see {@link #micros}). */
    public long costMicros(int link) {
        return linkCostMicros[link];
    }

    /**
     * Every link once, ascending by cost in whole microseconds, ties in link order: the slow-link
     * filter's order and the min-cost flow's candidate order. Computed once; do not modify.
     */
    public int[] linksByCost() {
        if (byCost == null) {
            byCost = sortedByCost(linkCostMicros);
        }
        return byCost;
    }

    /**
     * Indices 0..n-1 stably sorted by {@code micros} (whole numbers in [0, {@link #MAX_COST_MICROS}]),
     * ties in index order. From 512 links a least-significant-digit radix sort, 11 bits a pass, as
     * many passes as the largest value needs (two below 4.2 s): about four times faster than sorting
     * (µs &lt;&lt; 32 | index) keys on 10,000 links, which it does below 512, with the same result.
     */
    static int[] sortedByCost(long[] micros) {
        int n = micros.length;
        if (n < 512) {
            // Few links (the paper's 5 x 5): clearing the 2,048 counters would cost more than sorting.
            long[] keys = new long[n];
            for (int i = 0; i < n; i++) {
                keys[i] = micros[i] << 32 | i;
            }
            Arrays.sort(keys);
            int[] order = new int[n];
            for (int k = 0; k < n; k++) {
                order[k] = (int) keys[k];
            }
            return order;
        }
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        long max = 0;
        for (long m : micros) {
            max = Math.max(max, m);
        }
        int[] other = new int[n];
        int[] count = new int[1 << 11];
        for (int shift = 0; shift == 0 || max >>> shift != 0; shift += 11) {
            Arrays.fill(count, 0);
            for (int i = 0; i < n; i++) {
                count[(int) (micros[i] >>> shift) & 0x7ff]++;
            }
            for (int d = 0, at = 0; d < count.length; d++) {
                int c = count[d];
                count[d] = at;
                at += c;
            }
            for (int i : order) {
                other[count[(int) (micros[i] >>> shift) & 0x7ff]++] = i;
            }
            int[] t = order;
            order = other;
            other = t;
        }
        return order;
    }

    public void setActive(int link, boolean on) {
        if (active[link] != on) {
            active[link] = on;
            if (maxFlow != null) {
                if (arcOf[link] >= 0) {
                    maxFlow.setCapacity(arcOf[link], on ? bound(link) : 0);
                } else if (on) {
                    addArc(link);
                }
            }
        }
    }

    public boolean isActive(int link) {
        return active[link];
    }

    /**
     * Maximum flow over the active links.
     *
     * @param flowOut per link, the flow the maximum flow found sends over it (inactive links: 0), or
     *                {@code null} to read flows later with {@link #flowOf}
     * @return the max-flow value in units; equal to {@link #totalUnits()} iff all demand is met
     */
    public long maxFlow(double[] flowOut) {
        int sources = supply.length;
        int superSource = sources + demand.length;
        if (maxFlow == null) {
            maxFlow = new MaxFlow(superSource + 2);
            for (int i = 0; i < sources; i++) {
                maxFlow.addArc(superSource, i, supply[i]);
            }
            for (int j = 0; j < demand.length; j++) {
                maxFlow.addArc(sources + j, superSource + 1, demand[j]);
            }
            arcOf = new int[links];
            Arrays.fill(arcOf, -1);
            for (int l = 0; l < links; l++) {
                if (active[l]) {
                    addArc(l);
                }
            }
        }
        long value = maxFlow.solve(superSource, superSource + 1);
        if (flowOut != null) {
            for (int l = 0; l < links; l++) {
                flowOut[l] = flowOf(l);
            }
        }
        return value;
    }

    private void addArc(int link) {
        arcOf[link] = maxFlow.addArc(linkSource[link], supply.length + linkSink[link], bound(link));
    }

    /** The flow the last {@link #maxFlow} sent over {@code link}. */
    public double flowOf(int link) {
        return arcOf[link] < 0 ? 0 : maxFlow.flow(arcOf[link]);
    }

    /**
     * Whether the active links can carry all demand, and if not how much: the max-flow value over
     * them, in units. Equal to {@link #totalUnits()} iff all demand can be met.
     *
     * <p>Solves as little as it can. A flow that meets all demand on some of the active links
     * proves that all of them can, so it tries, in order: the least-cost greedy flow (no solver at
     * all), a max-flow over the min-cost flow's first candidates (a few links per node), and only then
     * the max-flow over every active link, whose value it returns. Flows are not kept: use
     * {@link #maxFlow} to read them.
     */
    public long demandCarried() {
        boolean[] candidate = new boolean[links];
        SparseMinCostFlow.Candidates first = SparseMinCostFlow.firstCandidates(
                supply,
                demand,
                linkSource,
                linkSink,
                active,
                linksByCost(),
                SparseMinCostFlow.CANDIDATES_PER_NODE,
                candidate);
        if (first.greedyMet()) {
            return total;
        }
        int sources = supply.length;
        int superSource = sources + demand.length;
        MaxFlow sparse = new MaxFlow(superSource + 2);
        for (int i = 0; i < sources; i++) {
            sparse.addArc(superSource, i, supply[i]);
        }
        for (int j = 0; j < demand.length; j++) {
            sparse.addArc(sources + j, superSource + 1, demand[j]);
        }
        for (int l = 0; l < links; l++) {
            if (candidate[l]) {
                sparse.addArc(linkSource[l], sources + linkSink[l], bound(l));
            }
        }
        if (sparse.solve(superSource, superSource + 1) == total) {
            return total;
        }
        return maxFlow(null);
    }

    /**
     * Whether the active links can carry all demand, answered by solving their min-cost flow: the
     * solve either finds the optimal flow, which {@link #minCostFlow} then returns without solving
     * again as long as the same links are active, or proves that no flow meets all demand. Costs a
     * min-cost flow where {@link #demandCarried} costs a max-flow on a few links, so ask it where the
     * answer is likely yes and final: the slow-link filter's first guess.
     */
    public boolean canMeetAllDemandSolving() {
        double[] flow = new double[links];
        Solved result = solve(flow);
        if (result == null) {
            return false;
        }
        solved = result;
        solvedFlow = flow;
        solvedFor = active.clone();
        return true;
    }

    /**
     * How a min-cost flow was found: by the network simplex ({@code orTools} null), or, where it
     * declined, by MinCostTransport on candidate links (SparseMinCostFlow).
     *
     * @param pivots  network simplex pivots from the greedy flow (0 when SparseMinCostFlow solved it)
     * @param orTools what SparseMinCostFlow took, or null
     */
    public record Solved(int pivots, SparseMinCostFlow.Result orTools) {}

    /**
     * The min-cost flow over the active links into {@code flowOut}, or null (flowOut then
     * unspecified) when they cannot carry all demand. TransportSimplex first; SparseMinCostFlow only where it
     * declines (costs beyond its exact arithmetic, which delays capped at {@link #MAX_COST_MICROS}
     * never reach, or its pivot guard, which never fired in our tests).
     */
    private Solved solve(double[] flowOut) {
        TransportSimplex.Result simplex = TransportSimplex.solve(
                supply, demand, linkSource, linkSink, linkCostMicros, active, linksByCost(), flowOut);
        return switch (simplex.status()) {
            case OPTIMAL -> new Solved(simplex.pivots(), null);
            case INFEASIBLE -> null;
            case DECLINED -> {
                SparseMinCostFlow.Result orTools = SparseMinCostFlow.solveIfFeasible(
                        supply,
                        demand,
                        linkSource,
                        linkSink,
                        linkCostMicros,
                        active,
                        linksByCost(),
                        SparseMinCostFlow.CANDIDATES_PER_NODE,
                        flowOut);
                yield orTools == null ? null : new Solved(0, orTools);
            }
        };
    }

    /**
     * What single nodes say about the links {@code order[from..to)} of the slow-link filter's batch.
     *
     * @param fewest      the fewest of them that, switched on in that order, give every source active
     *                    links to sinks whose demands sum to at least its supply, and every sink active
     *                    links from sources whose supplies sum to at least its demand; fewer leave that
     *                    node alone bounding a cut below the total, so max-flow cannot meet all demand
     *                    and need not be asked. A lower bound only: sets of several nodes can fall short
     *                    too
     * @param shortNodes  nodes short with none of them switched on
     * @param unmetAtLeast units of demand no flow can meet with none of them switched on: the larger of
     *                    the sources' and the sinks' summed shortfalls (each is a cut)
     */
    public record NodeShortfall(int fewest, int shortNodes, long unmetAtLeast) {}

    /**
     * {@link NodeShortfall} of the links {@code order[from..to)}, which must all be inactive; none is
     * switched. O(links).
     */
    public NodeShortfall nodeShortfall(int[] order, int from, int to) {
        long[] reachedDemand = new long[supply.length];
        long[] reachedSupply = new long[demand.length];
        for (int l = 0; l < links; l++) {
            if (active[l]) {
                reachedDemand[linkSource[l]] += demand[linkSink[l]];
                reachedSupply[linkSink[l]] += supply[linkSource[l]];
            }
        }
        int shortNodes = 0;
        long sourcesShort = 0;
        long sinksShort = 0;
        for (int i = 0; i < supply.length; i++) {
            if (reachedDemand[i] < supply[i]) {
                shortNodes++;
                sourcesShort += supply[i] - reachedDemand[i];
            }
        }
        for (int j = 0; j < demand.length; j++) {
            if (reachedSupply[j] < demand[j]) {
                shortNodes++;
                sinksShort += demand[j] - reachedSupply[j];
            }
        }
        int fewest = 0;
        for (int k = from, open = shortNodes; open > 0; k++) {
            if (k == to) {
                fewest = to - from + 1; // cannot happen when the full link set is feasible
                break;
            }
            int l = order[k];
            int i = linkSource[l];
            int j = linkSink[l];
            if (reachedDemand[i] < supply[i] && (reachedDemand[i] += demand[j]) >= supply[i]) {
                open--;
            }
            if (reachedSupply[j] < demand[j] && (reachedSupply[j] += supply[i]) >= demand[j]) {
                open--;
            }
            fewest = k - from + 1;
        }
        return new NodeShortfall(fewest, shortNodes, Math.max(sourcesShort, sinksShort));
    }

    /**
     * What {@link #minCostFlow} computed.
     *
     * @param costMillis Σ flow × the exact delay, in unit-milliseconds
     * @param how        how it was found
     */
    public record MinCostFlowResult(double costMillis, Solved how) {}

    /**
     * Minimum-cost flow over the active links, meeting every supply and demand exactly, with delays
     * in whole microseconds as costs (see the note above).
     *
     * @param flowOut per link, its flow in units (inactive links: 0)
     * @return the total cost in exact delays, and how it was found
     * @throws IllegalStateException when the active links cannot carry all demand
     */
    public MinCostFlowResult minCostFlow(double[] flowOut) {
        Solved result;
        if (Arrays.equals(solvedFor, active)) {
            result = solved;
            System.arraycopy(solvedFlow, 0, flowOut, 0, links);
        } else {
            result = solve(flowOut);
            if (result == null) {
                throw new IllegalStateException("min-cost flow: infeasible, no flow meets all demand");
            }
        }
        double cost = 0;
        for (int l = 0; l < links; l++) {
            if (flowOut[l] != 0) {
                cost += flowOut[l] * linkCostMillis[l];
            }
        }
        return new MinCostFlowResult(cost, result);
    }

    /**
     * A link's capacity: it can never carry more than its source supplies or its sink takes, so
     * this bound never binds, and the solvers settle sooner than with the total (about 15 % of a
     * 10,000-replica round).
     */
    private int bound(int link) {
        return Math.min(supply[linkSource[link]], demand[linkSink[link]]);
    }

    /** Drops the max-flow network. */
    @Override
    public void close() {
        maxFlow = null;
    }

    /** A delay in ms as the solver's whole-number cost: microseconds, at most {@link #MAX_COST_MICROS}. */
    static double micros(double millis) {
        return Math.min(Math.rint(millis * 1000), MAX_COST_MICROS);
    }
}
