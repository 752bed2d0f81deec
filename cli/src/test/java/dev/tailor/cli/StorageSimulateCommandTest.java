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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code tailor storage simulate}: table, JSON, report and bad input, on short runs. */
class StorageSimulateCommandTest {

    @TempDir
    Path dir;

    /** docs/storage-simulator.md and docs/results.md count the policies the default run compares: every one. */
    @Test
    void docs_countThePoliciesThatHelpAndErrorsList() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        int policies = dev.tailor.sim.storage.StorageSimulation.policyNames().size();
        Pattern count = Pattern.compile("(\\d+) policies (and ablations|now)");
        for (String doc : List.of("docs/storage-simulator.md", "docs/results.md")) {
            Matcher m = count.matcher(Files.readString(root.resolve(doc)));
            int seen = 0;
            while (m.find()) {
                seen++;
                assertThat(Integer.parseInt(m.group(1)))
                        .as(doc + ": \"" + m.group() + "\"")
                        .isEqualTo(policies);
            }
            assertThat(seen).as(doc + " counts them").isPositive();
        }
    }

    @Test
    void simulate_stoppedBySigterm_saysHowFarItGot_andLeavesNoEmptyReportFolder() throws Exception {
        // Folders created for the report: all of them go (was: only the innermost, leaving R/deep).
        Path report = dir.resolve("R").resolve("deep").resolve("nested");
        Path err = dir.resolve("err.txt");
        // Runs of a simulated day each: stopped long before the first ends.
        int exit = SimulateCommandTest.stoppedBySigterm(
                "tailor: simulating 4 runs",
                report,
                err,
                dir.resolve("out.txt"),
                "storage",
                "simulate",
                "--scenario",
                "burst-microbench",
                "--policies",
                "fifo",
                "--duration-seconds",
                "86400",
                "--threads",
                "1",
                "--report",
                report.toString());
        // Was: exit 143 without a word, and the empty report folder left behind.
        assertThat(exit).isEqualTo(143);
        assertThat(SimulateCommandTest.read(err))
                .endsWith("tailor: stopped after 0 of 4 runs; nothing written (the results and the report come when"
                        + " every run is done)\n");
        assertThat(dir.resolve("R")).doesNotExist();
        assertThat(SimulateCommandTest.read(dir.resolve("out.txt"))).isEmpty();
    }

    @Test
    void simulate_stoppedBySigtermWhilePrintingItsResults_printsThemWhole_andSaysWhatWentOut() throws Exception {
        // Was: the stop's line went with the runs, so a SIGTERM while the results were printed ended the command
        // without a word (exit 143), its output cut where the signal came, the report folder left as it was.
        Path report = dir.resolve("report");
        Path err = dir.resolve("err.txt");
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "dev.tailor.cli.Tailor"));
        // 16 runs (4 policies, 4 burst sizes): their JSON, over 400 KB, is more than a pipe holds; unread, it holds the
        // command in its print.
        command.addAll(List.of(
                "storage",
                "simulate",
                "--policies",
                "fifo,static-cap,token-bucket,mclock",
                "--warmup-seconds",
                "0",
                "--duration-seconds",
                "0.1",
                "--threads",
                "1",
                "--format",
                "json",
                "--report",
                report.toString()));
        Process process =
                new ProcessBuilder(command).redirectError(err.toFile()).start();
        String out;
        try {
            Await.until(
                    "the results to be printed",
                    () -> {
                        try {
                            return process.getInputStream().available() > 0;
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    },
                    () -> SimulateCommandTest.read(err));
            process.toHandle().destroy(); // SIGTERM, leaving the pipe open (Process.destroy closes it)
            out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.exitValue()).isEqualTo(143);
        assertThat(new ObjectMapper().readTree(out).get("results").size())
                .as("printed whole")
                .isEqualTo(16);
        String said = SimulateCommandTest.read(err);
        assertThat(said).contains("tailor: stopped after the 16 runs, ").contains("; the results printed");
        // The report's pages go out together or not at all: a folder the command created goes while empty.
        if (said.contains("the report written")) {
            assertThat(report.resolve("index.html")).exists();
        } else {
            assertThat(said).contains("no report written (its pages come all together)");
            assertThat(report).doesNotExist();
        }
    }

    @Test
    void reportInAFolderThatTakesNoFile_isBadInputBeforeAnyRun() {
        // Linux's /proc takes no new file, whoever asks: root passed the old check (Files.isWritable), ran every run,
        // then failed writing the report (exit 1, "cannot write the report to /proc: no such file or directory").
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc here");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--policies",
                "fifo",
                "--warmup-seconds",
                "0",
                "--duration-seconds",
                "0.1",
                "--threads",
                "1",
                "--report",
                "/proc");
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err())
                .isEqualTo("tailor: --report: cannot write in /proc (no such file or directory; expected: a writable"
                        + " directory for index.html)\n");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_json_oneResultPerVariantAndPolicy_withTheDocumentedFields() throws IOException {
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                "burst-microbench",
                "--policies",
                "fifo,segment-admission",
                "--warmup-seconds",
                "0.3",
                "--duration-seconds",
                "0.5",
                "--format",
                "json",
                "--threads",
                "2");

        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode results = new ObjectMapper().readTree(result.out()).get("results");
        assertThat(results).hasSize(8); // 4 burst multipliers x 2 policies
        for (JsonNode run : results) {
            assertThat(run.get("scenario").asText()).isEqualTo("burst-microbench");
            for (String field : new String[] {
                "policy",
                "burstMultiplier",
                "unusedCapacityPercent",
                "backendUtilizationPercent",
                "throughputRequestsPerSecond",
                "refused"
            }) {
                assertThat(run.has(field)).as(field).isTrue();
            }
            for (String cls : new String[] {"steady", "hot"}) {
                JsonNode latency = run.get(cls);
                for (String field :
                        new String[] {"p50Millis", "p99Millis", "p999Millis", "p9999Millis", "p99999Millis", "requests"
                        }) {
                    assertThat(latency.has(field)).as(cls + "." + field).isTrue();
                }
            }
            // Half a second of hot requests is too few for P99.999: null, not a made-up number.
            assertThat(run.get("hot").get("p99999Millis").isNull()).isTrue();
            assertThat(run.get("steady").get("p99Millis").asDouble())
                    .isGreaterThanOrEqualTo(run.get("steady").get("p50Millis").asDouble());
        }
        // Per tenant: each tenant of the scenario, with its class, baseline, rate and latency.
        for (JsonNode run : results) {
            JsonNode tenants = run.get("tenants");
            assertThat(tenants.isArray()).isTrue();
            assertThat(tenants).extracting(t -> t.get("class").asText()).contains("steady", "hot");
            long steady = 0;
            for (JsonNode t : tenants) {
                for (String field : new String[] {
                    "name",
                    "proxy",
                    "baselineCostUnitsPerSecond",
                    "offeredCostUnitsPerSecond",
                    "requests",
                    "withinBaselinePercent"
                }) {
                    assertThat(t.has(field)).as(field).isTrue();
                }
                assertThat(t.get("latency").has("p99999Millis")).isTrue();
                steady += t.get("class").asText().equals("steady")
                        ? t.get("latency").get("requests").asLong()
                        : 0;
            }
            assertThat(steady).isEqualTo(run.get("steady").get("requests").asLong());
        }
        assertThat(results.get(1).get("policy").asText()).isEqualTo("segment-admission");
        assertThat(results.get(1).get("admission").get("reserveDrawnPercent").isNumber())
                .isTrue();
        assertThat(results.get(0).has("admission")).isFalse();
        assertThat(result.out()).doesNotContain("NaN");
        assertThat(result.err())
                .contains("simulating 8 runs of burst-microbench (0.3 s warm-up + 0.5 s measured each) on 2 threads")
                .contains("note: offered load")
                // Standard error is no terminal here: whole progress lines, as in a CI log.
                .containsPattern("\ntailor: 8/8 runs done \\(burst-microbench ×\\d+ seed 20260301 [a-z-]+\\)\n")
                .doesNotContain("\r");
    }

    @Test
    void simulate_tableAndReport() throws IOException {
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                "underload",
                "--policies",
                "fifo,static-cap,segment-admission",
                "--warmup-seconds",
                "0.3",
                "--duration-seconds",
                "0.5",
                "--report",
                report.toString(),
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains("underload · seed 20260303 · 0.50 s measured")
                .contains("P99.999")
                .contains("static-cap")
                .contains("n/r = not resolvable")
                .contains("misclassified")
                .contains("simulator speed:")
                .as("per tenant only with --per-tenant")
                .doesNotContain("per tenant");
        String html = Files.readString(report.resolve("index.html"));
        assertThat(html).contains("<caption>Per tenant, latency ms</caption>");
        assertThat(html)
                .startsWith("<!DOCTYPE html>")
                .contains("<table>")
                .contains("data:image/png;base64,")
                .contains("Steady tenants: latency CDF")
                .contains("Token pools around the first measured burst")
                .as("every column of the text table")
                .contains("<th>waited</th>", "<th>repaid</th>", "<th>misclassified</th>")
                .contains("<th class=\"group\" colspan=\"6\">hot segments</th>")
                .doesNotContain("Sweep summary");
        assertThat(result.err()).contains("report written to");
        // The misclassified column's two shares say which is which and that they are no error rate: a bursty
        // tenant's requests within its baseline or outside its bursts are rightly steady.
        String shares = "misclassified = share of the steady tenants' requests admission classed hot / share of"
                + " the hot tenants' requests it classed steady";
        String notAnError = "Not an error rate: admission classes by commitment, so a bursty tenant's requests"
                + " within its baseline or outside its bursts are rightly steady";
        assertThat(result.out()).contains(shares, notAnError);
        assertThat(html).contains(shares, notAnError);
    }

    @Test
    void simulate_severalSeedsWithAReport_oneSectionPerSeed_andTheSweepSummaryAsInTheText() throws Exception {
        // A sweep's report: the same policy on two seeds is two charts, not two curves of one name.
        Path report = dir.resolve("sweep-report");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                "underload",
                "--policies",
                "fifo,mclock,fair-dispatch",
                "--seeds",
                "1,2,1",
                "--warmup-seconds",
                "0.2",
                "--duration-seconds",
                "0.3",
                "--report",
                report.toString(),
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        // A seed given twice is run once: 2 seeds × 3 policies.
        assertThat(result.err()).contains("simulating 6 runs");
        String html = Files.readString(report.resolve("index.html"));
        assertThat(html).contains("seed 1</h2>").contains("seed 2</h2>");
        assertThat(html)
                .as("the table's rows say their seed")
                .contains("<td class=\"l\">underload, seed 1</td>")
                .contains("<td class=\"l\">underload, seed 2</td>");
        // The sweep summary: a table with the text's figures. Too few requests for a P99.999 (–), a hot P99 each.
        assertThat(html)
                .contains("<h2>Sweep summary</h2>")
                .contains("<caption>sweep over 2 cells (scenario variant × seed)")
                .contains("<p class=\"note\">Ratio = the policy's figure ÷ the peer's");
        assertThat(result.out())
                .as("each column's header stands apart from the next")
                .containsPattern("steady P99\\.999 ÷ fifo +steady P99\\.999 ÷ mclock +hot P99 ÷ mclock"
                        + " +within P99\\.999 ÷ fifo +within P99\\.999 ÷ mclock +unused");
        // The steady columns, then the hot one, then the within-baseline ones (– too: too few requests).
        Matcher row = Pattern.compile("(?m)^  (fifo|mclock|fair-dispatch) +– +– +(\\d+\\.\\d\\d) / (\\d+\\.\\d\\d) /"
                        + " (\\d+\\.\\d\\d) +– +– +(\\d+\\.\\d%)  (– above fifo, – above 1.1 × mclock)$")
                .matcher(result.out());
        int rows = 0;
        while (row.find()) {
            rows++;
            assertThat(html)
                    .contains("<tr><td class=\"l\">" + row.group(1) + "</td>" + "<td>–</td>".repeat(6) + "<td>"
                            + row.group(2) + "</td><td>" + row.group(3) + "</td><td>" + row.group(4) + "</td>"
                            + "<td>–</td>".repeat(6) + "<td>" + row.group(5) + "</td><td class=\"l\">" + row.group(6)
                            + "</td></tr>");
        }
        assertThat(rows).as(result.out()).isEqualTo(3);
        // In the browser: the sweep's tables fit, no text table flattened into a paragraph.
        HeadlessChromium.assertReadable(report.resolve("index.html"));
    }

    /** Refusals (a one-request admission queue, a burst far beyond the budget) are warned of in the report too. */
    @Test
    void simulate_warningsAreInTheReport_eachNamingItsSeed() throws IOException {
        Path scenario = dir.resolve("refuse.yaml");
        Files.writeString(scenario, """
                name: refuse
                seed: 1
                warmupSeconds: 0.1
                durationSeconds: 0.3
                backend: {parallelism: 2, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                admission: {queueCapacityPerSegment: 1}
                tenants:
                  - {name: a, requestsPerSecond: 500, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                  - {name: b, requestsPerSecond: 3000, synthetic: {readFraction: 1, sizeBytes: [4096]},
                     bursts: {meanGapSeconds: 0.05, minMillis: 20, maxMillis: 40, multiplier: 8}}
                """);
        Path report = dir.resolve("refuse-report");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                scenario.toString(),
                "--policies",
                "segment-admission",
                "--seeds",
                "1,2",
                "--report",
                report.toString(),
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("tailor: warning: refuse seed 1 segment-admission: ");
        assertThat(Files.readString(report.resolve("index.html")))
                .containsPattern("<li>warning: refuse seed 1 segment-admission: \\d+ measured requests were refused")
                .containsPattern("<li>warning: refuse seed 2 segment-admission: \\d+ measured requests were refused");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--policies=fifo,wfq,foo | --policies: \"wfq\", \"foo\" are not known (expected: some of fifo, static-cap, token-bucket, mclock,"
                        + " mclock-per-client, segment-admission, segment-admission-paper, fair-dispatch, no-reserve, no-borrow, no-repay, no-lending,"
                        + " no-baseline-guarantee, paced-release, fixed-reserve, round-robin-hot, bounded-overdraft,"
                        + " virtual-clock-hot, fifo-deadline, late-first-hot, late-first-clock-hot, round-robin-within-disk,"
                        + " bounded-lag-hot, unscaled-baselines, tick-refilled-baselines, no-fair-dispatch,"
                        + " no-oversize-advance, overlapping-advances, credit-gated-advances, finish-tag-door,"
                        + " start-tag-door-admission, spare-exchange, fixed-shares,"
                        + " measured-base-latency, no-disk-order)",
                "--duration-seconds=0 | --duration-seconds: 0 (expected: a number in (0, 86400])",
                "--duration-seconds=-1 | --duration-seconds: -1 (expected: a number in (0, 86400])",
                "--duration-seconds=-0.25 | --duration-seconds: -0.25 (expected: a number in (0, 86400])",
                "--warmup-seconds=-1 | --warmup-seconds: -1 (expected: a number in [0, 86400])",
                "--scenario=nowhere.yaml | --scenario: nowhere.yaml: no such scenario or file (expected: one of"
                        + " burst-microbench, deployed-like, underload, big-requests, mix50, mix-many, robustness, robustness-<mix> (<mix>: msn-small, mild, one-whale,"
                        + " long-bursts, spikes, many-small, tencent-heavy, busy, four-proxies), or a YAML scenario file)",
                "--scenario=robustness-long-burst | --scenario: robustness-long-burst: no mix \"long-burst\" in"
                        + " robustness (expected: robustness-<mix> with <mix> one of msn-small, mild, one-whale,"
                        + " long-bursts, spikes, many-small, tencent-heavy, busy, four-proxies)",
                "--scenario= | --scenario: \"\" (expected: one of burst-microbench, deployed-like, underload,"
                        + " big-requests, mix50, mix-many, robustness, robustness-<mix> (<mix>: msn-small, mild, one-whale, long-bursts, spikes,"
                        + " many-small, tencent-heavy, busy, four-proxies), or a YAML scenario file)",
                "--threads=0 | --threads: 0 (expected: 1 .. 256)",
                "--format=csv | --format: csv (expected: one of table, json)",
                "--report= | --report: empty"
            })
    void simulate_badOption_exit2WithTheReason_nothingWritten(String option, String message) {
        PlanCommandTest.Result result = tailor("storage", "simulate", option);
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains(message).doesNotContain("simulating");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_seedsWithSeed_exit2QuotingTheSeedsAsWritten() {
        PlanCommandTest.Result result = tailor("storage", "simulate", "--seeds", "2,3", "--seed", "1");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("--seeds: 2,3 with --seed 1 (expected: one of them)")
                .doesNotContain("simulating");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_invalidScenarioFile_listsEveryProblem_andWritesNoReport() throws IOException {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, """
                name: bad
                seed: 1
                backend: {parallelism: 0, readBaseMicros: 1, readMicrosPerKiB: 1, writeBaseMicros: 1,
                          writeMicrosPerKiB: 1, serviceSigma: 0}
                tenants: [{name: a, requestsPerSecond: 0, synthetic: {readFraction: 1, sizeBytes: [4096]}}]
                """);
        Path report = dir.resolve("never");
        PlanCommandTest.Result result =
                tailor("storage", "simulate", "--scenario", file.toString(), "--report", report.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("2 problems")
                .contains("backend.parallelism: 0 (expected: 1 .. 100000)")
                .contains("tenants[0].requestsPerSecond: 0 (expected: a number in (0, 10000000]) at line 5");
        assertThat(report).doesNotExist();
    }

    @Test
    void simulate_badBaselineRateOrTrace_exit2NamingTheField() throws IOException {
        String head = """
                name: bad
                seed: 1
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                """;
        Path above = dir.resolve("above.yaml");
        Files.writeString(above, head + """
                tenants: [{name: a, requestsPerSecond: 100, synthetic: {readFraction: 1, sizeBytes: [4096]},
                           baseline: {iops: 100000, mibPerSecond: 400}}]
                """);
        PlanCommandTest.Result result = tailor("storage", "simulate", "--scenario", above.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("tailor: scenario " + above + ": tenants[0].baseline.iops: 100000 (expected: at most the"
                        + " backend's capacity, 43715 beside 400 MiB/s: no backend can promise more than it serves)"
                        + " at line 6");
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, head + """
                tenants: [{name: a, requestsPerSecond: -5, traces: [nosuch], baseline: {iops: -1, mibPerSecond: 1}}]
                """);
        result = tailor("storage", "simulate", "--scenario", bad.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("tenants[0].requestsPerSecond: -5 (expected: a number in (0, 10000000]) at line 5")
                .contains("tenants[0].traces[0]: \"nosuch\"")
                .contains("tenants[0].baseline.iops: -1 (expected: a number in (0, 100000000]) at line 5");
    }

    @Test
    void simulate_offeredLoadBeyondTenTimesTheBackend_exit2NamingTheRates_beforeAnyRun() throws IOException {
        Path file = dir.resolve("flood.yaml");
        Files.writeString(file, """
                name: flood
                seed: 1
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                tenants:
                  - {name: a, requestsPerSecond: 100, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                  - {name: b, requestsPerSecond: 10000000, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                """);
        PlanCommandTest.Result result = tailor("storage", "simulate", "--scenario", file.toString());

        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err())
                .containsPattern("tenants\\[1\\]\\.requestsPerSecond: 10000000 \\(expected: rates that together offer"
                        + " at most 1000 % of the backend outside bursts; these offer \\d+\\.\\d %: .*\\) at line 7")
                .contains("tenants[0].requestsPerSecond: 100 (expected: rates that together offer at most 1000 %")
                .doesNotContain("note: offered load")
                .doesNotContain("simulating");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void simulate_mixes_eachMixsNotesNameTheirMixOnce_inTheTextAndTheReport() throws IOException {
        Path file = dir.resolve("family.yaml");
        Files.writeString(file, """
                name: family
                seed: 1
                warmupSeconds: 0.1
                durationSeconds: 0.2
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                baseUtilizationPercent: 50
                mixes:
                  - name: calm
                    baseUtilizationPercent: 35
                    tenants: [{name: a, count: 2, requestsPerSecond: 1, synthetic: {readFraction: 1, sizeBytes: [4096]}}]
                  - name: busy
                    tenants:
                      - {name: a, count: 2, requestsPerSecond: 1, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                      - {name: b, requestsPerSecond: 1, synthetic: {readFraction: 0.5, sizeBytes: [4096, 1048576]},
                         bursts: {meanGapSeconds: 1, minMillis: 50, maxMillis: 100, multiplier: 4}}
                """);
        Path report = dir.resolve("family-report");
        // The busy mix measures longer than the family: the progress line says so, not "0.2 s measured each".
        Files.writeString(
                file, Files.readString(file).replace("  - name: busy\n", "  - name: busy\n    durationSeconds: 0.3\n"));
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                file.toString(),
                "--policies",
                "fifo",
                "--seeds",
                "1,2",
                "--report",
                report.toString());

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err())
                .contains("tailor: simulating 4 runs of family (0.1 s warm-up + 0.2 s measured each, 0.3 s for"
                        + " family-busy) on ");
        String calm = "note: family-calm: offered load: 35.0 % of the backend outside bursts";
        String busy = "note: family-busy: offered load: 50.0 % of the backend outside bursts";
        assertThat(result.err()).contains(calm).contains(busy).contains("note: backend given in the scenario");
        assertThat(result.err().split(Pattern.quote(calm), -1)).as("once").hasSize(2);
        assertThat(result.err().split(Pattern.quote(busy), -1)).as("once").hasSize(2);
        assertThat(result.err()).doesNotContainPattern("note: offered load");
        assertThat(result.err().lines().filter(l -> l.startsWith("note: ")).toList())
                .as("no note told twice")
                .doesNotHaveDuplicates();
        String html = Files.readString(report.resolve("index.html"));
        assertThat(html)
                .contains("<li>family-calm: offered load: 35.0 % of the backend outside bursts")
                .contains("<li>family-busy: offered load: 50.0 % of the backend outside bursts")
                .doesNotContain("<li>offered load");
    }

    @Test
    void simulate_noSteadyTenant_saysWhyItsColumnsAreNotResolvable_andPlotsNoEmptyCdf() throws Exception {
        Path report = dir.resolve("only-bursts-report");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                oneTenantScenario("only-bursts", true).toString(),
                "--policies",
                "fifo,segment-admission",
                "--report",
                report.toString());

        assertThat(result.exitCode()).as(result.err()).isZero();
        String reason = "no steady tenant's request was measured: every tenant of this scenario has bursts";
        assertThat(result.out())
                .contains("steady tenants (0 requests)")
                .contains(reason)
                .doesNotContain("no hot tenant's request");
        Path page = report.resolve("index.html");
        assertThat(Files.readString(page))
                .contains("<p class=\"note\">only-bursts: " + reason + " (its steady tenants' columns are n/r).</p>")
                .contains("<p class=\"note\">No latency CDF of steady tenants: " + reason + ".</p>")
                .doesNotContain("alt=\"Steady tenants: latency CDF\"")
                .contains("alt=\"Hot (bursty) tenants: latency CDF\"")
                .contains("Token pools around the first measured burst")
                .doesNotContain("no hot tenant's request");
        // In the browser: the hot tenants' CDF and segment-admission's token pools, no empty steady plot.
        assertThat(HeadlessChromium.look(page, 1400).images()).isEqualTo(2);
        HeadlessChromium.assertReadable(page);
    }

    @Test
    void simulate_noHotTenant_saysWhyItsColumnsAreNotResolvable_andPlotsNoEmptyCdf() throws Exception {
        Path report = dir.resolve("no-bursts-report");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                oneTenantScenario("no-bursts", false).toString(),
                "--policies",
                "fifo,segment-admission",
                "--report",
                report.toString());

        assertThat(result.exitCode()).as(result.err()).isZero();
        String reason = "no hot tenant's request was measured: no tenant of this scenario has bursts";
        assertThat(result.out())
                .contains("hot tenants (0 requests)")
                .contains(reason)
                .doesNotContain("no steady tenant's request")
                .as("no share of hot requests admitted as steady when there were none")
                .containsPattern("\\d+% / –\\s*$|\\d+% / –\\n");
        Path page = report.resolve("index.html");
        assertThat(Files.readString(page))
                .contains("<p class=\"note\">no-bursts: " + reason + " (its hot tenants' columns are n/r).</p>")
                .contains("<p class=\"note\">No latency CDF of hot tenants: " + reason + ".</p>")
                .contains("<p class=\"note\">No token-pool plot: no burst began at proxy 0 in the measured period.</p>")
                .contains("alt=\"Steady tenants: latency CDF\"")
                .doesNotContain("alt=\"Hot (bursty) tenants: latency CDF\"")
                .doesNotContain("no steady tenant's request");
        // In the browser: the steady tenants' CDF alone.
        assertThat(HeadlessChromium.look(page, 1400).images()).isEqualTo(1);
        HeadlessChromium.assertReadable(page);
    }

    /** A scenario of one synthetic tenant, 1,000 4 KiB reads per second for 0.3 s, with bursts or without. */
    private Path oneTenantScenario(String name, boolean bursts) throws IOException {
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, """
                name: %s
                seed: 1
                warmupSeconds: 0.1
                durationSeconds: 0.3
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                tenants: [{name: a, requestsPerSecond: 1000, synthetic: {readFraction: 1, sizeBytes: [4096]}%s}]
                """.formatted(
                        name,
                        bursts
                                ? ",\n           bursts: {meanGapSeconds: 0.1, minMillis: 10, maxMillis: 20, multiplier: 2}"
                                : ""));
        return file;
    }

    @Test
    void simulate_perTenant_printsEachTenantsRowsUnderEachPolicy() {
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                "underload",
                "--policies",
                "fifo,segment-admission",
                "--warmup-seconds",
                "0.3",
                "--duration-seconds",
                "0.5",
                "--per-tenant",
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains("  per tenant, latency ms\n")
                .containsPattern("\n  tenant +class +proxy +baseline +offered +within +requests  policy +P50 ")
                .containsPattern("\n  steady-0 +steady +0 +[0-9.]+ Mcu/s +\\d+% +[0-9.]+% +\\d+  fifo ")
                .containsPattern("\n {20,}segment-admission +[0-9.]+ ")
                .contains("per tenant: class = ground truth");
    }

    @Test
    void simulate_help_writesTheListOptionsAsLists() {
        String help = tailor("storage", "simulate", "--help").out();
        assertThat(help)
                .contains("--policies=P[,P...]")
                .contains("--seeds=N[,N...]")
                .doesNotContain("......");
    }

    @Test
    void simulate_help_namesEveryMixOfTheBundledFamily_asTheScenarioItRunsAlone() {
        PlanCommandTest.Result result = tailor("storage", "simulate", "--help");
        assertThat(result.exitCode()).isZero();
        String help = result.out().replaceAll("\\s+", " ");
        assertThat(help).contains("robustness-<mix> (<mix>: ");
        for (var mix :
                dev.tailor.sim.storage.StorageScenarios.load("robustness").mixes()) {
            assertThat(help).as(mix.name()).containsPattern(" " + mix.name() + "[,;]");
        }
    }

    /**
     * 1 MiB reads on 16 proxies (each proxy's budget about 620,000 cost units per 10 ms interval, a read
     * 1,258,488): the setup's note on segment admission's budget, and the legend of its counters (reserve,
     * lent, borrowed, repaid in % of the budget issued; misclassified), only when a segment-admission policy
     * runs. Was: both printed for fifo and mclock, which have no budget and show – in those columns.
     */
    @Test
    void simulate_noAdmissionPolicy_saysNothingOfAdmissionsBudget() throws IOException {
        Path scenario = dir.resolve("large.yaml");
        Files.writeString(scenario, """
                name: large
                seed: 7
                warmupSeconds: 0.1
                durationSeconds: 0.3
                proxies: 16
                baseUtilizationPercent: 40
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                tenants:
                  - {name: t, count: 32, requestsPerSecond: 1, synthetic: {readFraction: 0.7, sizeBytes: [1048576]}}
                """);
        Path report = dir.resolve("peers");
        PlanCommandTest.Result peers = tailor(
                "storage",
                "simulate",
                "--scenario",
                scenario.toString(),
                "--policies",
                "fifo,mclock",
                "--threads",
                "1",
                "--report",
                report.toString());
        PlanCommandTest.Result admission = tailor(
                "storage",
                "simulate",
                "--scenario",
                scenario.toString(),
                "--policies",
                "fifo,segment-admission",
                "--threads",
                "1");

        assertThat(peers.exitCode()).as(peers.err()).isZero();
        assertThat(peers.err()).doesNotContain("budget");
        assertThat(peers.out())
                .doesNotContain("budget")
                .doesNotContain("reserve / lent")
                .doesNotContain("misclassified =");
        assertThat(Files.readString(report.resolve("index.html")))
                .doesNotContain("budget per interval")
                .doesNotContain("reserve / lent");
        assertThat(admission.exitCode()).as(admission.err()).isZero();
        assertThat(admission.err())
                .contains(
                        "note: on 16 of 16 proxies a request can cost more than the proxy's" + " budget per interval");
        assertThat(admission.out())
                .contains("reserve / lent / borrowed / repaid = ")
                .contains("in % of the budget issued")
                .contains("misclassified = ");
    }
}
