package dev.tailor.cli;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.controller.Actuator;
import dev.tailor.heart.controller.ConfigFiles;
import dev.tailor.heart.controller.Controller;
import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.ControllerLoop;
import dev.tailor.heart.controller.ControllerMetrics;
import dev.tailor.heart.controller.ControllerServer;
import dev.tailor.heart.controller.KubernetesErrors;
import dev.tailor.heart.controller.PlanTable;
import dev.tailor.heart.controller.Preflight;
import dev.tailor.heart.controller.PrometheusClient;
import dev.tailor.heart.controller.RecordedCluster;
import dev.tailor.heart.controller.StateStore;
import dev.tailor.lab.SimulationOutput;
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
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor heart run}: the HEART controller against a real cluster. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Runs HEART against a Kubernetes cluster with Istio and Prometheus: every round it lists the application's"
                    + " pods and nodes, reads CPU, requests, calls and link delays from Prometheus, plans, and"
                    + " server-side-applies one DestinationRule per (caller, callee). A round that cannot read keeps the"
                    + " rules already applied.",
            "",
            "The cluster is the current kubeconfig context (KUBECONFIG, ~/.kube/config) or, in a pod, its service"
                    + " account.",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart run --config heart.yaml --once --dry-run   # show what would change",
            "  tailor heart run --config heart.yaml                    # every 30 s",
            "  tailor heart run --config examples/tryout/heart.yaml --once --dry-run \\",
            "      --cluster-from examples/tryout/cluster.yaml --at 2026-01-01T00:03:00Z   # without a cluster",
            "",
            "Config: docs/controller.md. Exit codes: 0 done, 1 a round failed (--once), 2 bad input."
        })
final class RunCommand implements Callable<Integer> {

    private static final org.slf4j.Logger LOG = Logs.TAILOR;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Controller configuration (YAML); every field has a" + " default (docs/controller.md).")
    Path config;

    @Option(
            names = "--prometheus",
            paramLabel = "URL",
            description = "Prometheus base URL (overrides the config's" + " prometheus.url).")
    String prometheusUrl;

    @Option(
            names = "--kubeconfig",
            paramLabel = "FILE",
            description = "Kubeconfig to use (its current context)"
                    + " instead of KUBECONFIG / ~/.kube/config / the pod's service account.")
    Path kubeconfig;

    @Option(
            names = "--metrics-address",
            paramLabel = "HOST:PORT",
            description =
                    "Serve /metrics, /healthz and /readyz here when running continuously. Default:" + " 0.0.0.0:9464.")
    String metricsAddress;

    @Option(
            names = "--log-format",
            paramLabel = "FORMAT",
            defaultValue = "text",
            description = "Log lines on stderr: ${COMPLETION-CANDIDATES} (one JSON object per line). Default:"
                    + " ${DEFAULT-VALUE}.")
    Logs.Format logFormat;

    @Option(
            names = "--log-level",
            paramLabel = "LEVEL",
            defaultValue = "info",
            description = "Least level logged: ${COMPLETION-CANDIDATES}; stack traces only at debug. Default:"
                    + " ${DEFAULT-VALUE}.")
    Logs.Threshold logLevel;

    @Option(names = "--once", description = "Run one round and exit (exit code 1 if it failed).")
    boolean once;

    @Option(
            names = "--dry-run",
            description = "Plan and print the changes to the DestinationRules as a diff; write" + " nothing.")
    boolean dryRun;

    @Option(
            names = "--cluster-from",
            paramLabel = "FILE",
            description = "Read nodes, pods and DestinationRules from"
                    + " FILE (kubectl get nodes,pods,destinationrules -A -o yaml) instead of a cluster; with --once --dry-run."
                    + " Prints the plan and the rules it would write.")
    Path clusterFrom;

    @Option(
            names = "--at",
            paramLabel = "TIME",
            description = "Evaluate the queries at TIME (RFC 3339, e.g."
                    + " 2026-01-01T00:03:00Z) instead of now, for metrics recorded in the past; with --once --dry-run.")
    String at;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Logs.configure(logFormat, logLevel, err);
        try {
            return run(out);
        } catch (CliException e) {
            // Said as a log line like every other, so that a JSON log stays JSON to its last line.
            LOG.error(e.getMessage());
            return e.exitCode();
        } finally {
            Logs.reset();
        }
    }

    private Integer run(PrintWriter out) throws InterruptedException {
        Instant time = at == null ? null : instant(at);
        Instant now = Instant.now();
        if (time != null && time.isAfter(now)) {
            throw new CliException(
                    "--at: \"" + at + "\" is after now (" + now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                            + ") (expected: the past instant the metrics were recorded"
                            + " at, e.g. 2026-01-01T00:03:00Z)");
        }
        if ((clusterFrom != null || time != null) && !(once && dryRun)) {
            throw new CliException((clusterFrom != null ? "--cluster-from" : "--at") + " plans one round and writes"
                    + " nothing: add --once --dry-run");
        }
        if (clusterFrom != null && kubeconfig != null) {
            throw new CliException(
                    "--cluster-from and --kubeconfig: give one of them (a recorded cluster or a live" + " one)");
        }
        ControllerConfig settings = settings(config, prometheusUrl);
        PrometheusClient prometheus = prometheus(settings);
        if (clusterFrom != null) {
            return runRecorded(settings, prometheus, time != null ? time : Instant.now(), out);
        }
        try (KubernetesClient kubernetes = KubeClients.build(kubeconfig)) {
            LOG.info("cluster {} ({})", kubernetes.getMasterUrl(), KubeClients.source(kubeconfig));
            // The checks of `tailor heart check`, so that what a round needs and lacks is said. One round
            // waits for them (and stops when no cluster answers); the loop does not: an API server that
            // answers slowly must not hold back /healthz past the liveness probe's patience.
            Preflight preflight =
                    new Preflight(kubernetes, prometheus, settings).noKubeconfig(KubeClients.noKubeconfig(kubeconfig));
            if (once) {
                List<Preflight.Check> checks = preflight.run(time != null ? time : Instant.now());
                reportChecks(checks);
                if (checks.get(0).status() == Preflight.Status.FAIL) {
                    throw new CliException(
                            checks.get(0).message() + "; "
                                    + (KubeClients.noKubeconfig(kubeconfig)
                                            ? "no kubeconfig was found (no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a"
                                                    + " pod): point KUBECONFIG or --kubeconfig at your cluster's"
                                            : "check the kubeconfig's current context (kubectl config current-context) or"
                                                    + " --kubeconfig")
                                    + "; to try the controller without a cluster, --cluster-from FILE (docs/controller.md,"
                                    + " Try it without a cluster)",
                            1,
                            null);
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
                        LOG.warn("not writing: {}", holder);
                    }
                    return holder == null;
                });
            }
            ControllerMetrics metrics = new ControllerMetrics(System::currentTimeMillis);
            if (once) {
                Controller.Round round = controller.round(time != null ? time : Instant.now(), dryRun);
                metrics.record(round);
                report(round, out);
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
                    round -> report(round, out),
                    System::currentTimeMillis);
            String address = metricsAddress != null ? metricsAddress : "0.0.0.0:9464";
            long staleMillis = loop.staleMillis(); // past it /healthz says 503 and the lease is not renewed
            loop.onMessage(RunCommand::loopMessage);
            try (ControllerServer server = new ControllerServer(
                    socket(address),
                    metrics,
                    () -> loop.alive(staleMillis),
                    () -> metrics.ready() || loop.standingBy())) {
                LOG.info("serving /metrics, /healthz and /readyz on " + address + "; "
                        + (lease == null
                                ? (dryRun
                                        ? "dry run: no leader election, nothing written"
                                        : "no leader election (one replica)")
                                : "leader election on Lease " + lease + " as " + identity)
                        + "; a round every " + SimulationOutput.fmt(settings.roundSeconds()) + " s");
                loop.start();
                Runtime.getRuntime().addShutdownHook(new Thread(loop::close, "tailor-heart-shutdown"));
                while (loop.alive(staleMillis)) {
                    Thread.sleep(1_000);
                }
                LOG.error("the round loop stopped");
                return 1;
            } catch (IOException e) {
                throw new CliException("--metrics-address: cannot listen on " + address + " (" + Json.reason(e) + ")");
            } finally {
                loop.close();
            }
        }
    }

    /**
     * One dry-run round on the cluster recorded in {@link #clusterFrom}, metrics at {@code time}: prints the
     * plan, then the rule changes as a diff against the recorded rules Tailor owns. Nothing is written.
     */
    private Integer runRecorded(ControllerConfig settings, PrometheusClient prometheus, Instant time, PrintWriter out) {
        RecordedCluster recorded;
        try {
            recorded = RecordedCluster.read(clusterFrom);
        } catch (IllegalArgumentException e) {
            throw new CliException("--cluster-from: " + e.getMessage());
        }
        LOG.info("cluster recorded in {}: {}; a dry run, nothing is written", clusterFrom, recorded.summary());
        LOG.info(
                "no saved ATPM state: the round plans as a first round would; start-up checks skipped (tailor"
                        + " heart check needs a live cluster); metrics at {}",
                time);
        Controller controller = new Controller(
                settings, settings.planner().heartConfig(), prometheus, recorded, AtpmState.EMPTY, System::nanoTime);
        Controller.Round round = controller.round(time, true);
        if (round.failure() == null) {
            PlanTable.print(
                    round.plan(), "cluster recorded in " + clusterFrom + ", metrics at " + time, false, false, out);
            out.println();
            out.println("DestinationRules (the changes to the recorded rules Tailor owns)");
        }
        // A recording's metrics are as old as the recording: without --at the queries ask for now.
        boolean noData = round.failure() == Controller.FailureReason.COMPONENT_WITHOUT_METRICS;
        report(
                round,
                out,
                noData && at == null
                        ? "; the metrics of a recording are in the past: pass --at TIME"
                                + " (the recording's time, RFC 3339)"
                        : "");
        return round.failure() == null ? 0 : 1;
    }

    /** {@code --at}: an RFC 3339 instant, with {@code Z} or an offset. */
    private static Instant instant(String text) {
        try {
            return java.time.OffsetDateTime.parse(text).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            throw new CliException(
                    "--at: \"" + text + "\" (expected: an instant in RFC 3339, e.g." + " 2026-01-01T00:03:00Z)");
        }
    }

    /** The configuration of {@code --config} (defaults without), with {@code --prometheus} applied; checked. */
    static ControllerConfig settings(Path config, String prometheusUrl) {
        try {
            ControllerConfig settings = config == null ? ControllerConfig.DEFAULTS : ConfigFiles.read(config);
            if (prometheusUrl != null) {
                settings = settings.withPrometheusUrl(prometheusUrl);
                List<String> problems = settings.problems();
                if (!problems.isEmpty()) {
                    throw new IllegalArgumentException("--prometheus: " + String.join("; ", problems));
                }
            }
            return settings;
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
    }

    static PrometheusClient prometheus(ControllerConfig settings) {
        try {
            return PrometheusClient.of(settings.prometheus());
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
    }

    /**
     * The start-up checks: a line per warning or failure with its fixes, then a summary; the checks
     * that passed only count in the summary (`tailor heart check` lists them).
     */
    private static void reportChecks(List<Preflight.Check> checks) {
        int ok = 0;
        for (Preflight.Check check : checks) {
            if (check.status() == Preflight.Status.OK) {
                ok++;
                continue;
            }
            String line = "check " + check.name() + " " + check.status().label() + ": " + check.message()
                    + (check.fixes().isEmpty() ? "" : "; fix: " + String.join("; ", check.fixes()));
            if (check.status() == Preflight.Status.FAIL) {
                LOG.error(line);
            } else {
                LOG.warn(line);
            }
        }
        LOG.info("start-up checks: " + ok + " of " + checks.size() + " ok"
                + (ok == checks.size() ? "" : " (tailor heart check --config ... lists them all)"));
    }

    /** What the loop says outside rounds: its failures and stops as warnings, the rest as information. */
    private static void loopMessage(String message) {
        if (message.startsWith("cannot ") || message.startsWith("not ") || message.contains("no answer")) {
            LOG.warn(message);
        } else {
            LOG.info(message);
        }
    }

    /**
     * {@code --once} writes outside leader election: refuse when another replica holds the Lease
     * and renewed it within its duration, or when the Lease cannot be read (then nobody can tell), so
     * a one-off round never fights a running controller.
     */
    private static void refuseIfAnotherLeads(KubernetesClient kubernetes, String lease, double leaseSeconds) {
        String holder = anotherHolder(kubernetes, lease, leaseSeconds);
        if (holder != null) {
            throw new CliException(
                    holder + ": a controller may be running and writing the rules; use --dry-run to see"
                            + " what a round would change, or stop it first",
                    1,
                    null);
        }
    }

    /**
     * Why {@code --once} must not write now: the Lease is held by another replica that renewed it
     * within its duration, or it cannot be read; {@code null} when it is free (absent, released or
     * expired).
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

    /** This replica's name in the Lease: the pod's name in a cluster, else the host's. */
    /** Plans of the bundled examples the controller runs before its first round. */
    static final int WARM_UP_PLANS = 10;

    /**
     * Plans the bundled examples {@link #WARM_UP_PLANS} times with the controller's planner settings
     * before the first round, so that round does not pay for loading and first running the planner's
     * code: in a fresh JVM the first plan took 30-100 times a warm one, after ten warm-up plans (about
     * 0.4 s of CPU at start) 5-7 times (docs/controller.md, Cold start).
     */
    static void warmUpPlanner(dev.tailor.heart.HeartConfig config) {
        long start = System.nanoTime();
        List<dev.tailor.heart.Snapshot> examples = List.of(Examples.load("paper-pairwise"), Examples.load("paper-dag"));
        for (int i = 0; i < WARM_UP_PLANS; i++) {
            new dev.tailor.heart.Heart(config).plan(examples.get(i % examples.size()), AtpmState.EMPTY);
        }
        LOG.info(
                "planner warmed up: {} plans of the bundled examples in {} ms",
                WARM_UP_PLANS,
                Math.round((System.nanoTime() - start) / 1e6));
    }

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
        int colon = address.lastIndexOf(':');
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            if (colon <= 0 || port < 0 || port > 65_535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(address.substring(0, colon), port);
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            throw new CliException("--metrics-address: \"" + address + "\" (expected: HOST:PORT, e.g. 0.0.0.0:9464)");
        }
    }

    private void report(Controller.Round round, PrintWriter out) {
        report(round, out, "");
    }

    /** Logs the round; {@code hint} (empty, or "; " and what to do) ends a failed round's line. */
    private void report(Controller.Round round, PrintWriter out, String hint) {
        round.notes().forEach(note -> LOG.info("note: " + note));
        if (round.failure() != null) {
            String left = dryRun ? "; dry run: nothing applied" : "; the DestinationRules already applied stay";
            LOG.warn("round failed (" + round.failure().name().toLowerCase(Locale.ROOT) + "): " + round.message()
                    + (round.message().endsWith(left) ? "" : left) + hint);
            return;
        }
        long changed = round.changes().stream()
                .filter(c -> c.action() != Actuator.Action.UNCHANGED)
                .count();
        // Counted as the plan's header counts them; the others (not Ready) are said beside.
        int ready = PlanTable.readyReplicas(round.plan());
        int all = round.snapshot().replicas().size();
        LOG.info(String.format(
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
        for (Actuator.Change change : round.changes()) {
            if (change.action() == Actuator.Action.UNCHANGED) {
                continue;
            }
            out.println(change.action().name().toLowerCase(Locale.ROOT) + " DestinationRule " + change.namespace() + "/"
                    + change.name());
            if (dryRun) {
                Actuator.diff(change).forEach(line -> out.println("    " + line));
            }
        }
        out.flush();
    }
}
