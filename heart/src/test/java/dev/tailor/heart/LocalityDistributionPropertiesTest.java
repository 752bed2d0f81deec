package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocalityDistributionPropertiesTest {

    private static final Heart HEART =
            new Heart(HeartConfig.DEFAULTS.toBuilder().parallel(false).build());

    @Test
    void of_everyPlan_everyFromHasWeightsIn1To100SummingToExactly100() {
        // Istio rejects a distribute entry whose weights do not sum to 100, and a weight of 0; either
        // would make the mesh refuse the whole DestinationRule. Nodes sharing a locality (1..3
        // localities for up to 8 nodes) exercise the merge.
        qt().withExamples(300)
                .forAll(RandomClusters.snapshots(), integers().between(1, 8))
                .checkAssert((s, k) -> {
                    Map<String, String> localityOfNode = new HashMap<>();
                    for (int i = 0; i < s.nodes().size(); i++) {
                        localityOfNode.put(s.nodes().get(i).name(), "r1/z1/s" + (i % k));
                    }
                    Plan plan = HEART.plan(s, AtpmState.EMPTY);
                    for (Route route : plan.allocation().routes()) {
                        List<LocalityDistribution.Entry> entries = LocalityDistribution.of(route, localityOfNode);
                        assertThat(entries.stream()
                                        .map(LocalityDistribution.Entry::from)
                                        .distinct()
                                        .count())
                                .isEqualTo(entries.size());
                        for (LocalityDistribution.Entry entry : entries) {
                            assertThat(entry.to().values())
                                    .allSatisfy(w -> assertThat(w).isBetween(1, 100));
                            assertThat(entry.to().values().stream()
                                            .mapToInt(Integer::intValue)
                                            .sum())
                                    .isEqualTo(100);
                        }
                        // Every caller node with calls is covered by the entry of its locality.
                        for (NodeRoute from : route.from()) {
                            assertThat(entries)
                                    .anySatisfy(
                                            e -> assertThat(e.from()).isEqualTo(localityOfNode.get(from.fromNode())));
                        }
                    }
                });
    }

    @Test
    void of_twoNodesInOneLocality_areMergedWeightedByTheirCalls() {
        // w1 sends 75 req/s all to w3, w2 sends 25 req/s all to w4: their shared locality sends 75/25.
        Route route = new Route(
                "a",
                "b",
                false,
                100,
                List.of(
                        new NodeRoute("w1", 75, Map.of("w3", 1.0), Map.of("b-3", 1.0)),
                        new NodeRoute("w2", 25, Map.of("w4", 1.0), Map.of("b-4", 1.0))),
                List.of(),
                0.1,
                List.of());
        List<LocalityDistribution.Entry> entries =
                LocalityDistribution.of(route, Map.of("w1", "r/z/a", "w2", "r/z/a", "w3", "r/z/c", "w4", "r/z/d"));
        assertThat(entries).containsExactly(new LocalityDistribution.Entry("r/z/a", Map.of("r/z/c", 75, "r/z/d", 25)));
    }

    @Test
    void of_shareThatRoundsToZero_isLeftOut_andTheRestStillSumsTo100() {
        Route route = new Route(
                "a",
                "b",
                false,
                100,
                List.of(new NodeRoute("w1", 100, Map.of("w1", 0.996, "w2", 0.004), Map.of("b-1", 0.996, "b-2", 0.004))),
                List.of(),
                0.1,
                List.of());
        List<LocalityDistribution.Entry> entries =
                LocalityDistribution.of(route, Map.of("w1", "r/z/w1", "w2", "r/z/w2"));
        assertThat(entries).containsExactly(new LocalityDistribution.Entry("r/z/w1", Map.of("r/z/w1", 100)));
    }
}
