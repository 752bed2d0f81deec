package dev.tailor.bench;

import dev.tailor.bench.SyntheticClusters.Shape;
import dev.tailor.bench.SyntheticClusters.SyntheticCluster;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link PlanningBenchmark} for the chosen shapes and both planners, and prints one Markdown table
 * on standard output: shape, replicas, nodes, call edges, median and mean ± error of each planner,
 * their ratio, and whether the plans keep NTAM's contract. JMH's own log goes to a file, a one-line
 * progress per run to standard error. Used by {@code bench/run-planning.sh}.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.tailor.bench.PlanningReport \
 *     [--shapes paper-100,paper-400,paper-1000,large-10000] [--warm-state]
 *     [--warmup-iterations 10] [--iterations 5] [--iteration-seconds 2] [--forks 1]
 *     [--log bench/target/planning.log]
 * </pre>
 *
 * <p>The default warm-up (10 × 2 s) is what C2 needs on 2 cores to finish compiling the planner (see
 * {@link AbstractBenchmark}); with less, the table reports interpreter and C1 speed.
 *
 * <p>Mode is JMH's sample time: every invocation is timed, so the median is measured, and the mean
 * with its 99.9 % confidence half-width is the same estimate average-time mode gives.
 */
public final class PlanningReport {

    private static final Pattern PARAMETERS = Pattern.compile("# Parameters: \\(planner = ([^,]+), shape = ([^)]+)\\)");
    private static final Pattern BENCHMARK = Pattern.compile("# Benchmark: \\S+\\.(\\w+)$");
    private static final Pattern PLAN_CHECK =
            Pattern.compile("PLAN-CHECK shape=(\\S+) planner=(\\S+) violations=(\\d+)(?: first: (.*))?");
    private static final Pattern EXCEPTION = Pattern.compile("^\\s*([\\w.$]+(?:Exception|Error)(?::.*)?)$");

    private PlanningReport() {}

    /** Settings of one report run; see the class Javadoc for the flags. */
    record Settings(
            List<Shape> shapes,
            boolean warmState,
            int warmupIterations,
            int iterations,
            int iterationSeconds,
            int forks,
            String logFile) {

        static Settings parse(String[] args) {
            List<Shape> shapes = Arrays.asList(Shape.values());
            boolean warm = false;
            int warmup = 10;
            int iterations = 5;
            int seconds = 2;
            int forks = 1;
            String log = "bench/target/planning.log";
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                switch (flag) {
                    case "--warm-state" -> warm = true;
                    case "--shapes" ->
                        shapes = Arrays.stream(value(args, ++i, flag).split(","))
                                .map(Shape::of)
                                .toList();
                    case "--warmup-iterations" -> warmup = positive(args, ++i, flag, true);
                    case "--iterations" -> iterations = positive(args, ++i, flag, false);
                    case "--iteration-seconds" -> seconds = positive(args, ++i, flag, false);
                    case "--forks" -> forks = positive(args, ++i, flag, false);
                    case "--log" -> log = value(args, ++i, flag);
                    default ->
                        throw new IllegalArgumentException(
                                "argument : " + flag + " (expected one of --shapes,"
                                        + " --warm-state, --warmup-iterations, --iterations, --iteration-seconds, --forks, --log)");
                }
            }
            return new Settings(shapes, warm, warmup, iterations, seconds, forks, log);
        }

        private static String value(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " : missing value");
            }
            return args[i];
        }

        private static int positive(String[] args, int i, String flag, boolean zeroAllowed) {
            String v = value(args, i, flag);
            try {
                int n = Integer.parseInt(v);
                if (n > 0 || (zeroAllowed && n == 0)) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException(
                    flag + " : " + v + " (expected: an integer " + (zeroAllowed ? ">= 0" : "> 0") + ")");
        }
    }

    /** What the JMH log says about one (benchmark method, shape, planner) beyond the scores. */
    private static final class RunNotes {
        Integer violations;
        String firstViolation;
        String error;
    }

    public static void main(String[] args) throws RunnerException, IOException {
        Settings settings;
        try {
            settings = Settings.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<String> methods = new ArrayList<>(List.of("planFromEmptyState"));
        if (settings.warmState()) {
            methods.add("planFromWarmState");
        }
        Map<String, RunNotes> notes = new LinkedHashMap<>();
        String loadBefore = loadAverage();
        Collection<RunResult> results;
        try (OutputStream logFile = new FileOutputStream(settings.logFile());
                PrintStream jmhOut = new PrintStream(new LogScanner(logFile, notes), true, StandardCharsets.UTF_8)) {
            ChainedOptionsBuilder options = new OptionsBuilder()
                    .include(PlanningBenchmark.class.getName() + "\\.(" + String.join("|", methods) + ")$")
                    .param("shape", settings.shapes().stream().map(Shape::id).toArray(String[]::new))
                    .param(
                            "planner",
                            PlanningBenchmark.HEART,
                            PlanningBenchmark.HEART_PAPER,
                            PlanningBenchmark.MCF_PER_REPLICA_NO_FILTER)
                    .mode(Mode.SampleTime)
                    .timeUnit(TimeUnit.MILLISECONDS)
                    .warmupIterations(settings.warmupIterations())
                    .warmupTime(TimeValue.seconds(settings.iterationSeconds()))
                    .measurementIterations(settings.iterations())
                    .measurementTime(TimeValue.seconds(settings.iterationSeconds()))
                    .forks(settings.forks())
                    .shouldFailOnError(false);
            // The forks' own output (the PLAN-CHECK lines) reaches the host on System.out, not through the
            // output format, so both go to the scanner while JMH runs.
            PrintStream console = System.out;
            System.setOut(jmhOut);
            try {
                results = new Runner(
                                options.build(), OutputFormatFactory.createFormatInstance(jmhOut, VerboseMode.NORMAL))
                        .run();
            } finally {
                System.setOut(console);
            }
        }
        String load = "host load average (1, 5, 15 min) before: " + loadBefore + ", after: " + loadAverage()
                + " (the runs themselves add about 1–2; more means other processes competed for the cores)";
        for (String method : methods) {
            System.out.println(table(method, settings, results, notes, load));
        }
    }

    /** The first three fields of /proc/loadavg, or "unknown" where there is none. */
    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String table(
            String method, Settings settings, Collection<RunResult> results, Map<String, RunNotes> notes, String load) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "HEART planning time per round, PlanningBenchmark.%s (JMH sample mode, ms; mean ± 99.9 %% CI)%n"
                        + "JDK %s, %d cores, seed %d, %d fork(s), %d warm-up + %d measured iterations of %d s%n"
                        + "%s%n%n",
                method,
                Runtime.version(),
                Runtime.getRuntime().availableProcessors(),
                SyntheticClusters.DEFAULT_SEED,
                settings.forks(),
                settings.warmupIterations(),
                settings.iterations(),
                settings.iterationSeconds(),
                load));
        out.append("| shape | replicas | nodes | call edges | heart median | heart mean ± err | heart-paper median"
                + " | heart-paper mean ± err | baseline median | baseline mean ± err | baseline ÷ heart (median)"
                + " | plans keep NTAM contract (heart / heart-paper / baseline) |\n");
        out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
        List<String> footnotes = new ArrayList<>();
        for (Shape shape : settings.shapes()) {
            SyntheticCluster cluster = SyntheticClusters.generate(shape, SyntheticClusters.DEFAULT_SEED);
            Result<?> heart = find(results, method, shape, PlanningBenchmark.HEART);
            Result<?> paper = find(results, method, shape, PlanningBenchmark.HEART_PAPER);
            Result<?> baseline = find(results, method, shape, PlanningBenchmark.MCF_PER_REPLICA_NO_FILTER);
            double heartMedian = median(heart);
            double baselineMedian = median(baseline);
            String ratio = heart != null && baseline != null
                    ? String.format(Locale.ROOT, "%.2f", baselineMedian / heartMedian)
                    : "–";
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %,d | %,d | %,d | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |%n",
                    shape.id(),
                    cluster.replicaCount(),
                    cluster.nodeCount(),
                    cluster.callEdgeCount(),
                    heart == null ? "failed" : ms(heartMedian),
                    meanError(heart),
                    paper == null ? "failed" : ms(median(paper)),
                    meanError(paper),
                    baseline == null ? "failed" : ms(baselineMedian),
                    meanError(baseline),
                    ratio,
                    verdict(notes, method, shape, PlanningBenchmark.HEART, footnotes),
                    verdict(notes, method, shape, PlanningBenchmark.HEART_PAPER, footnotes),
                    verdict(notes, method, shape, PlanningBenchmark.MCF_PER_REPLICA_NO_FILTER, footnotes)));
        }
        out.append("\nheart = HeartConfig.DEFAULTS (node groups, our departures, no slow-link filter, parallel);"
                + " heart-paper = HeartConfig.PAPER (the paper's: no departures, the slow-link filter on); baseline = "
                + PlanningBenchmark.MCF_PER_REPLICA_NO_FILTER
                + " = DEFAULTS.toBuilder().grouping(REPLICA).slowLinkFilter(false).build().\n");
        for (String note : footnotes) {
            out.append(note).append('\n');
        }
        return out.toString();
    }

    private static String verdict(
            Map<String, RunNotes> notes, String method, Shape shape, String planner, List<String> footnotes) {
        RunNotes n = notes.get(key(method, shape.id(), planner));
        if (n == null) {
            return "not run";
        }
        if (n.error != null) {
            footnotes.add("- " + shape.id() + ", " + planner + ": failed: " + n.error);
            return "error";
        }
        if (n.violations == null) {
            return "unknown";
        }
        if (n.violations == 0) {
            return "yes";
        }
        footnotes.add("- " + shape.id() + ", " + planner + ": " + n.violations + " contract violations, first: "
                + n.firstViolation);
        return "NO (" + n.violations + ")";
    }

    private static Result<?> find(Collection<RunResult> results, String method, Shape shape, String planner) {
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().endsWith("." + method)
                    && shape.id().equals(r.getParams().getParam("shape"))
                    && planner.equals(r.getParams().getParam("planner"))) {
                return r.getPrimaryResult();
            }
        }
        return null;
    }

    private static double median(Result<?> result) {
        return result == null ? Double.NaN : result.getStatistics().getPercentile(50);
    }

    private static String meanError(Result<?> result) {
        if (result == null) {
            return "–";
        }
        double error = result.getScoreError();
        return ms(result.getScore()) + " ± " + (Double.isNaN(error) ? "?" : ms(error));
    }

    /** Milliseconds with about three significant digits. */
    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "?";
        }
        if (millis < 1) {
            return String.format(Locale.ROOT, "%.3f", millis);
        }
        if (millis < 100) {
            return String.format(Locale.ROOT, "%.2f", millis);
        }
        return String.format(Locale.ROOT, "%,.0f", millis);
    }

    private static String key(String method, String shape, String planner) {
        return method + " " + shape + " " + planner;
    }

    /**
     * Writes JMH's log to a file and reads it line by line: which run is current, its PLAN-CHECK line,
     * the first exception of a failed run; prints one progress line per run on standard error.
     */
    private static final class LogScanner extends OutputStream {
        private final OutputStream file;
        private final Map<String, RunNotes> notes;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private String method = "?";
        private String current;

        LogScanner(OutputStream file, Map<String, RunNotes> notes) {
            this.file = file;
            this.notes = notes;
        }

        @Override
        public void write(int b) throws IOException {
            file.write(b);
            if (b == '\n') {
                scan(line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else {
                line.write(b);
            }
        }

        @Override
        public void flush() throws IOException {
            file.flush();
        }

        private void scan(String text) {
            Matcher m = BENCHMARK.matcher(text);
            if (m.find()) {
                method = m.group(1);
                return;
            }
            m = PARAMETERS.matcher(text);
            if (m.find()) {
                current = key(method, m.group(2), m.group(1));
                notes.put(current, new RunNotes());
                System.err.println("run-planning: " + method + " shape=" + m.group(2) + " planner=" + m.group(1));
                return;
            }
            m = PLAN_CHECK.matcher(text);
            if (m.find() && current != null) {
                RunNotes n = notes.get(current);
                n.violations = Integer.parseInt(m.group(3));
                n.firstViolation = m.group(4);
                System.err.println("run-planning:   plan check: " + n.violations + " contract violation(s)");
                return;
            }
            m = EXCEPTION.matcher(text);
            if (m.find() && current != null && notes.get(current).error == null) {
                String message = m.group(1);
                notes.get(current).error = message.length() > 200 ? message.substring(0, 200) + "..." : message;
                System.err.println("run-planning:   failed: " + notes.get(current).error);
                return;
            }
            String trimmed = text.trim();
            if (trimmed.startsWith("mean =") || trimmed.startsWith("p(50.0000) =")) {
                System.err.println("run-planning:   " + trimmed.replaceAll("\\s+", " "));
            }
        }
    }
}
