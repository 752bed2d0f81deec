package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Late-first hot service ({@link AdmissionConfig#lateFirstHotService}): a small tenant that surges beyond
 * its guarantee's bucket while a large tenant keeps a growing backlog waits in its segment's hot queue;
 * once a waiting request of it is past the time a first-come-first-served proxy at the capacity would
 * have finished it (and its disk waits with less than the mean), it goes ahead of the large tenant's
 * backlog, so it is admitted soon after that finish. Without the option the hot service shares by
 * baseline, 1 : 9 here, and its requests are admitted hundreds of milliseconds after it. Virtual time, one
 * call per millisecond.
 */
class LateFirstHotServiceTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final double CAPACITY_PER_NANO = (double) C / DELTA;
    private static final int COST = 1_000;

    private static AdmissionConfig config(boolean lateFirst) {
        return AdmissionConfig.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(C * 1e9 / DELTA)
                .segmentSizeBytes(1L << 20)
                .blockSizeBytes(1L << 20)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false)
                .fifoDeadline(false)
                .lateFirstHotService(lateFirst)
                .build();
    }

    /**
     * Per request of the surging tenant: how much later than its fifo finish it was admitted, ns (negative:
     * earlier). The fifo finish is when a first-come-first-served server at the capacity, fed every
     * request of both tenants in order of arrival, would have finished it.
     *
     * <p>Baselines: 5 % of the capacity for the surging tenant, 45 % for the loaded one. The loaded tenant
     * sends 105 % of the capacity until 1.2 s, then 10 %; the surging one 3 % (within its baseline), but
     * 30 % from 600 to 800 ms. Every admitted request completes at the next call; 3 s in all.
     */
    private static List<Long> surgingLateness(boolean lateFirst) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                config(lateFirst),
                List.of(
                        VirtualDisk.committed("surging", 1L << 20, C * 1e9 / DELTA * 0.05),
                        VirtualDisk.committed("loaded", 1L << 20, C * 1e9 / DELTA * 0.45)),
                0));
        double[] fifoBacklog = {0};
        long[] offset = {0};
        driver.run(3_000, ms -> {
            long t = driver.nowNanos();
            fifoBacklog[0] = Math.max(0, fifoBacklog[0] - CAPACITY_PER_NANO * MS);
            int surging = ms >= 600 && ms < 800 ? 3 : ms % 10 < 3 ? 1 : 0;
            int loaded = ms >= 1_200 ? (ms % 5 == 0 ? 1 : 0) : ms % 2 == 0 ? 11 : 10;
            for (int i = 0; i < surging + loaded; i++) {
                offset[0] = (offset[0] + 4_096) % ((1 << 20) - COST);
                fifoBacklog[0] += COST;
                long finish = t + (long) Math.ceil(fifoBacklog[0] / CAPACITY_PER_NANO);
                if (i < surging) {
                    driver.acquireTracked(0, offset[0], COST, finish);
                } else {
                    driver.acquireUntracked(1, offset[0], COST);
                }
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("surging tenant's requests still waiting at the end")
                .isEmpty();
        return driver.tracked().stream()
                .map(VirtualTimeDriver.Admitted::waitNanos)
                .toList();
    }

    @Test
    void lateFirst_surgingTenantBeyondItsBucket_admittedSoonAfterItsFifoFinish() {
        List<Long> with = surgingLateness(true);
        assertThat(with).hasSize(1_441); // 3 per 10 ms outside the surge, 3 per ms in it
        // Measured 9.9 ms: the work admitted at once within the baselines still goes ahead of it.
        assertThat(VirtualTimeDriver.max(with))
                .as("latest admission after the fifo finish, ns")
                .isLessThanOrEqualTo(2 * DELTA);

        // Without the option its requests beyond the bucket get a tenth of the hot service beside the loaded
        // tenant's backlog (measured: 441 ms past their fifo finish).
        assertThat(VirtualTimeDriver.max(surgingLateness(false)))
                .as("latest admission after the fifo finish without the option, ns")
                .isGreaterThan(100 * MS);
    }
}
