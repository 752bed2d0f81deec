package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.HeartConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SeedCellsTest {

    @Test
    void spread_oddAndEvenCounts_noDataLeftOut() {
        assertThat(SeedCells.Spread.of(List.of(3.0, 1.0, 2.0))).isEqualTo(new SeedCells.Spread(1.0, 2.0, 2.0, 3.0));
        assertThat(SeedCells.Spread.of(List.of(4.0, 1.0, 2.0, 10.0)))
                .isEqualTo(new SeedCells.Spread(1.0, 3.0, 4.25, 10.0));
        // A seed that measured nothing is "no data", never zero.
        assertThat(SeedCells.Spread.of(Arrays.asList(5.0, null))).isEqualTo(new SeedCells.Spread(5.0, 5.0, 5.0, 5.0));
        assertThat(SeedCells.Spread.of(Arrays.asList((Double) null)))
                .isEqualTo(new SeedCells.Spread(null, null, null, null));
    }

    @Test
    void of_gathersRunsPerCell_inOrder_summingCountsAndPoolingLatencies() {
        ClusterScenario base = Scenarios.load("paper-pairwise").toBuilder()
                .warmupSeconds(5.0)
                .durationSeconds(10.0)
                .network("A")
                .build();
        List<RunResult> runs = new ArrayList<>();
        for (String policy : List.of("least-request", "default")) {
            for (long seed = 1; seed <= 3; seed++) {
                runs.add(ClusterSimulation.run(
                        base.toBuilder().seed(seed).build(), policy, 100, HeartConfig.DEFAULTS, null));
            }
        }
        List<SeedCells.Cell> cells = SeedCells.of(runs);
        assertThat(cells).extracting(SeedCells.Cell::policy).containsExactly("least-request", "default");
        SeedCells.Cell cell = cells.get(0);
        assertThat(cell.seeds()).containsExactly(1L, 2L, 3L);
        assertThat(cell.requests())
                .isEqualTo(runs.get(0).requests()
                        + runs.get(1).requests()
                        + runs.get(2).requests());
        assertThat(cell.latency().getTotalCount())
                .isEqualTo(runs.get(0).latency().getTotalCount()
                        + runs.get(1).latency().getTotalCount()
                        + runs.get(2).latency().getTotalCount());
        double[] p99 = {
            runs.get(0).p99Millis(), runs.get(1).p99Millis(), runs.get(2).p99Millis()
        };
        Arrays.sort(p99);
        assertThat(cell.p99Millis()).isEqualTo(p99[1]);
        assertThat(cell.p99Spread().minMillis()).isEqualTo(p99[0]);
        assertThat(cell.p99Spread().maxMillis()).isEqualTo(p99[2]);
    }
}
