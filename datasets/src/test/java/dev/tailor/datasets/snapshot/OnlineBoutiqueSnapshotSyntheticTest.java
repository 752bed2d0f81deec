package dev.tailor.datasets.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.datasets.DataFileException;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Minute;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Options;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Result;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Call;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The builder on a tiny made-up application: front (entry) calls cat, cart, pay and idle; cart
 * calls cat. At the one minute: front 6 req/s at 60 m, cat 4 req/s at 8 m, cart 2 req/s with no CPU
 * data, pay with no request data, idle 0 req/s.
 */
class OnlineBoutiqueSnapshotSyntheticTest {

    @TempDir
    Path tmp;

    Path metrics;
    Path pings;

    private static void metricFile(Path dir, String pod, String cpuMillicores, String requestsPerSecond)
            throws IOException {
        Files.writeString(
                dir.resolve(pod + "_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n"
                        + "1000," + pod + ",1,1\n"
                        + "1060," + pod + "," + cpuMillicores + "," + requestsPerSecond + "\n");
    }

    @BeforeEach
    void writeData() throws IOException {
        metrics = Files.createDirectories(tmp.resolve("app").resolve("day"));
        metricFile(metrics, "front-1-a", "60", "6");
        metricFile(metrics, "cat-1-a", "8", "4");
        metricFile(metrics, "cart-1-a", "NaN", "2");
        metricFile(metrics, "pay-1-a", "3", "NaN");
        metricFile(metrics, "idle-1-a", "1", "0");
        Files.writeString(
                metrics.resolve("dependency.csv"),
                "Source,Target,Weight\n"
                        + "front,cat,1\ncart,cat,1\nfront,cart,1\nfront,pay,1\nfront,idle,1\nfront,db,1\ncat,front,1\n"
                        + "front,10.0.0.1,1\n");
        pings = tmp.resolve("pings.csv.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(pings))) {
            out.write(("source,dest,size,time,source_region,dest_region\n"
                            + "e-1,e-2,64,0.2,EU,EU\ne-1,e-2,64,0.4,EU,EU\ne-2,e-3,64,0.5,EU,EU\n"
                            + "e-1,u-1,64,90,EU,US\na-1,a-2,64,0.3,AP,AP\n")
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    private Options options() {
        return Options.defaults(metrics).toBuilder()
                .latencyFile(pings)
                .entryComponent("front")
                .nodes(3)
                .replicasPerComponent(2)
                .minute(Minute.index(1))
                .build();
    }

    private static List<Replica> replicasOf(Snapshot s, String component) {
        return s.replicas().stream()
                .filter(r -> r.component().equals(component))
                .toList();
    }

    private static double rate(Snapshot s, String caller, String callee) {
        return s.calls().stream()
                .filter(c -> c.caller().equals(caller) && c.callee().equals(callee))
                .mapToDouble(Call::requestsPerSecond)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no call " + caller + " -> " + callee));
    }

    @Test
    void build_gapsInTheData_keepReplicasWithNoDataAndPassTheValidator() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(options());
        Snapshot s = result.snapshot();

        assertThat(SnapshotValidator.validate(s)).isEmpty();
        assertThat(replicasOf(s, "idle")).hasSize(2).allSatisfy(r -> {
            assertThat(r.requestsPerSecond()).isEqualTo(0.0);
            assertThat(r.cpuCores()).isNull();
        });
        assertThat(replicasOf(s, "pay")).hasSize(2).allSatisfy(r -> {
            assertThat(r.requestsPerSecond()).isNull();
            assertThat(r.cpuCores()).isNull();
        });
        assertThat(replicasOf(s, "cart")).hasSize(2).allSatisfy(r -> {
            assertThat(r.requestsPerSecond()).isEqualTo(1.0);
            assertThat(r.cpuCores()).isNull();
        });
        assertThat(result.notes()).anyMatch(n -> n.contains("λ = 0") && n.contains("[idle]"));
        assertThat(result.notes()).anyMatch(n -> n.contains("no request rate") && n.contains("pay"));
        assertThat(result.notes()).anyMatch(n -> n.contains("no CPU data") && n.contains("[cart]"));
        new Heart(HeartConfig.DEFAULTS).plan(s, AtpmState.EMPTY);
    }

    @Test
    void build_cpu_isTheBaseCostOverTheNodeSpeed() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(options()).snapshot();

        // cat is component 1 of [cart, cat, front, idle, pay]: nodes 1, 2 = w2 (0.9), w3 (0.7).
        List<Replica> cat = replicasOf(s, "cat");
        assertThat(cat).extracting(Replica::node).containsExactly("w2", "w3");
        assertThat(cat.get(0).cpuCores()).isCloseTo(2 * (8.0 / 1000 / 4) / 0.9, within(1e-15));
        assertThat(cat.get(1).cpuCores()).isCloseTo(2 * (8.0 / 1000 / 4) / 0.7, within(1e-15));
    }

    @Test
    void build_noTraceFile_splitsEquallyAndLeavesOutUnmeteredEntryAndSelfEdges() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(options());
        Snapshot s = result.snapshot();

        assertThat(s.calls())
                .extracting(c -> c.caller() + ">" + c.callee())
                .containsExactly("ingress>front", "cart>cat", "front>cart", "front>cat", "front>idle", "front>pay");
        assertThat(rate(s, "ingress", "front")).isEqualTo(6);
        assertThat(rate(s, "front", "cat")).isEqualTo(2);
        assertThat(rate(s, "cart", "cat")).isEqualTo(2);
        assertThat(rate(s, "front", "cart")).isEqualTo(2);
        assertThat(rate(s, "front", "idle")).isZero();
        assertThat(rate(s, "front", "pay")).isZero();
        assertThat(result.notes()).anyMatch(n -> n.contains("no trace file") && n.contains("split equally"));
        assertThat(result.notes()).anyMatch(n -> n.contains("no metrics") && n.contains("front -> db"));
        assertThat(result.notes()).anyMatch(n -> n.contains("into the entry component") && n.contains("cat -> front"));
    }

    @Test
    void build_traceFile_splitsByCountsAndEqualWhereNoneOfACalleesEdgesAppear() throws IOException {
        Path trace = tmp.resolve("trace.csv");
        Files.writeString(
                trace,
                "TraceID,SpanID,ParentID,PodName\n"
                        + "t,1,root,front-9-z\nt,2,1,front-9-z\n"
                        + "t,3,2,cat-9-z\nt,4,2,cat-9-z\nt,5,2,cat-9-z\n" // front -> cat: 3
                        + "t,6,2,cart-9-z\nt,7,6,cat-9-z\n" // front -> cart: 1, cart -> cat: 1
                        + "t,8,3,pay-9-z\n"); // cat -> pay: not in dependency.csv
        Result result = OnlineBoutiqueSnapshot.build(
                options().toBuilder().traceFile(trace).useTrace(true).build());
        Snapshot s = result.snapshot();

        // cat: front 3, cart 1 -> 4 req/s split 3:1. cart: front 1 -> all of 2. pay: front 0 of 0 -> equal.
        assertThat(rate(s, "front", "cat")).isCloseTo(3, within(1e-12));
        assertThat(rate(s, "cart", "cat")).isCloseTo(1, within(1e-12));
        assertThat(rate(s, "front", "cart")).isCloseTo(2, within(1e-12));
        assertThat(result.notes())
                .anyMatch(n ->
                        n.contains("none of whose edges are in the trace") && n.contains("idle") && n.contains("pay"));
        assertThat(result.notes())
                .anyMatch(n -> n.contains("trace edges not among the calls") && n.contains("cat -> pay (1)"));
    }

    @Test
    void build_delays_measuredEitherDirectionElseRegionMedianHalved() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                options().toBuilder().sameNodeDelayMillis(0.01).build());
        Snapshot s = result.snapshot();

        assertThat(s.delays()).hasSize(9);
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals(d.to()))
                .allSatisfy(d -> assertThat(d.millis()).isEqualTo(0.01));
        // w1 = e-1, w2 = e-2, w3 = e-3. e-1 -> e-2 median 0.3; e-2 -> e-3 0.5; e-1 / e-3 never: EU median 0.4.
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals("w1") && d.to().equals("w2"))
                .singleElement()
                .satisfies(d -> assertThat(d.millis()).isCloseTo(0.15, within(1e-12)));
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals("w2") && d.to().equals("w1"))
                .singleElement()
                .satisfies(d -> assertThat(d.millis()).isCloseTo(0.15, within(1e-12)));
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals("w3") && d.to().equals("w2"))
                .singleElement()
                .satisfies(d -> assertThat(d.millis()).isCloseTo(0.25, within(1e-12)));
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals("w1") && d.to().equals("w3"))
                .singleElement()
                .satisfies(d -> assertThat(d.millis()).isCloseTo(0.2, within(1e-12)));
        assertThat(result.notes())
                .anyMatch(n -> n.contains("4 of 6 ordered node pairs were pinged") && n.contains("2 were not"));
    }

    @Test
    void build_regionOutOfAwsNodes_failsNamingRegionCountAndFile() {
        // u-1 is the only US node: EU,US,US would need a second one for w3.
        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(
                        options().toBuilder().regions(List.of("EU", "US", "US")).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region US has 1 AWS node(s) in " + pings)
                .hasMessageContaining("w3")
                // Was "would be its 2th (expected: at most 1 nodes in US".
                .hasMessageContaining("node w3 would be its 2nd (expected: at most 1 node(s) in US;");
    }

    @Test
    void ordinal_isEnglish() {
        assertThat(List.of(1, 2, 3, 4, 11, 12, 13, 19, 21, 22, 23, 101, 111, 112))
                .extracting(OnlineBoutiqueSnapshot::ordinal)
                .containsExactly(
                        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "19th", "21st", "22nd", "23rd", "101st",
                        "111th", "112th");
    }

    @Test
    void build_regionPairNeverPinged_failsNamingTheFileAndRegions() {
        // w1 = e-1 (EU), w2 = a-1 (AP): neither that pair nor any EU/AP pair was pinged.
        Options o = options().toBuilder().nodes(2).regions(List.of("EU", "AP")).build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(o))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(pings + ": no measured pair between regions EU and AP");
    }

    @Test
    void build_explicitTraceFileMissing_namesIt() {
        Path missing = tmp.resolve("nope.csv");

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(
                        options().toBuilder().traceFile(missing).useTrace(true).build()))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(missing + ": no such file");
    }

    @Test
    void build_defaultLatencyFileMissing_namesWhereItLooked() {
        Options o =
                Options.defaults(metrics).toBuilder().entryComponent("front").build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(o))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("latency.csv.gz: no such file");
    }

    @Test
    void build_busiestMinuteWithoutAnyEntryWorkload_saysSo() throws IOException {
        Files.writeString(
                metrics.resolve("front-1-a_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n1000,front-1-a,1,NaN\n");

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(
                        options().toBuilder().minute(Minute.BUSIEST).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minute : busiest")
                .hasMessageContaining("no PodWorkload(Ops) data");
    }

    // --- what the folder does not say: the trace, the entry component, the sampling period ---

    @Test
    void build_noEntryGiven_takesTheMeteredComponentWithTheMostRootSpans() throws IOException {
        // Found in the folder by its columns, whatever its name; lb has the most roots but no metrics.
        Files.writeString(
                metrics.resolve("spans-of-tuesday.csv"),
                "TraceID,SpanID,ParentID,PodName,Duration\n"
                        + "t1,1,root,front-9-z,5\nt1,2,1,cat-9-z,1\nt2,1,,front-9-z,5\nt3,1,root,cat-9-z,1\n"
                        + "t4,1,root,lb-9-z,1\nt5,1,root,lb-9-z,1\nt6,1,root,lb-9-z,1\n");
        Files.writeString(metrics.resolve("front_service.csv"), "TimeStamp,ServiceName,LatencyP50(s)\n1000,F,0.1\n");
        Result result = OnlineBoutiqueSnapshot.build(
                options().toBuilder().entryComponent(null).build());

        assertThat(result.entryComponent()).isEqualTo("front");
        assertThat(result.snapshot().calls().get(0).callee()).isEqualTo("front");
        assertThat(result.notes())
                .anyMatch(n -> n.contains("call mix from " + metrics.resolve("spans-of-tuesday.csv"))
                        && n.contains("the folder's only CSV with the span columns"));
        assertThat(result.notes())
                .anyMatch(n -> n.startsWith("entry component front, found from the trace")
                        && n.contains("2 of its 6 root spans")
                        && n.contains("not candidates: [lb]"));
    }

    @Test
    void build_noEntryNoTrace_takesTheOnlyComponentNoOtherOneCalls() throws IOException {
        Files.writeString(
                metrics.resolve("dependency.csv"),
                "Source,Target,Weight\n"
                        + "front,cat,1\ncart,cat,1\nfront,cart,1\nfront,pay,1\nfront,idle,1\nlb,front,1\nfront,front,1\n");
        Result result = OnlineBoutiqueSnapshot.build(
                options().toBuilder().entryComponent(null).build());

        assertThat(result.entryComponent()).isEqualTo("front");
        assertThat(result.notes())
                .anyMatch(n ->
                        n.startsWith("entry component front, found from dependency.csv") && n.contains("no trace"));
    }

    @Test
    void build_noEntryAndEveryComponentCalled_failsNamingTheFieldAndTheCandidates() {
        // cat -> front in dependency.csv: no metered component is left uncalled.
        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(
                        options().toBuilder().entryComponent(null).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("entryComponent : not given, and no trace")
                .hasMessageContaining("leaves no component uncalled")
                .hasMessageContaining("expected: the entry component named, one of [cart, cat, front, idle, pay]");
    }

    @Test
    void build_twoSpanCsvsInTheFolderAndNoTraceGiven_failsNamingBoth() throws IOException {
        String spans = "TraceID,SpanID,ParentID,PodName\nt,1,root,front-9-z\n";
        Files.writeString(metrics.resolve("a.csv"), spans);
        Files.writeString(metrics.resolve("b.csv"), spans);

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(options()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("traceFile : not given, and " + metrics + " has 2 span CSVs [a.csv, b.csv]");
        // Naming one settles it.
        assertThat(OnlineBoutiqueSnapshot.build(options().toBuilder()
                                .traceFile(metrics.resolve("b.csv"))
                                .useTrace(true)
                                .build())
                        .notes())
                .anyMatch(n -> n.contains("call mix from " + metrics.resolve("b.csv") + " (as given"));
    }

    @Test
    void build_thirtySecondSamples_windowAndMatchingFollowTheData() throws IOException {
        Path fast = Files.createDirectories(tmp.resolve("fast"));
        Files.writeString(
                fast.resolve("front-1-a_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n"
                        + "1000,front-1-a,10,5\n1030,front-1-a,20,10\n1060,front-1-a,10,5\n");
        // 14 s off is the same sample (within 15 s), 16 s off is not.
        Files.writeString(
                fast.resolve("near-1-a_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n" + "1016,near-1-a,4,2\n1046,near-1-a,6,3\n");
        Files.writeString(
                fast.resolve("far-1-a_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n" + "1046,far-1-a,4,2\n1076,far-1-a,6,3\n");
        Files.writeString(fast.resolve("dependency.csv"), "Source,Target,Weight\nfront,near,1\nfront,far,1\n");
        Result result = OnlineBoutiqueSnapshot.build(Options.defaults(fast).toBuilder()
                .latencyFile(pings)
                .nodes(2)
                .replicasPerComponent(1)
                .build());

        assertThat(result.snapshot().windowSeconds()).isEqualTo(30.0);
        assertThat(rate(result.snapshot(), "ingress", "front")).isEqualTo(10); // busiest, at 1030
        assertThat(rate(result.snapshot(), "front", "near")).isEqualTo(2); // its 1016 sample
        assertThat(rate(result.snapshot(), "front", "far")).isZero(); // 1046 is 16 s away
        assertThat(result.notes()).anyMatch(n -> n.startsWith("sampling period 30 s") && n.contains("within 15 s"));
        assertThat(result.notes())
                .anyMatch(n -> n.contains("no request rate") && n.contains("far (no sample within" + " 15 s)"));
    }
}
