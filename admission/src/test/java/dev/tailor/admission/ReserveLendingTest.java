package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reserve lending (AdmissionConfig#reserveLending, our reading): inside an interval the part of the
 * reserve that steady segments can no longer need goes to waiting hot requests. Two sides: steady
 * requests that arrive no later than an even spread of r·C over the interval are still admitted at
 * once while hot requests flood the proxy, and hot requests left waiting find no more of the reserve
 * idle than the interval's remaining share of it.
 */
class ReserveLendingTest {

    private static final long DELTA = 10_000_000L;
    private static final int TICKS = 10;

    @Test
    void steadyArrivalsWithinAnEvenSpreadOfTheReserve_areAdmittedAtOnce_whileHotWaitersDrainTheRest() {
        qt().withExamples(200)
                .forAll(
                        integers().between(1_000, 200_000), // C
                        integers().between(1, 5), // r in tenths
                        integers().between(1, 30), // steady requests per interval
                        integers().between(1, 1_000_000)) // seed for the hot flood and arrival times
                .checkAssert((budget, tenths, perInterval, seed) -> run(budget, tenths / 10.0, perInterval, seed));
    }

    private static void run(long budget, double r, int steadyPerInterval, int seed) {
        var random = new java.util.SplittableRandom(seed);
        AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                .capacityCostUnitsPerSecond(budget * 1e9 / DELTA)
                .segmentSizeBytes(1L << 20)
                .blockSizeBytes(1L << 20)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .reserveFraction(r)
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false)
                .build();
        long reserve = (long) Math.floor(r * budget);
        long steadyCost = reserve / steadyPerInterval;
        if (steadyCost == 0) {
            return;
        }
        // Disk 0 is committed far above its demand (always steady), disk 1 far below (hot at once).
        List<VirtualDisk> disks =
                List.of(VirtualDisk.committed("steady", 1L << 20, 1e18), VirtualDisk.committed("hot", 64L << 20, 1));
        long start = 5 * DELTA;
        AdmissionController c = new AdmissionController(config, disks, start);
        for (int interval = 0; interval < 20; interval++) {
            long t0 = start + interval * DELTA;
            c.onInterval(t0);
            // The hot flood: more than a whole budget, on several segments of the hot disk.
            long flooded = 0;
            while (flooded < 2 * budget) {
                long cost = 1 + random.nextLong(Math.max(1, budget / 8));
                long offset = (long) random.nextInt(64) << 20;
                c.acquire(1, IoKind.READ, offset, Math.min(cost, 1L << 20));
                flooded += Math.min(cost, 1L << 20);
            }
            // The i-th steady request arrives no later than i/k of the way into the interval.
            int tick = 0;
            for (int i = 0; i < steadyPerInterval; i++) {
                long latest = i * DELTA / steadyPerInterval;
                long earliest = i == 0 ? 0 : (i - 1) * DELTA / steadyPerInterval;
                long at = t0 + earliest + random.nextLong(latest - earliest + 1);
                while (tick < TICKS && t0 + tick * DELTA / TICKS <= at) {
                    tickAndCheck(c, t0 + tick * DELTA / TICKS, t0, reserve);
                    tick++;
                }
                Admission a = c.acquire(0, IoKind.WRITE, 0, steadyCost);
                assertThat(a)
                        .as("steady request %d of interval %d at +%d ns", i, interval, at - t0)
                        .isInstanceOf(Admission.Admitted.class);
            }
            while (tick < TICKS) {
                tickAndCheck(c, t0 + tick * DELTA / TICKS, t0, reserve);
                tick++;
            }
        }
        if (reserve - steadyPerInterval * steadyCost > Math.ceil(reserve / (double) TICKS)) {
            // Steady requests left more of the reserve than the last tick keeps back.
            assertThat(c.stats().lentReserveCostUnits())
                    .as("hot requests drew lent reserve")
                    .isPositive();
        }
    }

    /** A call inside the interval: when hot requests still wait, little of the reserve lies idle. */
    private static void tickAndCheck(AdmissionController c, long now, long intervalStart, long reserve) {
        IntervalReport report = c.onInterval(now);
        long left = intervalStart + DELTA - now;
        if (report.waitingRequests() > 0 && now > intervalStart) {
            long keep = (long) Math.ceil(reserve * (left / (double) DELTA));
            assertThat(report.reserveCostUnits())
                    .as("reserve idle at +%d ns while hot requests wait", now - intervalStart)
                    .isLessThanOrEqualTo(keep);
            assertThat(report.mainCostUnits()).isZero();
        }
    }
}
