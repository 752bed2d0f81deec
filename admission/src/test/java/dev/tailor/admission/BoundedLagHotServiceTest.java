package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Bounded lag in the hot service ({@link AdmissionConfig#boundedLagHotService}): a small tenant, quiet
 * until then, sends a batch larger than its guarantee's bucket while a large tenant keeps a backlog. The
 * part beyond the bucket waits as hot. Under start-time fair queueing the small disk starts at the system's
 * virtual time and gets its weight's share of the hot service (a tenth here) from the first request on; with
 * the bounded lag it starts one classifier window of its baseline behind, so that much of its batch goes
 * ahead of the backlog, and only the rest is served at its share. The lag is a bound: what goes ahead is
 * the window's worth of the small disk's baseline, not the whole batch. Virtual time, one call per
 * millisecond.
 */
class BoundedLagHotServiceTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final int COST = 1_000;
    private static final long BLOCK = 1L << 16;

    private static AdmissionConfig config(boolean boundedLag) {
        return VirtualTimeDriver.byteCostConfig(C, DELTA, BLOCK)
                .boundedLagHotService(boundedLag)
                // The hot service alone: with disk order (the default) the small disk's bucket, refilling,
                // also admits its oldest waiting requests at each call, ahead of the backlog.
                .diskOrderAcrossGuarantee(false)
                .build();
    }

    /** The small tenant's requests that waited as hot: when each was admitted, ns after the batch. */
    private static List<Long> run(boolean boundedLag, int batch) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                config(boundedLag),
                List.of(
                        VirtualDisk.committed("small", 4 * BLOCK, C * 1e9 / DELTA * 0.05),
                        VirtualDisk.committed("large", 4 * BLOCK, C * 1e9 / DELTA * 0.45)),
                0));
        long[] largeOffset = {0};
        driver.run(3_000, ms -> {
            if (ms == 500) {
                for (int i = 0; i < batch; i++) {
                    driver.acquireTracked(0, (long) (i % 60) * COST, COST);
                }
            }
            // The large tenant: 105 % of the capacity until 2 s, a backlog all along.
            int large = ms >= 2_000 ? 0 : ms % 2 == 0 ? 11 : 10;
            for (int i = 0; i < large; i++) {
                largeOffset[0] = (largeOffset[0] + COST) % (4 * BLOCK - COST);
                driver.acquireUntracked(1, largeOffset[0], COST);
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("small tenant's requests still waiting at the end")
                .isEmpty();
        List<VirtualTimeDriver.Admitted> waited = driver.tracked().stream()
                .filter(VirtualTimeDriver.Admitted::queued)
                .toList();
        assertThat(waited).allSatisfy(a -> assertThat(a.ticket().arrivedAs()).isEqualTo(SegmentClass.HOT));
        return waited.stream().map(VirtualTimeDriver.Admitted::waitNanos).toList();
    }

    private static long waitedAtMost(List<Long> waits, long nanos) {
        return waits.stream().filter(w -> w <= nanos).count();
    }

    @Test
    void boundedLag_smallTenantsBatchAfterAQuietSpell_goesAheadOfTheBacklog_forOneWindowOfItsBaseline() {
        // 120 requests of 1,000: the bucket (W·Δ × 5 % of C = 50,000) covers 50, 70 wait as hot.
        List<Long> with = run(true, 120);
        List<Long> without = run(false, 120);
        assertThat(with).hasSize(70);
        assertThat(without).hasSize(70);
        // Without the lag the 70 are served at the small disk's tenth of the hot service, about five an
        // interval: the last waits 140 ms. With it, one window of its baseline (50,000: 50 requests) goes
        // ahead of the backlog within the next two boundaries, and only the rest waits for the disk's share
        // (the last 60 ms).
        assertThat(waitedAtMost(with, 2 * DELTA))
                .as("admitted within two intervals, with the lag")
                .isGreaterThanOrEqualTo(45);
        assertThat(waitedAtMost(without, 2 * DELTA))
                .as("admitted within two intervals, without the lag")
                .isLessThan(10);
        assertThat(VirtualTimeDriver.max(with))
                .as("longest wait, ns")
                .isLessThan(VirtualTimeDriver.max(without) - 50 * MS);
    }

    @Test
    void boundedLag_isABound_aBatchOfTenWindowsStillWaitsForItsShare() {
        // 600 requests: 50 in the bucket, 550 wait; the lag lets about 50 of them go ahead (51), the other
        // 500 are served at the disk's share, so the batch's last request gains nothing (measured: 920 ms
        // with the lag, 850 without).
        List<Long> with = run(true, 600);
        List<Long> without = run(false, 600);
        assertThat(with).hasSize(550);
        assertThat(waitedAtMost(with, 2 * DELTA))
                .as("admitted within two intervals, with the lag")
                .isBetween(45L, 60L);
        assertThat(VirtualTimeDriver.max(with))
                .as("longest wait, ns")
                .isGreaterThan(VirtualTimeDriver.max(without) * 8 / 10);
    }
}
