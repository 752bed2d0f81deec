package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.InvalidSnapshotException;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Route;
import dev.tailor.heart.ShareMoveCap;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.controller.PrometheusClient.PrometheusException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * One HEART round against a real cluster: discover pods and nodes, read the metrics, plan, and
 * write the DestinationRules that changed. A round that cannot read (Prometheus unreachable, a
 * failed query, a component without any metrics, an invalid snapshot) or cannot write changes
 * nothing: the rules already applied stay, the ATPM state stays, and the failure is returned with
 * its reason. The state advances only when a plan was applied (or, in a dry run, in memory).
 *
 * <p>Not thread-safe: one round at a time (the loop serialises rounds).
 */
public final class Controller {

    /** Why a round changed nothing; also the {@code reason} label of the failure counter. */
    public enum FailureReason {
        PROMETHEUS_UNREACHABLE,
        PROMETHEUS_QUERY,
        PROMETHEUS_BAD_RESPONSE,
        COMPONENT_WITHOUT_METRICS,
        INVALID_SNAPSHOT,
        KUBERNETES_READ,
        KUBERNETES_WRITE,
        NO_PODS,
        LOST_LEADERSHIP,
        NODE_WITHOUT_LOCALITY,
        /** Some component is asked for more than its ready groups can serve, and the config says hold. */
        CAPACITY_SHORTFALL
    }

    /**
     * What a round did.
     *
     * @param applied       whether rules were written (false in a dry run and on failure)
     * @param failure       why nothing changed, or {@code null}
     * @param message       the failure's detail, or {@code null}
     * @param plan          the plan, or {@code null} on failure
     * @param snapshot      the snapshot planned from, or {@code null} when none was built
     * @param routes        the routes the rules carry: the plan's, after the share cap
     *                      ({@link ControllerConfig#maxShareMovePerRound()}); empty on failure
     * @param desired       the rules the plan wants, or empty on failure
     * @param changes       the rule changes (carried out unless dry run)
     * @param notes         what was left out or assumed this round
     * @param planningNanos wall-clock planning time (0 when no clock was given)
     * @param shortfalls    component → requests/s its ready groups cannot serve, for every component
     *                      planned this round (0 when none); empty when no plan was made
     */
    public record Round(
            boolean applied,
            FailureReason failure,
            String message,
            Plan plan,
            Snapshot snapshot,
            List<Route> routes,
            List<ObjectNode> desired,
            List<Actuator.Change> changes,
            List<String> notes,
            long planningNanos,
            Map<String, Double> shortfalls) {

        public Round {
            shortfalls = shortfalls == null ? Map.of() : Map.copyOf(shortfalls);
        }

        /** A round without shortfall figures. */
        public Round(
                boolean applied,
                FailureReason failure,
                String message,
                Plan plan,
                Snapshot snapshot,
                List<Route> routes,
                List<ObjectNode> desired,
                List<Actuator.Change> changes,
                List<String> notes,
                long planningNanos) {
            this(applied, failure, message, plan, snapshot, routes, desired, changes, notes, planningNanos, Map.of());
        }
    }

    private final ControllerConfig config;
    private final Heart heart;
    private final MetricsReader metrics;
    private final ClusterReader cluster;
    /** Where rules are written; {@code null} for a controller that only reads (dry runs only). */
    private final KubernetesClient kubernetes;

    private final Actuator actuator;
    private final LongSupplier nanoClock;
    private final StateStore store;
    private AtpmState state;
    /** The last successful round's metrics and the state it started from, for re-plans. */
    private MetricsReader.Metrics lastMetrics;

    private AtpmState stateBeforeLastRound = AtpmState.EMPTY;
    /** The routes of the last applied plan (after the share cap), for the next round's cap. */
    private List<Route> lastRoutes = List.of();
    /**
     * The routes applied before the last round, where a re-plan's cap starts: a re-plan redoes that
     * round (same metrics), so pod events cannot move the routes further than the round could.
     */
    private List<Route> routesBeforeLastRound = List.of();
    /** Edges the share cap found overloading a node in the last round, and in the round before it. */
    private Set<String> overloadedEdges = Set.of();

    private Set<String> overloadedEdgesBeforeLastRound = Set.of();
    /** What the last successful {@link #planAndApply} found overloaded under the cap. */
    private Set<String> lastOverloaded = Set.of();

    private volatile BooleanSupplier mayWrite = () -> true;
    /** Whether the state must be (re)read from the store before the next round. */
    private boolean stateUnread;
    /** Nodes of the last discovery that lack a locality label Istio reads. */
    private volatile List<String> nodesMissingLocalityLabels = List.of();

    /**
     * @param state     the state to start from when there is no store (e.g. {@link AtpmState#EMPTY});
     *                  with a store, the first round reads the stored state instead, and fails
     *                  (changing nothing) while the store cannot be read, so that a stored state is
     *                  never overwritten by one started afresh
     * @param store     where each applied round's state is saved and read from, or {@code null} for
     *                  memory only; a dry run reads it but never writes it
     * @param nanoClock for the reported planning time only; {@code null} reports 0
     */
    public Controller(
            ControllerConfig config,
            HeartConfig heartConfig,
            PrometheusClient prometheus,
            KubernetesClient kubernetes,
            AtpmState state,
            StateStore store,
            LongSupplier nanoClock) {
        this(config, heartConfig, prometheus, ClusterReader.of(kubernetes), kubernetes, state, store, nanoClock);
    }

    /**
     * A controller that reads {@code cluster} (e.g. a {@link RecordedCluster}) and writes nothing: only
     * dry-run rounds, from {@code state}, without a store.
     *
     * @param nanoClock for the reported planning time only; {@code null} reports 0
     */
    public Controller(
            ControllerConfig config,
            HeartConfig heartConfig,
            PrometheusClient prometheus,
            ClusterReader cluster,
            AtpmState state,
            LongSupplier nanoClock) {
        this(config, heartConfig, prometheus, cluster, null, state, null, nanoClock);
    }

    private Controller(
            ControllerConfig config,
            HeartConfig heartConfig,
            PrometheusClient prometheus,
            ClusterReader cluster,
            KubernetesClient kubernetes,
            AtpmState state,
            StateStore store,
            LongSupplier nanoClock) {
        this.config = config;
        this.heart = new Heart(heartConfig);
        this.metrics = new MetricsReader(prometheus, config);
        this.cluster = cluster;
        this.kubernetes = kubernetes;
        this.actuator = new Actuator(cluster, kubernetes, config.kubernetes().fieldManager());
        this.state = state == null ? AtpmState.EMPTY : state;
        this.store = store;
        this.stateUnread = store != null;
        this.nanoClock = nanoClock == null ? () -> 0L : nanoClock;
    }

    /**
     * Called when this replica (again) becomes the one that writes, e.g. on gaining the lease: the
     * next round reads the state another replica may have saved meanwhile, and the share cap forgets
     * the routes this replica applied before (they may no longer be the ones in the cluster) and
     * continues from the routes saved with that state.
     */
    public void takeOver() {
        stateUnread = store != null;
        lastRoutes = List.of();
        routesBeforeLastRound = List.of();
        overloadedEdges = Set.of();
        overloadedEdgesBeforeLastRound = Set.of();
        lastMetrics = null;
    }

    /**
     * Asked before every write of a round (e.g. "does this replica still hold the lease?"): before
     * each DestinationRule write, where no stops the round ({@link FailureReason#LOST_LEADERSHIP}),
     * and before saving the state, where no leaves it unsaved with a note.
     */
    public void writeGuard(BooleanSupplier guard) {
        this.mayWrite = guard == null ? () -> true : guard;
    }

    /** The ATPM state after the last successful round. */
    public AtpmState state() {
        return state;
    }

    /**
     * Runs one round with metrics evaluated at {@code time}. A dry run with a store reads the saved
     * state and routes before every round, so it shows what the writing controller's next round
     * would do, not where the dry run's own rounds would have led.
     */
    public Round round(Instant time, boolean dryRun) {
        requireWriterUnless(dryRun);
        List<String> loadNotes = new ArrayList<>();
        if (dryRun && store != null) {
            stateUnread = true;
        }
        if (stateUnread) {
            try {
                StateStore.Loaded loaded = store.load();
                state = loaded.state();
                lastRoutes = loaded.routes();
                stateBeforeLastRound = state;
                if (loaded.note() != null) {
                    loadNotes.add(loaded.note());
                }
                stateUnread = false;
            } catch (KubernetesClientException e) {
                return failed(
                        FailureReason.KUBERNETES_READ,
                        "cannot read the ATPM state from ConfigMap "
                                + store.location() + ": " + detail(e)
                                + "; not planning until it can be read, so that a saved"
                                + " state is not overwritten",
                        null,
                        List.of());
            }
        }
        Round round = roundWithState(time, dryRun);
        if (loadNotes.isEmpty()) {
            return round;
        }
        loadNotes.addAll(round.notes());
        return new Round(
                round.applied(),
                round.failure(),
                round.message(),
                round.plan(),
                round.snapshot(),
                round.routes(),
                round.desired(),
                round.changes(),
                loadNotes,
                round.planningNanos(),
                round.shortfalls());
    }

    private Round roundWithState(Instant time, boolean dryRun) {
        ClusterView view;
        try {
            view = discover();
        } catch (KubernetesClientException e) {
            return failed(FailureReason.KUBERNETES_READ, "cannot list pods or nodes: " + detail(e), null, List.of());
        }
        if (view.localityProblem() != null) {
            return withoutLocality(view, dryRun);
        }
        if (view.pods().stream().noneMatch(p -> !p.entryPoint())) {
            return failed(
                    FailureReason.NO_PODS,
                    "no pod with label " + config.kubernetes().componentLabel() + " in "
                            + config.kubernetes().namespaces(),
                    null,
                    view.skipped());
        }
        MetricsReader.Metrics measured;
        try {
            measured = metrics.read(time);
        } catch (PrometheusException e) {
            FailureReason reason = switch (e.failure()) {
                case UNREACHABLE, HTTP_STATUS -> FailureReason.PROMETHEUS_UNREACHABLE;
                case QUERY_ERROR -> FailureReason.PROMETHEUS_QUERY;
                case BAD_RESPONSE -> FailureReason.PROMETHEUS_BAD_RESPONSE;
            };
            return failed(reason, e.getMessage(), null, view.skipped());
        }
        AtpmState before = state;
        List<Route> routesBefore = lastRoutes;
        Set<String> overloadedBefore = overloadedEdges;
        Round round = planAndApply(view, measured, before, routesBefore, overloadedBefore, dryRun);
        if (round.failure() == null) {
            lastMetrics = measured;
            stateBeforeLastRound = before;
            routesBeforeLastRound = routesBefore;
            overloadedEdgesBeforeLastRound = overloadedBefore;
            overloadedEdges = lastOverloaded;
        }
        return round;
    }

    /**
     * Re-plans from the last round's metrics with what Kubernetes says now — for a pod that left
     * Ready or was deleted, or a new node group, between rounds. The load estimates are those of
     * the last round (the re-plan starts from the state before it), so a re-plan never counts as a
     * round of the EWMA; likewise the share cap starts from the routes applied before that round,
     * so re-plans never move a route further than the round itself could.
     *
     * @return the re-plan, or {@code null} when no round has read metrics yet
     */
    public Round replan(boolean dryRun) {
        requireWriterUnless(dryRun);
        if (lastMetrics == null) {
            return null;
        }
        ClusterView view;
        try {
            view = discover();
        } catch (KubernetesClientException e) {
            return failed(FailureReason.KUBERNETES_READ, "cannot list pods or nodes: " + detail(e), null, List.of());
        }
        if (view.localityProblem() != null) {
            return withoutLocality(view, dryRun);
        }
        Round round = planAndApply(
                view, lastMetrics, stateBeforeLastRound, routesBeforeLastRound, overloadedEdgesBeforeLastRound, dryRun);
        if (round.failure() == null) {
            overloadedEdges = lastOverloaded;
        }
        return round;
    }

    /**
     * Nodes hosting the application's or the entry points' pods, as of the last round or re-plan,
     * that lack a locality label Istio reads (region, zone or {@code topology.istio.io/subzone}), so
     * that rules address them together with other nodes, or not at all; sorted.
     */
    public List<String> nodesMissingLocalityLabels() {
        return nodesMissingLocalityLabels;
    }

    /** A controller without a client (a recorded cluster) runs dry rounds only. */
    private void requireWriterUnless(boolean dryRun) {
        if (!dryRun && kubernetes == null) {
            throw new IllegalStateException(
                    "only dry runs: this controller reads " + cluster.address() + " and has no cluster to write to");
        }
    }

    private ClusterView discover() {
        ClusterView view = KubernetesDiscovery.discover(cluster, config.kubernetes());
        nodesMissingLocalityLabels = view.nodesMissingLocalityLabels();
        return view;
    }

    /** No rule can name the locality of some node: keep the last plan rather than cut its pods off. */
    private Round withoutLocality(ClusterView view, boolean dryRun) {
        return failed(
                FailureReason.NODE_WITHOUT_LOCALITY, view.localityProblem() + keeping(dryRun), null, view.skipped());
    }

    /** What a failed round leaves: the last applied plan, or, in a dry run, nothing applied at all. */
    private static String keeping(boolean dryRun) {
        return dryRun ? "; dry run: nothing applied" : "; keeping the last applied plan";
    }

    /**
     * @param routesFrom       the routes the share cap starts from
     * @param overloadedBefore the edges the cap found overloading a node in the round before
     */
    private Round planAndApply(
            ClusterView view,
            MetricsReader.Metrics measured,
            AtpmState from,
            List<Route> routesFrom,
            Set<String> overloadedBefore,
            boolean dryRun) {
        SnapshotAssembler.Result assembled;
        try {
            assembled = SnapshotAssembler.assemble(view, measured, config);
        } catch (IllegalArgumentException e) {
            return failed(FailureReason.INVALID_SNAPSHOT, e.getMessage(), null, measured.notes());
        }
        Snapshot snapshot = assembled.snapshot();
        List<String> blind = componentsWithoutMetrics(snapshot);
        if (!blind.isEmpty()) {
            return failed(
                    FailureReason.COMPONENT_WITHOUT_METRICS,
                    "no CPU or request metrics for any replica of " + blind + keeping(dryRun),
                    snapshot,
                    assembled.notes());
        }
        long started = nanoClock.getAsLong();
        Plan plan;
        try {
            plan = heart.plan(snapshot, from);
        } catch (InvalidSnapshotException e) {
            return failed(FailureReason.INVALID_SNAPSHOT, String.join("; ", e.problems()), snapshot, assembled.notes());
        }
        long planningNanos = nanoClock.getAsLong() - started;
        List<String> notes = new ArrayList<>(assembled.notes());
        notes.addAll(plan.allocation().notes());
        Map<String, Double> shortfalls = new TreeMap<>();
        List<String> shortNotes = new ArrayList<>();
        for (ComponentShares component : plan.allocation().shares()) {
            Double shortfall = component.shortfallRequestsPerSecond();
            shortfalls.put(component.component(), shortfall == null ? 0.0 : shortfall);
            if (shortfall != null) {
                shortNotes.add(String.format(
                        java.util.Locale.ROOT, "%s short by %.4g req/s", component.component(), shortfall));
            }
        }
        if (!shortNotes.isEmpty() && config.holdOnShortfall()) {
            return new Round(
                    false,
                    FailureReason.CAPACITY_SHORTFALL,
                    "capacity shortfall ("
                            + String.join(", ", shortNotes)
                            + "); capacityShortfall: hold keeps the rules and the state of the"
                            + " last round",
                    null,
                    snapshot,
                    List.of(),
                    List.of(),
                    List.of(),
                    notes,
                    planningNanos,
                    shortfalls);
        }
        ShareMoveCap.Capped capped = ShareMoveCap.apply(
                plan.allocation().routes(),
                routesFrom,
                snapshot,
                plan.allocation().shares(),
                config.maxShareMovePerRound(),
                overloadedBefore,
                notes);
        List<Route> routes = capped.routes();
        List<ObjectNode> desired;
        List<Actuator.Change> changes;
        try {
            desired = DestinationRules.of(routes, snapshot, options(view));
        } catch (IllegalArgumentException e) {
            return failed(FailureReason.INVALID_SNAPSHOT, e.getMessage(), snapshot, assembled.notes());
        }
        try {
            changes = actuator.plan(desired, namespaces(view));
        } catch (KubernetesClientException e) {
            return failed(
                    FailureReason.KUBERNETES_READ,
                    "cannot list DestinationRules: " + detail(e),
                    snapshot,
                    assembled.notes());
        }
        if (!dryRun) {
            try {
                actuator.apply(changes, desired, mayWrite);
            } catch (Actuator.WriteStopped e) {
                return failed(FailureReason.LOST_LEADERSHIP, e.getMessage(), snapshot, notes);
            } catch (KubernetesClientException e) {
                return failed(
                        FailureReason.KUBERNETES_WRITE, "cannot write DestinationRules: " + detail(e), snapshot, notes);
            }
        }
        state = plan.state();
        lastRoutes = routes;
        lastOverloaded = capped.overloaded();
        if (!dryRun && store != null) {
            try {
                if (mayWrite.getAsBoolean()) {
                    store.save(state, routes);
                } else {
                    notes.add("the ATPM state was not saved: this replica no longer leads");
                }
            } catch (KubernetesClientException e) {
                notes.add("the ATPM state was not saved (" + detail(e) + "): a restart would start every group over");
            }
        }
        return new Round(
                !dryRun, null, null, plan, snapshot, routes, desired, changes, notes, planningNanos, shortfalls);
    }

    /**
     * One line: the verb, the resource, the HTTP code and the API server's message, or "no cluster
     * reachable: ..." when no API server answered ({@link KubernetesErrors}).
     */
    private String detail(KubernetesClientException e) {
        return KubernetesErrors.describe(e, cluster.address());
    }

    private Round failed(FailureReason reason, String message, Snapshot snapshot, List<String> notes) {
        return new Round(false, reason, message, null, snapshot, List.of(), List.of(), List.of(), notes, 0);
    }

    /** Components none of whose ready replicas has both CPU and requests. */
    private static List<String> componentsWithoutMetrics(Snapshot snapshot) {
        Map<String, Boolean> any = new TreeMap<>();
        for (Replica replica : snapshot.replicas()) {
            boolean measured = replica.isReady() && replica.cpuCores() != null && replica.requestsPerSecond() != null;
            any.merge(replica.component(), measured, Boolean::logicalOr);
        }
        List<String> blind = new ArrayList<>();
        any.forEach((component, measured) -> {
            if (!measured) {
                blind.add(component);
            }
        });
        return blind;
    }

    private DestinationRules.Options options(ClusterView view) {
        Map<String, String> namespaceOf = new TreeMap<>();
        for (ClusterView.PodInfo pod : view.pods()) {
            namespaceOf.putIfAbsent(pod.component(), pod.namespace());
        }
        // Entry points listed by their own labels are selected by them in their rules, too.
        Map<String, Map<String, String>> selectorOf = new TreeMap<>();
        for (String entry : config.kubernetes().entryPoints()) {
            EntryPoint point = EntryPoint.parse(entry, config.kubernetes().componentLabel());
            if (point.bySelector(config.kubernetes().componentLabel())) {
                selectorOf.put(point.name(), point.selector());
            }
        }
        return new DestinationRules.Options(
                namespaceOf,
                config.kubernetes().namespaces().get(0),
                config.kubernetes().componentLabel(),
                config.kubernetes().clusterDomain(),
                selectorOf);
    }

    private List<String> namespaces(ClusterView view) {
        Set<String> namespaces = new TreeSet<>(config.kubernetes().namespaces());
        for (ClusterView.PodInfo pod : view.pods()) {
            namespaces.add(pod.namespace());
        }
        return List.copyOf(namespaces);
    }
}
