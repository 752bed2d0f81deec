package dev.tailor.heart.controller;

import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.Snapshot;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The controller wired and run as {@code tailor heart run} runs it: one round ({@code --once}), or the
 * round loop with leader election and {@code /metrics}, {@code /healthz} and {@code /readyz} until it
 * stops; or one dry-run round on a recorded cluster. The command parses its options into
 * {@link Options}, calls {@link #run} and exits with what it returns; a {@link Refused} carries the
 * message and exit code of a run that could not start or was refused. Rounds and the start-up checks
 * are said through {@link Log}; rule changes are printed to {@code out}, or, with {@link Output#YAML},
 * the rules themselves are, and the plan and the changes go to {@code err}.
 */
public final class HeartRun {

    /** Plans of the bundled examples the controller runs before its first round. */
    public static final int WARM_UP_PLANS = 10;

    /** Where the run's log lines go, by level. */
    public interface Log {
        void info(String line);

        void warn(String line);

        void error(String line);
    }

    /** What a dry run prints on {@code out}. */
    public enum Output {
        /** The plan (a recorded cluster) and the changes to the rules Tailor owns, as a diff. */
        DIFF,
        /**
         * Every rule the round would write, complete, as YAML documents for {@code kubectl apply -f -};
         * the plan and the changes go to the other writer. One dry-run round only.
         */
        YAML
    }

    /**
     * What to run.
     *
     * @param settings       the controller's configuration, checked
     * @param prometheus     its Prometheus client
     * @param kubeconfig     the kubeconfig whose current context is the cluster, or null for the usual
     *                       places ({@link KubeClients#build(Path)}); not read for a recorded cluster
     * @param clusterFrom    a recorded cluster (kubectl's YAML) to plan one dry-run round on, or null
     * @param time           the instant the metrics are read at, or null for now
     * @param once           one round, then exit
     * @param dryRun         plan and print the rule changes; write nothing
     * @param output         what a dry run prints on {@code out}; {@link Output#YAML} only with
     *                       {@code once} and {@code dryRun}
     * @param metricsAddress HOST:PORT of the server when running continuously, or null for 0.0.0.0:9464
     * @param warmUpExamples the snapshots the planner warms up on before the loop's first round
     */
    public record Options(
            ControllerConfig settings,
            PrometheusClient prometheus,
            Path kubeconfig,
            Path clusterFrom,
            Instant time,
            boolean once,
            boolean dryRun,
            Output output,
            String metricsAddress,
            Supplier<List<Snapshot>> warmUpExamples) {

        public Options {
            output = output == null ? Output.DIFF : output;
            if (output == Output.YAML && !(once && dryRun)) {
                throw new IllegalArgumentException("output YAML is one dry-run round: once and dryRun");
            }
        }
    }

    /** A run that could not start or was refused: the message says why, the exit code how. */
    public static final class Refused extends RuntimeException {

        private static final long serialVersionUID = 1L;

        private final int exitCode;

        Refused(String message, int exitCode) {
            super(message);
            this.exitCode = exitCode;
        }

        public int exitCode() {
            return exitCode;
        }
    }

    private final Options options;
    private final PrintWriter out;
    /** Where the plan and the changes go when {@code out} carries the rules as YAML. */
    private final PrintWriter err;

    private final Log log;

    private HeartRun(Options options, PrintWriter out, PrintWriter err, Log log) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.log = log;
    }

    /**
     * Runs as {@code options} say; returns the exit code: 0 done, 1 a round failed (one round) or the
     * loop stopped.
     *
     * @throws Refused when the run cannot start (exit code 2 for bad input) or must not write (1)
     */
    public static int run(Options options, PrintWriter out, Log log) throws InterruptedException {
        return run(options, out, out, log);
    }

    /**
     * Runs as {@code options} say, the plan and the changes of {@link Output#YAML} on {@code err}; returns
     * the exit code as {@link #run(Options, PrintWriter, Log)} does.
     */
    public static int run(Options options, PrintWriter out, PrintWriter err, Log log) throws InterruptedException {
        return new HeartRun(options, out, err, log).run();
    }

    /** Where the plan and the change lines go: {@code out}, or {@code err} when {@code out} carries YAML. */
    private PrintWriter planOut() {
        return options.output() == Output.YAML ? err : out;
    }

    private int run() throws InterruptedException {
        ControllerConfig settings = options.settings();
        PrometheusClient prometheus = options.prometheus();
        Instant time = options.time();
        boolean once = options.once();
        boolean dryRun = options.dryRun();
        if (options.clusterFrom() != null) {
            return runRecorded(settings, prometheus, time != null ? time : Instant.now());
        }
        KubernetesClient client;
        try {
            client = KubeClients.build(options.kubeconfig());
        } catch (IllegalArgumentException e) {
            throw new Refused(e.getMessage(), 2);
        }
        boolean noKubeconfig = KubeClients.noKubeconfig(options.kubeconfig());
        try (KubernetesClient kubernetes = client) {
            log.info("cluster " + kubernetes.getMasterUrl() + " (" + KubeClients.source(options.kubeconfig()) + ")");
            // The checks of `tailor heart check`, so that what a round needs and lacks is said. One round
            // waits for them (and stops when no cluster answers); the loop does not: an API server that
            // answers slowly must not hold back /healthz past the liveness probe's patience.
            Preflight preflight = new Preflight(kubernetes, prometheus, settings).noKubeconfig(noKubeconfig);
            if (once) {
                List<Preflight.Check> checks = preflight.run(time != null ? time : Instant.now());
                reportChecks(checks);
                if (checks.get(0).status() == Preflight.Status.FAIL) {
                    throw new Refused(
                            checks.get(0).message() + "; "
                                    + (noKubeconfig
                                            ? "no kubeconfig was found (no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a"
                                                    + " pod): point KUBECONFIG or --kubeconfig at your cluster's"
                                            : "check the kubeconfig's current context (kubectl config current-context) or"
                                                    + " --kubeconfig")
                                    + "; to try the controller without a cluster, --cluster-from FILE (docs/controller.md,"
                                    + " Try it without a cluster)",
                            1);
                }
            } else {
                Thread checking = new Thread(() -> reportChecks(preflight.run(Instant.now())), "tailor-heart-checks");
                checking.setDaemon(true);
                checking.start();
            }
            String location = settings.kubernetes().stateConfigMap();
            // The controller reads the saved state before its first round (a dry run too) and
            // saves it only when it writes rules.
            StateStore store = location.isEmpty() ? null : new StateStore(kubernetes, location);
            String lease = settings.kubernetes().lease().isEmpty()
                    ? null
                    : settings.kubernetes().lease();
            if (once && !dryRun && lease != null) {
                refuseIfAnotherLeads(kubernetes, lease, settings.kubernetes().leaseSeconds());
            }
            Controller controller = new Controller(
                    settings,
                    settings.planner().heartConfig(),
                    prometheus,
                    kubernetes,
                    AtpmState.EMPTY,
                    store,
                    System::nanoTime);
            if (once && !dryRun && lease != null) {
                // A controller may start while the round reads and plans: look again before each write.
                String leaseName = lease;
                double leaseSeconds = settings.kubernetes().leaseSeconds();
                controller.writeGuard(() -> {
                    String holder = anotherHolder(kubernetes, leaseName, leaseSeconds);
                    if (holder != null) {
                        log.warn("not writing: " + holder);
                    }
                    return holder == null;
                });
            }
            ControllerMetrics metrics = new ControllerMetrics(System::currentTimeMillis);
            if (once) {
                Controller.Round round = controller.round(time != null ? time : Instant.now(), dryRun);
                metrics.record(round);
                report(round, "");
                return round.failure() == null ? 0 : 1;
            }
            if (dryRun) {
                lease = null; // a dry run writes nothing, so it must not take the lease from the controller
            }
            warmUpPlanner(settings.planner().heartConfig());
            String identity = identity();
            ControllerLoop loop = new ControllerLoop(
                    controller,
                    metrics,
                    kubernetes,
                    settings,
                    new ControllerLoop.Options(
                            dryRun,
                            lease,
                            identity,
                            Duration.ofMillis(Math.round(settings.kubernetes().leaseSeconds() * 1000))),
                    round -> report(round, ""),
                    System::currentTimeMillis);
            String address = options.metricsAddress() != null ? options.metricsAddress() : "0.0.0.0:9464";
            long staleMillis = loop.staleMillis(); // past it /healthz says 503 and the lease is not renewed
            loop.onMessage(this::loopMessage);
            try (ControllerServer server =
                    new ControllerServer(socket(address), metrics, () -> loop.alive(staleMillis), loop::notReady)) {
                log.info("serving /metrics, /healthz and /readyz on " + address + "; "
                        + (lease == null
                                ? (dryRun
                                        ? "dry run: no leader election, nothing written"
                                        : "no leader election (one replica)")
                                : "leader election on Lease " + lease + " as " + identity)
                        + "; a round every " + seconds(settings.roundSeconds()) + " s");
                loop.start();
                String stopping = stoppingLine(lease);
                // A stop (SIGTERM, Ctrl-C) says what it does; a loop that stopped by itself has said so
                // already, and its exit does not run the hook.
                Thread hook = new Thread(
                        () -> {
                            log.info(stopping);
                            loop.close();
                        },
                        "tailor-heart-shutdown");
                Runtime.getRuntime().addShutdownHook(hook);
                while (loop.alive(staleMillis)) {
                    Thread.sleep(1_000);
                }
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // The hook runs or has run.
                }
                log.error("the round loop stopped");
                return 1;
            } catch (IOException e) {
                throw new Refused(
                        "--metrics-address: cannot listen on " + address + " (" + IoErrors.reason(e) + ")", 2);
            } finally {
                loop.close();
            }
        }
    }

    /**
     * What a stop (SIGTERM, Ctrl-C) logs as it starts, as {@link ControllerLoop#close} then does it: no round
     * starts, one in flight is interrupted, and with leader election ({@code lease} not null) the Lease is
     * released when this replica holds it ({@link LeaseElector#stop}; a release the API server does not answer
     * within the renew deadline is given up, and the Lease then expires by itself).
     */
    static String stoppingLine(String lease) {
        return "stopping: no new rounds, a round in flight is interrupted"
                + (lease == null ? "" : "; Lease " + lease + " is released if this replica holds it");
    }

    /**
     * One dry-run round on the recorded cluster, metrics at {@code time}: prints the plan, then the rule
     * changes as a diff against the recorded rules Tailor owns (or, with {@link Output#YAML}, the plan
     * and the changes on {@code err} and the rules on {@code out}). Nothing is written.
     */
    private int runRecorded(ControllerConfig settings, PrometheusClient prometheus, Instant time) {
        Path clusterFrom = options.clusterFrom();
        RecordedCluster recorded;
        try {
            recorded = RecordedCluster.read(clusterFrom);
        } catch (IllegalArgumentException e) {
            throw new Refused("--cluster-from: " + e.getMessage(), 2);
        }
        log.info("cluster recorded in " + clusterFrom + ": " + recorded.summary() + "; a dry run, nothing is written");
        log.info("no saved ATPM state: the round plans as a first round would; start-up checks skipped (tailor"
                + " heart check needs a live cluster); metrics at " + time);
        Controller controller = new Controller(
                settings, settings.planner().heartConfig(), prometheus, recorded, AtpmState.EMPTY, System::nanoTime);
        Controller.Round round = controller.round(time, true);
        if (round.failure() == null) {
            PrintWriter plan = planOut();
            PlanTable.print(
                    round.plan(), "cluster recorded in " + clusterFrom + ", metrics at " + time, false, false, plan);
            plan.println();
            plan.println("DestinationRules (the changes to the recorded rules Tailor owns)");
            plan.flush();
        }
        // A recording's metrics are as old as the recording: without --at the queries ask for now.
        boolean noData = round.failure() == Controller.FailureReason.COMPONENT_WITHOUT_METRICS;
        report(
                round,
                !noData
                        ? ""
                        : options.time() == null
                                ? "; the metrics of a recording are in the past: pass --at TIME"
                                        + " (the recording's time, RFC 3339)"
                                : "; Prometheus has no series of these pods at --at " + time + ": pass a time"
                                        + " within the recording (at least prometheus.windowSeconds after its start)");
        return round.failure() == null ? 0 : 1;
    }

    /**
     * The start-up checks: a line per warning or failure with its fixes, then a summary; the checks
     * that passed only count in the summary (`tailor heart check` lists them).
     */
    private void reportChecks(List<Preflight.Check> checks) {
        int ok = 0;
        for (Preflight.Check check : checks) {
            if (check.status() == Preflight.Status.OK) {
                ok++;
                continue;
            }
            String line = "check " + check.name() + " " + check.status().label() + ": " + check.message()
                    + (check.fixes().isEmpty() ? "" : "; fix: " + String.join("; ", check.fixes()));
            if (check.status() == Preflight.Status.FAIL) {
                log.error(line);
            } else {
                log.warn(line);
            }
        }
        log.info("start-up checks: " + ok + " of " + checks.size() + " ok"
                + (ok == checks.size() ? "" : " (tailor heart check --config ... lists them all)"));
    }

    /** What the loop says outside rounds: its failures and stops as warnings, the rest as information. */
    private void loopMessage(String message) {
        if (message.startsWith("cannot ") || message.startsWith("not ") || message.contains("no answer")) {
            log.warn(message);
        } else {
            log.info(message);
        }
    }

    /**
     * One round writes outside leader election: refuse when another replica holds the Lease and
     * renewed it within its duration, or when the Lease cannot be read (then nobody can tell), so a
     * one-off round never fights a running controller.
     */
    private static void refuseIfAnotherLeads(KubernetesClient kubernetes, String lease, double leaseSeconds) {
        String holder = anotherHolder(kubernetes, lease, leaseSeconds);
        if (holder != null) {
            throw new Refused(
                    holder + ": a controller may be running and writing the rules; use --dry-run to see"
                            + " what a round would change, or stop it first",
                    1);
        }
    }

    /**
     * Why one round must not write now: the Lease is held by another replica that renewed it within
     * its duration, or it cannot be read; {@code null} when it is free (absent, released or expired).
     */
    private static String anotherHolder(KubernetesClient kubernetes, String lease, double leaseSeconds) {
        String[] parts = lease.split("/", 2);
        Lease current;
        try {
            current = kubernetes
                    .resources(Lease.class)
                    .inNamespace(parts[0])
                    .withName(parts[1])
                    .get();
        } catch (KubernetesClientException e) {
            return "cannot read Lease " + lease + " ("
                    + KubernetesErrors.describe(e, String.valueOf(kubernetes.getMasterUrl())) + ")";
        }
        if (current == null
                || current.getSpec() == null
                || current.getSpec().getHolderIdentity() == null
                || current.getSpec().getHolderIdentity().isEmpty()
                || current.getSpec().getRenewTime() == null) {
            return null;
        }
        double seconds = current.getSpec().getLeaseDurationSeconds() != null
                ? current.getSpec().getLeaseDurationSeconds()
                : leaseSeconds;
        Duration age = Duration.between(current.getSpec().getRenewTime().toInstant(), Instant.now());
        return age.toMillis() < seconds * 1000
                ? "Lease " + lease + " is held by " + current.getSpec().getHolderIdentity() + " (renewed "
                        + age.toSeconds() + " s ago)"
                : null;
    }

    /**
     * Plans the warm-up examples {@link #WARM_UP_PLANS} times with the controller's planner settings
     * before the first round, so that round does not pay for loading and first running the planner's
     * code: in a fresh JVM the first plan took 30-100 times a warm one, after ten warm-up plans (about
     * 0.4 s of CPU at start) 5-7 times (docs/controller.md, Cold start).
     */
    private void warmUpPlanner(HeartConfig config) {
        long start = System.nanoTime();
        List<Snapshot> examples = options.warmUpExamples().get();
        for (int i = 0; i < WARM_UP_PLANS; i++) {
            new Heart(config).plan(examples.get(i % examples.size()), AtpmState.EMPTY);
        }
        log.info("planner warmed up: " + WARM_UP_PLANS + " plans of the bundled examples in "
                + Math.round((System.nanoTime() - start) / 1e6) + " ms");
    }

    /** This replica's name in the Lease: the pod's name in a cluster, else the host's. */
    private static String identity() {
        String pod = System.getenv("POD_NAME");
        if (pod != null && !pod.isBlank()) {
            return pod;
        }
        String host = System.getenv("HOSTNAME");
        return host != null && !host.isBlank()
                ? host
                : "tailor-heart-" + ProcessHandle.current().pid();
    }

    private static InetSocketAddress socket(String address) {
        try {
            checkMetricsAddress(address);
        } catch (IllegalArgumentException e) {
            throw new Refused(e.getMessage(), 2);
        }
        int colon = address.lastIndexOf(':');
        return new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
    }

    /**
     * Checks {@code --metrics-address} as written, before anything else starts (the host is looked up only
     * when the server starts).
     *
     * @throws IllegalArgumentException {@code --metrics-address: "VALUE" (expected: ...)} when it is not
     *                                  HOST:PORT with a port in [0, 65535]
     */
    public static void checkMetricsAddress(String address) {
        int colon = address.lastIndexOf(':');
        boolean valid;
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            valid = colon > 0 && port >= 0 && port <= 65_535;
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            valid = false;
        }
        if (!valid) {
            throw new IllegalArgumentException("--metrics-address: \"" + address
                    + "\" (expected: HOST:PORT, the port in [0, 65535], e.g. 0.0.0.0:9464)");
        }
    }

    /** Seconds as the log says them: whole numbers without a point, else as {@link Numbers#format}. */
    private static String seconds(double value) {
        return Numbers.format(value);
    }

    /** Logs the round; {@code hint} (empty, or "; " and what to do) ends a failed round's line. */
    private void report(Controller.Round round, String hint) {
        boolean dryRun = options.dryRun();
        round.notes().forEach(note -> log.info("note: " + note));
        if (round.failure() != null) {
            String left = dryRun ? "; dry run: nothing applied" : "; the DestinationRules already applied stay";
            log.warn("round failed (" + round.failure().name().toLowerCase(Locale.ROOT) + "): " + round.message()
                    + (round.message().endsWith(left) ? "" : left) + hint);
            return;
        }
        long changed = round.changes().stream()
                .filter(c -> c.action() != Actuator.Action.UNCHANGED)
                .count();
        // Counted as the plan's header counts them; the others (not Ready) are said beside.
        int ready = PlanTable.readyReplicas(round.plan());
        int all = round.snapshot().replicas().size();
        log.info(String.format(
                Locale.ROOT,
                "round %d planned in %.1f ms: %d ready replicas%s, %d call edges; %d" + " rule(s) %s, %d unchanged",
                round.plan().state().rounds(),
                round.planningNanos() / 1e6,
                ready,
                all > ready ? " (" + all + " in all)" : "",
                round.snapshot().calls().size(),
                changed,
                dryRun ? "would change" : "changed",
                round.changes().size() - changed));
        boolean yaml = options.output() == Output.YAML;
        PrintWriter changes = planOut();
        List<String> deleted = new java.util.ArrayList<>();
        for (Actuator.Change change : round.changes()) {
            if (change.action() == Actuator.Action.UNCHANGED) {
                continue;
            }
            changes.println(change.action().name().toLowerCase(Locale.ROOT) + " DestinationRule " + change.namespace()
                    + "/" + change.name());
            if (dryRun && !yaml) {
                Actuator.diff(change).forEach(line -> changes.println("    " + line));
            }
            if (change.action() == Actuator.Action.DELETE) {
                deleted.add(change.namespace() + "/" + change.name());
            }
        }
        changes.flush();
        if (yaml) {
            // Every rule the round wants, unchanged ones too: applied, the file leaves the rules as the round would.
            log.info(round.desired().size() + " DestinationRule(s) printed as YAML"
                    + (round.desired().isEmpty() ? ": the round wants no rule" : ""));
            if (!deleted.isEmpty()) {
                log.warn("kubectl apply -f does not delete: the round would also delete " + String.join(", ", deleted)
                        + " ("
                        + String.join(
                                "; ",
                                deleted.stream()
                                        .map(rule -> "kubectl delete destinationrule -n " + rule.replace("/", " "))
                                        .toList())
                        + ")");
            }
            out.print(Actuator.manifests(round.desired()));
        }
        out.flush();
    }
}
