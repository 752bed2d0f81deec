package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * A steady segment is never starved by hot ones: whatever the hot tenants do (how hard and how often
 * they burst, how large they are), a steady tenant that stays within its commitment and whose demand
 * the reserve covers has every request admitted within two intervals. (It may wait one: hot tenants'
 * segments that are calm between bursts are steady too and share the reserve; the round-robin queue
 * service then reaches it at the next boundary.) Random scenarios, 0.6 simulated seconds each, in
 * virtual time.
 */
class StarvationPropertyTest {

    @Test
    void segmentAdmission_anyHotLoad_steadyTenantAdmittedWithinTwoIntervals() {
        qt().withExamples(10)
                .withFixedSeed(20260301L)
                .forAll(
                        doubles().between(2, 40),
                        integers().between(1, 4),
                        doubles().between(0.1, 0.5),
                        doubles().between(0.4, 1.2))
                .checkAssert((multiplier, hotTenants, reserve, hotLoad) -> {
                    long worst = steadyAdmissionWaits("segment-admission", multiplier, hotTenants, reserve, hotLoad)[0];
                    assertThat(worst)
                            .as("worst admission wait of the steady tenant, ns")
                            .isLessThanOrEqualTo(20_000_000L);
                });
    }

    /**
     * The steady tenant's admission waits: {@code {worst ns, requests that waited at all, requests}}.
     * It asks a quarter of the reserve, with a commitment of four times its demand (so
     * it stays steady); {@code hotTenants} tenants share {@code hotLoad} of the backend and burst for
     * 20-80 ms at {@code multiplier} about every 200 ms.
     */
    static long[] steadyAdmissionWaits(
            String policy, double multiplier, int hotTenants, double reserve, double hotLoad) {
        double steadyLoad = reserve / 4;
        double perHot = hotLoad / hotTenants;
        String yaml = String.format(Locale.ROOT, """
                admission: {reserveFraction: %.4f}
                baseUtilizationPercent: %.4f
                segmentSizeBytes: 1073741824
                """, reserve, 100 * (steadyLoad + hotLoad));
        String tenants = String.format(Locale.ROOT, """
                  - name: steady
                    requestsPerSecond: %.6f
                    synthetic: {readFraction: 0.7, sizeBytes: [4096, 8192]}
                    commitmentRatio: 4
                  - name: hot
                    count: %d
                    requestsPerSecond: %.6f
                    synthetic: {readFraction: 0.7, sizeBytes: [4096, 16384, 65536]}
                    bursts: {meanGapSeconds: 0.2, minMillis: 20, maxMillis: 80, multiplier: %.4f}
                    commitmentRatio: 1
                """, steadyLoad, hotTenants, perHot, multiplier);
        try {
            StorageSetup setup = StorageSimulationTest.setup(StorageSimulationTest.scenario(yaml, tenants).toBuilder()
                    .warmupSeconds(0.2)
                    .build()
                    .withDuration(0.6));
            long[] waits = {0, 0, 0};
            StorageSimulation.run(setup, policy, null, new StorageRun.Observer() {
                @Override
                public void dispatched(IoRequest r, long nowNanos) {
                    if (!r.hot) {
                        waits[0] = Math.max(waits[0], nowNanos - r.arrivalNanos);
                        waits[1] += nowNanos > r.arrivalNanos ? 1 : 0;
                        waits[2]++;
                    }
                }
            });
            return waits;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void baselineGuarantee_heavyBursts_steadyTenantWithinItsBaselineNeverWaits() {
        // Why: a steady tenant within its baseline (commitment 4 × its mean) is admitted at once by the
        // shipped admission whatever the bursts do; the paper's mechanism lets it wait for the reserve
        // once the main pool is gone. Measured without the fair dispatch door (no-fair-dispatch, the
        // shipped admission otherwise), since "dispatched" here is reaching the backend and the door,
        // a separate stage, may hold an admitted request while the backend is full.
        long[] ours = steadyAdmissionWaits("no-fair-dispatch", 20, 1, 0.2, 1.0);
        long[] paper = steadyAdmissionWaits("segment-admission-paper", 20, 1, 0.2, 1.0);
        long[] unguarded = steadyAdmissionWaits("no-baseline-guarantee", 20, 1, 0.2, 1.0);
        assertThat(ours[2]).isEqualTo(paper[2]).isEqualTo(unguarded[2]).isGreaterThan(1_000);
        assertThat(ours[1]).isZero();
        assertThat(unguarded[1]).isPositive();
    }
}
