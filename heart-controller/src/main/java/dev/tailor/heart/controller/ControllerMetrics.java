package dev.tailor.heart.controller;

import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Route;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The controller's own metrics (prometheus-metrics library), in a registry of their own:
 * <ul>
 *   <li>{@code tailor_heart_rounds_total} — rounds run, re-plans included;</li>
 *   <li>{@code tailor_heart_replans_total} — the event-driven re-plans among them;</li>
 *   <li>{@code tailor_heart_round_failures_total{reason}} — rounds that changed nothing, by
 *       {@link Controller.FailureReason} in lower case;</li>
 *   <li>{@code tailor_heart_planning_seconds} — planning time per round (histogram);</li>
 *   <li>{@code tailor_heart_links_pruned} — links the slow-link filter pruned in the last plan;</li>
 *   <li>{@code tailor_heart_rule_writes_total{action}} — DestinationRules created, updated, deleted;</li>
 *   <li>{@code tailor_heart_last_applied_plan_age_seconds} — seconds since rules were last applied
 *       successfully (absent before the first);</li>
 *   <li>{@code tailor_heart_replan_delay_seconds} — from a pod event (left Ready, deleted, became
 *       Ready) to the end of the re-plan it triggered, debounce included (histogram);</li>
 *   <li>{@code tailor_heart_capacity_shortfall_requests_per_second{component}} — per component of
 *       the last plan, the requests/s its ready groups cannot serve (0 when they can);</li>
 *   <li>{@code tailor_heart_capacity_shortfall_rounds_total} — rounds that planned some component
 *       above its capacity (applied or held);</li>
 *   <li>{@code tailor_heart_nodes_missing_locality_labels} — nodes hosting the application's pods
 *       that lack a locality label Istio reads, so rules address them with other nodes or not at all
 *       ({@link Controller#nodesMissingLocalityLabels()});</li>
 *   <li>{@code tailor_heart_route_share{caller, callee, from_node, to_node}} — per call edge of the
 *       last plan (the routes its rules carry, after the share cap), the fraction of the calls from
 *       {@code from_node} that go to {@code to_node}: one series per caller node with calls and per
 *       callee node with a replica in the snapshot (0 when it gets none), so a route that drops to 0
 *       stays on the graph; the series of an edge or a node gone from the plan go with it;</li>
 *   <li>{@code tailor_heart_route_share_series_dropped} — series of the last plan not exported
 *       because they were more than the limit (0 normally);</li>
 *   <li>{@code tailor_heart_leader} — 1 while this replica holds the Lease (or runs without one),
 *       else 0;</li>
 *   <li>{@code tailor_heart_lease_acquisitions_total} — times this replica took the Lease: summed
 *       over the replicas, how often leadership changed hands (an alert on lease flapping);</li>
 *   <li>{@code tailor_heart_pod_watch_up{watched_namespace}} — 1 while the watch of the application's pods in
 *       {@code namespace} runs, 0 while it starts, cannot start, has no answer, is down or stopped: re-plans
 *       on pod events are off then, rounds go on from lists (an alert on a watch that stays down).</li>
 * </ul>
 * <b>Cardinality of the route shares:</b> at most (call edges) × (caller nodes) × (callee nodes)
 * series, e.g. 20 edges on 10 nodes: 2,000. Past {@link #DEFAULT_ROUTE_SHARE_SERIES_LIMIT} series a
 * plan exports none of them (a partial set would graph wrong sums) and says how many in
 * {@code tailor_heart_route_share_series_dropped}.
 *
 * <p>Thread-safe.
 */
public final class ControllerMetrics {

    /** The most route-share series one plan exports. */
    public static final int DEFAULT_ROUTE_SHARE_SERIES_LIMIT = 10_000;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter rounds;
    private final Counter failures;
    private final Histogram planning;
    private final Gauge linksPruned;
    private final Counter ruleWrites;
    private final Histogram replanDelay;
    private final Counter replans;
    private final Gauge shortfall;
    private final Counter shortfallRounds;
    private final Gauge nodesMissingLocalityLabels;
    private final Gauge routeShare;
    private final Gauge routeShareDropped;
    private final Gauge leader;
    private final Counter leaseAcquisitions;
    private final Gauge podWatchUp;
    private final int routeShareSeriesLimit;
    private final LongSupplier epochMillis;
    private volatile long lastAppliedMillis = -1;
    private volatile boolean ready;

    /** @param epochMillis wall clock for the plan's age (e.g. {@code System::currentTimeMillis}) */
    public ControllerMetrics(LongSupplier epochMillis) {
        this(epochMillis, DEFAULT_ROUTE_SHARE_SERIES_LIMIT);
    }

    /**
     * @param epochMillis           wall clock for the plan's age
     * @param routeShareSeriesLimit the most {@code tailor_heart_route_share} series a plan exports
     */
    public ControllerMetrics(LongSupplier epochMillis, int routeShareSeriesLimit) {
        this.epochMillis = epochMillis;
        this.routeShareSeriesLimit = routeShareSeriesLimit;
        rounds = Counter.builder()
                .name("tailor_heart_rounds_total")
                .help("HEART rounds run")
                .register(registry);
        failures = Counter.builder()
                .name("tailor_heart_round_failures_total")
                .help("Rounds that changed nothing, by reason")
                .labelNames("reason")
                .register(registry);
        for (Controller.FailureReason reason : Controller.FailureReason.values()) {
            failures.labelValues(label(reason.name())); // every reason visible at 0
        }
        planning = Histogram.builder()
                .name("tailor_heart_planning_seconds")
                .help("Planning time per round")
                .classicOnly()
                .classicUpperBounds(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5)
                .register(registry);
        linksPruned = Gauge.builder()
                .name("tailor_heart_links_pruned")
                .help("Links the slow-link filter pruned in the last plan")
                .register(registry);
        ruleWrites = Counter.builder()
                .name("tailor_heart_rule_writes_total")
                .help("DestinationRules written, by action")
                .labelNames("action")
                .register(registry);
        for (Actuator.Action action : Actuator.Action.values()) {
            if (action != Actuator.Action.UNCHANGED) {
                ruleWrites.labelValues(label(action.name())); // every action visible at 0
            }
        }
        replans = Counter.builder()
                .name("tailor_heart_replans_total")
                .help("Event-driven re-plans (also counted in tailor_heart_rounds_total)")
                .register(registry);
        replanDelay = Histogram.builder()
                .name("tailor_heart_replan_delay_seconds")
                .help("From a pod event to the end of the re-plan it triggered")
                .classicOnly()
                .classicUpperBounds(0.25, 0.5, 1, 2, 5, 10)
                .register(registry);
        shortfall = Gauge.builder()
                .name("tailor_heart_capacity_shortfall_requests_per_second")
                .help("Requests/s a component's ready groups cannot serve in the last plan (0: they can)")
                .labelNames("component")
                .register(registry);
        shortfallRounds = Counter.builder()
                .name("tailor_heart_capacity_shortfall_rounds_total")
                .help("Rounds whose plan asked some component for more than its capacity")
                .register(registry);
        shortfallRounds.inc(0); // visible at 0
        nodesMissingLocalityLabels = Gauge.builder()
                .name("tailor_heart_nodes_missing_locality_labels")
                .help("Nodes hosting the application's pods without a locality label Istio reads (region, zone,"
                        + " topology.istio.io/subzone)")
                .register(registry);
        routeShare = Gauge.builder()
                .name("tailor_heart_route_share")
                .help("Fraction of the calls of caller on from_node to callee that the last plan sends to to_node")
                .labelNames("caller", "callee", "from_node", "to_node")
                .register(registry);
        routeShareDropped = Gauge.builder()
                .name("tailor_heart_route_share_series_dropped")
                .help("Route-share series of the last plan not exported: more than the limit")
                .register(registry);
        routeShareDropped.set(0);
        leader = Gauge.builder()
                .name("tailor_heart_leader")
                .help("1 while this replica holds the Lease (or runs without one), else 0")
                .register(registry);
        leader.set(0);
        leaseAcquisitions = Counter.builder()
                .name("tailor_heart_lease_acquisitions_total")
                .help("Times this replica took the Lease")
                .register(registry);
        podWatchUp = Gauge.builder()
                .name("tailor_heart_pod_watch_up")
                .help("1 while the watch of the application's pods in the namespace runs (re-plans on pod events"
                        + " are on), else 0")
                .labelNames("watched_namespace")
                .register(registry);
        leaseAcquisitions.inc(0); // visible at 0
        GaugeWithCallback.builder()
                .name("tailor_heart_last_applied_plan_age_seconds")
                .help("Seconds since DestinationRules were last applied successfully")
                .callback(callback -> {
                    long last = lastAppliedMillis;
                    if (last >= 0) {
                        callback.call((this.epochMillis.getAsLong() - last) / 1000.0);
                    }
                })
                .register(registry);
    }

    /** Records that this replica started ({@code true}: one more acquisition) or stopped leading. */
    public void leading(boolean leading) {
        if (leading) {
            leaseAcquisitions.inc();
        }
        leader.set(leading ? 1 : 0);
    }

    /** Records one round. */
    public void record(Controller.Round round) {
        rounds.inc();
        if (!round.shortfalls().isEmpty()) {
            shortfall.clear(); // components gone from the plan leave the metric
            round.shortfalls()
                    .forEach((component, requests) ->
                            shortfall.labelValues(component).set(requests));
            if (round.shortfalls().values().stream().anyMatch(requests -> requests > 0)) {
                shortfallRounds.inc();
            }
        }
        if (round.failure() != null) {
            failures.labelValues(label(round.failure().name())).inc();
            return;
        }
        planning.observe(round.planningNanos() / 1e9);
        routeShares(round);
        linksPruned.set(round.plan().allocation().routes().stream()
                .mapToInt(r -> r.prunedLinks().size())
                .sum());
        ready = true;
        if (round.applied()) {
            for (Actuator.Change change : round.changes()) {
                if (change.action() != Actuator.Action.UNCHANGED) {
                    ruleWrites.labelValues(label(change.action().name())).inc();
                }
            }
            lastAppliedMillis = epochMillis.getAsLong();
        }
    }

    /** The shares of the round's routes, one series per caller node and callee node (see the class comment). */
    private void routeShares(Controller.Round round) {
        Map<String, Set<String>> calleeNodes = new HashMap<>();
        if (round.snapshot() != null) {
            for (Replica replica : round.snapshot().replicas()) {
                calleeNodes
                        .computeIfAbsent(replica.component(), c -> new TreeSet<>())
                        .add(replica.node());
            }
        }
        List<String[]> labels = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (Route route : round.routes()) {
            for (NodeRoute from : route.from()) {
                Set<String> to = new TreeSet<>(calleeNodes.getOrDefault(route.callee(), Set.of()));
                to.addAll(from.toNodes().keySet());
                for (String node : to) {
                    labels.add(new String[] {route.caller(), route.callee(), from.fromNode(), node});
                    values.add(from.toNodes().getOrDefault(node, 0.0));
                }
            }
        }
        routeShare.clear();
        if (labels.size() > routeShareSeriesLimit) {
            routeShareDropped.set(labels.size());
            return;
        }
        routeShareDropped.set(0);
        for (int i = 0; i < labels.size(); i++) {
            routeShare.labelValues(labels.get(i)).set(values.get(i));
        }
    }

    /** Records whether the watch of pods in {@code namespace} runs ({@code tailor_heart_pod_watch_up}). */
    public void podWatch(String namespace, boolean up) {
        podWatchUp.labelValues(namespace).set(up ? 1 : 0);
    }

    /** Records how long a re-plan took from its first pod event, in seconds. */
    public void recordReplanDelay(double seconds) {
        replanDelay.observe(seconds);
    }

    /** Sets how many nodes lack a locality label Istio reads, as of the last discovery. */
    public void nodesMissingLocalityLabels(int nodes) {
        nodesMissingLocalityLabels.set(nodes);
    }

    /** Counts one event-driven re-plan (record the round itself with {@link #record}). */
    public void countReplan() {
        replans.inc();
    }

    /** Whether a round has planned successfully (a leader's first {@code /readyz} condition, {@link ControllerLoop#notReady}). */
    public boolean ready() {
        return ready;
    }

    /** The metrics in the Prometheus text format. */
    public String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writer().write(out, registry.scrape());
        } catch (IOException e) {
            throw new IllegalStateException("cannot write metrics", e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The content type of {@link #scrape()}. */
    public String contentType() {
        return writer().getContentType();
    }

    private static PrometheusTextFormatWriter writer() {
        return ExpositionFormats.init().getPrometheusTextFormatWriter();
    }

    private static String label(String name) {
        return name.toLowerCase(Locale.ROOT);
    }
}
