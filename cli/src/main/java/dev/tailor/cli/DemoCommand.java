package dev.tailor.cli;

import dev.tailor.lab.ClusterRuns;
import dev.tailor.lab.Demo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor demo}: the papers' comparisons in the simulators and, when fio and nbdkit are
 * installed, short runs of the NBD experiments with real clients ({@link Demo}), printed as a table
 * or JSON, with an HTML report.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Reproduces HEART's comparison in the cluster simulator: the paper's DAG and pairwise applications on five"
                    + " heterogeneous workers, at 100 and 400 RPS, under default, least-request, locality-first,"
                    + " wrr-orca, mcf-no-filter, HEART (Tailor's and the paper's), prequal and peak-ewma routing, with"
                    + " an ideal CPU limit (fluid) and with Linux CFS throttling (cfs-quota). Then segment admission"
                    + " (Tailor's and the paper's) against fifo, static-cap and mclock on the storage burst"
                    + " microbenchmark. Prints the results"
                    + " next to the papers' figures, ends with a Summary, and writes an HTML report with plots."
                    + " The simulations take about 80 s of CPU time: about 40 s on 2 idle cores; 5 minutes were"
                    + " measured on 2 cores shared with other builds (load average 15).",
            "",
            "Then, when fio (with its nbd engine) and nbdkit are installed, short runs of the NBD experiments with"
                    + " real clients against tailor nbd serve: the I/O-priority loop vs a FIFO loop at low load, and"
                    + " under a bursty tenant segment admission on and the fair dispatch door alone, each vs off (one"
                    + " round of 2+6 s per configuration: about 75 s more with each run's start and stop, longer"
                    + " on a busy machine;"
                    + " --no-experiments skips them). Without"
                    + " those programs it says so and goes on.",
            ""
        },
        footer = {"", "More: tailor heart simulate --help; docs/simulator.md."})
final class DemoCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = {"--report", "--dir"},
            paramLabel = "DIR",
            defaultValue = "tailor-demo",
            description = "Where the HTML report goes (DIR/index.html; --dir is the same). Default: ${DEFAULT-VALUE}.")
    Path report;

    @Option(names = "--no-report", description = "Do not write the report.")
    boolean noReport;

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            defaultValue = "table",
            description = "table or json ({\"results\": [...], \"storage\": [...], \"experiments\": {...} when they"
                    + " ran, \"verdicts\": [...]}, the Summary's comparisons, each with its name, figure, target,"
                    + " verdict and reason; whole numbers without a point, any other to three significant digits, its whole"
                    + " part kept: 239, 12.3, 0.0123). Default: ${DEFAULT-VALUE}.")
    SharedOptions.Format format;

    @Option(names = "--no-experiments", description = "Skip the NBD experiments with real clients (fio, nbdkit).")
    boolean noExperiments;

    @CommandLine.Mixin
    SharedOptions.ThreadsOption threads;

    @Option(
            names = "--duration-seconds",
            paramLabel = "S",
            description = "Simulated time measured per cluster run (the storage runs measure 10 s each)."
                    + " Default: the scenarios' (600).")
    Double durationSeconds;

    @Option(
            names = "--warmup-seconds",
            paramLabel = "S",
            description = "Simulated warm-up per cluster run, not measured. Default: the scenarios' (120).")
    Double warmupSeconds;

    /** What runs {@code tailor nbd serve} in the experiments' child JVM. */
    static final List<String> SERVE_COMMAND = List.of(Tailor.class.getName(), "nbd", "serve");

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (noReport && spec.commandLine().getParseResult().hasMatchedOption("--report")) {
            throw new CliException("--no-report and --report: choose one");
        }
        int workers = threads.workers();
        Demo.Options options = new Demo.Options(workers, warmupSeconds, durationSeconds, !noExperiments, SERVE_COMMAND);
        // The report's folder is created only once every other input is known to be good: bad input writes
        // nothing.
        Demo.check(options);
        Path createdFrom = noReport ? null : ClusterRuns.Stopping.firstMissing(report);
        if (!noReport) {
            report = SharedOptions.checkReportDir(report, "--report");
        }
        // Stopped (Ctrl-C, SIGTERM), it says how far it got; its output and its report's pages go out whole
        // or not at all.
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(err, noReport ? null : report, createdFrom)) {
            Demo.Outcome outcome = Demo.run(options, err, stopping);
            stopping.during("printing its results");
            String text = format == SharedOptions.Format.json
                    ? Json.writeRounded(outcome.json()) + System.lineSeparator()
                    : table(outcome);
            if (!stopping.publish("the results printed", () -> {
                out.print(text);
                out.flush();
            })) {
                return 1; // the stop said so
            }
            if (!noReport) {
                stopping.during("writing the report");
                outcome.writeReport(report, err, stopping);
            }
            return outcome.exitCode();
        }
    }

    /** The outcome's tables and Summary, as text. */
    private static String table(Demo.Outcome outcome) {
        StringWriter text = new StringWriter();
        try (PrintWriter writer = new PrintWriter(text)) {
            outcome.printTable(writer);
        }
        return text.toString();
    }
}
