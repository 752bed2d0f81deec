package dev.tailor.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import dev.tailor.bench.SyntheticClusters.Shape;
import dev.tailor.bench.SyntheticClusters.SyntheticCluster;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Call;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class SyntheticClustersTest {

    private static final long SEED = SyntheticClusters.DEFAULT_SEED;
    /** The planning benchmark's baseline: min-cost flow per replica, no slow-link filter. */
    private static final HeartConfig BASELINE = HeartConfig.DEFAULTS.toBuilder()
            .grouping(HeartConfig.Grouping.REPLICA)
            .slowLinkFilter(false)
            .build();

    @ParameterizedTest
    @EnumSource(Shape.class)
    void generate_everyShape_passesTheValidator(Shape shape) {
        // The benchmark must measure planning, not the rejection of a broken input.
        Snapshot snapshot = SyntheticClusters.snapshot(shape, SEED);
        assertThat(SnapshotValidator.validate(snapshot)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void generate_everyShape_hasTheDocumentedCounts(Shape shape) {
        // The README table prints these counts; they must be the ones the Javadoc promises.
        SyntheticCluster cluster = SyntheticClusters.generate(shape, SEED);
        assertThat(cluster.nodeCount()).isEqualTo(shape.nodes());
        assertThat(cluster.replicaCount()).isEqualTo(shape.replicas());
        assertThat(cluster.snapshot().replicas()).allMatch(Replica::isReady);
        assertThat(cluster.snapshot().replicas().stream()
                        .map(Replica::component)
                        .distinct())
                .hasSize(shape.components());
        // A full delay matrix: every ordered pair, same-node links included.
        assertThat(cluster.snapshot().delays()).hasSize(shape.nodes() * shape.nodes());
    }

    /** The large shape is planned in {@link #plan_largeShape_defaultHeartPlansEveryEdge}. */
    @ParameterizedTest
    @EnumSource(value = Shape.class, names = "PAPER_.*", mode = EnumSource.Mode.MATCH_ALL)
    void plan_paperShapes_defaultHeartPlansEveryEdge(Shape shape) {
        // The benchmark must measure a planner that accepts its input.
        assertPlansEveryEdge(shape, HeartConfig.DEFAULTS);
    }

    @ParameterizedTest
    @EnumSource(value = Shape.class, names = "PAPER_.*", mode = EnumSource.Mode.MATCH_ALL)
    void plan_paperShapes_perReplicaBaselinePlansEveryEdge(Shape shape) {
        // The baseline must run on the same inputs.
        assertPlansEveryEdge(shape, BASELINE);
    }

    @Test
    void plan_largeShape_defaultHeartPlansEveryEdge() {
        // The 10,000-replica case runs once: every edge planned, every fraction summing to 1.
        assertPlansEveryEdge(Shape.LARGE_10000, HeartConfig.DEFAULTS);
        assertThat(PlanContract.violations(new Heart(HeartConfig.DEFAULTS)
                        .plan(SyntheticClusters.snapshot(Shape.LARGE_10000, SEED), AtpmState.EMPTY)))
                .isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Shape.class, names = "PAPER_.*", mode = EnumSource.Mode.MATCH_ALL)
    void plan_paperShapes_bothPlannersKeepTheNtamContract(Shape shape) {
        // A benchmark figure is worthless if the plan is wrong.
        Snapshot snapshot = SyntheticClusters.snapshot(shape, SEED);
        for (HeartConfig config : List.of(HeartConfig.DEFAULTS, BASELINE)) {
            Plan plan = new Heart(config).plan(snapshot, AtpmState.EMPTY);
            assertThat(PlanContract.violations(plan)).as(config.toString()).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void generate_sameSeed_equalClusters(Shape shape) {
        // Figures are only comparable across runs and machines if the input is the same.
        assertThat(SyntheticClusters.generate(shape, 42)).isEqualTo(SyntheticClusters.generate(shape, 42));
    }

    @ParameterizedTest
    @CsvSource({
        "PAPER_400, 4db7e93e48d639dcc2322cfa79440109ec47b81e592c61ba90c0c9a32396a929",
        "LARGE_10000, aa482a97b1fd8e97784a31b5e12951008f4498f8f6a8978de1cbf4cabc13cd48",
    })
    void generate_defaultSeed_sameDigestOnEveryJdk(Shape shape, String expected) throws Exception {
        // Published figures name the seed, not the data: a change of the generator (or of a JDK's
        // Random or StrictMath, which are specified never to change) must fail here, not silently
        // change what the benchmark plans. Update the digest only together with the README figures.
        assertThat(digest(SyntheticClusters.snapshot(shape, SyntheticClusters.DEFAULT_SEED)))
                .isEqualTo(expected);
    }

    @Test
    void generate_otherSeed_otherCluster() {
        // Guards against a seed that is accepted but ignored.
        assertThat(SyntheticClusters.snapshot(Shape.PAPER_100, 1))
                .isNotEqualTo(SyntheticClusters.snapshot(Shape.PAPER_100, 2));
    }

    @Test
    void generate_paperShape_speedsSlowWorkersAndRoundRobin() {
        SyntheticCluster cluster = SyntheticClusters.generate(Shape.PAPER_400, SEED);
        assertThat(cluster.speedByNode())
                .containsExactly(
                        Map.entry("worker-1", 1.0),
                        Map.entry("worker-2", 0.9),
                        Map.entry("worker-3", 0.7),
                        Map.entry("worker-4", 0.5),
                        Map.entry("worker-5", 0.4));
        assertThat(cluster.slowLinkNodes()).containsExactly("worker-2", "worker-4");
        assertThat(cluster.snapshot().nodes())
                .allSatisfy(node -> assertThat(node.cpuCores()).isEqualTo(4.0));
        // Round-robin: each of the 10 components has 40 / 5 = 8 replicas on every worker.
        Map<String, Map<String, Long>> perNode = cluster.snapshot().replicas().stream()
                .collect(Collectors.groupingBy(
                        Replica::component, Collectors.groupingBy(Replica::node, Collectors.counting())));
        assertThat(perNode).hasSize(10);
        assertThat(perNode.values())
                .allSatisfy(
                        byNode -> assertThat(byNode.values()).containsOnly(8L).hasSize(5));
        for (LinkDelay delay : cluster.snapshot().delays()) {
            boolean slow = cluster.slowLinkNodes().contains(delay.from())
                    || cluster.slowLinkNodes().contains(delay.to());
            if (delay.from().equals(delay.to())) {
                assertThat(delay.millis()).isEqualTo(0.05);
            } else if (slow) {
                assertThat(delay.millis()).isBetween(20.0, 60.0);
            } else {
                assertThat(delay.millis()).isBetween(0.1, 0.9);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"PAPER_100", "PAPER_1000"})
    void generate_paperShape_dagOfOneToThreeLaterCallees(Shape shape) {
        Snapshot snapshot = SyntheticClusters.snapshot(shape, SEED);
        Map<String, List<String>> callees = calleesByCaller(snapshot);
        for (int i = 0; i < 9; i++) {
            String component = "svc-" + i;
            // Each component but the last calls 1..3 later ones (later: a DAG in index order).
            assertThat(callees.get(component))
                    .as(component)
                    .hasSizeBetween(1, 3)
                    .allSatisfy(callee -> assertThat(callee).isGreaterThan(component));
        }
        assertThat(callees).doesNotContainKey("svc-9");
        assertEveryComponentIsCalled(snapshot);
    }

    @Test
    void generate_largeShape_distinctNodesZonesAndAboutOneAndAHalfCallees() {
        SyntheticCluster cluster = SyntheticClusters.generate(Shape.LARGE_10000, SEED);
        Snapshot snapshot = cluster.snapshot();
        // 100 replicas per component, each on its own node.
        Map<String, Set<String>> nodesOf = snapshot.replicas().stream()
                .collect(Collectors.groupingBy(
                        Replica::component, Collectors.mapping(Replica::node, Collectors.toSet())));
        assertThat(nodesOf).hasSize(100);
        assertThat(nodesOf.values()).allSatisfy(nodes -> assertThat(nodes).hasSize(100));
        // Component calls (entry excluded): between 1.3 and 1.7 per component on average.
        int edges = snapshot.calls().size() - 1;
        assertThat(edges / 100.0).isBetween(1.3, 1.7);
        assertEveryComponentIsCalled(snapshot);
        assertThat(cluster.slowLinkNodes()).hasSize(25);
        Map<String, String> zoneOf = new HashMap<>();
        snapshot.nodes().forEach(node -> zoneOf.put(node.name(), node.locality().split("/")[1]));
        assertThat(new HashSet<>(zoneOf.values())).hasSize(10);
        Set<String> slow = Set.copyOf(cluster.slowLinkNodes());
        for (LinkDelay delay : snapshot.delays()) {
            if (delay.from().equals(delay.to())) {
                assertThat(delay.millis()).isEqualTo(0.05);
            } else if (slow.contains(delay.from()) || slow.contains(delay.to())) {
                assertThat(delay.millis()).isBetween(20.0, 60.0);
            } else if (zoneOf.get(delay.from()).equals(zoneOf.get(delay.to()))) {
                assertThat(delay.millis()).isBetween(0.1, 0.5);
            } else {
                assertThat(delay.millis()).isBetween(1.0, 3.0);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void generate_everyShape_cpuIsRateTimesBaseCostOverSpeedWithSmallNoise(Shape shape) {
        // ATPM reads load = cpu / requests; this is the ground truth it should recover.
        SyntheticCluster cluster = SyntheticClusters.generate(shape, SEED);
        double sumLogRatio = 0;
        for (Replica replica : cluster.snapshot().replicas()) {
            double expected = replica.requestsPerSecond()
                    * cluster.baseCostCpuSecondsPerRequest().get(replica.component())
                    / cluster.speedByNode().get(replica.node());
            double logRatio = Math.log(replica.cpuCores() / expected);
            // σ = 0.12: 6σ is never reached in these sizes.
            assertThat(Math.abs(logRatio)).isLessThan(6 * SyntheticClusters.CPU_VARIATION_SIGMA);
            sumLogRatio += logRatio;
        }
        // The noise has mean 1, so its log has mean −σ²/2 ≈ −0.0072.
        double meanLogRatio = sumLogRatio / cluster.replicaCount();
        assertThat(meanLogRatio).isBetween(-0.06, 0.05);
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void generate_everyShape_ingressSpreadsOverAllNodes(Shape shape) {
        Snapshot snapshot = SyntheticClusters.snapshot(shape, SEED);
        Call entry = snapshot.calls().get(0);
        assertThat(entry.caller()).isEqualTo(SyntheticClusters.INGRESS);
        assertThat(entry.callee())
                .isEqualTo("svc-"
                        + "0".repeat(Integer.toString(shape.components() - 1).length()));
        assertThat(entry.byCallerNode())
                .hasSize(shape.nodes())
                .allSatisfy((node, rate) -> assertThat(rate).isPositive());
        assertThat(entry.byCallerNode().values().stream()
                        .mapToDouble(Double::doubleValue)
                        .sum())
                .isCloseTo(entry.requestsPerSecond(), offset(1e-6));
    }

    @Test
    void dag_manySeeds_exactOutDegreesAndEveryComponentCalled() {
        // The two-pass construction must never get stuck nor overshoot the drawn out-degree.
        for (long seed = 0; seed < 200; seed++) {
            boolean[][] calls = SyntheticClusters.dag(10, 1, 3, new Random(seed));
            for (int j = 1; j < 10; j++) {
                boolean called = false;
                for (int i = 0; i < j; i++) {
                    called |= calls[i][j];
                }
                assertThat(called).as("seed %d, component %d called", seed, j).isTrue();
            }
            for (int i = 0; i < 10; i++) {
                int out = 0;
                for (int j = 0; j < 10; j++) {
                    assertThat(j > i || !calls[i][j])
                            .as("seed %d: edge %d -> %d goes forward", seed, i, j)
                            .isTrue();
                    out += calls[i][j] ? 1 : 0;
                }
                assertThat(out).as("seed %d, out-degree of %d", seed, i).isBetween(i == 9 ? 0 : 1, i == 9 ? 0 : 3);
            }
        }
    }

    @Test
    void shapeOf_unknownId_namesTheKnownOnes() {
        assertThat(Shape.of("paper-400")).isEqualTo(Shape.PAPER_400);
        assertThatThrownBy(() -> Shape.of("paper-401"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("paper-401")
                .hasMessageContaining("large-10000");
    }

    private static void assertPlansEveryEdge(Shape shape, HeartConfig config) {
        Snapshot snapshot = SyntheticClusters.snapshot(shape, SEED);
        Plan plan = new Heart(config).plan(snapshot, AtpmState.EMPTY);
        assertThat(plan.allocation().routes()).hasSize(snapshot.calls().size());
        assertThat(plan.allocation().shares()).hasSize(shape.components());
        assertThat(plan.allocation().routes())
                .allSatisfy(route -> assertThat(route.from()).isNotEmpty());
    }

    /** SHA-256 of every field of {@code snapshot}, doubles by their bits, maps in key order. */
    static String digest(Snapshot snapshot) throws Exception {
        StringBuilder text =
                new StringBuilder().append(bits(snapshot.windowSeconds())).append('\n');
        snapshot.nodes()
                .forEach(n -> text.append(n.name())
                        .append('|')
                        .append(n.locality())
                        .append('|')
                        .append(bits(n.cpuCores()))
                        .append('\n'));
        snapshot.replicas()
                .forEach(r -> text.append(r.pod())
                        .append('|')
                        .append(r.component())
                        .append('|')
                        .append(r.node())
                        .append('|')
                        .append(r.ready())
                        .append('|')
                        .append(bits(r.cpuCores()))
                        .append('|')
                        .append(bits(r.cpuLimitCores()))
                        .append('|')
                        .append(bits(r.requestsPerSecond()))
                        .append('\n'));
        snapshot.calls().forEach(c -> {
            text.append(c.caller()).append('|').append(c.callee()).append('|').append(bits(c.requestsPerSecond()));
            if (c.byCallerNode() != null) {
                new TreeMap<>(c.byCallerNode())
                        .forEach((node, rate) ->
                                text.append('|').append(node).append('=').append(bits(rate)));
            }
            text.append('\n');
        });
        snapshot.delays()
                .forEach(d -> text.append(d.from())
                        .append('|')
                        .append(d.to())
                        .append('|')
                        .append(bits(d.millis()))
                        .append('\n'));
        byte[] hash =
                MessageDigest.getInstance("SHA-256").digest(text.toString().getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(hash);
    }

    private static String bits(Double value) {
        return value == null ? "null" : Long.toHexString(Double.doubleToLongBits(value));
    }

    private static Map<String, List<String>> calleesByCaller(Snapshot snapshot) {
        return snapshot.calls().stream()
                .filter(call -> !call.caller().equals(SyntheticClusters.INGRESS))
                .collect(Collectors.groupingBy(Call::caller, Collectors.mapping(Call::callee, Collectors.toList())));
    }

    private static void assertEveryComponentIsCalled(Snapshot snapshot) {
        Set<String> called = snapshot.calls().stream().map(Call::callee).collect(Collectors.toSet());
        Set<String> components =
                snapshot.replicas().stream().map(Replica::component).collect(Collectors.toSet());
        assertThat(called).isEqualTo(components);
    }
}
