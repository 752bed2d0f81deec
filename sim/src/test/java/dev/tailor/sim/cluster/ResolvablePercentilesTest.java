package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.HeartConfig;
import dev.tailor.sim.storage.LatencySummary;
import org.junit.jupiter.api.Test;

/**
 * A run reports a percentile P(q) only when it measured at least ceil(1 ÷ (1 − q)) requests (100 for P99,
 * 1,000 for P99.9), as the storage simulator does; below that it is {@code null}, not the slowest sample.
 */
class ResolvablePercentilesTest {

    /** One node, one component, no calls: 50 requests per second measured for {@code durationSeconds}. */
    private static ClusterScenario singleQueue(double durationSeconds) {
        return Scenarios.parse("""
                name: single-queue
                seed: 7
                warmupSeconds: 5
                durationSeconds: %s
                timeoutSeconds: 60
                cpuModel: fluid
                callCostCv: 1.0
                replicaCostVariation: 0
                linkJitter: 0
                nodes: [{name: n1, cores: 4, speedFactor: 1.0}]
                entry: s
                components: [{name: s, cpuMillisPerCall: 5}]
                cpuLimitCores: 1.0
                networks: {flat: {sameNodeMillis: 0, otherMillis: [0, 0]}}
                """.formatted(durationSeconds), "test");
    }

    @Test
    void aRunOfAboutFiveHundredRequests_hasP50AndP99_butNoP999() {
        RunResult result = ClusterSimulation.run(singleQueue(10), "default", 50, HeartConfig.DEFAULTS, null);

        assertThat(result.requests()).isBetween(LatencySummary.needed(99), LatencySummary.needed(99.9) - 1);
        assertThat(result.p50Millis()).isNotNull().isPositive();
        assertThat(result.p99Millis()).isNotNull().isGreaterThanOrEqualTo(result.p50Millis());
        // Was: its slowest request, printed as a P99.9.
        assertThat(result.p999Millis()).isNull();
    }

    @Test
    void aRunOfOverAThousandRequests_hasAllThree() {
        RunResult result = ClusterSimulation.run(singleQueue(40), "default", 50, HeartConfig.DEFAULTS, null);

        assertThat(result.requests()).isGreaterThanOrEqualTo(LatencySummary.needed(99.9));
        assertThat(result.p50Millis()).isNotNull().isPositive();
        assertThat(result.p99Millis()).isNotNull().isGreaterThanOrEqualTo(result.p50Millis());
        assertThat(result.p999Millis()).isNotNull().isGreaterThanOrEqualTo(result.p99Millis());
    }

    @Test
    void aRunOfFewerThanAHundredRequests_hasOnlyItsMedian() {
        RunResult result = ClusterSimulation.run(singleQueue(1), "default", 50, HeartConfig.DEFAULTS, null);

        assertThat(result.requests()).isBetween(LatencySummary.needed(50), LatencySummary.needed(99) - 1);
        assertThat(result.p50Millis()).isNotNull();
        assertThat(result.p99Millis()).isNull();
        assertThat(result.p999Millis()).isNull();
        assertThat(result.meanMillis()).isNotNull();
    }
}
