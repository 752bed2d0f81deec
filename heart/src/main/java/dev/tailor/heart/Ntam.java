package dev.tailor.heart;

import dev.tailor.heart.flow.EntropicTransport;
import dev.tailor.heart.flow.SparseMinCostFlow;
import dev.tailor.heart.flow.TransportNetwork;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * NTAM, stage 2 of HEART: for one call edge A → B, how the calls leaving each of A's nodes are
 * spread over B's replica groups, so that every group receives its ATPM share, slow links are
 * avoided where the rest can carry the load, and the total link delay is minimal.
 *
 * <p>Contract: every caller node's fractions sum to 1; the flow meets each callee group's share
 * exactly (to 1/{@code flowUnits}); a pruned link carries no flow; pruning never makes the problem
 * infeasible (the full link set always is feasible, and every removal is checked).
 */
/*
 * Maintainer note.
 *
 * Supplies and demands. Supply of caller node i = λ × A's ATPM share on i this round (the plan
 * being applied moves A's traffic too), or, for an entry point, λ × its measured split by node.
 * Demand of callee group j = λ × B's ATPM share of j. Only proportions matter, so both are
 * quantised into flowUnits integer units by largest remainder with at least one unit per positive
 * value; a zero-rate edge is planned like any other (its fractions still configure the mesh),
 * except that under queue-aware routing a callee no call reached at all is split as its ATPM shares
 * from every caller node (routeAsShares): the min-cost flow's answer there is a corner, each node's
 * calls to itself, that no measurement supports and that the share cap walks back slowly.
 *
 * Slow-link filter [HEART §NTAM; docs/design.md#slow-link-filter]. The candidate links are all (caller node, callee
 * group) pairs, cost = one-way delay. An exact 1-D 2-means (TwoMeans) splits their delays into a
 * fast and a slow cluster. If the slow cluster holds at most batchRemovalMaxFraction of the links it
 * is removed in one step, and if a max-flow check (super source → super sink) then falls short, its
 * links are reinstated fastest first until all demand is met (the paper's abstract; found by a
 * search, since feasibility only grows as links return: see below). Else its links are removed one at a
 * time from the slowest, each removal checked by max-flow; a removal that leaves demand unmet is
 * restored and the filter goes on with the next link (our reading of "restore / keep the last
 * feasible set": the set stays feasible after every step).
 *
 * Checks are skipped when they cannot fail: a link that carried no flow in the last feasible
 * max-flow can be removed and that same flow still meets all demand. On large edges (10,000 links)
 * this turns thousands of max-flow runs into a handful.
 *
 * The batch's reinstatement asks as few and as small questions as it can, with the same answer as
 * reinstating one link at a time (the shortest feasible prefix of the slow links, fastest first):
 * a node whose remaining links reach less than its own supply (or demand) alone proves a prefix
 * infeasible, so the prefix that first mends every such node is a lower bound, found in one pass
 * (TransportNetwork.nodeShortfall); the search gallops up from it and bisects; and a prefix is
 * proved feasible by a max-flow over a few links per node before the max-flow over all of them is
 * asked (TransportNetwork.demandCarried). On large-10000 the bound is the answer on 123 of the 125
 * edges that need links back: one max-flow on about 1,750 arcs per edge instead of about eleven on
 * 8,700.
 *
 * Assignment. Min-cost flow over the remaining links minimises Σ flow × delay (TransportSimplex: a
 * network simplex started from the cheapest-first greedy flow, about six times faster per edge than
 * OR-tools on the 10,000-replica benchmark; SparseMinCostFlow only where it declines).
 * A caller node's fraction to a group is that link's flow ÷ the node's supply; a group's flow is
 * split equally among its replicas.
 */
final class Ntam {

    private Ntam() {}

    /**
     * Plans one call edge.
     *
     * @param call        the edge
     * @param entryPoint  whether the caller has no replicas (its split is {@code supplyByNode} as
     *                    measured)
     * @param supplyByNode share of the edge's calls leaving each node, by node index (any scale;
     *                    only proportions are used)
     * @param callee      ATPM's shares of the callee
     * @param calleeGroups the callee's groups, in the same order as {@code callee.groups()}
     */
    static Route route(
            Call call,
            boolean entryPoint,
            double[] supplyByNode,
            ComponentShares callee,
            List<Group> calleeGroups,
            Cluster cluster,
            HeartConfig config) {
        List<String> explain = new ArrayList<>();
        // Sources: caller nodes with calls, by name.
        List<Integer> sourceNodes = new ArrayList<>();
        for (int i = 0; i < supplyByNode.length; i++) {
            if (supplyByNode[i] > 0) {
                sourceNodes.add(i);
            }
        }
        sourceNodes.sort(Comparator.comparing(i -> cluster.nodes().get(i).name()));
        // Sinks: callee groups with a positive share.
        List<Integer> sinkGroups = new ArrayList<>();
        for (int j = 0; j < calleeGroups.size(); j++) {
            if (callee.groups().get(j).share() > 0) {
                sinkGroups.add(j);
            }
        }
        if (sourceNodes.isEmpty() || sinkGroups.isEmpty()) {
            explain.add(
                    sourceNodes.isEmpty()
                            ? "no caller node sends calls on this edge: nothing to route"
                            : "no callee group has a positive share: nothing to route");
            return new Route(call.caller(), call.callee(), entryPoint, call.rate(), List.of(), List.of(), 0, explain);
        }

        int s = sourceNodes.size();
        int g = sinkGroups.size();
        double[] supplyWeights = new double[s];
        for (int a = 0; a < s; a++) {
            supplyWeights[a] = supplyByNode[sourceNodes.get(a)];
        }
        double[] demandWeights = new double[g];
        for (int b = 0; b < g; b++) {
            demandWeights[b] = callee.groups().get(sinkGroups.get(b)).share();
        }
        int units = config.flowUnits();
        int[] supply = Apportionment.largestRemainderAtLeastOne(supplyWeights, units);
        int[] demand = Apportionment.largestRemainderAtLeastOne(demandWeights, units);

        int links = s * g;
        int[] sourceNode = sourceNodes.stream().mapToInt(Integer::intValue).toArray();
        int[] sinkNode = new int[g];
        for (int b = 0; b < g; b++) {
            sinkNode[b] = calleeGroups.get(sinkGroups.get(b)).nodeIndex();
        }
        int[] linkSource = new int[links];
        int[] linkSink = new int[links];
        double[] cost = new double[links];
        for (int a = 0, l = 0; a < s; a++) {
            for (int b = 0; b < g; b++, l++) {
                linkSource[l] = a;
                linkSink[l] = b;
                cost[l] = cluster.delayMillis(sourceNode[a], sinkNode[b]);
            }
        }
        // Described only when pruned or explained: most of a large edge's links never are.
        IntFunction<Link> described = l -> {
            int fromNode = sourceNode[linkSource[l]];
            Group group = calleeGroups.get(sinkGroups.get(linkSink[l]));
            return new Link(
                    cluster.nodes().get(fromNode).name(),
                    group.node(),
                    group.id(),
                    cost[l],
                    cluster.delayAssumed(fromNode, group.nodeIndex()));
        };
        List<Link> pruned;
        double[] flow = new double[links];
        double epsilon = spreadMillis(callee, config);
        String how;
        double meanDelay;
        try (TransportNetwork network = new TransportNetwork(supply, demand, linkSource, linkSink, cost)) {
            double minGap = Math.max(config.slowClusterMinGapMillis(), epsilon / 2);
            pruned = config.slowLinkFilter() ? filterSlowLinks(network, described, minGap, config, explain) : List.of();
            if (!config.slowLinkFilter()) {
                explain.add("slow-link filter off: " + (epsilon > 0 ? "entropic transport" : "min-cost flow")
                        + " over all " + links + " links");
            }
            EntropicTransport.Result spread = epsilon > 0 ? spread(network, supply, demand, cost, epsilon, flow) : null;
            if (spread != null && spread.converged()) {
                // Whole units per caller node, as the min-cost flow has: the scaling's last digits
                // depend on its stopping point, and must not flip an Istio weight from round to round.
                for (int a = 0; a < s; a++) {
                    int[] whole = Apportionment.largestRemainder(
                            java.util.Arrays.copyOfRange(flow, a * g, a * g + g), supply[a]);
                    for (int b = 0; b < g; b++) {
                        flow[a * g + b] = whole[b];
                    }
                }
                double costMillis = 0;
                for (int l = 0; l < links; l++) {
                    costMillis += flow[l] * cost[l];
                }
                meanDelay = costMillis / units;
                how = String.format(
                        Locale.ROOT,
                        "entropic transport, ε = %s ms on the round trip (%s × the"
                                + " callee's expected sojourn), %d Sinkhorn iteration(s)",
                        Link.format(epsilon),
                        Link.format(config.spreadScale()),
                        spread.iterations());
            } else {
                TransportNetwork.MinCostFlowResult optimum = network.minCostFlow(flow);
                meanDelay = optimum.costMillis() / units;
                SparseMinCostFlow.Result orTools = optimum.how().orTools();
                how = (spread == null
                                ? "min-cost flow"
                                : String.format(
                                        Locale.ROOT,
                                        "min-cost flow (the entropic"
                                                + " scaling with ε = %s ms did not converge in %d iterations)",
                                        Link.format(epsilon),
                                        spread.iterations()))
                        + "; "
                        + (orTools == null
                                ? "network simplex, " + optimum.how().pivots()
                                        + " pivot(s) from the cheapest-first flow"
                                : String.format(
                                        Locale.ROOT,
                                        "successive shortest paths on %d candidate links in %d"
                                                + " round(s); every other link priced out, so optimal over all",
                                        orTools.candidateLinks(),
                                        orTools.solves()));
            }
        }

        double supplySum = sum(supplyWeights);
        List<NodeRoute> from = new ArrayList<>(s);
        for (int a = 0; a < s; a++) {
            Map<String, Double> toNodes = new TreeMap<>();
            Map<String, Double> toReplicas = new TreeMap<>();
            for (int b = 0; b < g; b++) {
                int l = a * g + b;
                if (flow[l] <= 0) {
                    continue;
                }
                double fraction = flow[l] / supply[a];
                Group group = calleeGroups.get(sinkGroups.get(b));
                toNodes.merge(group.node(), fraction, Double::sum);
                double perReplica = fraction / group.replicas().size();
                for (Replica replica : group.replicas()) {
                    toReplicas.merge(replica.pod(), perReplica, Double::sum);
                }
            }
            from.add(new NodeRoute(
                    cluster.nodes().get(sourceNode[a]).name(),
                    call.rate() * supplyWeights[a] / supplySum,
                    toNodes,
                    toReplicas));
        }
        int remaining = links - pruned.size();
        explain.add(String.format(
                Locale.ROOT,
                "flow over %d links: mean delay %s ms per call (%s)",
                remaining,
                Link.format(meanDelay),
                how));
        return new Route(call.caller(), call.callee(), entryPoint, call.rate(), from, pruned, meanDelay, explain);
    }

    /**
     * A callee's routes from {@link #routeCallee}.
     *
     * @param routes     one per call, in the order given
     * @param loadByNode the calls per second the plan sends to each node's groups of the callee, by node
     *                   index: its callees' supply
     */
    record Planned(List<Route> routes, double[] loadByNode) {}

    /**
     * Plans every call into one callee at once with queueing sinks ({@link HeartConfig#queueAwareRouting()}):
     * the caller nodes' calls, summed over the calls, are the sources; each of the callee's groups takes
     * what its M/M/1 queueing cost makes worth it against the round-trip delays
     * ({@link EntropicTransport#solveQueueing}), at the temperature of {@link #spreadMillis}. A caller
     * node's calls are split alike whichever call they belong to (the costs depend on the nodes only).
     * The split is the one planned for {@link HeartConfig#loadHeadroom()} more calls than measured
     * (at most {@link HeartConfig#MAX_HEADROOM_UTILISATION} of the capacity), applied to the measured calls.
     * Where a group has no load estimate, nothing calls the callee, or the scaling does not converge,
     * each call is routed by {@link #route} on the ATPM shares instead, with a note.
     *
     * @param calls    the calls into the callee
     * @param supplies per call, its calls per node by node index (any scale; only proportions are used)
     * @param shareSupplies per call, the paper's supply (an entry point's measured calls, a component's
     *                      ATPM shares), by node index: every node with some gets a route, at zero rate
     *                      where the plan sends it nothing, and the fallback routes on these
     */
    static Planned routeCallee(
            List<Call> calls,
            List<double[]> supplies,
            List<double[]> shareSupplies,
            ComponentShares callee,
            List<Group> calleeGroups,
            Cluster cluster,
            HeartConfig config) {
        int n = cluster.nodes().size();
        int g = calleeGroups.size();
        double epsilon = spreadMillis(callee, config);
        double[] rowSupply = new double[n];
        double total = 0;
        for (int c = 0; c < calls.size(); c++) {
            double[] supply = supplies.get(c);
            double sum = sum(supply);
            if (sum > 0 && calls.get(c).rate() > 0) {
                for (int i = 0; i < n; i++) {
                    rowSupply[i] += calls.get(c).rate() * supply[i] / sum;
                }
                total += calls.get(c).rate();
            }
        }
        String fallback = null;
        double[] capacity = new double[g];
        double[] servers = new double[g];
        for (int j = 0; j < g; j++) {
            Double mu = callee.groups().get(j).capacityRequestsPerSecond();
            if (mu == null || !(mu > 0)) {
                fallback = "no load estimate for every group of " + callee.component();
                break;
            }
            capacity[j] = mu;
            servers[j] = Atpm.servers(calleeGroups.get(j));
        }
        if (fallback == null && !(total > 0)) {
            fallback = "no calls into " + callee.component() + " this round";
        }
        if (fallback == null && !(epsilon > 0)) {
            fallback = "no expected sojourn for " + callee.component();
        }
        if (fallback == null && sum(capacity) <= total) {
            // No queueing model holds in a shortfall: every group would be planned beyond capacity.
            fallback = String.format(
                    Locale.ROOT,
                    "capacity shortfall (%s req/s of calls, %s req/s of capacity)",
                    Link.format(total),
                    Link.format(sum(capacity)));
        }
        if (fallback == null) {
            fallback = tooLargeForQueueing(g, n);
        }
        int[] rows = new int[n];
        int s = 0;
        for (int i = 0; i < n; i++) {
            if (rowSupply[i] > 0) {
                rows[s++] = i;
            }
        }
        EntropicTransport.Result solved = null;
        double[] flow = null;
        double planned = total;
        if (fallback == null && g > 0) {
            // Planned for the load the round may grow to (HeartConfig.loadHeadroom), not beyond
            // MAX_HEADROOM_UTILISATION of the capacity, never below what was measured: the split of
            // a plan for more load stays within every group's capacity up to that load.
            planned = Math.max(
                    total,
                    Math.min(
                            (1 + config.loadHeadroom()) * total, HeartConfig.MAX_HEADROOM_UTILISATION * sum(capacity)));
            double scale = planned / total;
            double[] a = new double[s];
            double[] cost = new double[s * g];
            for (int r = 0; r < s; r++) {
                a[r] = rowSupply[rows[r]] * scale;
                for (int j = 0; j < g; j++) {
                    cost[r * g + j] =
                            2 * cluster.delayMillis(rows[r], calleeGroups.get(j).nodeIndex());
                }
            }
            boolean[] active = new boolean[s * g];
            java.util.Arrays.fill(active, true);
            // ATPM's floor per group, so that a group that looks slow still serves requests to be
            // measured by: min(minShareOfEqualSplit × its replicas ÷ all replicas, capacity ÷ total).
            double[] minimum = new double[g];
            int replicas = 0;
            for (Group group : calleeGroups) {
                replicas += group.replicas().size();
            }
            for (int j = 0; j < g; j++) {
                minimum[j] = Math.min(
                                config.minShareOfEqualSplit()
                                        * calleeGroups.get(j).replicas().size()
                                        / replicas
                                        * planned,
                                capacity[j])
                        * (1 - 1e-9);
            }
            flow = new double[s * g];
            solved = EntropicTransport.solveQueueing(a, capacity, servers, minimum, cost, active, epsilon, flow);
            if (!solved.converged()) {
                fallback = String.format(
                        Locale.ROOT,
                        "the queue-aware transport with ε = %s ms did not converge in %d" + " Newton iterations",
                        Link.format(epsilon),
                        solved.iterations());
            }
        }
        if (!(total > 0) && g > 0) {
            // Nothing to measure the split against: every caller node sends its calls as ATPM shares the
            // callee, not the min-cost flow's corner solution (each node to itself as far as the shares
            // allow), which the share cap would then have to walk back when calls return.
            List<Route> routes = new ArrayList<>();
            for (int c = 0; c < calls.size(); c++) {
                routes.add(routeAsShares(calls.get(c), shareSupplies.get(c), callee, calleeGroups, cluster, config));
            }
            double[] load = new double[n];
            for (GroupShare group : callee.groups()) {
                load[cluster.indexOf(group.node())] += group.share();
            }
            return new Planned(routes, load);
        }
        if (fallback != null || g == 0) {
            List<Route> routes = new ArrayList<>();
            for (int c = 0; c < calls.size(); c++) {
                Call call = calls.get(c);
                routes.add(routeOnShares(
                        call,
                        shareSupplies.get(c),
                        callee,
                        calleeGroups,
                        cluster,
                        config,
                        fallback == null ? "no groups" : fallback));
            }
            double[] load = new double[n];
            for (GroupShare group : callee.groups()) {
                load[cluster.indexOf(group.node())] += group.share();
            }
            return new Planned(routes, load);
        }
        double[] load = new double[n];
        double[] taken = new double[g];
        for (int r = 0; r < s; r++) {
            for (int j = 0; j < g; j++) {
                taken[j] += flow[r * g + j] * total / planned;
            }
        }
        for (int j = 0; j < g; j++) {
            load[calleeGroups.get(j).nodeIndex()] += taken[j];
        }
        StringBuilder groupsPlanned = new StringBuilder();
        for (int j = 0; j < g; j++) {
            groupsPlanned.append(String.format(
                    Locale.ROOT,
                    "%s%s %.4g req/s (%.0f %% of its capacity)",
                    j == 0 ? "" : ", ",
                    calleeGroups.get(j).id(),
                    taken[j],
                    100 * taken[j] / capacity[j]));
        }
        String headroom = planned > total
                ? String.format(
                        Locale.ROOT,
                        ", split as planned for %s req/s (%.0f %% headroom for load growth)",
                        Link.format(planned),
                        100 * (planned / total - 1))
                : "";
        String how = String.format(
                Locale.ROOT,
                "queue-aware entropic transport of the %d call edge(s) into %s"
                        + " together (%s: links are priced by their delays against ε; ATPM's shares act"
                        + " only as floors), ε = %s ms on the round trip (%s × the callee's expected sojourn), %d Newton"
                        + " iteration(s); all %s req/s into %s%s: %s",
                calls.size(),
                callee.component(),
                config.slowLinkFilter()
                        ? "the slow-link filter, though on, runs only on a callee planned the" + " paper's way"
                        : "no slow-link filter",
                Link.format(epsilon),
                Link.format(config.spreadScale()),
                solved.iterations(),
                Link.format(total),
                callee.component(),
                headroom,
                groupsPlanned);
        // Every node's split, from the scalings (the same for every call from that node).
        double[][] split = new double[n][];
        double[] costs = new double[g];
        List<Route> routes = new ArrayList<>(calls.size());
        for (int c = 0; c < calls.size(); c++) {
            Call call = calls.get(c);
            double[] supply = supplies.get(c);
            double sum = sum(supply);
            boolean entryPoint = !cluster.hasReplicas(call.caller());
            boolean anyNode = false;
            for (double node : shareSupplies.get(c)) {
                anyNode |= node > 0;
            }
            if (!(sum > 0) && !anyNode) {
                routes.add(new Route(
                        call.caller(),
                        call.callee(),
                        entryPoint,
                        call.rate(),
                        List.of(),
                        List.of(),
                        0,
                        List.of("no caller node sends calls on this edge: nothing to route")));
                continue;
            }
            List<NodeRoute> from = new ArrayList<>();
            double delay = 0;
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (supply[i] > 0 || shareSupplies.get(c)[i] > 0) {
                    order.add(i);
                }
            }
            order.sort(Comparator.comparing(i -> cluster.nodes().get(i).name()));
            for (int i : order) {
                if (split[i] == null) {
                    for (int j = 0; j < g; j++) {
                        costs[j] =
                                2 * cluster.delayMillis(i, calleeGroups.get(j).nodeIndex());
                    }
                    split[i] = new double[g];
                    if (!EntropicTransport.fractions(costs, solved.sinkScaling(), epsilon, split[i])) {
                        // Every group this node reaches is priced out: the ATPM shares, not nothing.
                        for (int j = 0; j < g; j++) {
                            split[i][j] = callee.groups().get(j).share();
                        }
                    }
                    // To the flow units' resolution, so that the scaling's last digits cannot flip an
                    // Istio weight between rounds of the same metrics.
                    int[] whole = Apportionment.largestRemainder(split[i], config.flowUnits());
                    for (int j = 0; j < g; j++) {
                        split[i][j] = (double) whole[j] / config.flowUnits();
                    }
                }
                double weight = sum > 0 ? supply[i] / sum : 0;
                Map<String, Double> toNodes = new TreeMap<>();
                Map<String, Double> toReplicas = new TreeMap<>();
                for (int j = 0; j < g; j++) {
                    double fraction = split[i][j];
                    if (!(fraction > 0)) {
                        continue;
                    }
                    Group group = calleeGroups.get(j);
                    toNodes.merge(group.node(), fraction, Double::sum);
                    for (Replica replica : group.replicas()) {
                        toReplicas.merge(
                                replica.pod(), fraction / group.replicas().size(), Double::sum);
                    }
                    delay += weight * fraction * cluster.delayMillis(i, group.nodeIndex());
                }
                from.add(new NodeRoute(cluster.nodes().get(i).name(), call.rate() * weight, toNodes, toReplicas));
            }
            routes.add(new Route(
                    call.caller(),
                    call.callee(),
                    entryPoint,
                    call.rate(),
                    from,
                    List.of(),
                    delay,
                    List.of(String.format(
                            Locale.ROOT,
                            "flow over all %d links: mean delay %s ms per call (%s)",
                            order.size() * g,
                            Link.format(delay),
                            how))));
        }
        return new Planned(routes, load);
    }

    /**
     * Largest caller nodes × groups² of a callee planned by the queue-aware transport; larger callees
     * are planned by the paper's NTAM. Our choice: a few milliseconds of Newton steps per callee on one
     * core (64 nodes with 64 groups), so that a round stays within the planning-time targets.
     */
    static final long MAX_QUEUEING_WORK = 64L * 64 * 64;

    /**
     * Why a callee with {@code groups} groups on a cluster of {@code nodes} nodes is too large for the
     * queue-aware transport ({@link #MAX_QUEUEING_WORK}), or null when it is not.
     */
    static String tooLargeForQueueing(int groups, int nodes) {
        return (long) groups * groups * nodes > MAX_QUEUEING_WORK
                ? String.format(
                        Locale.ROOT,
                        "%d groups on %d nodes exceed the queue-aware planner's size (its Newton"
                                + " steps take O(nodes × groups²))",
                        groups,
                        nodes)
                : null;
    }

    /**
     * The paper's plan of one call edge where the queue-aware transport does not apply: the slow-link
     * filter and the min-cost flow on the ATPM shares, without the entropic spread (a fixed-demand
     * scaling can take thousands of iterations where links differ much against ε), with
     * {@code reason} first in the explanation.
     */
    static Route routeOnShares(
            Call call,
            double[] shareSupply,
            ComponentShares callee,
            List<Group> calleeGroups,
            Cluster cluster,
            HeartConfig config,
            String reason) {
        Route route = route(
                call,
                !cluster.hasReplicas(call.caller()),
                shareSupply,
                callee,
                calleeGroups,
                cluster,
                config.toBuilder().spreadScale(0).build());
        List<String> explain = new ArrayList<>();
        explain.add(reason + ": routed on the ATPM shares by min-cost flow");
        explain.addAll(route.explain());
        return new Route(
                route.caller(),
                route.callee(),
                route.entryPoint(),
                route.requestsPerSecond(),
                route.from(),
                route.prunedLinks(),
                route.meanDelayMillis(),
                explain);
    }

    /**
     * A call edge into a callee that no call reached this round: from every caller node with a share
     * supply, the callee's ATPM shares (to the flow units' resolution), so every group still gets
     * exactly its share and no caller node's split is bent towards its own node by delays alone.
     */
    static Route routeAsShares(
            Call call,
            double[] shareSupply,
            ComponentShares callee,
            List<Group> calleeGroups,
            Cluster cluster,
            HeartConfig config) {
        boolean entryPoint = !cluster.hasReplicas(call.caller());
        int g = calleeGroups.size();
        double[] shares = new double[g];
        for (int j = 0; j < g; j++) {
            shares[j] = Math.max(0, callee.groups().get(j).share());
        }
        double supplySum = sum(shareSupply);
        if (!(supplySum > 0) || !(sum(shares) > 0)) {
            return new Route(
                    call.caller(),
                    call.callee(),
                    entryPoint,
                    call.rate(),
                    List.of(),
                    List.of(),
                    0,
                    List.of("no caller node sends calls on this edge: nothing to route"));
        }
        int[] whole = Apportionment.largestRemainder(shares, config.flowUnits());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < shareSupply.length; i++) {
            if (shareSupply[i] > 0) {
                order.add(i);
            }
        }
        order.sort(Comparator.comparing(i -> cluster.nodes().get(i).name()));
        List<NodeRoute> from = new ArrayList<>();
        double delay = 0;
        for (int i : order) {
            double weight = shareSupply[i] / supplySum;
            Map<String, Double> toNodes = new TreeMap<>();
            Map<String, Double> toReplicas = new TreeMap<>();
            for (int j = 0; j < g; j++) {
                double fraction = (double) whole[j] / config.flowUnits();
                if (!(fraction > 0)) {
                    continue;
                }
                Group group = calleeGroups.get(j);
                toNodes.merge(group.node(), fraction, Double::sum);
                for (Replica replica : group.replicas()) {
                    toReplicas.merge(replica.pod(), fraction / group.replicas().size(), Double::sum);
                }
                delay += weight * fraction * cluster.delayMillis(i, group.nodeIndex());
            }
            from.add(new NodeRoute(cluster.nodes().get(i).name(), call.rate() * weight, toNodes, toReplicas));
        }
        return new Route(
                call.caller(),
                call.callee(),
                entryPoint,
                call.rate(),
                from,
                List.of(),
                delay,
                List.of(String.format(
                        Locale.ROOT,
                        "no calls into %s this round: every caller node's calls split as its ATPM shares, not by"
                                + " delays (no load to weigh them against); mean delay %s ms per call",
                        callee.component(),
                        Link.format(delay))));
    }

    /** Most filter steps --explain lists per edge; the rest are summarised. */
    private static final int EXPLAIN_STEPS = 40;

    /**
     * The largest planned utilisation that enters the expected sojourn time S ÷ (1 − ρ) of
     * {@link #spreadMillis}: at or beyond it (a capacity shortfall) the sojourn is taken as 20 × S.
     */
    static final double MAX_SPREAD_UTILISATION = 0.95;

    /**
     * The entropic transport's ε for calls to {@code callee}, in ms of round-trip delay:
     * {@link HeartConfig#spreadScale()} × Σ over its groups of share × S ÷ (1 − ρ), with S the group's
     * CPU-seconds per request (its service time on one core) and ρ = share × demand ÷ capacity its
     * planned utilisation (at most {@link #MAX_SPREAD_UTILISATION}): the mean sojourn of an M/M/1
     * queue, whose standard deviation equals its mean. 0 (min-cost flow) when the scale is 0 or a
     * group has no load estimate (equal split: nothing says how long a call takes).
     */
    static double spreadMillis(ComponentShares callee, HeartConfig config) {
        if (config.spreadScale() == 0) {
            return 0;
        }
        Double demand = callee.demandRequestsPerSecond();
        double sojourn = 0;
        for (GroupShare group : callee.groups()) {
            if (group.share() <= 0) {
                continue;
            }
            if (group.loadCpuSecondsPerRequest() == null || group.capacityRequestsPerSecond() == null) {
                return 0;
            }
            double utilisation = demand == null
                    ? 0
                    : Math.min(MAX_SPREAD_UTILISATION, group.share() * demand / group.capacityRequestsPerSecond());
            sojourn += group.share() * group.loadCpuSecondsPerRequest() * 1000 / (1 - utilisation);
        }
        return config.spreadScale() * sojourn;
    }

    /**
     * The entropic transport over the links active in {@code network}, costs on the round trip (a call
     * pays a link's one-way delay twice), into {@code flow}.
     */
    private static EntropicTransport.Result spread(
            TransportNetwork network,
            int[] supply,
            int[] demand,
            double[] oneWayMillis,
            double epsilonMillis,
            double[] flow) {
        int links = oneWayMillis.length;
        double[] roundTrip = new double[links];
        boolean[] active = new boolean[links];
        for (int l = 0; l < links; l++) {
            roundTrip[l] = 2 * oneWayMillis[l];
            active[l] = network.isActive(l);
        }
        double[] a = new double[supply.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = supply[i];
        }
        double[] b = new double[demand.length];
        for (int j = 0; j < b.length; j++) {
            b[j] = demand[j];
        }
        return EntropicTransport.solve(a, b, roundTrip, active, epsilonMillis, flow);
    }

    /** {@link #filterSlowLinks(TransportNetwork, IntFunction, double, HeartConfig, List)} with the configured gap. */
    static List<Link> filterSlowLinks(
            TransportNetwork network, IntFunction<Link> described, HeartConfig config, List<String> explain) {
        return filterSlowLinks(network, described, config.slowClusterMinGapMillis(), config, explain);
    }

    /**
     * Runs the slow-link filter, switching links off in {@code network}; returns the pruned links.
     *
     * @param minGapMillis the slow cluster counts as slow only when its mean delay exceeds the fast
     *                     cluster's by at least this many ms
     */
    static List<Link> filterSlowLinks(
            TransportNetwork network,
            IntFunction<Link> described,
            double minGapMillis,
            HeartConfig config,
            List<String> explain) {
        int links = network.links();
        // Ascending delay, at the solver's resolution of 1 µs; ties in link order, so results never
        // depend on hashing.
        int[] order = network.linksByCost();
        double[] sorted = new double[links];
        for (int k = 0; k < links; k++) {
            sorted[k] = network.costMicros(order[k]) / 1000.0;
        }
        int split = TwoMeans.split(sorted);
        if (split < 0) {
            explain.add("all " + links + " link(s) have the same delay (" + Link.format(links == 0 ? 0 : sorted[0])
                    + " ms): no slow cluster, nothing pruned");
            return List.of();
        }
        int slow = links - split;
        explain.add(String.format(
                Locale.ROOT,
                "2-means on %d link delays: fast cluster %d link(s), %s..%s ms; slow cluster %d link(s), %s..%s ms",
                links,
                split,
                Link.format(sorted[0]),
                Link.format(sorted[split - 1]),
                slow,
                Link.format(sorted[split]),
                Link.format(sorted[links - 1])));
        double gap = mean(sorted, split, links) - mean(sorted, 0, split);
        if (gap < minGapMillis) {
            explain.add("the slow cluster is only " + Link.format(gap) + " ms slower on average (< "
                    + Link.format(minGapMillis) + " ms, "
                    + (minGapMillis > config.slowClusterMinGapMillis()
                            ? "half the entropic transport's ε: not slow against the callee's sojourn"
                            : "--slow-cluster-min-gap-millis")
                    + "): nothing pruned");
            return List.of();
        }

        int total = network.totalUnits();
        double fraction = (double) slow / links;
        if (fraction <= config.batchRemovalMaxFraction()) {
            return removeAtOnce(network, order, split, described, total, fraction, config, explain);
        }
        explain.add(String.format(
                Locale.ROOT,
                "slow cluster is %s of the links (> %s): removing one at a time from the slowest,"
                        + " each removal checked by max-flow",
                percent(fraction),
                percent(config.batchRemovalMaxFraction())));
        long carried = network.maxFlow(null);
        if (carried != total) {
            throw new IllegalStateException("the full link set must be feasible; max-flow " + carried + " of " + total);
        }
        // Flow of the last feasible max-flow on the slow links not yet examined (order[split..k]).
        double[] flow = new double[links];
        readFlows(network, order, split, links, flow);
        List<Link> pruned = new ArrayList<>();
        int skippedChecks = 0;
        int restored = 0;
        int steps = 0;
        for (int k = links - 1; k >= split; k--) {
            int l = order[k];
            network.setActive(l, false);
            if (flow[l] <= 0) {
                // The last feasible max-flow did not use this link, so it still meets all demand.
                pruned.add(described.apply(l));
                skippedChecks++;
                continue;
            }
            long value = network.maxFlow(null);
            boolean feasible = value == total;
            if (feasible) {
                pruned.add(described.apply(l));
                readFlows(network, order, split, k, flow);
            } else {
                network.setActive(l, true);
                restored++;
            }
            if (steps++ < EXPLAIN_STEPS) {
                explain.add("removed " + described.apply(l)
                        + (feasible
                                ? ": max-flow still meets all demand: pruned"
                                : ": max-flow leaves " + unmet(total - value, total) + " of demand unmet: restored"));
            }
        }
        if (steps > EXPLAIN_STEPS) {
            explain.add("... and " + (steps - EXPLAIN_STEPS) + " more checked removals");
        }
        if (skippedChecks > 0) {
            explain.add(skippedChecks + " link(s) pruned without a new max-flow run: they carried no flow in the last"
                    + " feasible max-flow, so it still meets all demand without them");
        }
        explain.add(pruned.size() + " of " + slow + " slow link(s) pruned, " + restored + " kept for feasibility");
        return pruned;
    }

    /**
     * Batch mode: remove the whole slow cluster; if max-flow then falls short, reinstate its links
     * fastest first until it is met again [HEART abstract: "additional links are incrementally
     * reinstated until a feasible configuration is achieved"]. Feasibility only grows as links come
     * back, so the shortest feasible prefix is found by search from a lower bound: usually one
     * feasibility check, at most O(log n), the same result as reinstating one at a time.
     */
    private static List<Link> removeAtOnce(
            TransportNetwork network,
            int[] order,
            int split,
            IntFunction<Link> described,
            int total,
            double fraction,
            HeartConfig config,
            List<String> explain) {
        int links = order.length;
        int slow = links - split;
        setActive(network, order, split, links, false);
        // A node that alone reaches too little of the other side proves the batch infeasible, and
        // how many links it takes to mend every such node bounds the search below; max-flow is asked
        // only when no single node is short.
        TransportNetwork.NodeShortfall shortfall = network.nodeShortfall(order, split, links);
        String shortBy;
        if (shortfall.fewest() == 0) {
            // Usually the answer and final: solved as a min-cost flow, kept for the assignment.
            if (network.canMeetAllDemandSolving()) {
                explain.add(String.format(
                        Locale.ROOT,
                        "slow cluster is %s of the links (<= %s): removed at once; max-flow still meets all"
                                + " demand: all %d pruned",
                        percent(fraction),
                        percent(config.batchRemovalMaxFraction()),
                        slow));
                return prunedOf(order, split, links, described);
            }
            long batch = network.demandCarried();
            shortBy = "max-flow left " + unmet(total - batch, total) + " of demand unmet";
        } else {
            shortBy = String.format(
                    Locale.ROOT,
                    "%d node(s) alone could not send or receive their share over"
                            + " the links left, so no flow meets all demand (at least %s unmet; no max-flow run needed)",
                    shortfall.shortNodes(),
                    unmet(shortfall.unmetAtLeast(), total));
        }
        // Find the fewest reinstated links (fastest first) that make the network feasible again.
        // Feasibility only grows with the prefix, so any search for the first feasible prefix gives
        // the same answer as reinstating one at a time. Fewer than shortfall.fewest() are infeasible
        // without asking; the answer is usually that bound itself, so the search gallops up from it
        // (1, 2, 4, ... past it) and then bisects. The first probe, usually the answer, is solved as
        // the min-cost flow that the assignment then reuses; the others only ask for max-flow.
        int low = Math.max(1, shortfall.fewest());
        int high = slow; // reinstating all is feasible: the full link set always is
        for (int step = 1; low < high; step *= 2) {
            int probe = (int) Math.min(high, (long) low + step - 1);
            if (feasibleWithPrefix(network, order, split, probe, total, step == 1)) {
                high = probe;
                break;
            }
            low = probe + 1;
        }
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (feasibleWithPrefix(network, order, split, mid, total, false)) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        setActive(network, order, split, split + low, true);
        explain.add(String.format(
                Locale.ROOT,
                "slow cluster is %s of the links (<= %s): removed at once, but %s; reinstated the %d fastest of"
                        + " them (up to %s) to meet it: %d pruned",
                percent(fraction),
                percent(config.batchRemovalMaxFraction()),
                shortBy,
                low,
                described.apply(order[split + low - 1]),
                slow - low));
        return prunedOf(order, split + low, links, described);
    }

    /**
     * Whether all demand can be met with the links order[split..split+count) switched on, found by
     * solving their min-cost flow ({@code solving}) or by max-flow; leaves them off.
     */
    private static boolean feasibleWithPrefix(
            TransportNetwork network, int[] order, int split, int count, int total, boolean solving) {
        setActive(network, order, split, split + count, true);
        boolean feasible = solving ? network.canMeetAllDemandSolving() : network.demandCarried() == total;
        setActive(network, order, split, split + count, false);
        return feasible;
    }

    /** Copies the last max-flow's flow on the links order[from..to) into {@code flow}. */
    private static void readFlows(TransportNetwork network, int[] order, int from, int to, double[] flow) {
        for (int k = from; k < to; k++) {
            flow[order[k]] = network.flowOf(order[k]);
        }
    }

    private static void setActive(TransportNetwork network, int[] order, int from, int to, boolean on) {
        for (int k = from; k < to; k++) {
            network.setActive(order[k], on);
        }
    }

    private static List<Link> prunedOf(int[] order, int from, int to, IntFunction<Link> described) {
        List<Link> pruned = new ArrayList<>(to - from);
        for (int k = to - 1; k >= from; k--) {
            pruned.add(described.apply(order[k]));
        }
        return pruned;
    }

    private static double mean(double[] values, int from, int to) {
        double s = 0;
        for (int i = from; i < to; i++) {
            s += values[i];
        }
        return s / (to - from);
    }

    private static double sum(double[] values) {
        double s = 0;
        for (double v : values) {
            s += v;
        }
        return s;
    }

    /** The unmet part of demand as a percentage that never rounds to 0 or reads as 100. */
    private static String unmet(long missingUnits, long totalUnits) {
        return String.format(Locale.ROOT, "%.2g%%", 100.0 * missingUnits / totalUnits);
    }

    private static String percent(double fraction) {
        double p = fraction * 100;
        if (p == Math.rint(p)) {
            return String.format(Locale.ROOT, "%.0f%%", p);
        }
        return String.format(Locale.ROOT, "%.1f%%", p);
    }
}
