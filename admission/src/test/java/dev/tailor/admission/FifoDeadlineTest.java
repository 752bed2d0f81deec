package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fifo deadline ({@link AdmissionConfig#fifoDeadline}): a steady tenant that spent less than its
 * baseline, then surges beyond the guarantee's bucket while another tenant keeps the proxy loaded, has
 * none of its requests held longer than a first-come-first-served proxy would take to finish them.
 * Without the option the same input holds its requests beyond the guarantee's bucket in the hot queue,
 * sharing the hot service with the loaded tenant, for longer than that: the path the option bounds.
 * Virtual time, one call per millisecond.
 */
class FifoDeadlineTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final double CAPACITY_PER_NANO = (double) C / DELTA;
    private static final int COST = 1_000;

    private static AdmissionConfig config(boolean fifoDeadline, boolean diskOrder) {
        return VirtualTimeDriver.byteCostConfig(C, DELTA, 1L << 20)
                .fifoDeadline(fifoDeadline)
                .diskOrderAcrossGuarantee(diskOrder)
                .build();
    }

    /**
     * Per request of the steady tenant: how much later than its fifo finish it was admitted, ns (negative:
     * earlier). The fifo finish is when a first-come-first-served server at the capacity, fed every
     * request of both tenants in order of arrival, would have finished it.
     *
     * <p>Each tenant has half the capacity as baseline. 0–600 ms: the steady tenant sends 40 % of its
     * baseline, the loaded one 140 % of its own (90 % of the capacity together: no fifo backlog);
     * 600–800 ms the steady tenant sends twice its baseline (a fifo backlog builds); then 40 % again until
     * 1.5 s. Every admitted request completes at the next call.
     */
    private static List<Long> steadyLateness(boolean fifoDeadline, boolean diskOrder) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                config(fifoDeadline, diskOrder),
                List.of(
                        VirtualDisk.committed("steady", 1L << 20, C * 1e9 / DELTA / 2),
                        VirtualDisk.committed("loaded", 1L << 20, C * 1e9 / DELTA / 2)),
                0));
        double[] fifoBacklog = {0};
        long[] offset = {0};
        driver.run(1_500, ms -> {
            long t = driver.nowNanos();
            fifoBacklog[0] = Math.max(0, fifoBacklog[0] - CAPACITY_PER_NANO * MS);
            int steady = ms >= 600 && ms < 800 ? 10 : 2;
            int loaded = 7;
            for (int i = 0; i < steady + loaded; i++) {
                offset[0] = (offset[0] + 4_096) % ((1 << 20) - COST);
                fifoBacklog[0] += COST;
                long finish = t + (long) Math.ceil(fifoBacklog[0] / CAPACITY_PER_NANO);
                if (i < steady) {
                    driver.acquireTracked(0, offset[0], COST, finish);
                } else {
                    driver.acquireUntracked(1, offset[0], COST);
                }
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("steady requests still waiting at the end")
                .isEmpty();
        return driver.tracked().stream()
                .map(VirtualTimeDriver.Admitted::waitNanos)
                .toList();
    }

    @Test
    void fifoDeadline_steadyTenantBeyondItsBucket_neverHeldPastItsFifoFinish() {
        List<Long> with = steadyLateness(true, false);
        assertThat(with).hasSize(1_301 * 2 + 200 * 10);
        assertThat(with.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("latest admission after the fifo finish, ns (one call period allowed)")
                .isLessThanOrEqualTo(MS);

        // The path the option bounds: without it (nor disk order) the same requests wait in the hot queue,
        // beside the loaded tenant's backlog, well past their fifo finish.
        List<Long> without = steadyLateness(false, false);
        assertThat(without.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("latest admission after the fifo finish without the option, ns")
                .isGreaterThan(20 * MS);

        // Disk order across the guarantee (the default) closes the same path here without the deadline: the
        // steady disk's refilling bucket admits its oldest waiting requests at each call.
        List<Long> diskOrder = steadyLateness(false, true);
        assertThat(diskOrder).hasSize(with.size());
        assertThat(diskOrder.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("latest admission after the fifo finish with disk order, ns (one call period allowed)")
                .isLessThanOrEqualTo(MS);
    }
}
