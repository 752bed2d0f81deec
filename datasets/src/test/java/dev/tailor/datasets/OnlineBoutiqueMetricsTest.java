package dev.tailor.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.datasets.OnlineBoutiqueMetrics.ComponentSeries;
import dev.tailor.datasets.OnlineBoutiqueMetrics.Sample;
import dev.tailor.datasets.OnlineBoutiqueMetrics.ServiceEdge;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OnlineBoutiqueMetricsTest {

    static final String NORMAL_DAY = "microservices/trastrainer_onlineboutique/normal_2022-08-14";

    /** The columns of the dataset's metric files, in its order (PROVENANCE.md 2.1). */
    static final String HEADER = "Time,TimeStamp,PodName,CpuUsage(m),CpuUsageRate(%),MemoryUsage(Mi),"
            + "MemoryUsageRate(%),SyscallRead,SyscallWrite,NetworkReceiveBytes,NetworkTransmitBytes,"
            + "PodClientLatencyP90(s),PodServerLatencyP90(s),PodClientLatencyP95(s),PodServerLatencyP95(s),"
            + "PodClientLatencyP99(s),PodServerLatencyP99(s),PodWorkload(Ops),PodSuccessRate(%),"
            + "NodeCpuUsageRate(%),NodeMemoryUsageRate(%),NodeNetworkReceiveBytes";

    @TempDir
    Path dir;

    /** A row of the dataset's format with the given time, pod, CPU (m) and workload (req/s). */
    static String row(long unixSeconds, String pod, String cpuMillicores, String requestsPerSecond) {
        return "2022-08-14 01:55:48 +0000 UTC," + unixSeconds + "," + pod + "," + cpuMillicores
                + ",53,82,64,0,0,30821,301341,0.05,0.48,0.09,0.76,0.23,1.6," + requestsPerSecond + ",0,10.7,14.8,32284";
    }

    static void writeMetrics(Path dir, String pod, String... rows) throws IOException {
        Files.writeString(dir.resolve(pod + "_metric.csv"), HEADER + "\n" + String.join("\n", rows) + "\n");
    }

    static void writeDependency(Path dir, String... rows) throws IOException {
        Files.writeString(dir.resolve("dependency.csv"), "Source,Target,Weight\n" + String.join("\n", rows) + "\n");
    }

    // --- the real dataset ---

    @Test
    void read_normalDay_findsTenComponentsOf1325SamplesEach() throws IOException {
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY));

        assertThat(m.components())
                .containsExactly(
                        "adservice",
                        "cartservice",
                        "checkoutservice",
                        "currencyservice",
                        "emailservice",
                        "frontend",
                        "paymentservice",
                        "productcatalogservice",
                        "recommendationservice",
                        "shippingservice");
        assertThat(m.series().values()).allSatisfy(s -> assertThat(s.samples()).hasSize(1325));
        assertThat(m.podsByComponent().get("frontend"))
                .singleElement()
                .satisfies(p -> assertThat(p.pod()).isEqualTo("frontend-579b9bff58-svcgr"));
    }

    @Test
    void read_normalDay_firstFrontendSampleHasTheFilesValues() throws IOException {
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY));

        Sample first = m.series("frontend").samples().get(0);
        assertThat(first.unixSeconds()).isEqualTo(1_660_442_148L);
        assertThat(first.cpuMillicores()).isCloseTo(10.629833372798068, within(1e-12));
        assertThat(first.requestsPerSecond()).isCloseTo(7.733333333333333, within(1e-12));
    }

    @Test
    void read_normalDay_frontendWorkloadPeaksAt10point2RequestsPerSecondInSample821() throws IOException {
        ComponentSeries frontend =
                OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY)).series("frontend");

        Sample peak = frontend.samples().stream()
                .max(java.util.Comparator.comparingDouble(Sample::requestsPerSecond))
                .orElseThrow();
        assertThat(peak.requestsPerSecond()).isCloseTo(10.2, within(1e-9));
        assertThat(frontend.samples().indexOf(peak)).isEqualTo(821);
        assertThat(peak.unixSeconds()).isEqualTo(1_660_491_408L);
    }

    @Test
    void read_normalDay_has18DistinctServiceEdgesAndPlacementOnSixNodes() throws IOException {
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY));

        assertThat(m.serviceEdges())
                .hasSize(18)
                .contains(
                        new ServiceEdge("frontend", "productcatalogservice", 1),
                        new ServiceEdge("checkoutservice", "currencyservice", 1),
                        new ServiceEdge("cartservice", "redis-cart", 1));
        assertThat(m.serviceEdges()).noneMatch(e -> OnlineBoutiqueMetrics.isIpv4(e.target()));
        assertThat(m.placement()).hasSize(13);
        assertThat(m.placement().get("frontend")).containsExactly("33.33.33.79");
        assertThat(m.placement().get("loadgenerator")).containsExactly("33.33.33.79");
        assertThat(m.placement().values().stream().flatMap(Set::stream).distinct())
                .hasSize(6);
    }

    // --- tiny synthetic directories ---

    @Test
    void componentOf_deploymentPodName_dropsTheLastTwoParts() {
        assertThat(OnlineBoutiqueMetrics.componentOf("frontend-579b9bff58-svcgr"))
                .isEqualTo("frontend");
        assertThat(OnlineBoutiqueMetrics.componentOf("redis-cart-5b6f47b748-abcde"))
                .isEqualTo("redis-cart");
    }

    @Test
    void componentOf_fewerThanThreeParts_isRejectedNamingThePod() {
        assertThatThrownBy(() -> OnlineBoutiqueMetrics.componentOf("frontend-579b9bff58"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"frontend-579b9bff58\"");
    }

    @Test
    void isIpv4_addressesAndServiceNames_areToldApart() {
        assertThat(OnlineBoutiqueMetrics.isIpv4("33.33.33.227")).isTrue();
        assertThat(OnlineBoutiqueMetrics.isIpv4("mysql")).isFalse();
        assertThat(OnlineBoutiqueMetrics.isIpv4("33.33.33.256")).isFalse();
        assertThat(OnlineBoutiqueMetrics.isIpv4("33.33.33")).isFalse();
    }

    @Test
    void read_columnsInAnotherOrder_findsThemByHeaderName() throws IOException {
        Files.writeString(
                dir.resolve("my-svc-abc12-x1y2z_metric.csv"),
                "PodWorkload(Ops),Other,CpuUsage(m),PodName,TimeStamp\n"
                        + "4.5,x,9.0,my-svc-abc12-x1y2z,100\n"
                        + "5.5,y,11.0,my-svc-abc12-x1y2z,160\n");
        writeDependency(dir);

        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(dir);

        assertThat(m.components()).containsExactly("my-svc");
        assertThat(m.series("my-svc").samples()).containsExactly(new Sample(100, 9.0, 4.5), new Sample(160, 11.0, 5.5));
    }

    @Test
    void read_nanAndEmptyCells_areNoDataNotZero() throws IOException {
        writeMetrics(
                dir,
                "a-1-1",
                row(100, "a-1-1", "NaN", "3"),
                row(160, "a-1-1", "5", ""),
                row(220, "a-1-1", "nan", "inf"));
        writeDependency(dir);

        List<Sample> samples = OnlineBoutiqueMetrics.read(dir).series("a").samples();

        assertThat(samples)
                .containsExactly(new Sample(100, null, 3.0), new Sample(160, 5.0, null), new Sample(220, null, null));
    }

    @Test
    void read_nonNumericCpu_namesFileLineColumnValueAndExpectation() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"), row(160, "a-1-1", "abc", "1"));
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("a-1-1_metric.csv line 3, column CpuUsage(m): \"abc\" (expected: a number")
                .satisfies(e -> {
                    DataFileException d = (DataFileException) e;
                    assertThat(d.line()).isEqualTo(3);
                    assertThat(d.column()).isEqualTo("CpuUsage(m)");
                    assertThat(d.value()).isEqualTo("abc");
                });
    }

    @Test
    void read_negativeWorkload_isRejectedNamingTheCell() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "-2"));
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("line 2, column PodWorkload(Ops): \"-2\"")
                .hasMessageContaining(">= 0");
    }

    @Test
    void read_hexOrSuffixedNumber_isNotTakenForANumber() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1.5d", "1"));
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("column CpuUsage(m): \"1.5d\"");
    }

    @Test
    void read_missingWorkloadColumn_namesFileAndColumn() throws IOException {
        Files.writeString(dir.resolve("a-1-1_metric.csv"), "TimeStamp,PodName,CpuUsage(m)\n100,a-1-1,1\n");
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("a-1-1_metric.csv line 1, column PodWorkload(Ops): missing from the header");
    }

    @Test
    void read_rowWithTooFewFields_namesTheLineAndTheWidth() throws IOException {
        Files.writeString(
                dir.resolve("a-1-1_metric.csv"),
                "TimeStamp,PodName,CpuUsage(m),PodWorkload(Ops)\n100,a-1-1,1,1\n160,a-1-1,1\n");
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("a-1-1_metric.csv line 3: 3 fields (expected: 4 fields");
    }

    @Test
    void read_podNameDifferentFromTheFileName_namesLineAndValue() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"), row(160, "b-2-2", "1", "1"));
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("line 3, column PodName: \"b-2-2\" (expected: \"a-1-1\"");
    }

    @Test
    void read_timestampsNotIncreasing_namesTheLine() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"), row(100, "a-1-1", "1", "1"));
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("line 3, column TimeStamp: \"100\"");
    }

    @Test
    void read_missingDependencyFile_namesIt() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"));

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(dir.resolve("dependency.csv") + ": no such file");
    }

    @Test
    void read_missingDirectory_namesIt() {
        Path missing = dir.resolve("nope");

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(missing))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(missing + ": no such directory");
    }

    @Test
    void read_directoryWithoutMetricFiles_saysSo() throws IOException {
        writeDependency(dir);

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("no <pod>_metric.csv files (expected: ");
    }

    @Test
    void read_metricFilesOnlyInSubFolders_namesThoseSubFolders() throws IOException {
        writeMetrics(Files.createDirectories(dir.resolve("normal_2022-08-14")), "a-1-1", row(100, "a-1-1", "1", "1"));
        writeMetrics(Files.createDirectories(dir.resolve("faulty_2022-08-22")), "a-1-1", row(100, "a-1-1", "1", "1"));
        Files.createDirectories(dir.resolve("empty"));

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(dir + ": no <pod>_metric.csv files; its sub-folders faulty_2022-08-22,"
                        + " normal_2022-08-14 have them (expected: ");
    }

    @Test
    void read_dependencyRows_ipTargetsArePlacementOthersAreEdgesCountedOnce() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"));
        writeDependency(dir, "a,b,1", "a,10.0.0.1,1", "a,b,1", "b,10.0.0.2,1", "b,10.0.0.1,1", "b,c,2");

        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(dir);

        assertThat(m.serviceEdges()).containsExactly(new ServiceEdge("a", "b", 1), new ServiceEdge("b", "c", 2));
        assertThat(m.placement()).isEqualTo(Map.of("a", Set.of("10.0.0.1"), "b", Set.of("10.0.0.1", "10.0.0.2")));
    }

    @Test
    void read_badDependencyWeight_namesLineAndColumn() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"));
        writeDependency(dir, "a,b,1", "a,c,heavy");

        assertThatThrownBy(() -> OnlineBoutiqueMetrics.read(dir))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("dependency.csv line 3, column Weight: \"heavy\" (expected: a number)");
    }

    @Test
    void read_twoPodsOfOneComponent_sumsThemPerMinuteAndMissingInOneIsNoData() throws IOException {
        writeMetrics(
                dir, "a-1-x", row(100, "a-1-x", "10", "2"), row(160, "a-1-x", "10", "2"), row(220, "a-1-x", "10", "2"));
        writeMetrics(dir, "a-1-y", row(101, "a-1-y", "5", "1"), row(161, "a-1-y", "NaN", "1"));
        writeDependency(dir);

        ComponentSeries a = OnlineBoutiqueMetrics.read(dir).series("a");

        assertThat(a.pods()).containsExactly("a-1-x", "a-1-y");
        assertThat(a.samples())
                .containsExactly(new Sample(100, 15.0, 3.0), new Sample(160, null, 3.0), new Sample(220, null, null));
    }

    @Test
    void sampleNear_withinAndBeyondHalfAMinute_findsOrMisses() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"), row(160, "a-1-1", "2", "2"));
        writeDependency(dir);
        ComponentSeries a = OnlineBoutiqueMetrics.read(dir).series("a");

        assertThat(a.indexNear(130)).contains(0);
        assertThat(a.indexNear(131)).contains(1);
        assertThat(a.indexNear(190)).contains(1);
        assertThat(a.indexNear(191)).isEmpty();
        assertThat(a.indexNear(69)).isEmpty();
    }

    @Test
    void series_unknownComponent_namesTheKnownOnes() throws IOException {
        writeMetrics(dir, "a-1-1", row(100, "a-1-1", "1", "1"));
        writeDependency(dir);
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(dir);

        assertThatThrownBy(() -> m.series("zzz"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"zzz\"")
                .hasMessageContaining("[a]");
    }

    @Test
    void read_normalDay_samplePeriodIsMeasuredAsOneMinute() throws IOException {
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY));

        assertThat(m.samplePeriodSeconds()).isEqualTo(60);
        assertThat(m.samplePeriodMeasured()).isTrue();
    }

    @Test
    void read_fifteenSecondSteps_matchSamplesWithinHalfOfIt() throws IOException {
        writeMetrics(
                dir,
                "a-1-x",
                row(1000, "a-1-x", "1", "1"),
                row(1015, "a-1-x", "2", "2"),
                row(1030, "a-1-x", "3", "3"),
                row(1046, "a-1-x", "4", "4"));
        writeDependency(dir);
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(dir);

        // Steps 15, 15, 16: the median is 15, so 7 s away is the same sample and 8 s away is not.
        assertThat(m.samplePeriodSeconds()).isEqualTo(15);
        ComponentSeries a = m.series("a");
        assertThat(a.indexNear(1022)).contains(1);
        assertThat(a.indexNear(1023)).contains(2);
        assertThat(a.indexNear(1037)).contains(2);
        assertThat(a.indexNear(1053)).contains(3);
        assertThat(a.indexNear(1038)).isEmpty(); // 8 s from both 1030 and 1046
        assertThat(a.indexNear(1062)).isEmpty();
        assertThat(a.indexNear(992)).isEmpty();
    }

    @Test
    void read_onlyOneSamplePerPod_takesTheDefaultPeriodAndSaysSo() throws IOException {
        writeMetrics(dir, "a-1-x", row(1000, "a-1-x", "1", "1"));
        writeDependency(dir);
        OnlineBoutiqueMetrics m = OnlineBoutiqueMetrics.read(dir);

        assertThat(m.samplePeriodSeconds()).isEqualTo(OnlineBoutiqueMetrics.DEFAULT_SAMPLE_PERIOD_SECONDS);
        assertThat(m.samplePeriodMeasured()).isFalse();
    }
}
