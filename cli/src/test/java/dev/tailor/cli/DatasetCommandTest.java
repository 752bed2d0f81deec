package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tailor.testkit.RenamedApp;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetCommandTest {

    @TempDir
    Path dir;

    @Test
    void help_nodes_saysHowManyEachRegionHas() {
        // Was "at most 18 per AWS region": US and AP have 17 AWS nodes in the ping data.
        String help = tailor("heart", "snapshot", "dataset", "--help").out().replaceAll("\\s+", " ");
        assertThat(help).contains("18 in EU, 17 in US and in AP").doesNotContain("at most 18 per AWS region");
    }

    @Test
    void snapshotDataset_outIsAFifo_writesIntoIt_andLeavesItAFifo() throws Exception {
        Path metrics = SharedData.require(DatasetOptions.METRICS);
        Path latency = SharedData.require(DatasetOptions.LATENCY);
        Path fifo = dir.resolve("snapshot.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor())
                .isZero();
        java.util.concurrent.CompletableFuture<String> read = new java.util.concurrent.CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                read.complete(Files.readString(fifo));
            } catch (IOException e) {
                read.completeExceptionally(e);
            }
        });
        reader.setDaemon(true); // blocks in open for ever if nothing opens the FIFO to write
        reader.start();
        PlanCommandTest.Result built = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                metrics.toString(),
                "--latency",
                latency.toString(),
                "--out",
                fifo.toString());
        assertThat(built.exitCode()).as(built.err()).isZero();
        // Was: a regular file renamed over the FIFO (over /dev/stdout or /dev/null alike), the reader left waiting.
        assertThat(fifo).exists();
        assertThat(Files.isRegularFile(fifo))
                .as("a regular file took the FIFO's place")
                .isFalse();
        assertThat(Json.MAPPER
                        .readTree(read.get(60, java.util.concurrent.TimeUnit.SECONDS))
                        .get("replicas")
                        .size())
                .isEqualTo(30);
    }

    @Test
    void snapshotThenPlan_realDataset_worksInAllThreeFormats() throws IOException {
        Path metrics = SharedData.require(DatasetOptions.METRICS);
        Path latency = SharedData.require(DatasetOptions.LATENCY);
        Path snapshot = dir.resolve("ob.json");
        PlanCommandTest.Result built = tailor(
                "heart",
                "snapshot",
                "onlineboutique",
                "--dataset",
                metrics.toString(),
                "--latency",
                latency.toString(),
                "--replicas",
                "3",
                "--nodes",
                "5",
                "--regions",
                "EU,EU,EU,US,US",
                "--out",
                snapshot.toString());
        // What the command is for: the real dataset becomes a snapshot that HEART plans.
        assertThat(built.exitCode()).as(built.err()).isZero();
        assertThat(built.err()).contains("note: ", "wrote");
        JsonNode doc = Json.MAPPER.readTree(snapshot.toFile());
        assertThat(doc.get("replicas").size()).isEqualTo(30);
        assertThat(doc.get("nodes").size()).isEqualTo(5);

        // The slow-link filter (off by default) prunes the cross-region links of callees planned the
        // paper's way.
        PlanCommandTest.Result table =
                tailor("heart", "plan", "--snapshot", snapshot.toString(), "--explain", "--slow-link-filter");
        assertThat(table.exitCode()).as(table.err()).isZero();
        assertThat(table.out()).contains("ingress -> frontend", "2-means on");

        PlanCommandTest.Result json =
                tailor("heart", "plan", "--snapshot", snapshot.toString(), "--format", "json", "--slow-link-filter");
        assertThat(json.exitCode()).isZero();
        JsonNode plan = Json.MAPPER.readTree(json.out());
        for (JsonNode route : plan.get("routes")) {
            double sum = 0;
            for (JsonNode f : route.get("to")) {
                sum += f.asDouble();
            }
            // Cross-region links (about 45 ms) once broke this through a JGraphT capacity bug.
            assertThat(sum).isCloseTo(1.0, within(1e-9));
        }
        assertThat(plan.get("prunedLinks").size()).isPositive();

        PlanCommandTest.Result istio = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--format", "istio");
        assertThat(istio.exitCode()).isZero();
        assertThat(istio.out()).contains("kind: DestinationRule", "eu-central-1/eu-central-1a/w1");
    }

    @Test
    void snapshot_badOption_exitsWith2_namingTheOption() {
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "onlineboutique",
                "--dataset",
                dir.toString(),
                "--latency",
                dir.resolve("none.gz").toString(),
                "--replicas",
                "0");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--replicas", "0", "expected");
    }

    @Test
    void snapshot_badListItem_namesTheOptionItemAndItsValueAsWritten() {
        for (String[] option : List.of(
                new String[] {"--regions", "EU,,US", "--regions[1]: \"\" (expected: one of [AP, EU, US])"},
                new String[] {"--regions", "EU,SA", "--regions[1]: \"SA\" (expected: one of [AP, EU, US])"},
                new String[] {"--node-speeds", "1,NaN", "--node-speeds[1]: NaN (expected: a finite speed > 0)"})) {
            PlanCommandTest.Result r = tailor(
                    "heart",
                    "snapshot",
                    "dataset",
                    "--dataset",
                    dir.toString(),
                    "--latency",
                    dir.resolve("none.gz").toString(),
                    option[0],
                    option[1]);
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.err()).contains("tailor: " + option[2]);
        }
    }

    @Test
    void snapshot_missingDataset_exitsWith2_namingThePath() {
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "onlineboutique",
                "--dataset",
                dir.resolve("absent").toString(),
                "--latency",
                dir.resolve("none.gz").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("absent");
    }

    @Test
    void snapshotDataset_entryWithoutSamples_blamesEntryOnlyWhenGiven() throws IOException {
        Path app = Files.createDirectories(dir.resolve("mini"));
        String header = "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n";
        Files.writeString(app.resolve("web-aaa-bbb_metric.csv"), header);
        Files.writeString(app.resolve("db-ccc-ddd_metric.csv"), header + "1660442148,db-ccc-ddd,10,5\n");
        Files.writeString(app.resolve("dependency.csv"), "Source,Target,Weight\nweb,db,1\n");
        String expected = "\"web\" has no samples in " + app + " (expected: at least one row in its metric file)";

        PlanCommandTest.Result found = tailor(
                "heart", "snapshot", "dataset", "--dataset", app.toString(), "--trace", "none", "--latency", latency());
        assertThat(found.exitCode()).isEqualTo(2);
        // The entry came from dependency.csv, not from an --entry the user never gave.
        assertThat(found.err()).contains("tailor: --dataset: entry component " + expected);

        PlanCommandTest.Result given = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                app.toString(),
                "--trace",
                "none",
                "--entry",
                "web",
                "--latency",
                latency());
        assertThat(given.exitCode()).isEqualTo(2);
        assertThat(given.err()).contains("tailor: --entry: " + expected);
    }

    @Test
    void simulateDataset_callsInACycle_exit2NamingTheOptionAndDependencyCsv() throws IOException {
        Path app = Files.createDirectories(dir.resolve("cyclic"));
        String header = "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n";
        for (String pod : List.of("web-aaa-bbb", "db-ccc-ddd", "aa-eee-fff")) {
            Files.writeString(app.resolve(pod + "_metric.csv"), header + "1660442148," + pod + ",10,5\n");
        }
        Files.writeString(app.resolve("dependency.csv"), "Source,Target,Weight\nweb,db,1\ndb,aa,1\naa,db,1\n");

        PlanCommandTest.Result r = tailor(
                "heart",
                "simulate",
                "--dataset",
                app.toString(),
                "--trace",
                "none",
                "--entry",
                "web",
                "--latency",
                latency(),
                "--policies",
                "heart");
        assertThat(r.exitCode()).isEqualTo(2);
        // Was "tailor: cyclic: the calls form a cycle ...": neither the option nor the file.
        assertThat(r.err())
                .endsWith("tailor: --dataset: " + app.resolve("dependency.csv") + ": the calls form a cycle"
                        + " db -> aa -> db (expected: a call graph without cycles, as the simulator needs)\n");
        assertThat(r.out()).isEmpty();
    }

    // --- any application in the TraStrainer layout: the renamed second application ---

    private Path renamedApp() throws IOException {
        return RenamedApp.write(dir.resolve("shop"));
    }

    private static String latency() {
        return SharedData.require(RenamedApp.LATENCY).toString();
    }

    @Test
    void snapshotDataset_renamedApp_findsTheEntryFromTheTraceAndHeartPlansIt() throws IOException {
        Path app = renamedApp();
        Path snapshot = Files.writeString(dir.resolve("shop.json"), "an older snapshot");
        PlanCommandTest.Result built = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                app.toString(),
                "--latency",
                latency(),
                "--out",
                snapshot.toString());

        assertThat(built.exitCode()).as(built.err()).isZero();
        // No entry given and no component called frontend: it comes from the trace's root spans, and says so.
        assertThat(built.err())
                .contains(
                        "note: entry component web-gateway, found from the trace",
                        "note: call mix from " + app.resolve(RenamedApp.SPANS),
                        "the folder's only CSV with the span columns",
                        "sampling period 60 s");
        assertThat(built.err()).doesNotContain("frontend");
        // An existing file is replaced.
        JsonNode doc = Json.MAPPER.readTree(snapshot.toFile());
        assertThat(doc.get("replicas").size()).isEqualTo(27); // 9 metered components x 3 replicas
        assertThat(doc.get("windowSeconds").asDouble()).isEqualTo(60.0);
        JsonNode ingress = doc.get("calls").get(0);
        assertThat(ingress.get("caller").asText()).isEqualTo("ingress");
        assertThat(ingress.get("callee").asText()).isEqualTo("web-gateway");
        assertThat(ingress.get("requestsPerSecond").asDouble()).isCloseTo(10.2, within(1e-9));

        PlanCommandTest.Result plan = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--explain");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        assertThat(plan.out()).contains("ingress -> web-gateway", "web-gateway -> catalog");

        // An --out in a folder that does not exist: exit 2, naming the option.
        Path nowhere = dir.resolve("no-such-folder").resolve("shop.json");
        PlanCommandTest.Result refused = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                app.toString(),
                "--latency",
                latency(),
                "--out",
                nowhere.toString());
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.err()).contains("--out: cannot write " + nowhere + ": folder " + nowhere.getParent());
    }

    // --- --out, checked before the data is read: each refusal names the option, echoes the value, says why
    // and what is expected, and exits 2 ---

    /** {@code tailor heart snapshot dataset --dataset <none> --out out}: the error is about --out, so it came first. */
    private PlanCommandTest.Result snapshotTo(String out) {
        return tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                dir.resolve("no-such-dataset").toString(),
                "--out",
                out);
    }

    private static void assertRefused(PlanCommandTest.Result result, String message) {
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err()).isEqualTo("tailor: " + message + "\n");
        assertThat(result.out()).isEmpty();
    }

    private static final String EXPECTED = "(expected: a file in an existing folder where files can be created)";

    @Test
    void snapshotDataset_outInAFolderThatDoesNotExist_isRefusedBeforeTheDataIsRead() {
        Path out = dir.resolve("missing").resolve("ob.json");
        assertRefused(
                snapshotTo(out.toString()),
                "--out: cannot write " + out + ": folder " + out.getParent() + " does not exist " + EXPECTED);
        assertThat(out.getParent()).doesNotExist();
    }

    @Test
    void snapshotDataset_outUnderAFile_saysTheFileIsNotAFolder() throws IOException {
        // Was: "folder ... does not exist", of a file that exists.
        Path file = Files.writeString(dir.resolve("notes.txt"), "kept");
        Path out = file.resolve("ob.json");
        assertRefused(
                snapshotTo(out.toString()),
                "--out: cannot write " + out + ": " + file + " is a file, not a folder " + EXPECTED);
        assertThat(file).hasContent("kept");
    }

    @Test
    void snapshotDataset_outIsAnExistingFolder_isRefused() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("ob.json"));
        assertRefused(snapshotTo(folder.toString()), "--out: cannot write " + folder + ": is a directory " + EXPECTED);
        assertThat(folder).isEmptyDirectory();
    }

    @Test
    void snapshotDataset_outInAFolderThatTakesNoFile_saysWhy() {
        // Linux's /proc takes no new file, whoever asks (root too). Was: "permission denied" or "no such file or
        // directory" alone, after the whole dataset had been read.
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc here");
        assertRefused(
                snapshotTo("/proc/ob.json"),
                "--out: cannot write /proc/ob.json: no file can be created in /proc (no such file or directory;"
                        + " expected: a file in an existing folder where files can be created)");
    }

    @Test
    void snapshotDataset_outEmpty_isRefused() {
        // Was: "cannot write : is a directory".
        assertRefused(snapshotTo(""), "--out: empty (expected: a file name)");
    }

    @Test
    void snapshotDataset_explicitEntryAndTrace_areUsedAndNoted() throws IOException {
        Path app = renamedApp();
        Path trace = dir.resolve("elsewhere.csv");
        Files.move(app.resolve(RenamedApp.SPANS), trace);
        PlanCommandTest.Result built = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                app.toString(),
                "--latency",
                latency(),
                "--trace",
                trace.toString(),
                "--entry",
                "web-gateway");

        assertThat(built.exitCode()).as(built.err()).isZero();
        assertThat(built.err())
                .contains("note: entry component web-gateway, as given", "note: call mix from " + trace + " (as given");
    }

    @Test
    void snapshotDataset_entryNotInTheGraph_exitsWith2_namingTheOptionAndValue() throws IOException {
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                renamedApp().toString(),
                "--latency",
                latency(),
                "--entry",
                "frontend");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--entry: \"frontend\"", "expected one of", "web-gateway");
    }

    @Test
    void snapshotDataset_spanCsvWithoutPodName_exitsWith2_namingTheOptionAndColumn() throws IOException {
        Path trace = dir.resolve("spans.csv");
        Files.writeString(trace, "TraceID,SpanID,ParentID,ServiceName\nt1,s1,root,web\n");
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                renamedApp().toString(),
                "--latency",
                latency(),
                "--trace",
                trace.toString());

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--trace: " + trace, "column PodName: missing from the header");
    }

    @Test
    void snapshotDataset_folderWithoutMetricFiles_exitsWith2_namingTheOptionAndFolder() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                empty.toString(),
                "--latency",
                dir.resolve("none.gz").toString());

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--dataset: " + empty, "no <pod>_metric.csv files");
    }

    @Test
    void snapshotDataset_theDatasetFolderAboveTheDay_namesTheSubFolderThatHasTheMetrics() {
        Path above = SharedData.require(RenamedApp.METRICS).getParent();
        PlanCommandTest.Result r =
                tailor("heart", "snapshot", "dataset", "--dataset", above.toString(), "--latency", latency());

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .contains("--dataset: " + above + ": no <pod>_metric.csv files; its sub-folder"
                        + " normal_2022-08-14 has them");
    }

    @Test
    void snapshotDataset_missingFolder_exitsWith2_namingTheOptionAndValue() {
        Path absent = dir.resolve("absent");
        PlanCommandTest.Result r = tailor(
                "heart",
                "snapshot",
                "dataset",
                "--dataset",
                absent.toString(),
                "--latency",
                dir.resolve("none.gz").toString());

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--dataset: " + absent + ": no such folder", "expected");
    }

    @Test
    void snapshotDataset_twoSpanCsvsAndNoTrace_exitsWith2_askingWhichOne() throws IOException {
        Path app = renamedApp();
        Files.copy(app.resolve(RenamedApp.SPANS), app.resolve("more-spans.csv"));
        PlanCommandTest.Result r =
                tailor("heart", "snapshot", "dataset", "--dataset", app.toString(), "--latency", latency());

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--trace: not given", "2 span CSVs", RenamedApp.SPANS, "more-spans.csv");
    }
}
