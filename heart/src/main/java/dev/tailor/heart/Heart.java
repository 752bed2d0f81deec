package dev.tailor.heart;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * HEART's planner: one round maps (snapshot, previous state) to (allocation, next state). ATPM
 * computes every component's group shares, then NTAM assigns every call edge's links. Pure: no
 * I/O and no clock, so the controller, the simulator and the CLI drive the very same code.
 *
 * <p>Thread-safe and stateless; one instance can plan for many clusters. With
 * {@link HeartConfig#parallel()} components and call edges are computed on the common fork-join
 * pool; the result is identical either way.
 *
 * <pre>{@code
 * Heart heart = new Heart(HeartConfig.DEFAULTS);
 * Plan round1 = heart.plan(snapshot1, AtpmState.EMPTY);
 * Plan round2 = heart.plan(snapshot2, round1.state());
 * }</pre>
 */
public final class Heart {

    private final HeartConfig config;

    public Heart(HeartConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config : null (expected: a HeartConfig, e.g. HeartConfig.DEFAULTS)");
        }
        this.config = config;
    }

    public HeartConfig config() {
        return config;
    }

    /**
     * Plans one round.
     *
     * @param snapshot the cluster over the last window
     * @param previous the state returned by the previous round, or {@link AtpmState#EMPTY}
     * @return the allocation and the state for the next round
     * @throws InvalidSnapshotException naming every problem of {@code snapshot}
     * @throws IllegalArgumentException naming every problem of {@code previous}
     */
    public Plan plan(Snapshot snapshot, AtpmState previous) {
        SnapshotValidator.requireValid(snapshot);
        AtpmState before = previous == null ? AtpmState.EMPTY : previous;
        List<String> stateProblems = before.problems();
        if (!stateProblems.isEmpty()) {
            throw new IllegalArgumentException("invalid ATPM state: " + String.join("; ", stateProblems));
        }
        Cluster cluster = new Cluster(snapshot, config);

        // Stage 1: ATPM, one component per task.
        Map<String, Double> demand = new TreeMap<>();
        for (Call call : snapshot.calls()) {
            demand.merge(call.callee(), call.rate(), Double::sum);
        }
        Map<String, Atpm.Result> atpm = stream(List.copyOf(cluster.components()))
                .map(component -> Map.entry(
                        component,
                        Atpm.compute(
                                component,
                                cluster.groups(component),
                                before.of(component),
                                cluster.presentGroupIds(component),
                                demand.getOrDefault(component, 0.0),
                                config)))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));

        // Stage 2: NTAM, one call edge per task, or one callee per task, callers first.
        List<Route> routes = config.queueAwareRouting() && config.spreadScale() > 0
                ? routeByCallee(snapshot.calls(), cluster, atpm)
                : stream(snapshot.calls())
                        .map(call -> routeOf(call, cluster, atpm))
                        .toList();

        List<ComponentShares> shares =
                atpm.values().stream().map(Atpm.Result::shares).toList();
        Map<String, Map<String, GroupEstimate>> nextGroups = new LinkedHashMap<>();
        atpm.forEach((component, result) -> {
            if (!result.nextEstimates().isEmpty()) {
                nextGroups.put(component, result.nextEstimates());
            }
        });
        List<String> notes = new ArrayList<>(cluster.notes());
        for (ComponentShares component : shares) {
            if (component.shortfallRequestsPerSecond() != null) {
                notes.add(String.format(
                        java.util.Locale.ROOT,
                        "capacity shortfall: %s is asked for %.1f req/s but"
                                + " its ready groups can serve %.1f (short by %.1f req/s): shares stay proportional to"
                                + " capacity, every group is planned %.0f %% over what it can serve",
                        component.component(),
                        component.demandRequestsPerSecond(),
                        component.capacityRequestsPerSecond(),
                        component.shortfallRequestsPerSecond(),
                        100 * component.shortfallRequestsPerSecond() / component.capacityRequestsPerSecond()));
            }
        }
        for (Call call : snapshot.calls()) {
            Map<String, Double> byNode = call.byCallerNode();
            if (byNode == null || byNode.isEmpty()) {
                continue;
            }
            if (cluster.hasReplicas(call.caller())) {
                notes.add("call " + call.caller() + " -> " + call.callee() + ": byCallerNode ignored, the caller has"
                        + " replicas, so its supply per node is its own ATPM share this round");
            } else {
                double measured = byNode.values().stream()
                        .mapToDouble(Double::doubleValue)
                        .sum();
                if (Math.abs(measured - call.rate()) > 0.01 * Math.max(measured, call.rate())) {
                    notes.add(String.format(
                            java.util.Locale.ROOT,
                            "call %s -> %s: byCallerNode sums to %.4g req/s,"
                                    + " not the edge's %.4g: only its proportions are used",
                            call.caller(),
                            call.callee(),
                            measured,
                            call.rate()));
                }
            }
        }
        if (!before.groups().isEmpty()
                && cluster.components().stream().noneMatch(c -> !before.of(c).isEmpty())) {
            notes.add("the ATPM state (round " + before.rounds() + ") has no estimate for any component of this"
                    + " snapshot: every group starts over (a state file from another cluster?)");
        }
        return new Plan(
                new Allocation(shares, routes, notes),
                new AtpmState(before.rounds() + 1, nextGroups, List.copyOf(services(snapshot))));
    }

    /**
     * The application's services in {@code snapshot}, sorted: every component with replicas and every caller
     * and callee of a call (entry points such as {@code ingress} included). A state records them, so that a
     * state of another application is recognised ({@link AtpmState#writtenForAnother}).
     */
    public static SortedSet<String> services(Snapshot snapshot) {
        SortedSet<String> services = new TreeSet<>();
        for (Replica replica : snapshot.replicas()) {
            if (replica != null && replica.component() != null) {
                services.add(replica.component());
            }
        }
        for (Call call : snapshot.calls()) {
            if (call != null) {
                if (call.caller() != null) {
                    services.add(call.caller());
                }
                if (call.callee() != null) {
                    services.add(call.callee());
                }
            }
        }
        return services;
    }

    /**
     * Queue-aware routing: every callee's incoming calls planned together ({@link Ntam#routeCallee}),
     * in waves of callees whose callers are all planned, so that a caller's supply per node is what
     * the plan sends it (its ATPM shares where a cycle leaves no such order). Routes in call order.
     */
    private List<Route> routeByCallee(List<Call> calls, Cluster cluster, Map<String, Atpm.Result> atpm) {
        Map<String, List<Integer>> callsInto = new TreeMap<>();
        for (int k = 0; k < calls.size(); k++) {
            callsInto
                    .computeIfAbsent(calls.get(k).callee(), c -> new ArrayList<>())
                    .add(k);
        }
        Map<String, double[]> planned = new java.util.concurrent.ConcurrentHashMap<>();
        Route[] routes = new Route[calls.size()];
        java.util.Set<String> left = new TreeSet<>(callsInto.keySet());
        // Callees too large for the queue-aware transport are planned as the paper does, on the ATPM
        // shares, which need no caller planned first: all their edges at once, not in waves.
        List<Integer> onShares = new ArrayList<>();
        Map<String, String> tooLarge = new TreeMap<>();
        for (String callee : callsInto.keySet()) {
            String why = Ntam.tooLargeForQueueing(
                    cluster.groups(callee).size(), cluster.nodes().size());
            if (why != null) {
                tooLarge.put(callee, why);
                onShares.addAll(callsInto.get(callee));
                left.remove(callee);
            }
        }
        stream(onShares).forEach(k -> {
            Call call = calls.get(k);
            routes[k] = Ntam.routeOnShares(
                    call,
                    shareSupplyOf(call, cluster, atpm),
                    atpm.get(call.callee()).shares(),
                    cluster.groups(call.callee()),
                    cluster,
                    config,
                    tooLarge.get(call.callee()));
        });
        while (!left.isEmpty()) {
            List<String> wave = new ArrayList<>();
            for (String callee : left) {
                boolean ready = true;
                for (int k : callsInto.get(callee)) {
                    String caller = calls.get(k).caller();
                    ready &= !left.contains(caller) || caller.equals(callee);
                }
                if (ready) {
                    wave.add(callee);
                }
            }
            if (wave.isEmpty()) {
                wave.add(left.iterator().next()); // a cycle: its callers' ATPM shares stand in
            }
            stream(wave).forEach(callee -> {
                List<Call> into = new ArrayList<>();
                List<double[]> supplies = new ArrayList<>();
                List<double[]> shareSupplies = new ArrayList<>();
                for (int k : callsInto.get(callee)) {
                    Call call = calls.get(k);
                    into.add(call);
                    supplies.add(supplyOf(call, cluster, atpm, planned));
                    shareSupplies.add(shareSupplyOf(call, cluster, atpm));
                }
                Ntam.Planned result = Ntam.routeCallee(
                        into,
                        supplies,
                        shareSupplies,
                        atpm.get(callee).shares(),
                        cluster.groups(callee),
                        cluster,
                        config);
                planned.put(callee, result.loadByNode());
                List<Integer> indices = callsInto.get(callee);
                for (int i = 0; i < indices.size(); i++) {
                    routes[indices.get(i)] = result.routes().get(i);
                }
            });
            left.removeAll(wave);
        }
        return List.of(routes);
    }

    /**
     * The paper's supply of {@code call} per node, by node index (any scale): an entry point's measured
     * calls per node, a component's ATPM shares.
     */
    private static double[] shareSupplyOf(Call call, Cluster cluster, Map<String, Atpm.Result> atpm) {
        double[] supply = new double[cluster.nodes().size()];
        if (!cluster.hasReplicas(call.caller())) {
            if (call.byCallerNode() != null) {
                call.byCallerNode().forEach((node, rate) -> supply[cluster.indexOf(node)] += rate);
            }
        } else {
            for (GroupShare group : atpm.get(call.caller()).shares().groups()) {
                supply[cluster.indexOf(group.node())] += group.share();
            }
        }
        return supply;
    }

    /** Calls per node leaving the caller of {@code call}, by node index (any scale). */
    private static double[] supplyOf(
            Call call, Cluster cluster, Map<String, Atpm.Result> atpm, Map<String, double[]> planned) {
        double[] supply = new double[cluster.nodes().size()];
        if (!cluster.hasReplicas(call.caller())) {
            if (call.byCallerNode() != null) {
                call.byCallerNode().forEach((node, rate) -> supply[cluster.indexOf(node)] += rate);
            }
            return supply;
        }
        double[] load = planned.get(call.caller());
        if (load != null) {
            return load.clone();
        }
        for (GroupShare group : atpm.get(call.caller()).shares().groups()) {
            supply[cluster.indexOf(group.node())] += group.share();
        }
        return supply;
    }

    private Route routeOf(Call call, Cluster cluster, Map<String, Atpm.Result> atpm) {
        double[] supply = shareSupplyOf(call, cluster, atpm);
        boolean entryPoint = !cluster.hasReplicas(call.caller());
        ComponentShares callee = atpm.get(call.callee()).shares();
        return Ntam.route(call, entryPoint, supply, callee, cluster.groups(call.callee()), cluster, config);
    }

    private <T> Stream<T> stream(List<T> items) {
        return config.parallel() ? items.parallelStream() : items.stream();
    }
}
