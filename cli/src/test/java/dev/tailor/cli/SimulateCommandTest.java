package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.HeadlessChromium;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SimulateCommandTest {

    @TempDir
    Path dir;

    @Test
    void simulate_scenarioGivenASnapshot_saysItLooksLikeOne_andWhichOptionTakesIt() throws IOException {
        Path snapshot = dir.resolve("x.json");
        Files.copy(Path.of(System.getProperty("tailor.projectDir", ".."), "examples", "paper-dag.json"), snapshot);
        PlanCommandTest.Result result = tailor("heart", "simulate", "--scenario", snapshot.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        // Was "scenario x.json: 24 problems:" and every scenario field a snapshot lacks.
        assertThat(result.err())
                .isEqualTo("tailor: scenario " + snapshot + ": looks like a HEART snapshot (it has windowSeconds,"
                        + " nodes and replicas) (expected: a cluster scenario: name, seed, nodes, components, entry,"
                        + " ... (docs/simulator.md); a HEART snapshot goes to heart plan --snapshot)\n");
        assertThat(result.out()).isEmpty();
        Path broken = dir.resolve("broken.yaml");
        Files.writeString(broken, "name: x\nseed: 1\n");
        assertThat(tailor("heart", "simulate", "--scenario", broken.toString()).err())
                .as("a scenario with problems is told its problems")
                .contains("problems:")
                .doesNotContain("looks like");
    }

    @Test
    void simulate_help_writesTheListOptionsAsLists() {
        String help = tailor("heart", "simulate", "--help").out();
        assertThat(help)
                .contains("--policies=P[,P...]")
                .contains("--rps=R[,R...]")
                .contains("--network=N[,N...]")
                .contains("--cpu-model=M[,M...]")
                .doesNotContain("......");
    }

    @Test
    void simulate_help_keepsFileNamesAndNumbersOnOneLine_andSaysTheUnitsAndEveryScenariosDefaults() {
        String help = tailor("heart", "simulate", "--help").out();
        // picocli may break a line after a dot: "dependency.\n csv", "2^-0.\n 25" were hard to read.
        assertThat(help).contains("dependency.csv").contains("2^(-1/4)");
        List<String> lines = help.lines().toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            assertThat(lines.get(i).matches(".*\\d\\.$")
                            && lines.get(i + 1).strip().matches("\\d.*"))
                    .as("a number broken over lines %d and %d: %s / %s", i + 1, i + 2, lines.get(i), lines.get(i + 1))
                    .isFalse();
        }
        String flat = help.replaceAll("\\s+", " ");
        assertThat(flat)
                .contains("Default: Linkerd's 10 s.")
                .contains("Default: the scenario's (120 s in the bundled ones).")
                .contains("Default: the scenario's (600 s; 480 s in the dyn-* ones).")
                .contains("Default: 0.84 (the paper's 2^(-1/4)).")
                .contains("the list above from default to peak-ewma");
    }

    @Test
    void simulate_stoppedBySigterm_saysHowFarItGot_andLeavesNoEmptyReportFolder() throws Exception {
        Path report = dir.resolve("report");
        Path err = dir.resolve("err.txt");
        // Two runs of a simulated day each: stopped long before the first ends.
        int exit = stoppedBySigterm(
                "tailor: simulating 2 runs",
                report,
                err,
                dir.resolve("out.txt"),
                "heart",
                "simulate",
                "--scenario",
                "paper-dag",
                "--rps",
                "400",
                "--policies",
                "heart,least-request",
                "--duration-seconds",
                "86400",
                "--threads",
                "1",
                "--report",
                report.toString());
        // Was: exit 143 without a word, and the empty report folder left behind.
        assertThat(exit).isEqualTo(143);
        assertThat(read(err))
                .endsWith("tailor: stopped after 0 of 2 runs; nothing written (the results and the report come when"
                        + " every run is done)\n");
        assertThat(report).doesNotExist();
        assertThat(read(dir.resolve("out.txt"))).isEmpty();
    }

    @Test
    void demo_stoppedBySigterm_saysHowFarItGot_andLeavesNoReport() throws Exception {
        Path report = dir.resolve("demo");
        Path err = dir.resolve("demo-err.txt");
        // Runs of a simulated day each: stopped long before the first ends.
        int exit = stoppedBySigterm(
                "tailor: demo: 72 simulated runs",
                report,
                err,
                dir.resolve("demo-out.txt"),
                "demo",
                "--no-experiments",
                "--duration-seconds",
                "86400",
                "--threads",
                "1",
                "--report",
                report.toString());
        // Was: exit 143 without a word, and the empty report folder left behind.
        assertThat(exit).isEqualTo(143);
        assertThat(read(err))
                .endsWith("tailor: stopped after 0 of 72 simulated runs; nothing written (the results and the report"
                        + " come when every run is done)\n");
        assertThat(report).doesNotExist();
        assertThat(read(dir.resolve("demo-out.txt"))).isEmpty();
    }

    /**
     * Runs {@code tailor args} in a child JVM, sends it SIGTERM once its standard error ({@code err}) holds
     * {@code started} (the report folder then made), and returns its exit code; standard output goes to
     * {@code out}.
     */
    static int stoppedBySigterm(String started, Path report, Path err, Path out, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "dev.tailor.cli.Tailor"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        try {
            Await.until("the runs to start", () -> read(err).contains(started), () -> read(err));
            assertThat(report).isDirectory();
            process.destroy(); // SIGTERM
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            process.destroyForcibly();
        }
        return process.exitValue();
    }

    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void simulate_reportInAFolderThatTakesNoFile_isBadInputBeforeAnyRun() {
        // Linux's /proc takes no new file, whoever asks: root passed the old check (Files.isWritable), ran every run,
        // then failed writing the report (exit 1).
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc here");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--rps",
                "50",
                "--policies",
                "least-request",
                "--warmup-seconds",
                "0",
                "--duration-seconds",
                "1",
                "--threads",
                "1",
                "--report",
                "/proc/");
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err())
                .isEqualTo("tailor: --report: cannot write in /proc (no such file or directory; expected: a writable"
                        + " directory for index.html)\n");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_fewerRequestsThanAPercentileNeeds_printsNotResolvable_notTheSlowestSample() throws IOException {
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--rps",
                "50",
                "--policies",
                "least-request",
                "--warmup-seconds",
                "5",
                "--duration-seconds",
                "10",
                "--threads",
                "1",
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        String row = result.out()
                .lines()
                .filter(l -> l.startsWith("  least-request"))
                .findFirst()
                .orElseThrow();
        // About 500 requests: P50 and P99, but P99.9 needs 1,000 (was the slowest request's latency).
        String[] cells = row.trim().split("\\s+");
        assertThat(cells[1]).matches("[0-9.]+");
        assertThat(cells[2]).matches("[0-9.]+");
        assertThat(cells[3]).isEqualTo("n/r");
        assertThat(result.out())
                .contains("\nn/r = not resolvable: fewer requests than the percentile needs (P99.9: 1,000).\n");
        String page = Files.readString(report.resolve("index.html"));
        assertThat(page)
                .contains("<td>n/r</td>")
                .contains("<p>n/r = not resolvable: fewer requests than the percentile needs (P99.9: 1,000).</p>");

        PlanCommandTest.Result json = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--rps",
                "50",
                "--policies",
                "least-request",
                "--warmup-seconds",
                "5",
                "--duration-seconds",
                "10",
                "--threads",
                "1",
                "--format",
                "json");
        JsonNode run = new ObjectMapper().readTree(json.out()).get("results").get(0);
        assertThat(run.get("requests").asLong()).isBetween(100L, 999L);
        assertThat(run.get("p99Millis").isNumber()).isTrue();
        assertThat(run.get("p999Millis").isNull()).isTrue();
    }

    @Test
    void simulate_seeds_noRequestMeasured_saysNoDataOnce() throws IOException {
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--rps",
                "0.01",
                "--policies",
                "heart",
                "--warmup-seconds",
                "0",
                "--duration-seconds",
                "0.001",
                "--seeds",
                "2",
                "--threads",
                "1",
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        // Was "(0 s warm-up + 0.00 s measured each ...": the duration as given, not rounded to nothing.
        assertThat(result.err())
                .contains("tailor: simulating 2 runs of paper-pairwise (0 s warm-up + 0.001 s measured each");
        // Was the same progress line and the same warning twice, without saying which seed's run each was.
        assertThat(result.err())
                .contains("tailor: 1/2 runs done (paper-pairwise A fluid 0.01 RPS heart seed 2025070")
                .contains("tailor: 2/2 runs done (paper-pairwise A fluid 0.01 RPS heart seed 2025070");
        assertThat(result.err())
                .contains("tailor: warning: paper-pairwise A fluid 0.01 RPS heart seed 20250701: the run ended before")
                .contains("tailor: warning: paper-pairwise A fluid 0.01 RPS heart seed 20250702: the run ended before");
        String row = result.out()
                .lines()
                .filter(l -> l.startsWith("  heart"))
                .findFirst()
                .orElseThrow();
        // Was "–––": the missing min, the separator and the missing max.
        assertThat(row.split("\\s+")).containsExactly("", "heart", "–", "–", "–", "–", "–", "0", "0", "0", "–", "–");
        String page = Files.readString(report.resolve("index.html"));
        assertThat(page).doesNotContain("–––");
        // Was an empty CDF with an axis from -900 % to 90 %, and a heading over no box plot.
        assertThat(page)
                .contains(
                        "End-to-end latency CDF · network A · CPU fluid · 0.01 RPS: no request was measured in these runs")
                .doesNotContain("P99 over the seeds");
    }

    @Test
    void simulate_json_hasOneResultPerPolicyAndRate() throws IOException {
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "least-request,heart",
                "--rps",
                "100,200",
                "--warmup-seconds",
                "30",
                "--duration-seconds",
                "30",
                "--format",
                "json",
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode results = new ObjectMapper().readTree(result.out()).get("results");
        assertThat(results).hasSize(4);
        for (JsonNode run : results) {
            assertThat(run.get("scenario").asText()).isEqualTo("paper-pairwise");
            for (String field : new String[] {
                "policy", "rps", "p50Millis", "p99Millis", "p999Millis", "timeouts", "cpuGapPercentPoints", "replicas"
            }) {
                assertThat(run.has(field)).as(field).isTrue();
            }
            assertThat(run.get("p99Millis").asDouble())
                    .isGreaterThanOrEqualTo(run.get("p50Millis").asDouble());
        }
        assertThat(results.get(1).get("policy").asText()).isEqualTo("heart");
        assertThat(results.get(1).get("planning").get("rounds").asLong()).isEqualTo(1);
        assertThat(result.err()).contains("simulating 4 runs of paper-pairwise");
    }

    @Test
    void simulate_seeds_jsonHasOneResultPerCell_withTheP99SpreadOverTheSeeds() throws IOException {
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "least-request,prequal",
                "--rps",
                "100",
                "--warmup-seconds",
                "10",
                "--duration-seconds",
                "20",
                "--seeds",
                "3",
                "--seed",
                "5",
                "--format",
                "json",
                "--threads",
                "2");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("simulating 6 runs of paper-pairwise").contains("seeds 5 .. 7");
        JsonNode results = new ObjectMapper().readTree(result.out()).get("results");
        assertThat(results).hasSize(2);
        for (JsonNode cell : results) {
            for (String field :
                    new String[] {"policy", "network", "cpuModel", "rps", "p99Millis", "p99Spread", "runs"}) {
                assertThat(cell.has(field)).as(field).isTrue();
            }
            assertThat(cell.get("seeds").toString()).isEqualTo("[5,6,7]");
            double[] p99 = new double[3];
            for (int k = 0; k < 3; k++) {
                JsonNode run = cell.get("runs").get(k);
                assertThat(run.get("seed").asLong()).isEqualTo(5 + k);
                p99[k] = run.get("p99Millis").asDouble();
            }
            java.util.Arrays.sort(p99);
            JsonNode spread = cell.get("p99Spread");
            assertThat(spread.get("minMillis").asDouble()).isEqualTo(p99[0]);
            assertThat(spread.get("maxMillis").asDouble()).isEqualTo(p99[2]);
            assertThat(spread.get("medianMillis").asDouble()).isEqualTo(p99[1]);
            assertThat(cell.get("p99Millis").asDouble()).isEqualTo(p99[1]);
            assertThat(spread.get("meanMillis").asDouble())
                    .isCloseTo((p99[0] + p99[1] + p99[2]) / 3, org.assertj.core.api.Assertions.within(0.001));
        }
        assertThat(results.get(1).get("policy").asText()).isEqualTo("prequal");
    }

    @Test
    void simulate_seeds_tableAndReportShowTheSpread() throws IOException {
        Path report = dir.resolve("seeds");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "least-request,peak-ewma",
                "--rps",
                "100",
                "--warmup-seconds",
                "10",
                "--duration-seconds",
                "10",
                "--seeds",
                "2",
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains("paper-pairwise · network A · CPU fluid · 100 RPS · 2 seeds")
                .contains("P99 min–max")
                .contains("peak-ewma");
        assertThat(Files.readString(report.resolve("index.html")))
                .contains("P99 min–max ms")
                .contains("Every cell ran with 2 seeds (20250701 .. 20250702)")
                // As in the one-seed report: HEART's planning time, here the median over the seeds.
                .contains("<th>plan ms/round (median)</th>");
    }

    @Test
    void simulate_tableAndReport() throws IOException {
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-dag",
                "--policies",
                "default,heart",
                "--rps",
                "200",
                "--warmup-seconds",
                "30",
                "--duration-seconds",
                "40",
                "--heart-ablation",
                "no-trend",
                "--cpu-model",
                "fluid,cfs-quota",
                "--report",
                report.toString());

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains("paper-dag · network A · CPU fluid · 200 RPS")
                .contains("paper-dag · network A · CPU cfs-quota · 200 RPS")
                .contains("heart-no-trend")
                .contains("simulator speed:");
        String html = Files.readString(report.resolve("index.html"));
        assertThat(html)
                .startsWith("<!DOCTYPE html>")
                .contains("<table>")
                .contains("data:image/png;base64,")
                // Two CPU models, two CDFs at the same rate: each names its cell in the alt text.
                .contains("alt=\"End-to-end latency CDF: paper-dag · network A · CPU fluid · 200 RPS\"")
                .contains("alt=\"End-to-end latency CDF: paper-dag · network A · CPU cfs-quota · 200 RPS\"")
                .contains("<th>plan ms/round (median)</th>");
        assertThat(result.err()).contains("report written to");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--policies=round-robin | --policies: \"round-robin\" is not known (expected: some of default, least-request",
                "--policies=default,rr,wrr,rr | --policies: \"rr\", \"wrr\" are not known (expected: some of default",
                "--rps=0 | --rps: 0 (expected: requests per second in (0, 1e6])",
                "--rps=100,-0.5 | --rps: -0.5 (expected: requests per second in (0, 1e6])",
                "--rps=2e6 | --rps: 2000000 (expected: requests per second in (0, 1e6])",
                "--rps=NaN | --rps: NaN (expected: requests per second in (0, 1e6])",
                "--network=C | --network: \"C\" (expected: one of the scenario's [A, B])",
                "--cpu-model=cfs | --cpu-model: \"cfs\" (expected: fluid or cfs-quota)",
                "--heart-ablation=no-atpm | --heart-ablation: \"no-atpm\" is not known (expected: some of no-trend, slow-link-filter, no-outlier-filter, no-idle-fit, no-floor, no-share-cap, no-spread, no-queueing, no-headroom, paper)",
                "--duration-seconds=-1 | --duration-seconds: -1 (",
                "--duration-seconds=NaN | --duration-seconds: NaN (",
                "--scenario=nowhere.yaml | --scenario: nowhere.yaml: no such scenario or file (expected: one of paper-pairwise,"
                        + " paper-dag, dyn-load-step, dyn-load-ramp, dyn-noisy-neighbour, dyn-replica-crash, dyn-cold-restart,"
                        + " dyn-antagonist, dyn-metrics-undercount, dyn-calls-overcount, dyn-background-cpu, online-boutique",
                "--report= | --report: empty",
                "--rps=1-700 --network=A,B --cpu-model=fluid,cfs-quota --heart-ablation=no-trend,slow-link-filter"
                        + " | the sweep has 28000 runs (2 networks × 2 CPU models × 700 rates × 10 policies;",
                "--threads=0 | --threads: 0 (expected: 1 .. 256)",
                "--seeds=0 | --seeds: 0 (expected: 1 .. 1000)",
                "--seed=9223372036854775807 --seeds=2 | --seeds: 2 from seed 9223372036854775807 (expected: seeds S .. S"
                        + " + N - 1 up to 9223372036854775807; a smaller --seed)",
                "--prequal-q-rif=1.5 | --prequal-q-rif: 1.5 (expected: a quantile in (0, 1])",
                "--prequal-q-rif=0 | --prequal-q-rif: 0 (expected: a quantile in (0, 1])",
                "--prequal-probe-rate=0 | --prequal-probe-rate: 0 (expected: probes per call in (0, 16])",
                "--peak-ewma-decay-seconds=-1 | --peak-ewma-decay-seconds: -1 (expected: seconds in (0, 3600])",
                "--warmup-seconds=-0.5 | --warmup-seconds: -0.5 (expected: a number in [0, 86400])",
                "--rps=1-100 --network=A,B --cpu-model=fluid,cfs-quota --policies=heart --seeds=30"
                        + " | the sweep has 12000 runs (2 networks × 2 CPU models × 100 rates × 1 policies × 30 seeds"
            })
    void simulate_badOption_exit2WithTheReason(String options, String message) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("heart", "simulate"));
        for (String option : options.split(" ")) {
            // "--rps=1-700" stands for the list 1,2,...,700.
            java.util.regex.Matcher range =
                    java.util.regex.Pattern.compile("--rps=(\\d+)-(\\d+)").matcher(option);
            args.add(
                    range.matches()
                            ? "--rps="
                                    + java.util.stream.IntStream.rangeClosed(
                                                    Integer.parseInt(range.group(1)), Integer.parseInt(range.group(2)))
                                            .mapToObj(String::valueOf)
                                            .collect(java.util.stream.Collectors.joining(","))
                            : option);
        }
        PlanCommandTest.Result result = tailor(args.toArray(String[]::new));
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains(message);
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_reportDirUnusable_exit2BeforeSimulating() throws IOException {
        Path file = dir.resolve("a-file");
        Files.writeString(file, "x");
        PlanCommandTest.Result result = tailor("heart", "simulate", "--report", file.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--report: " + file + " is a file").doesNotContain("simulating");

        PlanCommandTest.Result demo = tailor("demo", "--no-report", "--report", dir.toString());
        assertThat(demo.exitCode()).isEqualTo(2);
        assertThat(demo.err()).contains("--no-report and --report: choose one");
    }

    @Test
    void simulate_badInputWithReport_createsNoReportFolder() throws IOException {
        Path scenario = dir.resolve("bad.yaml");
        Files.writeString(scenario, "name: x\n");
        Path report = dir.resolve("out");
        for (String[] args : List.of(
                new String[] {"--scenario", scenario.toString()},
                new String[] {"--rps", "0"},
                new String[] {"--threads", "0"},
                new String[] {"--scenario", "paper-dag", "--minute", "3"})) {
            List<String> command =
                    new java.util.ArrayList<>(List.of("heart", "simulate", "--report", report.toString()));
            command.addAll(List.of(args));
            PlanCommandTest.Result result = tailor(command.toArray(String[]::new));

            assertThat(result.exitCode()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(report).as(String.join(" ", args)).doesNotExist();
        }
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "demo --duration-seconds -1           | --duration-seconds: -1 (expected: a number in (0, 86400])",
                "demo --warmup-seconds -1             | --warmup-seconds: -1 (expected: a number in [0, 86400])",
                "demo --duration-seconds 100000       | --duration-seconds: 100000 (expected: a number in (0, 86400])",
                "demo --threads 0                     | --threads: 0 (expected: 1 .. 256)",
                "heart simulate --duration-seconds -1 | --duration-seconds: -1 (expected: a number in (0, 86400])",
                "heart simulate --warmup-seconds -1   | --warmup-seconds: -1 (expected: a number in [0, 86400])",
                "heart simulate --seeds 0             | --seeds: 0 (expected: 1 .. 1000)",
                "heart simulate --prequal-q-rif 0     | --prequal-q-rif: 0 (expected: a quantile in (0, 1])"
            })
    void demoAndSimulate_badOptionWithReport_exit2AndCreateNothing(String command, String message) {
        Path report = dir.resolve("report");
        List<String> args = new java.util.ArrayList<>(List.of(command.split(" +")));
        args.addAll(List.of("--report", report.toString()));

        PlanCommandTest.Result result = tailor(args.toArray(String[]::new));

        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err()).contains(message);
        assertThat(result.out()).isEmpty();
        // Was: the demo made its report folder (and said nothing of it) before it checked the durations.
        assertThat(report).as(command).doesNotExist();
    }

    @Test
    void simulate_tooShortForHeart_warnsAndReportsNullsNotNaN() throws IOException {
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "heart",
                "--rps",
                "100",
                "--warmup-seconds",
                "5",
                "--duration-seconds",
                "5",
                "--format",
                "json");
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err())
                .contains(
                        "warning: paper-pairwise A fluid 100 RPS heart: the run ended before HEART's" + " first round");
        assertThat(result.out()).doesNotContain("NaN");
    }

    @Test
    void simulate_dynamicScenarioEndingBeforeItsFault_warnsThatTheRunsNeverSeeIt() throws IOException {
        Path report = dir.resolve("short");
        PlanCommandTest.Result shortRun = tailor(
                "heart",
                "simulate",
                "--scenario",
                "dyn-replica-crash",
                "--policies",
                "least-request",
                "--rps",
                "50",
                "--warmup-seconds",
                "10",
                "--duration-seconds",
                "20",
                "--threads",
                "1",
                "--report",
                report.toString());
        String warning = "warning: dyn-replica-crash: the runs end at 30 s (10 s warm-up + 20 s measured), before"
                + " events[0] (replica-crash at 247.5 s), so they never see it: run longer (--duration-seconds)";
        assertThat(shortRun.exitCode()).as(shortRun.err()).isZero();
        assertThat(shortRun.err()).contains(warning);
        assertThat(Files.readString(report.resolve("index.html"))).contains("replica-crash at 247.5 s");

        PlanCommandTest.Result longEnough = tailor(
                "heart",
                "simulate",
                "--scenario",
                "dyn-replica-crash",
                "--policies",
                "least-request",
                "--rps",
                "50",
                "--warmup-seconds",
                "240",
                "--duration-seconds",
                "10",
                "--threads",
                "1");
        assertThat(longEnough.exitCode()).as(longEnough.err()).isZero();
        assertThat(longEnough.err()).doesNotContain("never see");
    }

    @Test
    void simulate_invalidScenarioFile_listsEveryProblem() throws IOException {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, """
                name: bad
                seed: 1
                nodes: [{name: n1, cores: -4, speedFactor: 1}]
                entry: a
                components: [{name: a, cpuMillisPerCall: 0}]
                networks: {flat: {otherMillis: [1, 2]}}
                """);
        PlanCommandTest.Result result = tailor("heart", "simulate", "--scenario", file.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("2 problems")
                .contains("nodes[0].cores: -4 (expected: a number in (0, 1024]) at line 3")
                .contains("components[0].cpuMillisPerCall: 0 (expected: a number in (0, 60000]) at line 5");
    }

    @Test
    void simulate_onlineBoutique_buildsFromTheDataAndSaysHow() throws IOException {
        dev.tailor.testkit.SharedData.require("microservices/trastrainer_onlineboutique/normal_2022-08-14");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "online-boutique",
                "--policies",
                "heart",
                "--rps",
                "300",
                "--warmup-seconds",
                "30",
                "--duration-seconds",
                "30",
                "--network",
                "B",
                "--format",
                "json");
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("note: online-boutique: busiest component");
        JsonNode run = new ObjectMapper().readTree(result.out()).get("results").get(0);
        assertThat(run.get("scenario").asText()).isEqualTo("online-boutique");
        assertThat(run.get("network").asText()).isEqualTo("B");
        assertThat(run.get("planning").get("failures").asLong()).isZero();
    }

    @Test
    void simulate_dataset_renamedApp_buildsItsScenarioWithTheEntryFromTheTrace() throws IOException {
        Path app = dev.tailor.testkit.RenamedApp.write(dir.resolve("shop"));
        String latency = dev.tailor.testkit.SharedData.require(dev.tailor.testkit.RenamedApp.LATENCY)
                .toString();
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--dataset",
                app.toString(),
                "--latency",
                latency,
                "--policies",
                "heart,least-request",
                "--rps",
                "300",
                "--warmup-seconds",
                "30",
                "--duration-seconds",
                "30",
                "--format",
                "json",
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        // An application whose entry is not called frontend: found from the trace, and every assumption noted.
        assertThat(result.err())
                .contains(
                        "note: entry component web-gateway, found from the trace",
                        "note: shop: busiest component",
                        "note: shop: a component calls its callees one after another",
                        "simulating 2 runs of shop")
                .doesNotContain("frontend");
        JsonNode results = new ObjectMapper().readTree(result.out()).get("results");
        assertThat(results).hasSize(2);
        for (JsonNode run : results) {
            assertThat(run.get("scenario").asText()).isEqualTo("shop");
            assertThat(run.get("completed").asLong()).isPositive();
        }
        assertThat(results.get(0).get("planning").get("failures").asLong()).isZero();
        assertThat(results.get(0).get("replicas").toString()).contains("\"component\":\"web-gateway\"");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--dataset=DIR --scenario=paper-dag | --dataset: DIR with --scenario paper-dag (expected: one of them",
                "--entry=web-gateway | --entry: only with --dataset or --scenario online-boutique (the scenario is paper-dag)",
                "--scenario=paper-pairwise --trace=none | --trace: only with --dataset or --scenario online-boutique",
                "--minute=3 | --minute: only with --dataset or --scenario online-boutique (the scenario is paper-dag)",
                "--dataset=DIR/absent | --dataset: DIR/absent: no such folder (expected: a folder of <pod>_metric.csv files",
                "--dataset=DIR --latency=DIR/none.gz | --dataset: DIR: no <pod>_metric.csv files"
            })
    void simulate_datasetOptions_badInput_exit2NamingTheOption(String options, String message) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("heart", "simulate"));
        for (String option : options.split(" ")) {
            args.add(option.replace("DIR", dir.toString()));
        }
        PlanCommandTest.Result result = tailor(args.toArray(String[]::new));
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains(message.replace("DIR", dir.toString()));
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_dataset_entryNotInTheGraph_exit2NamingTheOptionAndValue() throws IOException {
        Path app = dev.tailor.testkit.RenamedApp.write(dir.resolve("shop"));
        String latency = dev.tailor.testkit.SharedData.require(dev.tailor.testkit.RenamedApp.LATENCY)
                .toString();
        PlanCommandTest.Result result =
                tailor("heart", "simulate", "--dataset", app.toString(), "--latency", latency, "--entry", "frontend");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--entry: \"frontend\" has no metric file in " + app, "web-gateway");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_dataset_minute_picksTheSampleAsForTheSnapshot() throws IOException {
        Path app = dev.tailor.testkit.RenamedApp.write(dir.resolve("shop"));
        String latency = dev.tailor.testkit.SharedData.require(dev.tailor.testkit.RenamedApp.LATENCY)
                .toString();
        PlanCommandTest.Result result =
                tailor("heart", "simulate", "--dataset", app.toString(), "--latency", latency, "--minute", "99999");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--minute: index 99999 (expected: ");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_dataset_entryWithoutCpu_exit2SayingWhyTheSnapshotCanAndTheSimulationCannot() throws IOException {
        Path app = dev.tailor.testkit.RenamedApp.write(dir.resolve("shop"));
        String latency = dev.tailor.testkit.SharedData.require(dev.tailor.testkit.RenamedApp.LATENCY)
                .toString();
        // Every CPU sample of the entry's pod is NaN: "no data", as an exporter writes a failed scrape.
        try (var files = Files.newDirectoryStream(app, dev.tailor.testkit.RenamedApp.ENTRY + "-*_metric.csv")) {
            for (Path file : files) {
                List<String> lines = Files.readAllLines(file);
                int column = List.of(lines.get(0).split(",", -1)).indexOf("CpuUsage(m)");
                List<String> blanked = new java.util.ArrayList<>(List.of(lines.get(0)));
                for (String line : lines.subList(1, lines.size())) {
                    String[] cells = line.split(",", -1);
                    cells[column] = "NaN";
                    blanked.add(String.join(",", cells));
                }
                Files.write(file, blanked);
            }
        }

        PlanCommandTest.Result simulated =
                tailor("heart", "simulate", "--dataset", app.toString(), "--latency", latency, "--minute", "0");
        assertThat(simulated.exitCode()).isEqualTo(2);
        assertThat(simulated.err())
                .contains(
                        "the entry component web-gateway has no CPU per request",
                        "(CPU no data, ",
                        "a snapshot takes replicas without data and splits their traffic equally, a"
                                + " simulation cannot",
                        "try --minute");
        PlanCommandTest.Result snapshot = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                app.toString(),
                "--latency",
                latency,
                "--minute",
                "0",
                "--out",
                dir.resolve("shop.json").toString());
        assertThat(snapshot.exitCode()).as(snapshot.err()).isZero();
    }

    @Test
    void demo_withoutExperiments_intoAnEarlierReport_removesThatReportsExperimentsPage_andKeepsOtherFiles()
            throws IOException {
        Path report = Files.createDirectories(dir.resolve("earlier"));
        Files.writeString(report.resolve("experiments.html"), "<html>an earlier run's Summary</html>");
        Files.writeString(report.resolve("burst-steady-tail.png"), "an earlier plot");
        Files.writeString(report.resolve("notes.txt"), "the user's own");

        PlanCommandTest.Result result = tailor(
                "demo",
                "--no-experiments",
                "--warmup-seconds",
                "1",
                "--duration-seconds",
                "2",
                "--threads",
                "1",
                "--report",
                report.toString());

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(report.resolve("index.html")).exists();
        assertThat(report.resolve("storage.html")).exists();
        // Was: left beside the new pages, which do not link it, with another run's Summary.
        assertThat(report.resolve("experiments.html")).doesNotExist();
        assertThat(report.resolve("burst-steady-tail.png")).doesNotExist();
        assertThat(report.resolve("notes.txt")).hasContent("the user's own");
    }

    @Test
    void demo_json_hasTheSummarysVerdicts_eachWithNameFigureTargetVerdictAndReason() throws IOException {
        PlanCommandTest.Result result = tailor(
                "demo",
                "--format",
                "json",
                "--no-experiments",
                "--no-report",
                "--warmup-seconds",
                "1",
                "--duration-seconds",
                "2",
                "--threads",
                "1");
        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(result.out());
        assertThat(json.get("results").size()).isEqualTo(72);
        // Was: no verdicts at all, though the text's Summary has one for each comparison.
        JsonNode verdicts = json.get("verdicts");
        assertThat(verdicts).as(result.out()).isNotNull();
        assertThat(verdicts.size()).isEqualTo(10);
        List<String> mechanisms = new java.util.ArrayList<>();
        for (JsonNode v : verdicts) {
            mechanisms.add(v.get("mechanism").asText());
            assertThat(v.get("name").asText()).isNotBlank();
            assertThat(v.get("unit").asText()).isIn("cells", "ratio", "%");
            assertThat(v.get("target").asText()).isNotBlank();
            assertThat(v.get("verdict").asText()).isIn("met", "missed", "unreliable", "no data");
            assertThat(v.get("reason").asText()).isNotBlank();
            assertThat(v.has("figure")).isTrue();
            assertThat(v.get("figure").isNumber() || v.get("figure").isNull()).isTrue();
        }
        assertThat(mechanisms)
                .containsExactly(
                        "heart",
                        "heart",
                        "heart",
                        "heart",
                        "heart",
                        "segment-admission",
                        "segment-admission",
                        "nbd-proxy",
                        "nbd-proxy",
                        "nbd-proxy");
        // Simulated figures are judged (simulated time: never unreliable); the skipped experiments have no data.
        for (int i = 0; i < 7; i++) {
            assertThat(verdicts.get(i).get("verdict").asText()).isNotEqualTo("unreliable");
        }
        for (int i = 7; i < 10; i++) {
            assertThat(verdicts.get(i).get("verdict").asText()).isEqualTo("no data");
            assertThat(verdicts.get(i).get("reason").asText()).contains("--no-experiments");
        }
        // Was "figure": 6.0 for a count of cells and -98.65484707156449 for a change: a count is a whole
        // number, and every figure is rounded as the help says, to three significant digits.
        assertThat(verdicts.get(0).get("unit").asText()).isEqualTo("cells");
        assertThat(verdicts.get(0).get("figure").isIntegralNumber())
                .as(verdicts.get(0).toString())
                .isTrue();
        List<String> unrounded = new java.util.ArrayList<>();
        collectUnrounded(json, "", unrounded);
        assertThat(unrounded).isEmpty();
    }

    /**
     * The numbers under {@code node} (with their paths) that are whole but written with a point, or carry more
     * than three significant digits after their whole part.
     */
    private static void collectUnrounded(JsonNode node, String path, List<String> found) {
        if (node.isContainerNode()) {
            node.properties().forEach(e -> collectUnrounded(e.getValue(), path + "." + e.getKey(), found));
            for (int i = 0; i < node.size() && node.isArray(); i++) {
                collectUnrounded(node.get(i), path + "[" + i + "]", found);
            }
        } else if (node.isFloatingPointNumber()) {
            java.math.BigDecimal value = node.decimalValue().stripTrailingZeros();
            if (value.scale() <= 0 || (value.precision() > 3 && value.scale() > 0)) {
                found.add(path + " = " + node);
            }
        }
    }

    @Test
    void demo_help_saysWhatItsJsonHolds() {
        String help = tailor("demo", "--help").out().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("\"verdicts\": [...]}, the Summary's comparisons, each with its name, figure, target,"
                        + " verdict and reason; whole numbers without a point, any other to three significant digits,"
                        + " its whole part kept: 239, 12.3, 0.0123)")
                // Was "per run": the storage runs keep their 10 s whatever --duration-seconds says.
                .contains("Simulated time measured per cluster run (the storage runs measure 10 s each).")
                .contains("Simulated warm-up per cluster run, not measured.");
    }

    @Test
    void demo_printsThePaperComparisonAndWritesTheReport() throws Exception {
        Path report = dir.resolve("demo");
        PlanCommandTest.Result result =
                tailor("demo", "--warmup-seconds", "30", "--duration-seconds", "20", "--report", report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains("Against the paper")
                .contains("0.66 (194 vs 293)")
                .contains("0.11 (82 vs 768)")
                .contains("paper-pairwise · network A · CPU cfs-quota (ms;")
                .contains("  prequal ")
                .contains("  peak-ewma ")
                .contains("  heart-paper ")
                .doesNotContainPattern("(?i)\\bissue\\s*#?\\d"); // no tracker numbers ("budget issued" is fine)
        // Standard output ends with the summary, the experiments (when fio and nbdkit are here) before it.
        List<String> lines = result.out().lines().toList();
        int summary = lines.lastIndexOf("Summary");
        assertThat(summary).as(result.out()).isPositive();
        assertThat(lines.size() - summary).isBetween(3, 15);
        assertThat(lines.subList(summary, lines.size()))
                .anyMatch(l -> l.startsWith("  HEART routing"))
                .anyMatch(l -> l.startsWith("  Segment admission"))
                .anyMatch(l -> l.startsWith("  NBD proxy"));
        if (lines.contains("The NBD proxy with real clients")) { // fio and nbdkit are installed
            // The burst test runs the door alone too, and both it and admission are set against off, on the
            // percentile one short round resolves (P99.9 with its few thousand steady reads).
            assertThat(result.out())
                    .contains("burst, steady tenants' P99.9, door alone vs off")
                    .contains("burst, steady tenants' P99.9, admission on vs off");
            assertThat(lines.subList(summary, lines.size()))
                    .anyMatch(l -> l.contains("the fair dispatch door alone") && l.contains("segment admission"));
        }
        assertThat(result.err()).doesNotContain("30015");
        assertThat(Files.readString(report.resolve("index.html")))
                .contains("Against the paper")
                .contains("Summary")
                .contains("<caption>Against the paper");
        for (String page : List.of("index.html", "storage.html", "experiments.html")) {
            if (Files.exists(report.resolve(page))) {
                HeadlessChromium.assertReadable(report.resolve(page));
            }
        }
    }
}
