package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The paper's mechanism ({@link AdmissionConfig#PAPER}) with one tenant sending beyond the budget in a closed
 * loop, as the NBD proxy's {@code --admission-variant paper} under fio at iodepth 32 × 2 jobs: a 1 GiB disk,
 * one segment (32 GiB segments), budget 2,000 4 KiB reads a second (C = 20 reads per 10 ms), 64 requests
 * outstanding, each admitted request completing 1 ms later and its successor arriving then. The disk's
 * baseline is the whole budget (one disk, a fair share), and a closed loop sends exactly as fast as
 * admission lets it, so once the start's surge has left the window the segment is steady. The requests that
 * arrived hot during the surge wait in the segment's hot queue; the 20 that circulate as steady take main
 * and reserve at every boundary (steady queues first, a steady arrival goes ahead of hot ones at its segment:
 * docs/admission.md, Queues), and the other 44 wait until the segment turns hot again or the client stops.
 * This is the mechanism as designed (docs/nbd.md, Admission, The paper's variant with one tenant beyond its
 * budget). With a baseline below the budget the segment stays hot, its requests
 * share one queue, first come first served, and none waits much longer than 64 requests take at the budget.
 * Virtual time, one call per millisecond.
 */
class PaperOwnBacklogTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DISK_BYTES = 1L << 30;
    private static final int DEPTH = 64;
    private static final double BUDGET_PER_SECOND = 1e9; // cost units: 2,000 reads a second at 500,000 each
    private static final long READ_COST = 500_000; // an operator's budget in IOPS alone: a = 10⁹ ÷ 2,000, b = 0

    /**
     * Runs the closed loop until {@code stopMs} (no request arrives from then on) and 1 s more; returns every
     * request's outcome, in order of admission.
     */
    private static List<VirtualTimeDriver.Admitted> run(VirtualDisk disk, long stopMs) {
        AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                .capacityCostUnitsPerSecond(BUDGET_PER_SECOND)
                .costModel(new IoCostModel(READ_COST, 0, READ_COST, 0))
                .build();
        AdmissionController controller = new AdmissionController(config, List.of(disk), 0);
        assertThat(controller.segmentMap().segmentCount()).as("segments").isEqualTo(1);
        VirtualTimeDriver driver = new VirtualTimeDriver(controller);
        int[] completedSeen = {0};
        long[] offset = {0};
        driver.run(stopMs + 1_000, ms -> {
            int arrivals;
            if (ms == 0) {
                arrivals = DEPTH;
            } else {
                // Requests admitted before now completed at this millisecond's call: each one's successor arrives.
                List<VirtualTimeDriver.Admitted> admitted = driver.tracked();
                arrivals = 0;
                while (completedSeen[0] < admitted.size()
                        && admitted.get(completedSeen[0]).admittedNanos() < ms * MS) {
                    completedSeen[0]++;
                    arrivals++;
                }
                if (ms >= stopMs) {
                    arrivals = 0;
                }
            }
            for (int i = 0; i < arrivals; i++) {
                offset[0] = (offset[0] + 4096L * 7919) % (DISK_BYTES - 4096);
                driver.acquireTracked(0, offset[0], 4096);
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("requests still waiting at the end")
                .isEmpty();
        return driver.tracked();
    }

    private static List<VirtualTimeDriver.Admitted> waitedLongerThan(List<VirtualTimeDriver.Admitted> all, long nanos) {
        return all.stream().filter(a -> a.waitNanos() > nanos).toList();
    }

    @Test
    void paper_oneTenantAtItsBudget_hotBacklogOfItsOwnSegmentWaitsUntilTheClientStops() {
        for (long stopMs : new long[] {9_900, 29_900}) {
            List<VirtualTimeDriver.Admitted> all = run(VirtualDisk.of("disk", DISK_BYTES), stopMs);
            List<VirtualTimeDriver.Admitted> stranded = waitedLongerThan(all, 1_000 * MS);
            // 64 outstanding less one interval's budget (20 reads) circulating as steady.
            assertThat(stranded)
                    .as("requests that waited over 1 s, run of %d ms", stopMs)
                    .hasSize(DEPTH - 20);
            assertThat(stranded)
                    .as("they arrived hot, during the start's surge, and left only once arrivals stopped")
                    .allSatisfy(a -> {
                        assertThat(a.ticket().arrivedAs()).isEqualTo(SegmentClass.HOT);
                        assertThat(a.referenceNanos()).isLessThan(2_000 * MS);
                        assertThat(a.admittedNanos()).isGreaterThanOrEqualTo(stopMs * MS);
                    });
            assertThat(all.stream()
                            .filter(a -> a.waitNanos() <= 1_000 * MS)
                            .mapToLong(VirtualTimeDriver.Admitted::waitNanos)
                            .max()
                            .orElseThrow())
                    .as("longest wait of the others, ns")
                    .isLessThan(200 * MS);
            // Meanwhile the tenant gets the whole budget: 2,000 reads a second.
            assertThat(all.stream()
                            .filter(a -> a.admittedNanos() >= 2_000 * MS && a.admittedNanos() < 3_000 * MS)
                            .count())
                    .as("reads admitted from 2 s to 3 s")
                    .isEqualTo(2_000);
        }
    }

    @Test
    void paper_baselineBelowTheBudget_segmentStaysHot_noRequestWaitsLong() {
        List<VirtualTimeDriver.Admitted> all =
                run(VirtualDisk.committed("disk", DISK_BYTES, BUDGET_PER_SECOND / 2), 8_000);
        assertThat(all.stream()
                        .mapToLong(VirtualTimeDriver.Admitted::waitNanos)
                        .max()
                        .orElseThrow())
                .as("longest wait, ns: 64 requests at 2,000 a second take 32 ms")
                .isLessThan(50 * MS);
        assertThat(all.stream()
                        .filter(a -> a.admittedNanos() >= 2_000 * MS && a.admittedNanos() < 3_000 * MS)
                        .count())
                .as("reads admitted from 2 s to 3 s (hot requests draw the reserve as it is lent, not its last slice)")
                .isBetween(1_900L, 2_000L);
    }
}
