package dev.tailor.sim.cluster;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.GroupShare;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.LocalityDistribution;
import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Route;
import dev.tailor.heart.ShareMoveCap;
import dev.tailor.heart.Snapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * HEART through the real {@code heart} module: every round (30 s) a snapshot of the simulated
 * Prometheus over the last round goes through {@link Heart#plan}, with the ATPM state carried from
 * round to round, and the plan's per-caller-node splits become the proxies' locality weights. Inside
 * a chosen node group Envoy's least-request picks the replica. Before the first plan, and for a
 * caller node the plan has no split for, the mesh's least-request over all replicas applies (what
 * runs before the controller's first DestinationRule). A round whose planning fails keeps the
 * previous plan, as the controller does.
 *
 * <p>Between rounds each route moves at most {@code maxShareMovePerRound} (the controller's
 * {@link ShareMoveCap}, from the routes applied the round before); 1 = no cap, the paper.
 *
 * <p>The same class runs {@code heart-paper} (the paper's ATPM, no cap), {@code mcf-no-filter}
 * (α = 1, no slow-link filter) and the ablations, with another {@link HeartConfig} and cap.
 */
final class HeartPolicy implements RoutingPolicy {

    static final long ROUND_NANOS = 30 * ClusterModel.NANOS_PER_SECOND;
    /** A round runs just after the scrape at the same instant, as a controller reads fresh data. */
    private static final long AFTER_SCRAPE_NANOS = 1_000_000;

    private final Heart heart;
    private ClusterModel model;
    private AtpmState state = AtpmState.EMPTY;
    private RouteTable table;
    private long rounds;
    private long failures;
    private final List<Double> roundMillis = new ArrayList<>();
    private String lastFailure;
    private final double maxShareMovePerRound;
    private List<Route> lastRoutes = List.of();
    /** Edges whose capped routes overloaded a node last round: the cap releases them from the second. */
    private java.util.Set<String> overloadedEdges = java.util.Set.of();

    HeartPolicy(HeartConfig config, double maxShareMovePerRound) {
        this.heart = new Heart(config.toBuilder().parallel(false).build());
        this.maxShareMovePerRound = maxShareMovePerRound;
    }

    @Override
    public void start(ClusterModel model) {
        this.model = model;
    }

    @Override
    public long tickIntervalNanos() {
        return ROUND_NANOS;
    }

    @Override
    public long firstTickNanos() {
        return ROUND_NANOS + AFTER_SCRAPE_NANOS;
    }

    @Override
    public void tick(long nowNanos) {
        Snapshot snapshot = MetricsSnapshot.build(model, nowNanos, ROUND_NANOS);
        if (snapshot == null) {
            return;
        }
        long started = model.wallClock.getAsLong();
        Plan plan;
        try {
            plan = heart.plan(snapshot, state);
        } catch (RuntimeException e) {
            failures++;
            lastFailure = e.getMessage();
            return;
        } finally {
            rounds++;
            roundMillis.add((model.wallClock.getAsLong() - started) / 1e6);
        }
        state = plan.state();
        ShareMoveCap.Capped capped = ShareMoveCap.apply(
                plan.allocation().routes(),
                lastRoutes,
                snapshot,
                plan.allocation().shares(),
                maxShareMovePerRound,
                overloadedEdges,
                new ArrayList<>());
        List<Route> routes = capped.routes();
        lastRoutes = routes;
        overloadedEdges = capped.overloaded();
        table = tableOf(plan, routes);
    }

    private RouteTable tableOf(Plan plan, List<Route> routes) {
        Map<String, Integer> nodeIndex = new HashMap<>();
        for (SimNode node : model.nodes) {
            nodeIndex.put(node.name, node.index);
        }
        Map<String, Integer> componentIndex = new HashMap<>();
        for (SimComponent component : model.components) {
            componentIndex.put(component.name, component.index);
        }
        Map<String, String> localityOfNode = new HashMap<>();
        Map<String, Integer> nodeOfLocality = new HashMap<>();
        for (SimNode node : model.nodes) {
            localityOfNode.put(node.name, node.locality);
            nodeOfLocality.put(node.locality, node.index);
        }
        RouteTable next = new RouteTable(model.components.length, model.nodes.length);
        // Every caller node first gets the callee's ATPM shares: a node with no supply in the plan
        // (it served nothing last round) still sends by capacity, not at random.
        Map<String, double[]> shares = new HashMap<>();
        for (ComponentShares component : plan.allocation().shares()) {
            double[] byNode = new double[model.nodes.length];
            for (GroupShare group : component.groups()) {
                byNode[nodeIndex.get(group.node())] += group.share();
            }
            shares.put(component.component(), byNode);
        }
        for (Route route : routes) {
            int caller = ClusterModel.INGRESS.equals(route.caller()) ? 0 : componentIndex.get(route.caller()) + 1;
            int callee = componentIndex.get(route.callee());
            double[] fallback = shares.get(route.callee());
            for (SimNode node : model.nodes) {
                if (fallback != null) {
                    next.set(caller, callee, node.index, fallback);
                }
            }
            if (nodeOfLocality.size() == model.nodes.length) {
                // What Envoy applies: Istio's distribute weights, integers in [1, 100] per caller locality.
                for (LocalityDistribution.Entry entry : LocalityDistribution.of(route, localityOfNode)) {
                    double[] byNode = new double[model.nodes.length];
                    entry.to().forEach((locality, weight) -> byNode[nodeOfLocality.get(locality)] += weight);
                    next.set(caller, callee, nodeOfLocality.get(entry.from()), byNode);
                }
                continue;
            }
            // Nodes sharing a locality: the plan's fractions per node (a finer split than Istio's).
            for (NodeRoute from : route.from()) {
                double[] byNode = new double[model.nodes.length];
                from.toNodes().forEach((name, fraction) -> byNode[nodeIndex.get(name)] += fraction);
                next.set(caller, callee, nodeIndex.get(from.fromNode()), byNode);
            }
        }
        return next;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        RouteTable current = table;
        SimReplica chosen = current == null ? null : current.pick(from, callee, model.routingRng);
        return chosen != null ? chosen : LeastRequestPolicy.powerOfTwo(from, callee.endpoints, model.routingRng);
    }

    @Override
    public RunResult.Planning planning() {
        if (roundMillis.isEmpty()) {
            return new RunResult.Planning(0, 0, null, null, null, null);
        }
        List<Double> sorted = roundMillis.stream().sorted().toList();
        int n = sorted.size();
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        double mean = sorted.stream().mapToDouble(Double::doubleValue).sum() / n;
        return new RunResult.Planning(
                rounds,
                failures,
                ClusterModel.round(median, 3),
                ClusterModel.round(mean, 3),
                ClusterModel.round(sorted.get(n - 1), 3),
                lastFailure);
    }
}
