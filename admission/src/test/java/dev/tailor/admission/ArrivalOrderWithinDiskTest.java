package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Arrival order within a disk ({@link AdmissionConfig#arrivalOrderWithinDisk}): a small tenant beyond its
 * guarantee's bucket waits in its segments' hot queues beside a large tenant's backlog. Its batch on one
 * segment is followed by a trickle on its other three. With the option the hot service, once it has picked
 * the small tenant's disk, admits that disk's oldest waiting request, so its requests leave the queues in
 * the order they arrived and the batch is not held back by the trickle; without it, the disk's segment
 * queues take turns and the batch's last request waits longer. The shares between the disks
 * are the same either way. Virtual time, one call per millisecond.
 */
class ArrivalOrderWithinDiskTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final int COST = 1_000;
    private static final long BLOCK = 1L << 16;

    private static AdmissionConfig config(boolean arrivalOrder, boolean diskOrder) {
        return VirtualTimeDriver.byteCostConfig(C, DELTA, BLOCK)
                .arrivalOrderWithinDisk(arrivalOrder)
                .diskOrderAcrossGuarantee(diskOrder)
                .build();
    }

    /**
     * What happened to the small tenant's requests that waited as hot: ticket ids in order of admission, and
     * how long each waited.
     */
    private record Outcome(List<Long> admittedIds, List<Long> waitsNanos) {}

    /**
     * Baselines: 5 % of the capacity for the small tenant (a disk of four 64 KiB segments), 45 % for the
     * large one, which sends 105 % of the capacity until 1 s. The small tenant sends 120 requests at once at
     * 100 ms, all on its segment 0, then from 101 to 160 ms one request per millisecond on each of its
     * segments 1, 2 and 3. Every admitted request completes at the next call; 2 s in all.
     */
    private static Outcome run(boolean arrivalOrder, boolean diskOrder) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                config(arrivalOrder, diskOrder),
                List.of(
                        VirtualDisk.committed("small", 4 * BLOCK, C * 1e9 / DELTA * 0.05),
                        VirtualDisk.committed("large", 4 * BLOCK, C * 1e9 / DELTA * 0.45)),
                0));
        long[] largeOffset = {0};
        driver.run(2_000, ms -> {
            List<Long> smallOffsets = new ArrayList<>();
            if (ms == 100) {
                for (int i = 0; i < 120; i++) {
                    smallOffsets.add((long) (i % 60) * COST); // segment 0 (block 0)
                }
            } else if (ms > 100 && ms <= 160) {
                for (int s = 1; s <= 3; s++) {
                    smallOffsets.add(s * BLOCK); // block s: segment s
                }
            }
            int large = ms >= 1_000 ? 0 : ms % 2 == 0 ? 11 : 10;
            for (long offset : smallOffsets) {
                driver.acquireTracked(0, offset, COST);
            }
            for (int i = 0; i < large; i++) {
                largeOffset[0] = (largeOffset[0] + COST) % (4 * BLOCK - COST);
                driver.acquireUntracked(1, largeOffset[0], COST);
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("small tenant's requests still waiting at the end")
                .isEmpty();
        List<VirtualTimeDriver.Admitted> waitedAsHot = driver.tracked().stream()
                .filter(a -> a.queued() && a.ticket().arrivedAs() == SegmentClass.HOT)
                .toList();
        return new Outcome(
                waitedAsHot.stream().map(a -> a.ticket().id()).toList(),
                waitedAsHot.stream().map(VirtualTimeDriver.Admitted::waitNanos).toList());
    }

    @Test
    void arrivalOrder_smallTenantsQueuedRequests_admittedInTheOrderTheyArrived() {
        // The hot service alone, without disk order across the guarantee (the default).
        Outcome with = run(true, false);
        Outcome without = run(false, false);
        assertThat(with.admittedIds()).hasSize(without.admittedIds().size()).hasSizeGreaterThan(100);
        assertThat(VirtualTimeDriver.inArrivalOrder(with.admittedIds()))
                .as("admitted in arrival order")
                .isTrue();
        assertThat(VirtualTimeDriver.inArrivalOrder(without.admittedIds()))
                .as("admitted in arrival order without the option")
                .isFalse();
        // The same share for the disk, served oldest first: the longest wait is shorter (measured 301 ms
        // against 360 ms).
        assertThat(VirtualTimeDriver.max(with.waitsNanos()))
                .as("longest wait, ns")
                .isLessThan(VirtualTimeDriver.max(without.waitsNanos()) - 40 * MS);

        // With disk order as well (the default), the disk's refilling bucket admits its oldest waiting
        // requests at each call too: still in arrival order, and sooner (measured 161 ms).
        Outcome shipped = run(true, true);
        assertThat(VirtualTimeDriver.inArrivalOrder(shipped.admittedIds()))
                .as("admitted in arrival order with disk order")
                .isTrue();
        assertThat(VirtualTimeDriver.max(shipped.waitsNanos()))
                .as("longest wait with disk order, ns")
                .isLessThan(VirtualTimeDriver.max(with.waitsNanos()) - 100 * MS);
    }
}
