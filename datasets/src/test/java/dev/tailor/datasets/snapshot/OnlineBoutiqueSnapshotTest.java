package dev.tailor.datasets.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.datasets.AwsPingLatencies;
import dev.tailor.datasets.JaegerSpans;
import dev.tailor.datasets.OnlineBoutiqueMetrics;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Minute;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Options;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Result;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Call;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class OnlineBoutiqueSnapshotTest {

    static final String NORMAL_DAY = "microservices/trastrainer_onlineboutique/normal_2022-08-14";
    static final String TRACE = "microservices/trastrainer_onlineboutique/faulty_2022-08-22/trace_06_20.csv";
    static final String PINGS = "network_latency/aws_ec2_52node_pings/latency.csv.gz";
    static final String TOPOLOGY = "network_latency/aws_ec2_52node_pings/topology-dense-52.json";

    /** The frontend's busiest minute of the normal day: sample 821, 10.2 requests/s. */
    static final long BUSIEST_UNIX_SECONDS = 1_660_491_408L;

    private static Options realOptions() {
        SharedData.require(TRACE);
        SharedData.require(PINGS);
        return Options.defaults(SharedData.require(NORMAL_DAY));
    }

    private static Map<String, Double> lambdaAt(long unixSeconds) throws IOException {
        OnlineBoutiqueMetrics metrics = OnlineBoutiqueMetrics.read(SharedData.require(NORMAL_DAY));
        Map<String, Double> lambda = new HashMap<>();
        metrics.series()
                .forEach((c, s) ->
                        lambda.put(c, s.sampleNear(unixSeconds).orElseThrow().requestsPerSecond()));
        return lambda;
    }

    private static Call call(Snapshot s, String caller, String callee) {
        return s.calls().stream()
                .filter(c -> c.caller().equals(caller) && c.callee().equals(callee))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no call " + caller + " -> " + callee));
    }

    private static double delay(Snapshot s, String from, String to) {
        return s.delays().stream()
                .filter(d -> d.from().equals(from) && d.to().equals(to))
                .findFirst()
                .orElseThrow()
                .millis();
    }

    // --- the real data, 3 replicas on 5 nodes ---

    @Test
    void build_threeReplicasFiveNodes_isValidAndHeartPlansIt() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().replicasPerComponent(3).nodes(5).build());

        assertThat(SnapshotValidator.validate(result.snapshot())).isEmpty();
        Plan plan = new Heart(HeartConfig.DEFAULTS).plan(result.snapshot(), AtpmState.EMPTY);
        assertThat(plan.allocation().routes()).hasSize(result.snapshot().calls().size());
        assertThat(plan.allocation().shares()).hasSize(10);
    }

    @Test
    void build_threeReplicasFiveNodes_has30ReplicasPlacedRoundRobinByComponentName() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(realOptions()).snapshot();

        assertThat(s.replicas()).hasSize(30);
        assertThat(s.nodes()).extracting(Node::name).containsExactly("w1", "w2", "w3", "w4", "w5");
        List<String> components = s.replicas().stream()
                .map(Replica::component)
                .distinct()
                .sorted()
                .toList();
        assertThat(components).hasSize(10);
        for (int c = 0; c < components.size(); c++) {
            String component = components.get(c);
            List<Replica> own = s.replicas().stream()
                    .filter(r -> r.component().equals(component))
                    .toList();
            assertThat(own)
                    .extracting(Replica::pod)
                    .containsExactly(component + "-1", component + "-2", component + "-3");
            for (int k = 0; k < own.size(); k++) {
                assertThat(own.get(k).node()).as(own.get(k).pod()).isEqualTo("w" + ((c + k) % 5 + 1));
            }
        }
        assertThat(s.replicas()).allSatisfy(r -> {
            assertThat(r.ready()).isTrue();
            assertThat(r.cpuLimitCores()).isNull();
        });
        assertThat(s.replicas().stream()
                        .filter(r -> r.component().equals("adservice"))
                        .map(Replica::node))
                .containsExactly("w1", "w2", "w3");
        assertThat(s.replicas().stream()
                        .filter(r -> r.component().equals("shippingservice"))
                        .map(Replica::node))
                .containsExactly("w5", "w1", "w2");
    }

    @Test
    void build_defaultMinute_isTheFrontendsBusiestSample() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());

        double frontend = result.snapshot().replicas().stream()
                .filter(r -> r.component().equals("frontend"))
                .mapToDouble(Replica::requestsPerSecond)
                .sum();
        assertThat(frontend).isCloseTo(10.2, within(1e-9));
        assertThat(result.notes()).anyMatch(n -> n.contains("sample 821 of 1325") && n.contains("busiest"));
        assertThat(result.snapshot().windowSeconds()).isEqualTo(60.0);
    }

    @Test
    void build_replicas_serveAThirdOfLambdaAtCpuScaledByNodeSpeed() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(realOptions()).snapshot();

        // frontend at the busiest minute: 7.682837604959563 m for 10.2 requests/s (frontend_metric.csv line 823).
        double base = 7.682837604959563 / 1000 / 10.2;
        Map<String, Double> speed = Map.of("w1", 1.0, "w2", 0.9, "w3", 0.7, "w4", 0.5, "w5", 0.4);
        List<Replica> frontend = s.replicas().stream()
                .filter(r -> r.component().equals("frontend"))
                .toList();
        assertThat(frontend).extracting(Replica::node).containsExactly("w1", "w2", "w3");
        for (Replica r : frontend) {
            assertThat(r.requestsPerSecond()).isCloseTo(3.4, within(1e-9));
            assertThat(r.cpuCores()).as(r.pod()).isCloseTo(3.4 * base / speed.get(r.node()), within(1e-12));
        }
    }

    @Test
    void build_callRates_sumToEachCalleesLambda() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(realOptions()).snapshot();
        Map<String, Double> lambda = lambdaAt(BUSIEST_UNIX_SECONDS);

        Map<String, Double> incoming = s.calls().stream()
                .collect(Collectors.groupingBy(Call::callee, Collectors.summingDouble(Call::requestsPerSecond)));
        assertThat(incoming).hasSize(10); // every component, the frontend called by ingress
        incoming.forEach((callee, sum) -> assertThat(sum).as(callee).isCloseTo(lambda.get(callee), within(1e-9)));
    }

    @Test
    void build_productCatalogCallers_splitItsLambdaByTraceSpanCounts() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(realOptions()).snapshot();
        double lambda = lambdaAt(BUSIEST_UNIX_SECONDS).get("productcatalogservice");

        double total = 1198 + 189 + 31;
        assertThat(call(s, "frontend", "productcatalogservice").requestsPerSecond())
                .isCloseTo(lambda * 1198 / total, within(1e-9));
        assertThat(call(s, "recommendationservice", "productcatalogservice").requestsPerSecond())
                .isCloseTo(lambda * 189 / total, within(1e-9));
        assertThat(call(s, "checkoutservice", "productcatalogservice").requestsPerSecond())
                .isCloseTo(lambda * 31 / total, within(1e-9));
    }

    @Test
    void build_edgeMissingFromTrace_getsRateZeroAndANote() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());

        assertThat(call(result.snapshot(), "checkoutservice", "currencyservice").requestsPerSecond())
                .isZero();
        assertThat(call(result.snapshot(), "frontend", "currencyservice").requestsPerSecond())
                .isCloseTo(lambdaAt(BUSIEST_UNIX_SECONDS).get("currencyservice"), within(1e-9));
        assertThat(result.notes())
                .anyMatch(n -> n.contains("not in the trace") && n.contains("checkoutservice -> currencyservice"));
    }

    @Test
    void build_calls_areTheFourteenMeteredEdgesPlusIngress() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());

        assertThat(result.snapshot().calls()).hasSize(15);
        assertThat(result.snapshot().calls())
                .noneMatch(c -> c.callee().equals("mysql") || c.caller().equals("gateway"));
        assertThat(result.notes()).anyMatch(n -> n.contains("no metrics") && n.contains("cartservice -> redis-cart"));
    }

    @Test
    void build_ingress_carriesTheFrontendsLambdaEquallyFromEveryNode() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(realOptions()).snapshot();

        Call ingress = s.calls().get(0);
        assertThat(ingress.caller()).isEqualTo(OnlineBoutiqueSnapshot.INGRESS);
        assertThat(ingress.callee()).isEqualTo("frontend");
        assertThat(ingress.requestsPerSecond()).isCloseTo(10.2, within(1e-9));
        assertThat(ingress.byCallerNode()).containsOnlyKeys("w1", "w2", "w3", "w4", "w5");
        assertThat(ingress.byCallerNode().values())
                .allSatisfy(v -> assertThat(v).isCloseTo(2.04, within(1e-9)));
        assertThat(s.calls().subList(1, s.calls().size()))
                .allSatisfy(c -> assertThat(c.byCallerNode()).isNull());
    }

    @Test
    void build_defaultRegions_putsEveryNodeInEuWithAllPairsOfDelays() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());
        Snapshot s = result.snapshot();

        assertThat(s.nodes())
                .extracting(Node::locality)
                .containsExactly(
                        "eu-central-1/eu-central-1a/w1",
                        "eu-central-1/eu-central-1a/w2",
                        "eu-central-1/eu-central-1a/w3",
                        "eu-central-1/eu-central-1a/w4",
                        "eu-central-1/eu-central-1a/w5");
        assertThat(s.delays()).hasSize(25);
        assertThat(s.delays().stream().map(d -> d.from() + ">" + d.to()).distinct())
                .hasSize(25);
        assertThat(s.delays())
                .filteredOn(d -> d.from().equals(d.to()))
                .allSatisfy(d -> assertThat(d.millis()).isEqualTo(0.05));
        assertThat(s.delays())
                .filteredOn(d -> !d.from().equals(d.to()))
                .allSatisfy(d -> assertThat(d.millis()).isBetween(0.05, 0.5));
    }

    @Test
    void build_defaultRegions_measuredPairTakesHalfItsMedianOthersHalfTheRegionMedian() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());
        AwsPingLatencies pings = AwsPingLatencies.read(SharedData.require(PINGS));

        // w1 = node-0, w2 = node-3 (pinged each other), w3 = node-6 (never pinged by node-0).
        assertThat(delay(result.snapshot(), "w1", "w2"))
                .isCloseTo(pings.medianRttMillis("node-0", "node-3").getAsDouble() / 2, within(1e-12));
        assertThat(delay(result.snapshot(), "w2", "w1"))
                .isCloseTo(pings.medianRttMillis("node-3", "node-0").getAsDouble() / 2, within(1e-12));
        assertThat(delay(result.snapshot(), "w1", "w3"))
                .isCloseTo(pings.regionMedianRttMillis("EU", "EU").getAsDouble() / 2, within(1e-12));
        assertThat(result.notes())
                .anyMatch(n -> n.contains("8 of 20 ordered node pairs were pinged") && n.contains("12 were not"));
    }

    @Test
    void build_regionsEuEuEuUsUs_crossRegionDelaysAreAbout45MillisOneWay() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions().toBuilder()
                .regions(List.of("EU", "EU", "EU", "US", "US"))
                .build());
        Snapshot s = result.snapshot();

        assertThat(SnapshotValidator.validate(s)).isEmpty();
        assertThat(s.nodes())
                .extracting(Node::locality)
                .containsExactly(
                        "eu-central-1/eu-central-1a/w1",
                        "eu-central-1/eu-central-1a/w2",
                        "eu-central-1/eu-central-1a/w3",
                        "us-east-1/us-east-1a/w4",
                        "us-east-1/us-east-1a/w5");
        List<String> eu = List.of("w1", "w2", "w3");
        for (LinkDelay d : s.delays()) {
            boolean cross = eu.contains(d.from()) != eu.contains(d.to());
            if (cross) {
                assertThat(d.millis()).as(d.from() + "->" + d.to()).isCloseTo(45, within(0.5));
            } else {
                assertThat(d.millis()).as(d.from() + "->" + d.to()).isLessThan(0.5);
            }
        }
        assertThat(result.notes()).anyMatch(n -> n.contains("w4=node-1 (US)") && n.contains("w5=node-4 (US)"));
        new Heart(HeartConfig.DEFAULTS).plan(s, AtpmState.EMPTY);
    }

    @Test
    void build_minuteByIndex_usesThatSample() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().minute(Minute.index(0)).build());

        double frontend = result.snapshot().replicas().stream()
                .filter(r -> r.component().equals("frontend"))
                .mapToDouble(Replica::requestsPerSecond)
                .sum();
        assertThat(frontend).isCloseTo(7.733333333333333, within(1e-9));
        assertThat(result.notes()).anyMatch(n -> n.contains("sample 0 of 1325"));
    }

    @Test
    void build_minuteByUnixSeconds_usesTheNearestSample() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions().toBuilder()
                .minute(Minute.unixSeconds(1_660_491_400L))
                .build());

        assertThat(result.notes()).anyMatch(n -> n.contains("sample 821 of 1325"));
    }

    @Test
    void build_minuteIndexOutOfRange_namesTheValidRange() {
        Options options = realOptions().toBuilder().minute(Minute.index(1325)).build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minute : index 1325")
                .hasMessageContaining("0..1324");
    }

    @Test
    void build_minuteTimeOutsideTheDay_namesTheValidRange() {
        Options options = realOptions().toBuilder()
                .minute(Minute.unixSeconds(1_660_000_000L))
                .build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minute : 1660000000")
                .hasMessageContaining("1660442148..1660521589");
    }

    @Test
    void build_moreNodesThanTheRegionHas_failsNamingTheRegionAndItsCount() {
        Options options = realOptions().toBuilder().nodes(19).build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region EU has 18 AWS node(s)")
                .hasMessageContaining("w19");
    }

    @Test
    void build_oneReplicaOnOneNode_notesSaySoInTheSingular() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().replicasPerComponent(1).nodes(1).build());

        assertThat(result.notes())
                .anyMatch(n -> n.startsWith("1 replica per component;"))
                .anyMatch(n -> n.contains("requests/s, all on its one node (an ingress gateway"))
                .noneMatch(n -> n.contains("1 replicas") || n.contains("all 1 nodes"));
    }

    @Test
    void build_withoutTrace_splitsEachCalleesLambdaEquallyAndSaysSo() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().useTrace(false).build());
        double lambda = lambdaAt(BUSIEST_UNIX_SECONDS).get("productcatalogservice");

        assertThat(call(result.snapshot(), "frontend", "productcatalogservice").requestsPerSecond())
                .isCloseTo(lambda / 3, within(1e-9));
        assertThat(call(result.snapshot(), "checkoutservice", "currencyservice").requestsPerSecond())
                .isPositive();
        assertThat(result.notes()).anyMatch(n -> n.contains("split equally"));
    }

    @Test
    void build_bundledDay_findsFrontendAsTheEntryFromTheTracesRootSpans() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(realOptions());

        assertThat(result.entryComponent()).isEqualTo("frontend");
        assertThat(result.notes())
                .anyMatch(n -> n.startsWith("entry component frontend, found from the trace")
                        && n.contains("260 of its 260 root spans"));
        // No span CSV in the metrics folder: the bundled layout keeps it next to it.
        assertThat(result.notes())
                .anyMatch(n -> n.contains(
                        "no span CSV in the folder; " + OnlineBoutiqueSnapshot.DEFAULT_TRACE + " next to it"));
    }

    @Test
    void build_bundledDayWithoutTrace_findsFrontendFromTheCallGraph() throws IOException {
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().useTrace(false).build());

        assertThat(result.entryComponent()).isEqualTo("frontend");
        assertThat(result.notes()).anyMatch(n -> n.startsWith("entry component frontend, found from dependency.csv"));
    }

    @Test
    void build_explicitTraceFile_isUsed() throws IOException {
        Path trace = SharedData.require(TRACE);
        Result result = OnlineBoutiqueSnapshot.build(
                realOptions().toBuilder().traceFile(trace).useTrace(true).build());
        JaegerSpans spans = JaegerSpans.read(trace);

        assertThat(result.notes()).anyMatch(n -> n.contains(trace.toString()) && n.contains(spans.spans() + " spans"));
    }

    @Test
    void build_cpuLimit_isSetOnEveryReplica() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(
                        realOptions().toBuilder().cpuLimitCores(0.5).build())
                .snapshot();

        assertThat(s.replicas()).allSatisfy(r -> assertThat(r.cpuLimitCores()).isEqualTo(0.5));
    }

    @Test
    void build_sevenNodes_cyclesTheFiveSpeedsAndGivesEveryNodeItsCores() throws IOException {
        Snapshot s = OnlineBoutiqueSnapshot.build(
                        realOptions().toBuilder().nodes(7).cpuCoresPerNode(8).build())
                .snapshot();

        assertThat(s.nodes())
                .hasSize(7)
                .allSatisfy(n -> assertThat(n.cpuCores()).isEqualTo(8.0));
        // frontend is component 5 (by name): replicas on nodes 5, 6, 0 -> w6 (speed 1.0), w7 (0.9), w1 (1.0).
        List<Replica> frontend = s.replicas().stream()
                .filter(r -> r.component().equals("frontend"))
                .toList();
        assertThat(frontend).extracting(Replica::node).containsExactly("w6", "w7", "w1");
        assertThat(frontend.get(0).cpuCores()).isCloseTo(frontend.get(2).cpuCores(), within(1e-15));
        assertThat(frontend.get(1).cpuCores()).isCloseTo(frontend.get(0).cpuCores() / 0.9, within(1e-12));
        assertThat(s.delays()).hasSize(49);
    }

    @Test
    void awsRegionNames_agreeWithTopologyDense52() throws IOException {
        String json = Files.readString(SharedData.require(TOPOLOGY));
        AwsPingLatencies pings = AwsPingLatencies.read(SharedData.require(PINGS));

        Matcher m = Pattern.compile("\"name\"\\s*:\\s*\"(node-\\d+)\"[^}]*?\"region\"\\s*:\\s*\"([^\"]+)\"")
                .matcher(json);
        int checked = 0;
        while (m.find()) {
            String shortName = pings.regionByNode().get(m.group(1));
            assertThat(OnlineBoutiqueSnapshot.AWS_REGION_NAMES.get(shortName))
                    .as(m.group(1))
                    .isEqualTo(m.group(2));
            checked++;
        }
        assertThat(checked).isEqualTo(52);
    }

    // --- options ---

    @Test
    void options_defaults_areThoseOfTheBrief() {
        Options o = Options.defaults(Path.of("x"));

        assertThat(o.replicasPerComponent()).isEqualTo(3);
        assertThat(o.nodes()).isEqualTo(5);
        assertThat(o.nodeSpeeds()).containsExactly(1.0, 0.9, 0.7, 0.5, 0.4);
        assertThat(o.cpuCoresPerNode()).isEqualTo(4);
        assertThat(o.cpuLimitCores()).isNull();
        assertThat(o.minute()).isEqualTo(Minute.BUSIEST);
        assertThat(o.regions()).containsExactly("EU");
        assertThat(o.sameNodeDelayMillis()).isEqualTo(0.05);
        assertThat(o.pingPayloadBytes()).isEqualTo(64);
        assertThat(o.entryComponent()).isNull(); // found from the trace's root spans
        assertThat(o.useTrace()).isTrue();
        assertThat(o.speedOf(5)).isEqualTo(1.0);
        assertThat(o.speedOf(9)).isEqualTo(0.4);
    }

    @Test
    void options_outOfRangeValues_areRejectedNamingTheOptionAndValue() {
        Options o = Options.defaults(Path.of("x"));

        assertThatThrownBy(() -> o.toBuilder().replicasPerComponent(0).build())
                .hasMessageContaining("replicasPerComponent : 0");
        assertThatThrownBy(() -> o.toBuilder().nodes(0).build()).hasMessageContaining("nodes : 0");
        assertThatThrownBy(() -> o.toBuilder().nodeSpeeds(List.of(1.0, -1e-7)).build())
                .hasMessageContaining("nodeSpeeds[1] : -0.0000001 (expected");
        assertThatThrownBy(() -> o.toBuilder().nodeSpeeds(List.of()).build()).hasMessageContaining("nodeSpeeds : []");
        assertThatThrownBy(() -> o.toBuilder().cpuCoresPerNode(Double.NaN).build())
                .hasMessageContaining("cpuCoresPerNode : NaN (expected");
        assertThatThrownBy(() -> o.toBuilder().cpuLimitCores(0.0).build())
                .hasMessageContaining("cpuLimitCores : 0 (expected");
        assertThatThrownBy(() -> o.toBuilder().sameNodeDelayMillis(-1).build())
                .hasMessageContaining("sameNodeDelayMillis : -1 (expected");
        assertThatThrownBy(() -> o.toBuilder().pingPayloadBytes(-1).build())
                .hasMessageContaining("pingPayloadBytes : -1");
        assertThatThrownBy(() -> o.toBuilder().entryComponent(" ").build()).hasMessageContaining("entryComponent");
        Options.Builder withoutMetrics = Options.builder();
        assertThatThrownBy(withoutMetrics::build).hasMessageContaining("metricsDir : null");
        // The builder's defaults are the options' documented defaults.
        assertThat(Options.builder().metricsDir(o.metricsDir()).build())
                .isEqualTo(Options.defaults(o.metricsDir()))
                .isEqualTo(new Options(
                        o.metricsDir(),
                        null,
                        true,
                        null,
                        3,
                        5,
                        List.of(1.0, 0.9, 0.7, 0.5, 0.4),
                        4,
                        null,
                        Minute.BUSIEST,
                        List.of("EU"),
                        0.05,
                        64,
                        null));
    }

    @Test
    void options_regions_acceptEuUsApInAnyCaseAndRejectOthers() {
        Options o = Options.defaults(Path.of("x"));

        assertThat(o.toBuilder().regions(List.of("eu", "Us", "AP")).build().regions())
                .containsExactly("EU", "US", "AP");
        assertThatThrownBy(() -> o.toBuilder().regions(List.of("EU", "SA")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("regions[1] : \"SA\" (expected: one of [AP, EU, US])")
                .hasMessageContaining("[AP, EU, US]");
        assertThatThrownBy(() -> o.toBuilder().regions(List.of()).build()).hasMessageContaining("regions : []");
    }

    @Test
    void minuteParse_busiestIndexOrUnixSeconds_areToldApartAt1e9() {
        assertThat(Minute.parse("busiest")).isEqualTo(Minute.BUSIEST);
        assertThat(Minute.parse("821")).isEqualTo(Minute.index(821));
        assertThat(Minute.parse("999999999")).isEqualTo(Minute.index(999_999_999));
        assertThat(Minute.parse("1660491408")).isEqualTo(Minute.unixSeconds(1_660_491_408L));
        assertThatThrownBy(() -> Minute.parse("-1")).hasMessageContaining("minute : \"-1\"");
        assertThatThrownBy(() -> Minute.parse("noon")).hasMessageContaining("minute : \"noon\"");
        assertThatThrownBy(() -> Minute.index(-1)).hasMessageContaining("minute : index -1");
    }

    @Test
    void build_unknownEntryComponent_namesTheKnownOnes() {
        Options options = realOptions().toBuilder().entryComponent("gateway").build();

        assertThatThrownBy(() -> OnlineBoutiqueSnapshot.build(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("entryComponent : \"gateway\"")
                .hasMessageContaining("frontend");
    }
}
