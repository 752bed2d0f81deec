package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A bundled scenario named while a file of that name is in the working directory: the bundled one runs, as
 * before, and the file is told, with how to run it. The commands are made with a temporary folder as their
 * working directory.
 */
class BundledOrFileTest {

    @TempDir
    Path dir;

    @Test
    void note_aBundledNameWithAFileOfThatName_saysWhichRunsAndHowToRunTheFile() throws IOException {
        Files.writeString(dir.resolve("mix50"), "name: mine\n");

        assertThat(BundledOrFile.note("--scenario", "mix50", true, dir))
                .isEqualTo("tailor: note: --scenario mix50 is the bundled scenario; the file ./mix50 is not read"
                        + " (give a path, ./mix50, to run it)");
    }

    @Test
    void note_withoutAFile_aFolder_orANameNotBundled_saysNothing() throws IOException {
        Files.createDirectory(dir.resolve("paper-dag"));
        Files.writeString(dir.resolve("mine.yaml"), "name: mine\n");

        assertThat(BundledOrFile.note("--scenario", "mix50", true, dir)).isNull();
        assertThat(BundledOrFile.note("--scenario", "paper-dag", true, dir)).isNull();
        assertThat(BundledOrFile.note("--scenario", "mine.yaml", false, dir)).isNull();
    }

    @Test
    void storageSimulate_aBundledNameWithAFileOfThatName_runsTheBundledOne_andSaysSo() throws IOException {
        // Not a scenario: read, it would be an error.
        Files.writeString(dir.resolve("burst-microbench"), "not: a scenario\n");

        PlanCommandTest.Result result = shortStorageRun("--scenario", "burst-microbench");

        // Was: the bundled one, without a word of the file.
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err().lines().findFirst())
                .hasValue("tailor: note: --scenario burst-microbench is the bundled scenario; the file"
                        + " ./burst-microbench is not read (give a path, ./burst-microbench, to run it)");
        assertThat(result.out()).contains("burst-microbench");
    }

    @Test
    void storageSimulate_aFamilysMixWithAFileOfThatName_runsTheBundledMix_andSaysSo() throws IOException {
        SharedData.require("block_io");
        Files.writeString(dir.resolve("robustness-mild"), "not: a scenario\n");

        PlanCommandTest.Result result = shortStorageRun("--scenario", "robustness-mild");

        // Was: the file read whenever the process's working directory held one, unlike a bundled name.
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err().lines().findFirst())
                .hasValue("tailor: note: --scenario robustness-mild is the bundled scenario; the file"
                        + " ./robustness-mild is not read (give a path, ./robustness-mild, to run it)");
        assertThat(result.out()).contains("robustness-mild");
    }

    @Test
    void storageSimulate_theDefaultScenarioWithAFileOfThatName_saysNothing() throws IOException {
        Files.writeString(dir.resolve("burst-microbench"), "not: a scenario\n");

        PlanCommandTest.Result result = shortStorageRun();

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).doesNotContain("tailor: note:");
    }

    @Test
    void heartSimulate_aBundledNameWithAFileOfThatName_runsTheBundledOne_andSaysSo() throws IOException {
        Files.writeString(dir.resolve("paper-pairwise"), "not: a scenario\n");

        PlanCommandTest.Result result = tailorIn(
                dir,
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "least-request",
                "--rps",
                "100",
                "--warmup-seconds",
                "0",
                "--duration-seconds",
                "1",
                "--threads",
                "1");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err().lines().findFirst())
                .hasValue("tailor: note: --scenario paper-pairwise is the bundled scenario; the file ./paper-pairwise"
                        + " is not read (give a path, ./paper-pairwise, to run it)");
        assertThat(result.out()).contains("paper-pairwise");
    }

    @Test
    void heartSimulate_aFileNamedByItsPath_isRead_withoutTheNote() throws IOException {
        Files.writeString(dir.resolve("paper-pairwise"), "not: a scenario\n");

        PlanCommandTest.Result result = tailorIn(
                dir,
                "heart",
                "simulate",
                "--scenario",
                dir.resolve("paper-pairwise").toString());

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).doesNotContain("tailor: note:").contains("paper-pairwise");
    }

    /** {@code tailor storage simulate SCENARIO --policies fifo}, 0.1 + 0.2 s on one thread, in {@link #dir}. */
    private PlanCommandTest.Result shortStorageRun(String... scenario) {
        List<String> args = new ArrayList<>(List.of("storage", "simulate"));
        args.addAll(List.of(scenario));
        args.addAll(List.of(
                "--policies", "fifo", "--warmup-seconds", "0.1", "--duration-seconds", "0.2", "--threads", "1"));
        return tailorIn(dir, args.toArray(String[]::new));
    }

    /** {@code tailor ARGS} with {@code workingDir} as the simulate commands' working directory. */
    static PlanCommandTest.Result tailorIn(Path workingDir, String... args) {
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> type) throws Exception {
                K made = CommandLine.defaultFactory().create(type);
                if (made instanceof StorageSimulateCommand storage) {
                    storage.workingDir = workingDir;
                } else if (made instanceof SimulateCommand heart) {
                    heart.workingDir = workingDir;
                }
                return made;
            }
        };
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Tailor.run(args, new PrintWriter(out, true), new PrintWriter(err, true), factory);
        return new PlanCommandTest.Result(code, out.toString(), err.toString());
    }
}
