package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.testkit.Tools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tailor nbd experiment burst|low-load}: options checked before anything starts, and one short
 * real run of each against fio and nbdkit (skipped, with the reason, when they are not installed;
 * required under TAILOR_REQUIRE_TOOLS=true, as in CI). The real runs take about 15 s (low-load) and 30 s
 * (burst, its three default configurations).
 */
class NbdExperimentCommandTest {

    @TempDir
    Path dir;

    @Test
    void help_namesTheSetupTheTimeAndTheTools() {
        PlanCommandTest.Result burst = tailor("nbd", "experiment", "burst", "--help");
        assertThat(burst.exitCode()).isZero();
        assertThat(burst.out())
                .contains("4 steady fio tenants and 1 bursty one")
                .contains("about 7 minutes")
                .contains("Default: off,on,door.")
                .contains("burst --modes off,on    # admission off vs on only, about 5 minutes")
                .contains("apt install fio nbdkit")
                .contains("--burst-qd=N")
                .contains("--capacity-factor=F");
        // The time, as the lines wrap: each run's start and stop counted (the first progress line gives it).
        assertThat(burst.out().replaceAll("\\s+", " "))
                .contains("Takes about (ramp + runtime + 5 s) × modes × rounds + 10 s, as its first line says")
                .contains("one round of 2+6 s about 49 s; a busy machine takes longer.");
        PlanCommandTest.Result lowLoad = tailor("nbd", "experiment", "low-load", "--help");
        assertThat(lowLoad.exitCode()).isZero();
        assertThat(lowLoad.out()).contains("--health-ms=MS").contains("--period-us=US");
        assertThat(lowLoad.out().replaceAll("\\s+", " "))
                .contains("Takes about (ramp + runtime + 5 s) × 2 × rounds: each run starts a proxy JVM and fio.")
                .contains("The defaults take about 4 minutes; a busy machine takes longer.");
    }

    @Test
    void burstModes_defaultToOffOnAndTheDoorAlone_andOffOnStaysPossible() {
        NbdExperimentCommand.Burst plain = new NbdExperimentCommand.Burst();
        new CommandLine(plain).parseArgs();
        assertThat(plain.modes).containsExactly("off", "on", "door");
        NbdExperimentCommand.Burst offOn = new NbdExperimentCommand.Burst();
        new CommandLine(offOn).parseArgs("--modes", "off,on");
        assertThat(offOn.modes).containsExactly("off", "on");
    }

    @Test
    void badOptionValue_isExit2NamingTheOptionValueAndExpectation() {
        // Checked before any program starts, so these hold with or without fio and nbdkit.
        assertBad(
                new String[] {"burst", "--runtime", "0"},
                "--runtime: 0 (expected: seconds, a whole number in [1, 86400])");
        assertBad(new String[] {"burst", "--rounds", "0"}, "--rounds: 0 (expected: a whole number in [1, 100])");
        assertBad(new String[] {"burst", "--reserve", "1.5"}, "--reserve: 1.5 (expected: a number in [0, 1])");
        assertBad(
                new String[] {"burst", "--capacity-factor", "0"},
                "--capacity-factor: 0 (expected: a number in (0, 100])");
        assertBad(new String[] {"burst", "--segment-size", "3 furlongs"}, "--segment-size: \"3 furlongs\" (expected:");
        assertBad(
                new String[] {"burst", "--segment-size", "100KiB"},
                "--segment-size: 100KiB (expected: a multiple" + " of admission's 1MiB block");
        assertBad(
                new String[] {"burst", "--burst-qd", "1000"},
                "--burst-qd: 1000 (expected: a queue depth (the proxy's maxInFlightRequestsPerConnection), a whole"
                        + " number in [1, 256])");
        assertBad(
                new String[] {"low-load", "--iops", "-5"},
                "--iops: -5 (expected: reads per second, a whole number in [1, 1000000])");
        assertBad(
                new String[] {"low-load", "--health-ms", "0"},
                "--health-ms: 0 (expected: ms (loop.healthCheckPeriodMillis), a whole number in [1, 3600000])");
        assertBad(
                new String[] {"low-load", "--tasks", "-1"},
                "--tasks: -1 (expected: tasks per period (loop.maintenanceTasks; 0: no maintenance), a whole number"
                        + " in [0, 10000])");
        assertBad(new String[] {"burst", "--reserve", "NaN"}, "--reserve: NaN (expected: a number in [0, 1])");
        assertBad(
                new String[] {"burst", "--capacity-factor", "NaN"},
                "--capacity-factor: NaN (expected: a number in (0, 100])");
        assertBad(
                new String[] {"burst", "--capacity-factor", "1e7"},
                "--capacity-factor: 10000000 (expected: a number in (0, 100])");
        assertBad(new String[] {"low-load", "--runtime", "ten"}, "--runtime: ten (expected: a whole number)");
        assertBad(new String[] {"low-load", "--format", "xml"}, "--format: xml (expected: one of table, json)");
        assertBad(
                new String[] {"burst", "--capacity-factor", "1 1/2"},
                "--capacity-factor: \"1 1/2\" (expected: a number)");
    }

    @Test
    void dirOrReportIsAFile_isExit2NamingTheOption() throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertBad(new String[] {"low-load", "--dir", file.toString()}, "--dir: " + file + " is a file");
        assertBad(new String[] {"burst", "--report", file.toString()}, "--report: " + file + " is a file");
        assertBad(
                new String[] {"burst", "--dir", file.resolve("sub").toString()},
                "--dir: cannot create " + file.resolve("sub"));
    }

    @Test
    void dirOrReportInAFolderThatTakesNoFile_isExit2NamingTheOptionAndTheReason_beforeAnyProgramStarts() {
        // Linux's /proc takes no new file, whoever asks: root passed the old check (Files.isWritable); --dir then
        // failed with a stack trace when fio's output was opened, --report after the whole experiment.
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc here");
        assertBad(
                new String[] {"low-load", "--dir", "/proc"},
                "tailor: --dir: cannot write in /proc (no such file or directory; expected: a writable directory for"
                        + " fio's output and the proxy's logs)\n");
        assertBad(
                new String[] {"burst", "--report", "/proc", "--dir", dir.toString()},
                "tailor: --report: cannot write in /proc (no such file or directory; expected: a writable directory"
                        + " for index.html)\n");
    }

    private static void assertBad(String[] args, String message) {
        String[] all = new String[args.length + 2];
        all[0] = "nbd";
        all[1] = "experiment";
        System.arraycopy(args, 0, all, 2, args.length);
        PlanCommandTest.Result result = tailor(all);
        assertThat(result.exitCode())
                .as("exit code of %s", String.join(" ", all))
                .isEqualTo(2);
        assertThat(result.err()).contains(message);
    }

    @Test
    void burst_tinyRealRun_printsTheThreeDefaultModesWithSamplesAndWritesTheReport() throws Exception {
        Tools.require("fio", "fio");
        Tools.require("nbdkit", "nbdkit");
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "nbd",
                "experiment",
                "burst",
                "--runtime",
                "2",
                "--ramp",
                "1",
                "--rounds",
                "1",
                "--dir",
                dir.resolve("work").toString(),
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(samples(result.out(), "off")).isPositive();
        assertThat(samples(result.out(), "on")).isPositive();
        assertThat(samples(result.out(), "door")).isPositive();
        assertThat(result.out())
                .contains("Admission on vs off, steady tenants: P99: ")
                .contains("The fair dispatch door alone vs admission off, steady tenants: P99: ")
                .contains("| on 1 | bursty |");
        assertThat(result.err())
                .startsWith("tailor: experiment: 3 runs (1 round of off, on, door) of 1+2 s; about 31 s in all")
                .contains("tailor: experiment: round 1/1, admission on (1+2 s)")
                .contains("tailor: experiment: round 1/1, the door alone (admission off) (1+2 s)");
        assertThat(report.resolve("index.html")).isNotEmptyFile();
        assertThat(report.resolve("burst-steady-tail.png")).isNotEmptyFile();
        assertThat(report.resolve("burst-bursty-tail.png")).isNotEmptyFile();
        assertThat(Files.readString(report.resolve("index.html"))).contains("src=\"burst-steady-tail.png\"");
        assertThat(dir.resolve("work").resolve("run-on-1.json")).isNotEmptyFile();
    }

    @Test
    void lowLoad_stoppedBySigterm_saysSo_stopsItsPrograms_andLeavesNoEmptyReportFolder() throws Exception {
        Tools.require("fio", "fio");
        Path report = dir.resolve("report");
        Path err = dir.resolve("err.txt");
        int exit = SimulateCommandTest.stoppedBySigterm(
                "round 1/1, loop fifo",
                report,
                err,
                dir.resolve("out.txt"),
                "nbd",
                "experiment",
                "low-load",
                "--runtime",
                "600",
                "--rounds",
                "1",
                "--dir",
                dir.resolve("work").toString(),
                "--report",
                report.toString());
        // Was: exit 143 without a word, and the empty report folder left behind.
        assertThat(exit).isEqualTo(143);
        String said = SimulateCommandTest.read(err);
        assertThat(said)
                .contains("tailor: stopped during the experiment's runs; nothing written (the results and the report"
                        + " go out whole or not at all)\n");
        assertThat(report).doesNotExist();
        assertThat(SimulateCommandTest.read(dir.resolve("out.txt"))).isEmpty();
        Matcher written =
                Pattern.compile("writing 256 MiB of random data to (\\S+)").matcher(said);
        assertThat(written.find()).as(said).isTrue();
        assertThat(Path.of(written.group(1))).as("the tmpfs file is removed").doesNotExist();
    }

    @Test
    void lowLoad_tinyRealRunAsJson_hasBothModesWithSamplesAndHealthChecksAndWritesTheReport() throws Exception {
        Tools.require("fio", "fio");
        Path report = dir.resolve("report");
        PlanCommandTest.Result result = tailor(
                "nbd",
                "experiment",
                "low-load",
                "--runtime",
                "2",
                "--ramp",
                "1",
                "--rounds",
                "1",
                "--format",
                "json",
                "--dir",
                dir.resolve("work").toString(),
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(result.out());
        for (String mode : new String[] {"fifo", "priority"}) {
            long samples = json.at("/pooled/" + mode + "/latency/samples").asLong();
            assertThat(samples).as(mode).isGreaterThanOrEqualTo(100);
            assertThat(json.at("/pooled/" + mode + "/latency/p99Micros").asDouble())
                    .as(mode)
                    .isPositive();
            // How many samples 2 s give depends on the machine: P99.9 is a figure from 1,000, null below.
            JsonNode p999 = json.at("/pooled/" + mode + "/latency/p999Micros");
            if (samples >= 1_000) {
                assertThat(p999.asDouble())
                        .as(mode + ", " + samples + " samples")
                        .isPositive();
            } else {
                assertThat(p999.isNull())
                        .as(mode + ", " + samples + " samples: " + p999)
                        .isTrue();
            }
        }
        assertThat(json.at("/runs").size()).isEqualTo(2);
        assertThat(json.at("/healthCheckBoundMillis").asDouble()).isEqualTo(200);
        assertThat(json.at("/settings/dir").asText())
                .as("a path, not a URI")
                .isEqualTo(dir.resolve("work").toString());
        assertThat(report.resolve("index.html")).isNotEmptyFile();
        assertThat(report.resolve("low-load-tail.png")).isNotEmptyFile();
        assertThat(report.resolve("low-load-health-check-age.png")).isNotEmptyFile();
        // Its own data file, named on stderr, is gone (another checkout's experiment may have one of its own).
        java.util.regex.Matcher written = java.util.regex.Pattern.compile("writing 256 MiB of random data to (\\S+)")
                .matcher(result.err());
        assertThat(written.find()).as(result.err()).isTrue();
        assertThat(Path.of(written.group(1))).as("the tmpfs file is removed").doesNotExist();
    }

    /** The sample count in the pooled table's row for {@code mode}. */
    private static long samples(String out, String mode) {
        Matcher m = Pattern.compile("(?m)^\\| " + mode + " \\| ([\\d,]+) \\|").matcher(out);
        assertThat(m.find()).as("a pooled row for %s in:%n%s", mode, out).isTrue();
        return Long.parseLong(m.group(1).replace(",", ""));
    }
}
