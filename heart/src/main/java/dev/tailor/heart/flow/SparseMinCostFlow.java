package dev.tailor.heart.flow;

/**
 * Minimum-cost flow of a transport problem, solved on a few candidate links and proven optimal for
 * all of them. Sources have integer supplies, sinks integer demands of the same total; a link joins
 * one source to one sink, has an integer cost per unit and can carry all its source supplies or its
 * sink takes, whichever is less (so its capacity never binds). MinCostTransport solves each
 * restricted problem; this class only chooses the candidates and prices the other links.
 *
 * <p>Contract: when the active links can carry all demand, the flow returned uses active links
 * only, meets every supply and demand exactly, and its cost Σ flow × cost is the minimum over
 * <em>all</em> active links, equal to a min-cost flow solved over all of them. When several flows
 * tie at that cost, the one returned may differ from the one a solve over all links returns. When
 * the candidates are all active links, the solver sees exactly what a direct solve would (same arcs,
 * same order), so small problems come out identical. Stateless and thread-safe.
 */
/*
 * Maintainer note.
 *
 * Role. NTAM's min-cost flows are solved by TransportSimplex (our network simplex, about six times
 * faster per solve on the 10,000-replica benchmark: see its note); this class solves them only where
 * that declines (costs too large for its exact arithmetic, or its pivot guard), and the tests keep it
 * as a second, independent solver. Its candidate selection also serves TransportNetwork's max-flow
 * feasibility proof on a few links.
 *
 * Why. On a call edge of 100 caller × 100 callee nodes OR-tools' cost-scaling min-cost flow over
 * all 10,000 links took 4–5 ms, most of a 10,000-replica round. An optimal flow needs at most
 * sources + sinks − 1 links (a basic solution), nearly all of them among each node's cheapest few.
 *
 * How (column generation, in network-flow words pricing [1, §9.3; 2]).
 *   1. Candidates: the links of the least-cost greedy flow (cheapest link first, as much as fits;
 *      it meets all demand whenever every link is active, so the candidates then are feasible),
 *      and every active link that is among the k cheapest active links of its source or among the
 *      k cheapest of its sink (ties in link order), k = candidatesPerNode.
 *   2. MinCostTransport solves min-cost flow on the candidates. If they cannot carry all demand, k grows
 *      fourfold (at most to every active link) and step 2 repeats.
 *   3. Node potentials d from the residual graph of that flow: a candidate link with flow below its
 *      capacity gives an arc source → sink of cost c, one with positive flow an arc sink → source of
 *      cost −c; d is the shortest distance to each node from a virtual root joined to every node at
 *      cost 0 (queue-based Bellman–Ford; the flow is optimal on its candidates, so there is no
 *      negative cycle). Then c + d(tail) − d(head) ≥ 0 on every residual arc.
 *   4. Pricing: every active link outside the candidates carries no flow, so its residual arc is
 *      source → sink with positive capacity. If all have c + d(source) − d(sink) ≥ 0, then d proves
 *      the flow optimal for all active links (reduced-cost optimality [1, Thm 9.3]): done. Otherwise
 *      every link that prices negative joins the candidates and we go back to step 2 (the larger
 *      candidate set stays feasible). Each round adds a link, so it ends, at worst with all links.
 * Costs are integers (µs), so every comparison is exact; no tolerance is involved anywhere.
 *
 * Cost. Selecting is one pass over the links in cost order (the caller sorts once, the slow-link
 * filter needs that order too), pricing one pass over the links, the potentials O(V·E) at worst on
 * sources + sinks nodes and a few thousand arcs, but a handful of passes in practice (about 50 µs).
 * (Measured with OR-tools' cost scaling, the solver here until the runtime dropped its native
 * library; MinCostTransport's successive shortest paths cost more per extra arc, so fewer
 * candidates only help it.) OR-tools' time hardly depends on the number of arcs below a few
 * thousand (on 200 nodes: about
 * 1.1 ms for the 199 links of the optimum alone, 1.9 ms for 1,900, 4.4 ms for all 10,000), but every
 * extra solve costs the full amount, so k is chosen to make one solve the rule: on the 10,000-replica
 * benchmark, where a node's cheapest links are the ten or so in its own zone and the optimum needs a
 * few into other zones, k = 16 gives about 1,750 candidates and 1.1 solves per edge; k = 4 starts from 550
 * but takes 2.9 solves, k = 24 always one solve, on 2,600 candidates, and no faster.
 *
 * [1] R. K. Ahuja, T. L. Magnanti, J. B. Orlin, "Network Flows: Theory, Algorithms, and
 *     Applications", Prentice Hall, 1993: §9.3 optimality conditions.
 * [2] G. B. Dantzig, "Application of the simplex method to a transportation problem", in Activity
 *     Analysis of Production and Allocation, Wiley, 1951 (pricing out non-basic cells by potentials).
 */
public final class SparseMinCostFlow {

    /** Candidates per source and per sink to start with; measured on the benchmark shapes (see the note). */
    static final int CANDIDATES_PER_NODE = 16;

    private SparseMinCostFlow() {}

    /**
     * What a solve found and took.
     *
     * @param costUnits      Σ flow × cost in the problem's integer cost unit
     * @param candidateLinks links the last solve was given
     * @param solves         solves on candidates, infeasible candidate sets included
     * @param pricedIn       links added because they priced negative against a candidate optimum
     */
    public record Result(long costUnits, int candidateLinks, int solves, int pricedIn) {}

    /**
     * Solves the problem; see the class contract.
     *
     * @param supply            units per source, each &gt;= 0
     * @param demand            units per sink, each &gt;= 0, same total as {@code supply}
     * @param linkSource        source index of each link
     * @param linkSink          sink index of each link
     * @param cost              integer cost per unit of each link, |cost| well below 2^62 ÷ total units
     * @param active            which links may carry flow
     * @param linksByCost       every link index once, ascending by cost, ties in index order
     * @param candidatesPerNode k of the first candidate set, &gt;= 1
     * @param flowOut           receives each link's flow in units (0 on links outside the candidates)
     * @throws IllegalStateException when the active links cannot carry all demand, or the solver fails
     */
    static Result solve(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            long[] cost,
            boolean[] active,
            int[] linksByCost,
            int candidatesPerNode,
            double[] flowOut) {
        Result result = solveIfFeasible(
                supply, demand, linkSource, linkSink, cost, active, linksByCost, candidatesPerNode, flowOut);
        if (result == null) {
            throw new IllegalStateException("min-cost flow: infeasible, no flow meets all demand");
        }
        return result;
    }

    /**
     * {@link #solve}, but {@code null} when the active links cannot carry all demand: the solver then
     * found no flow on all of them, a proof (successive shortest paths stop at the first augmenting
     * path that does not exist).
     *
     * @throws IllegalStateException when the solver fails
     */
    static Result solveIfFeasible(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            long[] cost,
            boolean[] active,
            int[] linksByCost,
            int candidatesPerNode,
            double[] flowOut) {
        if (candidatesPerNode < 1) {
            throw new IllegalArgumentException("candidatesPerNode : " + candidatesPerNode + " (expected: >= 1)");
        }
        int links = linkSource.length;
        int activeLinks = 0;
        for (int l = 0; l < links; l++) {
            if (active[l]) {
                activeLinks++;
            }
        }
        boolean[] candidate = new boolean[links];
        long[] flow = new long[links];
        int chosen = firstCandidates(
                        supply, demand, linkSource, linkSink, active, linksByCost, candidatesPerNode, candidate)
                .marked();
        long k = candidatesPerNode;
        int pricedIn = 0;
        for (int solves = 1; ; solves++) {
            long optimum = solveOn(supply, demand, linkSource, linkSink, cost, candidate, flow);
            if (optimum == INFEASIBLE) {
                if (chosen == activeLinks) {
                    return null;
                }
                k *= 4;
                chosen += select(
                        supply.length,
                        demand.length,
                        linkSource,
                        linkSink,
                        active,
                        linksByCost,
                        (int) Math.min(k, links),
                        candidate);
                continue;
            }
            // With every active link a candidate, the solver's optimum is the optimum: nothing to price.
            int added = chosen == activeLinks
                    ? 0
                    : price(
                            supply,
                            demand,
                            linkSource,
                            linkSink,
                            cost,
                            active,
                            candidate,
                            potentials(supply, demand, linkSource, linkSink, cost, candidate, flow));
            if (added == 0) {
                for (int l = 0; l < links; l++) {
                    flowOut[l] = candidate[l] ? flow[l] : 0;
                }
                return new Result(optimum, chosen, solves, pricedIn);
            }
            chosen += added;
            pricedIn += added;
        }
    }

    /**
     * Marks the first candidates of {@link #solve}: the links of the least-cost greedy flow and the
     * {@code k} cheapest active links of every source and every sink.
     *
     * @param candidate receives the marks (links marked before stay marked)
     * @return how many links it marked that were not marked before, and whether the greedy flow
     *         alone met all demand (a proof that the active links can)
     */
    static Candidates firstCandidates(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            boolean[] active,
            int[] linksByCost,
            int k,
            boolean[] candidate) {
        boolean[] greedyMet = new boolean[1];
        int marked = greedy(supply, demand, linkSource, linkSink, active, linksByCost, candidate, greedyMet);
        marked += select(supply.length, demand.length, linkSource, linkSink, active, linksByCost, k, candidate);
        return new Candidates(marked, greedyMet[0]);
    }

    /**
     * What {@link #firstCandidates} marked.
     *
     * @param marked    links newly marked as candidates
     * @param greedyMet whether the greedy flow on them met all demand
     */
    record Candidates(int marked, boolean greedyMet) {}

    /** Marker of an infeasible restricted problem; never a real optimum (costs are bounded far below). */
    private static final long INFEASIBLE = Long.MIN_VALUE;

    /**
     * Marks every active link among the {@code k} cheapest active links of its source or of its sink;
     * returns how many were not marked before.
     */
    private static int select(
            int sources,
            int sinks,
            int[] linkSource,
            int[] linkSink,
            boolean[] active,
            int[] linksByCost,
            int k,
            boolean[] candidate) {
        int[] perSource = new int[sources];
        int[] perSink = new int[sinks];
        int open = sources + sinks; // nodes that still take candidates
        int added = 0;
        for (int i = 0; i < linksByCost.length && open > 0; i++) {
            int l = linksByCost[i];
            if (!active[l]) {
                continue;
            }
            int a = linkSource[l];
            int b = linkSink[l];
            boolean wanted = false;
            if (perSource[a] < k) {
                wanted = true;
                if (++perSource[a] == k) {
                    open--;
                }
            }
            if (perSink[b] < k) {
                wanted = true;
                if (++perSink[b] == k) {
                    open--;
                }
            }
            if (wanted && !candidate[l]) {
                candidate[l] = true;
                added++;
            }
        }
        return added;
    }

    /**
     * Marks the links of the least-cost greedy flow: in cost order, each active link carries as much
     * as its source has left and its sink still takes. On a complete bipartite graph this meets all
     * demand with at most sources + sinks − 1 links, so the candidates are feasible from the start;
     * with links switched off it may strand some units, and then the k cheapest per node must do.
     * Returns how many links were not marked before; {@code metOut[0]}, if given, tells whether every
     * unit was placed (supplies and demands have the same total, so then all demand is met).
     */
    private static int greedy(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            boolean[] active,
            int[] linksByCost,
            boolean[] candidate,
            boolean[] metOut) {
        int[] supplyLeft = supply.clone();
        int[] demandLeft = demand.clone();
        int open = 0; // sources with supply left
        for (int units : supply) {
            if (units > 0) {
                open++;
            }
        }
        int added = 0;
        for (int i = 0; i < linksByCost.length && open > 0; i++) {
            int l = linksByCost[i];
            int a = linkSource[l];
            int b = linkSink[l];
            if (!active[l] || supplyLeft[a] == 0 || demandLeft[b] == 0) {
                continue;
            }
            int units = Math.min(supplyLeft[a], demandLeft[b]);
            supplyLeft[a] -= units;
            demandLeft[b] -= units;
            if (supplyLeft[a] == 0) {
                open--;
            }
            if (!candidate[l]) {
                candidate[l] = true;
                added++;
            }
        }
        if (metOut != null) {
            metOut[0] = open == 0;
        }
        return added;
    }

    /**
     * Min-cost flow over the candidate links ({@link MinCostTransport}); fills {@code flow} on them and
     * returns the optimal cost, or {@link #INFEASIBLE}.
     */
    private static long solveOn(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            long[] cost,
            boolean[] candidate,
            long[] flow) {
        long optimum = MinCostTransport.solve(supply, demand, linkSource, linkSink, cost, candidate, flow);
        return optimum == MinCostTransport.INFEASIBLE ? INFEASIBLE : optimum;
    }

    /**
     * Shortest distances in the residual graph of {@code flow} on the candidate links, from a virtual
     * root joined to every node at cost 0: sources are nodes 0..s-1, sinks s..s+g-1.
     *
     * @throws IllegalStateException on a negative cycle, i.e. when the flow is not optimal on its
     *                               candidates (the solver broke its promise)
     */
    private static long[] potentials(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            long[] cost,
            boolean[] candidate,
            long[] flow) {
        int sources = supply.length;
        int n = sources + demand.length;
        // Residual arcs in compressed rows: first count per tail, then fill.
        int[] start = new int[n + 1];
        int arcs = 0;
        for (int l = 0; l < candidate.length; l++) {
            if (candidate[l]) {
                int a = linkSource[l];
                int b = sources + linkSink[l];
                if (flow[l] < Math.min(supply[a], demand[b - sources])) {
                    start[a + 1]++;
                    arcs++;
                }
                if (flow[l] > 0) {
                    start[b + 1]++;
                    arcs++;
                }
            }
        }
        for (int v = 0; v < n; v++) {
            start[v + 1] += start[v];
        }
        int[] head = new int[arcs];
        long[] arcCost = new long[arcs];
        int[] next = start.clone();
        for (int l = 0; l < candidate.length; l++) {
            if (candidate[l]) {
                int a = linkSource[l];
                int b = sources + linkSink[l];
                if (flow[l] < Math.min(supply[a], demand[b - sources])) {
                    head[next[a]] = b;
                    arcCost[next[a]++] = cost[l];
                }
                if (flow[l] > 0) {
                    head[next[b]] = a;
                    arcCost[next[b]++] = -cost[l];
                }
            }
        }
        // Queue-based Bellman–Ford (SPFA) from every node at distance 0.
        long[] d = new long[n];
        int[] queue = new int[n];
        boolean[] queued = new boolean[n];
        int[] passes = new int[n];
        for (int v = 0; v < n; v++) {
            queue[v] = v;
            queued[v] = true;
        }
        int first = 0;
        int size = n;
        while (size > 0) {
            int u = queue[first];
            first = first + 1 == n ? 0 : first + 1;
            size--;
            queued[u] = false;
            if (++passes[u] > n) {
                throw new IllegalStateException("min-cost flow: the solver's flow has a negative residual cycle");
            }
            long du = d[u];
            for (int e = start[u]; e < start[u + 1]; e++) {
                int v = head[e];
                long dv = du + arcCost[e];
                if (dv < d[v]) {
                    d[v] = dv;
                    if (!queued[v]) {
                        queued[v] = true;
                        int last = first + size;
                        queue[last >= n ? last - n : last] = v;
                        size++;
                    }
                }
            }
        }
        return d;
    }

    /**
     * Adds every active link outside the candidates whose reduced cost is negative; returns how many.
     * A link whose source supplies nothing or whose sink takes nothing has capacity 0, so no residual
     * arc, and is never added.
     */
    private static int price(
            int[] supply,
            int[] demand,
            int[] linkSource,
            int[] linkSink,
            long[] cost,
            boolean[] active,
            boolean[] candidate,
            long[] potential) {
        int sources = supply.length;
        int added = 0;
        for (int l = 0; l < candidate.length; l++) {
            if (active[l]
                    && !candidate[l]
                    && supply[linkSource[l]] > 0
                    && demand[linkSink[l]] > 0
                    && cost[l] + potential[linkSource[l]] - potential[sources + linkSink[l]] < 0) {
                candidate[l] = true;
                added++;
            }
        }
        return added;
    }
}
