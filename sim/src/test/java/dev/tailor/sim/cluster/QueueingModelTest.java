package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.heart.HeartConfig;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The replica model against queueing theory, and the CPU limit models against their definitions. */
class QueueingModelTest {

    /** One node, one component, no calls, no link delay: a single M/G/1 processor-sharing queue. */
    private static ClusterScenario singleQueue(
            double speed, double costCv, String cpuModel, double limitCores, double cores, double durationSeconds) {
        return Scenarios.parse("""
                name: single-queue
                seed: 7
                warmupSeconds: 20
                durationSeconds: %s
                timeoutSeconds: 60
                cpuModel: %s
                callCostCv: %s
                replicaCostVariation: 0
                linkJitter: 0
                nodes: [{name: n1, cores: %s, speedFactor: %s}]
                entry: s
                components: [{name: s, cpuMillisPerCall: 5}]
                cpuLimitCores: %s
                networks: {flat: {sameNodeMillis: 0, otherMillis: [0, 0]}}
                """.formatted(durationSeconds, cpuModel, costCv, cores, speed, limitCores), "test");
    }

    @ParameterizedTest(name = "rho = {0}, cost cv = {1}")
    @CsvSource({"0.5, 1.0", "0.8, 1.0", "0.8, 0.25", "0.5, 2.0"})
    void fluidReplica_meanSojourn_matchesMg1ProcessorSharing(double rho, double costCv) {
        // M/G/1-PS: mean sojourn time is E[S] / (1 - rho) whatever the service-time distribution
        // (insensitivity), so log-normal costs must give the M/M/1 mean. E[S] = 5 ms at speed 1.
        ClusterScenario scenario = singleQueue(1.0, costCv, "fluid", 1.0, 4, 2_000);
        double rps = rho / 0.005;
        RunResult result = ClusterSimulation.run(scenario, "default", rps, HeartConfig.DEFAULTS, null);

        double expectedMillis = 5.0 / (1 - rho);
        assertThat(result.meanMillis()).isCloseTo(expectedMillis, within(expectedMillis * 0.05));
        assertThat(result.replicas().get(0).meanCpuUtilisationPercent()).isCloseTo(100 * rho, within(2.0));
        assertThat(result.timeouts()).isZero();
    }

    @Test
    void slowNode_servesSameWorkSlower() {
        // A speed-0.5 core needs twice the time, and twice the CPU per request (what ATPM measures).
        ClusterScenario scenario = singleQueue(0.5, 1.0, "fluid", 1.0, 4, 1_000);
        RunResult result = ClusterSimulation.run(scenario, "default", 50, HeartConfig.DEFAULTS, null);
        // rho = 50 x 10 ms = 0.5: mean sojourn 10 / 0.5 = 20 ms; CPU 50 % of the limit.
        assertThat(result.meanMillis()).isCloseTo(20.0, within(1.0));
        assertThat(result.replicas().get(0).meanCpuUtilisationPercent()).isCloseTo(50.0, within(2.0));
    }

    @Test
    void cfsQuota_burstsOnManyCores_butNeverExceedsTheQuotaOnAverage() {
        // Under CFS a replica may run its requests in parallel on free cores, so light load is served
        // faster than under a fluid 1-core limit, while the long-run CPU stays within the limit and
        // throttling appears once bursts spend the quota.
        ClusterScenario cfs = singleQueue(1.0, 1.0, "cfs-quota", 1.0, 4, 600);
        ClusterScenario fluid = singleQueue(1.0, 1.0, "fluid", 1.0, 4, 600);
        RunResult cfsLight = ClusterSimulation.run(cfs, "default", 60, HeartConfig.DEFAULTS, null);
        RunResult fluidLight = ClusterSimulation.run(fluid, "default", 60, HeartConfig.DEFAULTS, null);
        assertThat(cfsLight.meanMillis()).isLessThan(fluidLight.meanMillis());

        RunResult cfsHeavy = ClusterSimulation.run(cfs, "default", 180, HeartConfig.DEFAULTS, null);
        assertThat(cfsHeavy.replicas().get(0).throttledSeconds()).isGreaterThan(1);
        assertThat(cfsHeavy.replicas().get(0).meanCpuUtilisationPercent()).isBetween(85.0, 100.0);
        assertThat(cfsHeavy.p99Millis()).isGreaterThan(cfsHeavy.p50Millis() + 50);
    }

    @Test
    void overload_isCountedAsTimeouts_neverHidden() {
        // rho = 1.5: the queue grows without bound, so requests time out, and the percentiles
        // include them at the timeout instead of dropping them.
        ClusterScenario scenario = singleQueue(1.0, 1.0, "fluid", 1.0, 4, 300);
        RunResult result = ClusterSimulation.run(scenario, "default", 300, HeartConfig.DEFAULTS, null);
        assertThat(result.timeouts()).isGreaterThan(result.requests() / 4);
        assertThat(result.p99Millis()).isCloseTo(60_000, within(100.0));
        // Every measured request is in the percentiles: answered, timed out, or in flight (at its age).
        Histogram latency = result.latency();
        assertThat(latency.getTotalCount()).isEqualTo(result.requests());
        assertThat(result.completed() + result.unfinished()).isLessThanOrEqualTo(result.requests());
    }
}
