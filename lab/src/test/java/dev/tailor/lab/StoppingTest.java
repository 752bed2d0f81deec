package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ClusterRuns.Stopping}, the stop of a command of several stages (the demo), its hook called as a
 * signal would: one line saying how far the command got, and no report of which only some pages are out.
 */
class StoppingTest {

    @TempDir
    Path dir;

    @Test
    void stoppedInTheSecondStage_saysWhatEachStageFinished_andRemovesTheReportFolderItCreated() throws IOException {
        Path report = dir.resolve("demo");
        Files.createDirectories(report);
        StringWriter err = new StringWriter();
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(new PrintWriter(err, true), report, report)) {
            stopping.next(72, "simulated run");
            stopping.done(72);
            stopping.next(10, "storage run");
            stopping.done(3);

            stopping.stop();

            assertThat(stopping.publish("the results printed", () -> err.write("printed")))
                    .isFalse();
        }
        assertThat(err.toString())
                .isEqualTo("tailor: stopped after the 72 simulated runs and 3 of 10 storage runs; nothing written"
                        + " (the results and the report come when every run is done)\n");
        assertThat(report).doesNotExist();
    }

    @Test
    void stopped_removesEveryEmptyFolderItCreatedForTheReport_andOnlyThose() throws IOException {
        // Was: only the report folder itself went; R/deep, created with it, stayed behind.
        Path report = dir.resolve("R").resolve("deep").resolve("nested");
        Path createdFrom = ClusterRuns.Stopping.firstMissing(report);
        assertThat(createdFrom).isEqualTo(dir.resolve("R").toAbsolutePath());
        Files.createDirectories(report);
        try (ClusterRuns.Stopping stopping =
                ClusterRuns.Stopping.on(new PrintWriter(new StringWriter(), true), report, createdFrom)) {
            stopping.stop();
        }
        assertThat(dir.resolve("R")).doesNotExist();
        assertThat(dir).isDirectory();

        // A folder that existed, or that something else was put in meanwhile, stays, and so do its parents.
        Path existing = Files.createDirectories(dir.resolve("kept"));
        Path inner = existing.resolve("a").resolve("b");
        Path from = ClusterRuns.Stopping.firstMissing(inner);
        assertThat(from).isEqualTo(existing.resolve("a").toAbsolutePath());
        Files.createDirectories(inner);
        Files.writeString(existing.resolve("a").resolve("other.txt"), "not the command's");
        try (ClusterRuns.Stopping stopping =
                ClusterRuns.Stopping.on(new PrintWriter(new StringWriter(), true), inner, from)) {
            stopping.stop();
        }
        assertThat(inner).doesNotExist();
        assertThat(existing.resolve("a").resolve("other.txt")).exists();
        assertThat(ClusterRuns.Stopping.firstMissing(existing)).isNull();
    }

    @Test
    void stoppedAfterEveryRun_beforeTheResultsGoOut_doesNotSayTheyComeWhenEveryRunIsDone() {
        StringWriter err = new StringWriter();
        try (ClusterRuns.Stopping stopping =
                ClusterRuns.Stopping.on(new PrintWriter(err, true), dir.resolve("demo"), null)) {
            stopping.next(72, "simulated run");
            stopping.done(72);
            stopping.next(10, "storage run");
            stopping.done(10);
            stopping.during("printing its results");

            stopping.stop();
        }
        // Was: "(the results and the report come when every run is done)", every run being done.
        assertThat(err.toString())
                .isEqualTo("tailor: stopped after the 72 simulated runs and the 10 storage runs, printing its"
                        + " results; nothing written (the results and the report go out whole or not at all)\n");
    }

    @Test
    void stoppedWhileWritingTheReport_publishesNoPage_andKeepsThePreviousReportWhole() throws IOException {
        Path report = dir.resolve("demo");
        Files.createDirectories(report);
        Files.writeString(report.resolve("index.html"), "the previous run's");
        Files.writeString(report.resolve("storage.html"), "the previous run's");
        StringWriter err = new StringWriter();
        StringWriter out = new StringWriter();
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(new PrintWriter(err, true), report, null)) {
            stopping.next(72, "simulated run");
            stopping.done(72);
            stopping.next(10, "storage run");
            stopping.done(10);
            stopping.during("printing its results");
            assertThat(stopping.publish("the results printed", () -> out.write("Summary")))
                    .isTrue();
            stopping.during("writing the report");
            Path pages = stopping.staging(report);
            Files.writeString(pages.resolve("index.html"), "this run's");

            stopping.stop();

            assertThat(stopping.publishReport(report)).isFalse();
            assertThat(pages).doesNotExist();
        }
        // Was: the demo ended without a word, its new index.html beside the previous run's storage.html.
        assertThat(err.toString())
                .isEqualTo("tailor: stopped after the 72 simulated runs and the 10 storage runs, writing the report;"
                        + " the results printed, no report written (its pages come all together)\n");
        assertThat(out.toString()).isEqualTo("Summary");
        assertThat(report.resolve("index.html")).hasContent("the previous run's");
        assertThat(report.resolve("storage.html")).hasContent("the previous run's");
        try (var files = Files.list(report)) {
            assertThat(files).hasSize(2);
        }
    }

    @Test
    void writeReport_putsThePagesInTogether_orNoneWhenTheirWritingFails() throws IOException {
        Path report = dir.resolve("report");
        Files.createDirectories(report);
        Files.writeString(report.resolve("index.html"), "the previous run's");
        try (ClusterRuns.Stopping stopping =
                ClusterRuns.Stopping.on(new PrintWriter(new StringWriter(), true), 1, report, null)) {
            stopping.done(1);
            Path written = stopping.writeReport(report, pages -> {
                Files.writeString(pages.resolve("plot.png"), "this run's");
                throw new java.nio.file.NoSuchFileException(
                        pages.resolve("index.html").toString());
            });
            assertThat(written).as("not reached").isNull();
        } catch (LabException e) {
            assertThat(e.exitCode()).isEqualTo(1);
            assertThat(e.getMessage())
                    .isEqualTo("cannot write the report to " + report + ": no such file or directory");
        }
        try (var files = Files.list(report)) {
            assertThat(files)
                    .as("no staging folder, no page of the failed run")
                    .containsExactly(report.resolve("index.html"));
        }
        StringWriter err = new StringWriter();
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(new PrintWriter(err, true), 1, report, null)) {
            stopping.done(1);
            stopping.during("writing the report");
            Path written =
                    stopping.writeReport(report, pages -> Files.writeString(pages.resolve("index.html"), "this run's"));
            assertThat(written).isEqualTo(report.resolve("index.html"));
            stopping.stop();
        }
        assertThat(report.resolve("index.html")).hasContent("this run's");
        assertThat(err.toString())
                .isEqualTo("tailor: stopped after the 1 run, writing the report; the report written\n");
    }

    @Test
    void aStopBeforeTheReport_leavesNoReportFolder_evenWhenTheCommandGoesOnToWriteIt() throws IOException {
        // The stop lands while the results are printed; the command's own thread goes on to the report while
        // the shutdown hook runs: the folder the command created, removed by the stop, must not come back.
        Path report = dir.resolve("new").resolve("report");
        StringWriter err = new StringWriter();
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(
                new PrintWriter(err, true), 1, report, ClusterRuns.Stopping.firstMissing(report))) {
            stopping.done(1);
            stopping.during("printing its results");
            stopping.stop();

            assertThat(stopping.writeReport(report, pages -> Files.writeString(pages.resolve("index.html"), "late")))
                    .isNull();
        }
        assertThat(dir.resolve("new")).doesNotExist();
    }

    @Test
    void publishedReport_movesEveryPageIn_andAStopAfterItSaysSo() throws IOException {
        Path report = dir.resolve("demo");
        StringWriter err = new StringWriter();
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(new PrintWriter(err, true), report, report)) {
            stopping.next(2, "simulated run");
            stopping.during("during the NBD experiments");
            stopping.during("writing the report");
            Path pages = stopping.staging(report);
            Files.writeString(pages.resolve("index.html"), "this run's");
            Files.writeString(pages.resolve("storage.html"), "this run's");

            assertThat(stopping.publishReport(report)).isTrue();
            stopping.stop();
        }
        assertThat(report.resolve("index.html")).hasContent("this run's");
        assertThat(report.resolve("storage.html")).hasContent("this run's");
        try (var files = Files.list(report)) {
            assertThat(files).hasSize(2); // the staging folder is gone
        }
        assertThat(err.toString())
                .isEqualTo("tailor: stopped after the 2 simulated runs, writing the report; the report written\n");
    }
}
