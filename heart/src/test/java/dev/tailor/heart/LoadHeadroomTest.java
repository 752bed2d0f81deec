package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The queue-aware split planned with {@link HeartConfig#loadHeadroom()} stays within every group's
 * capacity when the load grows by the headroom (up to {@link HeartConfig#MAX_HEADROOM_UTILISATION}
 * of the callee's capacity) before the next round; without it, a split made at the measured load can
 * put the fastest group beyond its capacity after such growth.
 */
class LoadHeadroomTest {

    private static final HeartConfig SHIPPED =
            HeartConfig.DEFAULTS.toBuilder().parallel(false).build();

    @Test
    void everyGroup_staysWithinCapacity_whenTheLoadGrowsByTheHeadroom() {
        qt().withFixedSeed(20250703L)
                .withExamples(300)
                .forAll(
                        lists().of(doubles().between(0.005, 0.05)).ofSizeBetween(2, 5),
                        doubles().between(0.05, 0.9))
                .checkAssert((costs, utilisation) -> {
                    double capacity = 0;
                    for (double cost : costs) {
                        capacity += 1 / cost;
                    }
                    double demand = utilisation * capacity;
                    double[] load = plannedLoads(SHIPPED, costs, demand);
                    double grown = Math.max(
                            demand,
                            Math.min(
                                    (1 + SHIPPED.loadHeadroom()) * demand,
                                    HeartConfig.MAX_HEADROOM_UTILISATION * capacity));
                    double sum = 0;
                    for (int g = 0; g < costs.size(); g++) {
                        sum += load[g];
                        assertThat(load[g] * grown / demand)
                                .as("w%d at %.4g req/s of %.4g", g, grown, 1 / costs.get(g))
                                .isLessThanOrEqualTo(1 / costs.get(g) * (1 + 1e-3));
                    }
                    assertThat(sum)
                            .as("every call planned")
                            .isCloseTo(demand, org.assertj.core.api.Assertions.within(demand * 1e-4));
                });
    }

    @Test
    void withoutHeadroom_theFastGroupIsPlannedBeyondWhatGrowthLeavesIt() {
        // A fast group of 100 req/s and a slow one of 25 req/s, 80 req/s of calls (0.64 of capacity):
        // planned for the measured load, the fast group takes about 70 req/s, and 1.5 x that is past
        // its 100 req/s; planned with the headroom, 1.5 x its take stays within it.
        List<Double> costs = List.of(0.01, 0.04);
        double[] without = plannedLoads(SHIPPED.toBuilder().loadHeadroom(0).build(), costs, 80);
        double[] with = plannedLoads(SHIPPED, costs, 80);
        assertThat(without[0] * 1.5).isGreaterThan(100);
        assertThat(with[0] * 1.5).isLessThanOrEqualTo(100);
        assertThat(with[0]).isLessThan(without[0]);
    }

    @Test
    void explain_saysWhatTheSplitWasPlannedFor() {
        Route route =
                plan(SHIPPED, List.of(0.01, 0.04), 40).allocation().routes().get(0);
        assertThat(String.join("\n", route.explain()))
                .contains("all 40.0 req/s into b")
                .contains("split as planned for 60.0 req/s (50 % headroom for load growth)");
        Route none = plan(SHIPPED.toBuilder().loadHeadroom(0).build(), List.of(0.01, 0.04), 40)
                .allocation()
                .routes()
                .get(0);
        assertThat(String.join("\n", none.explain())).doesNotContain("headroom");
    }

    @Test
    void badHeadroom_isRefusedNamingTheField() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> SHIPPED.toBuilder().loadHeadroom(-0.1).build())
                .hasMessageContaining(
                        "loadHeadroom : -0.1 (expected: a fraction of the measured load in [0, 10], 0 = off)");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> SHIPPED.toBuilder().loadHeadroom(Double.NaN).build())
                .hasMessageContaining("loadHeadroom : NaN (expected: ");
    }

    /** Per group (one replica b-g on node wg, CPU-seconds per request costs[g], 1 core), the planned req/s. */
    private static double[] plannedLoads(HeartConfig config, List<Double> costs, double demand) {
        Route route = plan(config, costs, demand).allocation().routes().get(0);
        assertThat(String.join("\n", route.explain()))
                .as("planned queue-aware, not the paper's way")
                .contains("queue-aware entropic transport")
                .doesNotContain("routed on the ATPM shares");
        double[] load = new double[costs.size()];
        for (NodeRoute from : route.from()) {
            from.toNodes()
                    .forEach((node, fraction) ->
                            load[Integer.parseInt(node.substring(1))] += from.supplyRequestsPerSecond() * fraction);
        }
        return load;
    }

    private static Plan plan(HeartConfig config, List<Double> costs, double demand) {
        int n = costs.size();
        TestSnapshots s = TestSnapshots.builder();
        String[] nodes = new String[n];
        Object[] split = new Object[2 * n];
        for (int g = 0; g < n; g++) {
            nodes[g] = "w" + g;
            split[2 * g] = nodes[g];
            split[2 * g + 1] = demand / n;
        }
        s.nodes(nodes);
        double capacity = 0;
        for (double cost : costs) {
            capacity += 1 / cost;
        }
        for (int g = 0; g < n; g++) {
            // Measured at the split in proportion to capacity: every replica at the same utilisation.
            double rate = demand / costs.get(g) / capacity;
            s.replica(new Replica("b-" + g, "b", nodes[g], true, costs.get(g) * rate, 1.0, rate));
        }
        return new Heart(config)
                .plan(
                        s.entry("ingress", "b", demand, split)
                                .uniformDelays(0.05, 0.5)
                                .build(),
                        AtpmState.EMPTY);
    }
}
