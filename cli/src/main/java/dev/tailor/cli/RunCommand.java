package dev.tailor.cli;

import dev.tailor.common.Problem;
import dev.tailor.heart.controller.ConfigFiles;
import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.HeartRun;
import dev.tailor.heart.controller.PrometheusClient;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
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
            "  tailor heart run --config heart.yaml --once --dry-run -o yaml > rules.yaml   # for kubectl apply -f",
            "  tailor heart run --config heart.yaml                    # every 30 s",
            "  tailor heart run --config examples/tryout/heart.yaml --once --dry-run \\",
            "      --cluster-from examples/tryout/cluster.yaml --at 2026-01-01T00:03:00Z   # without a cluster",
            "",
            "The last example needs no cluster but a Prometheus on 127.0.0.1:9090 with the recording"
                    + " examples/tryout/metrics.om loaded: docs/controller.md, Try it without a cluster, has the"
                    + " steps.",
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
            description = "Controller configuration (YAML, or JSON when named .json); every field has a default"
                    + " (docs/controller.md).")
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
            description = "Plan and print the changes to the DestinationRules as a diff (or, with -o yaml, the"
                    + " rules); write nothing.")
    boolean dryRun;

    /** The values of {@code --output}. */
    enum Output {
        diff,
        yaml
    }

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FORMAT",
            defaultValue = "diff",
            description = "What a dry run prints on stdout: ${COMPLETION-CANDIDATES}. diff: the plan and the changes"
                    + " to the rules Tailor owns. yaml: every DestinationRule the round would write, complete, as YAML"
                    + " documents kubectl apply -f takes; the plan and the changes go to stderr. yaml with --once"
                    + " --dry-run. Default: ${DEFAULT-VALUE}.")
    Output output;

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
        // With JSON log lines, stderr stays JSON: the plan and the change lines are left out there.
        PrintWriter planOut = logFormat == Logs.Format.json ? new PrintWriter(java.io.Writer.nullWriter()) : err;
        // Bad options and a bad config are found before the controller starts: usage errors, printed as
        // every command's (tailor: FILE: N problems: and one line each) with exit code 2, not as log lines.
        HeartRun.Options options = options();
        Logs.configure(logFormat, logLevel, err);
        try {
            return HeartRun.run(options, out, planOut, LOG_LINES);
        } catch (HeartRun.Refused e) {
            // Said as a log line like every other, so that a JSON log stays JSON to its last line.
            LOG.error(e.getMessage());
            return e.exitCode();
        } finally {
            Logs.reset();
        }
    }

    /** The run's options, checked: a {@link CliException} (exit code 2) names the first bad one. */
    private HeartRun.Options options() {
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
        if (output == Output.yaml && !(once && dryRun)) {
            throw new CliException("--output: \"" + output + "\" prints the rules of one dry-run round and writes"
                    + " nothing (expected: with --once --dry-run, or --output diff)");
        }
        if (clusterFrom != null && kubeconfig != null) {
            throw new CliException(
                    "--cluster-from and --kubeconfig: give one of them (a recorded cluster or a live" + " one)");
        }
        if (metricsAddress != null) {
            // Checked with the other options, --once or not: not after the client and the planner's warm-up.
            try {
                HeartRun.checkMetricsAddress(metricsAddress);
            } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage());
            }
        }
        ControllerConfig settings = settings(config, prometheusUrl);
        return new HeartRun.Options(
                settings,
                prometheus(settings),
                kubeconfig,
                clusterFrom,
                time,
                once,
                dryRun,
                output == Output.yaml ? HeartRun.Output.YAML : HeartRun.Output.DIFF,
                metricsAddress,
                () -> List.of(Examples.load("paper-pairwise"), Examples.load("paper-dag")));
    }

    /** The run's log lines, as the command's. */
    private static final HeartRun.Log LOG_LINES = new HeartRun.Log() {
        @Override
        public void info(String line) {
            LOG.info(line);
        }

        @Override
        public void warn(String line) {
            LOG.warn(line);
        }

        @Override
        public void error(String line) {
            LOG.error(line);
        }
    };

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
                List<Problem> problems = settings.problems();
                if (!problems.isEmpty()) {
                    throw new IllegalArgumentException("--prometheus: " + Problem.join(problems));
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
}
