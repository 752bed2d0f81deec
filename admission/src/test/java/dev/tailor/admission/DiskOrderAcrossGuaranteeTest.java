package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Disk order across the guarantee ({@link AdmissionConfig#diskOrderAcrossGuarantee}): one tenant, its
 * baseline the whole capacity, sends 130 % of it for one second. Without the option, every request its
 * guarantee bucket covers is admitted at once, so newer requests overtake the ones that had to wait, which
 * wait for what the pools leave after the guarantee's debt: until the tenant stops. With it, a request
 * waits behind its own disk's earlier ones and the bucket admits the oldest first, so the requests leave
 * in the order they came and the longest wait is the backlog's length. And, beside a disk that keeps a
 * backlog, the bound on a request's wait the docs give, as a property. Virtual time, one call per
 * millisecond; every admitted request completes at the next call.
 */
class DiskOrderAcrossGuaranteeTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final int COST = 1_000;
    private static final long BLOCK = 1L << 16;

    private record Outcome(List<Long> admittedIds, List<Long> waitsNanos, int admitted) {}

    /** A byte costs one unit; no borrowing; queues that never refuse. */
    private static AdmissionConfig config(boolean diskOrder) {
        return VirtualTimeDriver.byteCostConfig(C, DELTA, BLOCK)
                .diskOrderAcrossGuarantee(diskOrder)
                .build();
    }

    private static Outcome run(boolean diskOrder) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                config(diskOrder), List.of(VirtualDisk.committed("only", 4 * BLOCK, C * 1e9 / DELTA)), 0));
        long[] offset = {0};
        driver.run(3_000, ms -> {
            // 13 requests of 1,000 units a millisecond: 130 % of the 100,000 units per 10 ms.
            int requests = ms < 1_000 ? 13 : 0;
            for (int i = 0; i < requests; i++) {
                offset[0] = (offset[0] + COST) % (4 * BLOCK - COST);
                driver.acquireTracked(0, offset[0], COST);
            }
        });
        assertThat(driver.trackedStillQueued())
                .as("requests still waiting at the end")
                .isEmpty();
        List<VirtualTimeDriver.Admitted> all = driver.tracked();
        return new Outcome(
                all.stream()
                        .sorted(java.util.Comparator.comparingLong(VirtualTimeDriver.Admitted::admittedNanos))
                        .map(a -> a.ticket().id())
                        .toList(),
                all.stream().map(VirtualTimeDriver.Admitted::waitNanos).toList(),
                all.size());
    }

    @Test
    void aTenantBeyondItsBaseline_isServedInArrivalOrder_andItsLongestWaitIsItsBacklog() {
        Outcome with = run(true);
        Outcome without = run(false);

        assertThat(with.admitted()).isEqualTo(without.admitted()).isEqualTo(13_000);
        assertThat(VirtualTimeDriver.inArrivalOrder(with.admittedIds()))
                .as("in arrival order with the option")
                .isTrue();
        assertThat(VirtualTimeDriver.inArrivalOrder(without.admittedIds()))
                .as("in arrival order without it")
                .isFalse();
        // 30 % beyond the capacity for 1 s: about 300 ms of backlog at the end of the second.
        assertThat(VirtualTimeDriver.max(with.waitsNanos()))
                .as("longest wait with the option, ns")
                .isLessThan(450 * MS);
        assertThat(VirtualTimeDriver.max(without.waitsNanos()))
                .as("longest wait without it, ns")
                .isGreaterThan(VirtualTimeDriver.max(with.waitsNanos()) + 200 * MS);
    }

    @Test
    void requestsTheBucketCoversLater_areNotSteadyDemandForTheReserve() {
        // One large request admitted at once, a second queued behind the first's debt, then 50 small ones the
        // bucket covers: with disk order they wait behind the second and the bucket admits them at the next
        // call, so, as without it, they are the guarantee's, not steady demand the adaptive reserve must hold.
        long[] reserve = new long[2];
        for (int withOrder = 0; withOrder < 2; withOrder++) {
            AdmissionController c = new AdmissionController(
                    config(withOrder == 1), List.of(VirtualDisk.committed("only", 64 * BLOCK, C * 1e9 / DELTA)), 0);
            c.acquire(0, IoKind.READ, 0, 600_000, 0);
            c.acquire(0, IoKind.READ, 0, 600_000, 0);
            for (int i = 0; i < 50; i++) {
                c.acquire(0, IoKind.READ, (20 + i % 40) * BLOCK, COST, 0);
            }
            c.onInterval(DELTA);
            reserve[withOrder] = c.reserveAtStartCostUnits();
        }
        assertThat(reserve[0])
                .as("the reserve without disk order: the least, 0.05 C")
                .isEqualTo(C / 20);
        assertThat(reserve[1]).as("the reserve with disk order").isEqualTo(reserve[0]);
    }

    @Test
    void aRequestWaits_atMostWhatItsDiskHasWaitingAheadOfIt_atTheBaseline_plusOneCall() {
        // The bound docs/admission.md gives: with disk order, a request of a disk waits in admission at most
        // (the cost of its disk's requests waiting when it arrived + its own) ÷ the disk's guaranteed rate,
        // plus one call period, whatever the other disks send: the disk's bucket admits its oldest waiting
        // requests at each call, and nothing else takes the bucket while they wait. Requests no larger than
        // the bucket's depth; baselines adding up to the capacity (so none is scaled down).
        qt().withExamples(40)
                .forAll(
                        integers().between(1, 1_000_000),
                        integers().between(10, 50),
                        integers().between(50, 300))
                .checkAssert((seed, sharePercent, offeredPercent) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    double perSecond = C * 1e9 / DELTA;
                    double ratePerNano = perSecond * sharePercent / 100.0 / 1e9;
                    VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(
                            config(true),
                            List.of(
                                    VirtualDisk.committed("tenant", 4 * BLOCK, perSecond * sharePercent / 100.0),
                                    VirtualDisk.committed(
                                            "backlog", 4 * BLOCK, perSecond * (100 - sharePercent) / 100.0)),
                            0));
                    Map<Ticket, Long> waitingCost = new IdentityHashMap<>();
                    Map<Long, Long> boundById = new HashMap<>();
                    long[] offset = {0};
                    // The tenant offers offeredPercent % of its baseline on average, in random batches; the
                    // other disk 120 % of C until 1.2 s, so the pools never serve the tenant's backlog alone.
                    double meanPerMs = C / 10.0 * sharePercent / 100.0 * offeredPercent / 100.0 / (2 * COST);
                    driver.run(3_000, ms -> {
                        waitingCost.keySet().retainAll(driver.trackedStillQueued());
                        int requests = ms < 1_000 && random.nextInt(4) == 0
                                ? (int) Math.round(4 * meanPerMs * random.nextDouble(2))
                                : 0;
                        for (int i = 0; i < requests; i++) {
                            long ahead = waitingCost.values().stream()
                                    .mapToLong(Long::longValue)
                                    .sum();
                            long length = COST * (1 + random.nextInt(3));
                            offset[0] = (offset[0] + length) % (4 * BLOCK - length);
                            Ticket ticket = driver.acquireTracked(0, offset[0], length);
                            boundById.put(ticket.id(), (long) Math.ceil((ahead + length) / ratePerNano) + MS);
                            if (driver.trackedStillQueued().contains(ticket)) {
                                waitingCost.put(ticket, ticket.costUnits());
                            }
                        }
                        for (int i = 0; i < (ms < 1_200 ? 12 : 0); i++) {
                            driver.acquireUntracked(1, (long) (i % 60) * COST, COST);
                        }
                    });
                    assertThat(driver.trackedStillQueued())
                            .as("still waiting at the end")
                            .isEmpty();
                    for (VirtualTimeDriver.Admitted a : driver.tracked()) {
                        assertThat(a.waitNanos())
                                .as("request %d's wait, ns", a.ticket().id())
                                .isLessThanOrEqualTo(boundById.get(a.ticket().id()));
                    }
                });
    }
}
