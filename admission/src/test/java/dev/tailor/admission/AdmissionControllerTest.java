package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The controller on hand-computed cases, in virtual time. The setup prices a byte at one cost unit
 * (no base cost), has C = 1,000 cost units per 10 ms interval and r = 0.2 (main 800, reserve 200),
 * and cuts disks into segments of 400 bytes with blocks of 100 bytes.
 */
class AdmissionControllerTest {

    private static final long DELTA = 10_000_000L;
    private static final long T0 = 5_000_000_000L;

    private static final AdmissionConfig CONFIG = AdmissionConfig.PAPER.toBuilder()
            .capacityCostUnitsPerSecond(100_000)
            .segmentSizeBytes(400)
            .blockSizeBytes(100)
            .costModel(new IoCostModel(0, 1, 0, 1))
            .queueCapacityPerSegment(2)
            .queueQuantumFraction(1.0)
            .build();

    private static AdmissionController controller(AdmissionConfig config, VirtualDisk... disks) {
        return new AdmissionController(config, List.of(disks), T0);
    }

    private static Ticket admitted(Admission a) {
        assertThat(a).isInstanceOf(Admission.Admitted.class);
        return ((Admission.Admitted) a).ticket();
    }

    private static Ticket queued(Admission a) {
        assertThat(a).isInstanceOf(Admission.Queued.class);
        return ((Admission.Queued) a).ticket();
    }

    @Test
    void acquire_withinBudget_admittedAtOnceAndCounted() {
        AdmissionController c = controller(CONFIG, VirtualDisk.of("a", 1_200));
        Ticket t = admitted(c.acquire(0, IoKind.READ, 0, 100));
        assertThat(t.costUnits()).isEqualTo(100);
        assertThat(t.isAdmitted()).isTrue();
        assertThat(t.admittedAs()).isEqualTo(SegmentClass.STEADY);
        assertThat(t.id()).isZero();
        AdmissionStats s = c.stats();
        assertThat(s.admittedRequests()).isEqualTo(1);
        assertThat(s.admittedCostUnits()).isEqualTo(100);
        assertThat(s.drawnMainCostUnits()).isEqualTo(100);
        assertThat(s.budgetIssuedCostUnits()).isEqualTo(1_000);
    }

    @Test
    void acquire_spanningTwoSegments_costIsTheSumOfItsPartsAndBothSegmentsAreCharged() {
        // a = 10, b = 1: bytes 50 .. 149 are 50 in block 0 (segment 0) and 50 in block 1 (segment 1):
        // (10 + 50) + (10 + 50) = 120, two backend I/Os.
        AdmissionController c = controller(
                CONFIG.toBuilder().costModel(new IoCostModel(10, 1, 10, 1)).build(), VirtualDisk.of("a", 1_200));
        Ticket t = admitted(c.acquire(0, IoKind.WRITE, 50, 100));
        assertThat(t.costUnits()).isEqualTo(120);
        assertThat(t.segmentCount()).isEqualTo(2);
        assertThat(t.segment()).isZero();
    }

    @Test
    void reserve_drawnOnlyBySteadySegmentsOnceMainIsEmpty() {
        // Disk "h" commits 10,000 cost units/s: 100 per interval, 1,000 per 10-interval window.
        // Disk "s" commits 50,000/s: 5,000 per window. One segment each.
        AdmissionController c = controller(
                CONFIG.toBuilder().queueCapacityPerSegment(4).build(),
                VirtualDisk.committed("h", 400, 10_000),
                VirtualDisk.committed("s", 400, 50_000));
        // h: 400 and 800 in its window, steady, admitted from main (800 -> 0).
        admitted(c.acquire(0, IoKind.READ, 0, 400));
        admitted(c.acquire(0, IoKind.READ, 0, 400));
        // The third makes 1,200 > 1,000: hot. Main is empty and hot may not draw the reserve.
        Ticket hot = queued(c.acquire(0, IoKind.READ, 0, 400));
        assertThat(c.segmentClass(0)).isEqualTo(SegmentClass.HOT);
        // s is steady: its 150 comes from the reserve (200 -> 50), its next 100 does not fit.
        Ticket steady = admitted(c.acquire(1, IoKind.READ, 0, 150));
        assertThat(steady.admittedAs()).isEqualTo(SegmentClass.STEADY);
        queued(c.acquire(1, IoKind.READ, 0, 100));
        assertThat(c.stats().drawnReserveCostUnits()).isEqualTo(150);

        // Boundary: main 800, reserve 200. Steady heads first: s's 100 from main (-> 700), then h's
        // 400 (queued first, but hot) from main (-> 300). The hot request never touched the reserve.
        IntervalReport r = c.onInterval(T0 + DELTA);
        assertThat(r.intervalsElapsed()).isEqualTo(1);
        assertThat(r.admitted()).extracting(Ticket::disk).containsExactly(1, 0);
        assertThat(r.admitted().get(1)).isSameAs(hot);
        assertThat(hot.admittedAs()).isEqualTo(SegmentClass.HOT);
        assertThat(r.mainCostUnits()).isEqualTo(300);
        assertThat(r.reserveCostUnits()).isEqualTo(200);
        assertThat(r.hotSegments()).isEqualTo(1);
        assertThat(c.stats().drawnReserveCostUnits()).isEqualTo(150);
    }

    @Test
    void steadyRequest_ofACalmedSegment_isNotHeldBehindThatSegmentsHotBacklog() {
        // W = R = 1: disk h commits 100 per interval; one calm interval makes it steady again.
        AdmissionController c = controller(
                CONFIG.toBuilder()
                        .queueCapacityPerSegment(8)
                        .windowIntervals(1)
                        .recoveryWindows(1)
                        .build(),
                VirtualDisk.committed("h", 400, 10_000));
        // A burst of eight 400s: hot at once; two from main (800), six wait as hot.
        admitted(c.acquire(0, IoKind.READ, 0, 400));
        admitted(c.acquire(0, IoKind.READ, 0, 400));
        for (int i = 0; i < 6; i++) {
            assertThat(queued(c.acquire(0, IoKind.READ, 0, 400)).arrivedAs()).isEqualTo(SegmentClass.HOT);
        }
        // Boundary 1: still hot; main gives two more (800). Boundary 2: a calm interval, steady again;
        // the backlog may now draw main and reserve (1,000): two more, and 200 towards the next.
        assertThat(c.onInterval(T0 + DELTA).admitted()).hasSize(2);
        IntervalReport second = c.onInterval(T0 + 2 * DELTA);
        assertThat(second.admitted())
                .hasSize(2)
                .allSatisfy(t -> assertThat(t.admittedAs()).isEqualTo(SegmentClass.STEADY));
        assertThat(c.segmentClass(0)).isEqualTo(SegmentClass.STEADY);
        // A new request, steady, finds the pools empty and waits, but in the steady queue: first in line.
        Ticket fresh = queued(c.acquire(0, IoKind.READ, 0, 50));
        assertThat(fresh.arrivedAs()).isEqualTo(SegmentClass.STEADY);
        IntervalReport third = c.onInterval(T0 + 3 * DELTA);
        assertThat(third.admitted().get(0)).isSameAs(fresh);
        assertThat(c.waitingRequests(0)).isZero();
    }

    @Test
    void queues_servedRoundRobinAcrossSegments() {
        // r = 0 for clarity, 3 cost units per byte. Disk "x" (segments 0 .. 9) takes 999 of the 1,000
        // tokens; then requests of 300 each on disk "abc" (segments 10, 11, 12): x1, x2 on segment 10,
        // y1 on 11, z1, z2 on 12, all queued, in the order x1, y1, z1, x2, z2.
        AdmissionController c = controller(
                CONFIG.toBuilder()
                        .reserveFraction(0)
                        .costModel(new IoCostModel(0, 3, 0, 3))
                        .build(),
                VirtualDisk.of("x", 4_000),
                VirtualDisk.of("abc", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 100));
        admitted(c.acquire(0, IoKind.READ, 1_000, 233)); // 300 + 699 = 999 of 1,000 drawn
        Ticket x1 = queued(c.acquire(1, IoKind.READ, 0, 100));
        Ticket y1 = queued(c.acquire(1, IoKind.READ, 100, 100));
        Ticket z1 = queued(c.acquire(1, IoKind.READ, 200, 100));
        // Blocks of segment 10 are 0, 3, 6, ...: bytes 300 .. 399 are block 3; bytes 500 .. 599 block 5.
        Ticket x2 = queued(c.acquire(1, IoKind.READ, 300, 100));
        Ticket z2 = queued(c.acquire(1, IoKind.READ, 500, 100));
        assertThat(List.of(x1.segment(), y1.segment(), z1.segment(), x2.segment(), z2.segment()))
                .containsExactly(10, 11, 12, 10, 12);
        // Boundary 1, 1,000 tokens: x1, y1, z1 take 300 each (one per segment per visit, not x1 and
        // x2 first); x2 gets the last 100 towards its 300 and waits.
        IntervalReport first = c.onInterval(T0 + DELTA);
        assertThat(first.admitted()).containsExactly(x1, y1, z1);
        assertThat(first.waitingRequests()).isEqualTo(2);
        // Boundary 2: the ring goes on with segment 12 (z2), then segment 10 finishes x2 (200 more).
        IntervalReport second = c.onInterval(T0 + 2 * DELTA);
        assertThat(second.admitted()).containsExactly(z2, x2);
        assertThat(second.mainCostUnits()).isEqualTo(500);
    }

    @Test
    void acquire_queueFull_refusedWithAReasonNamingSegmentAndLimit_othersStillAdmittedLater() {
        AdmissionController c = controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 100));
        admitted(c.acquire(0, IoKind.READ, 0, 100));
        admitted(c.acquire(0, IoKind.READ, 0, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100));
        admitted(c.acquire(0, IoKind.READ, 300, 100)); // 1,000 drawn
        Ticket q1 = queued(c.acquire(0, IoKind.READ, 0, 10));
        Admission.Queued q2 = (Admission.Queued) c.acquire(0, IoKind.WRITE, 600, 10);
        assertThat(q2.position()).isEqualTo(2);
        Admission refused = c.acquire(0, IoKind.WRITE, 900, 10);
        assertThat(refused).isInstanceOf(Admission.Refused.class);
        Admission.Refused r = (Admission.Refused) refused;
        assertThat(r.reason()).isEqualTo(RefusalReason.QUEUE_FULL);
        assertThat(r.segment()).isZero();
        assertThat(r.message())
                .isEqualTo("disk \"a\" segment 0: 2 requests already wait (queueCapacityPerSegment 2);"
                        + " request WRITE of 10 bytes at offset 900 refused, not queued");
        // Another segment's queue is not full.
        queued(c.acquire(0, IoKind.READ, 100, 10));
        AdmissionStats s = c.stats();
        assertThat(s.refusedRequests()).isEqualTo(1);
        assertThat(s.queuedRequests()).isEqualTo(3);
        assertThat(s.waitingRequests()).isEqualTo(3);
        assertThat(c.waitingRequests(0)).isEqualTo(2);
        IntervalReport next = c.onInterval(T0 + DELTA);
        assertThat(next.admitted()).hasSize(3).contains(q1, q2.ticket());
        assertThat(c.stats().admittedRequests()).isEqualTo(13);
    }

    @Test
    void acquire_zeroQueueCapacity_refusesWhatCannotBeAdmittedAtOnce() {
        AdmissionController c =
                controller(CONFIG.toBuilder().queueCapacityPerSegment(0).build(), VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 800));
        assertThat(c.acquire(0, IoKind.READ, 0, 800)).isInstanceOf(Admission.Refused.class);
    }

    @Test
    void requestCostingMoreThanABudget_collectsItsCostOverSeveralIntervals() {
        // 2,500 cost units against C = 1,000 (r = 0): never coverable in one interval, so it waits and
        // collects 1,000 per boundary; admitted at the third with 500 left over. Nothing is lost.
        AdmissionController c = controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.of("a", 4_000));
        Ticket big = queued(c.acquire(0, IoKind.WRITE, 0, 2_500));
        assertThat(big.segmentCount()).isEqualTo(10);
        assertThat(c.onInterval(T0 + DELTA).admitted()).isEmpty();
        assertThat(c.onInterval(T0 + 2 * DELTA).admitted()).isEmpty();
        IntervalReport third = c.onInterval(T0 + 3 * DELTA);
        assertThat(third.admitted()).containsExactly(big);
        assertThat(third.mainCostUnits()).isEqualTo(500);
    }

    @Test
    void requestCostingMoreThanABudget_withAdvances_admittedOnItsTurn_repaidFirst_oneAdvanceAtATime() {
        // As above, with advances: at the next call (1 ms later) its visit draws the whole pool (the
        // quantum is C) and the 1,500 it lacks become the advance, debt.
        AdmissionController c = controller(
                CONFIG.toBuilder().reserveFraction(0).oversizeAdvance(true).build(), VirtualDisk.of("a", 8_000));
        Ticket big = queued(c.acquire(0, IoKind.WRITE, 0, 2_500));
        IntervalReport now = c.onInterval(T0 + DELTA / 10);
        assertThat(now.admitted()).containsExactly(big);
        assertThat(now.mainCostUnits()).isZero();
        assertThat(now.debtCostUnits()).isEqualTo(1_500);
        assertThat(c.stats().advancedCostUnits()).isEqualTo(1_500);

        // A second one waits while that advance is outstanding: boundary 1 repays 1,000 of it (main 0),
        // boundary 2 the last 500 (main 500), which the second draws, its 2,000 the next advance.
        Ticket second = queued(c.acquire(0, IoKind.WRITE, 4_000, 2_500));
        IntervalReport b1 = c.onInterval(T0 + DELTA);
        assertThat(b1.admitted()).isEmpty();
        assertThat(b1.repaidCostUnits()).isEqualTo(1_000);
        assertThat(b1.debtCostUnits()).isEqualTo(500);
        IntervalReport b2 = c.onInterval(T0 + 2 * DELTA);
        assertThat(b2.admitted()).containsExactly(second);
        assertThat(b2.repaidCostUnits()).isEqualTo(500);
        assertThat(b2.debtCostUnits()).isEqualTo(2_000);
        assertThat(b2.mainCostUnits()).isZero();

        // Admitted: 5,000 = the three budgets begun + the advance outstanding.
        AdmissionStats s = c.stats();
        assertThat(s.admittedCostUnits()).isEqualTo(5_000);
        assertThat(s.budgetIssuedCostUnits()).isEqualTo(3_000);
        assertThat(s.advancedCostUnits()).isEqualTo(3_500);
        assertThat(s.repaidCostUnits()).isEqualTo(1_500);
    }

    @Test
    void expiredCostUnits_isTheRegularBudgetLeftAtTheBoundary() {
        // 100 drawn of main 800: main 700 and reserve 200 expire at the boundary.
        AdmissionController c = controller(CONFIG, VirtualDisk.of("a", 1_200));
        assertThat(c.expiredCostUnits()).isZero();
        admitted(c.acquire(0, IoKind.READ, 0, 100));
        c.onInterval(T0 + DELTA);
        assertThat(c.expiredCostUnits()).isEqualTo(900);
        c.onInterval(T0 + 2 * DELTA);
        assertThat(c.expiredCostUnits()).isEqualTo(1_000);
    }

    @Test
    void grantSpare_admitsWhatWaitsAtOnce_andIsNeverPassedOnAgain() {
        // 2,500 against C = 1,000 (r = 0): the first boundary gives it 1,000; a grant of 1,500 (another
        // proxy's unused budget) completes it at once instead of two boundaries later, and no debt remains.
        AdmissionController c = controller(
                CONFIG.toBuilder().reserveFraction(0).oversizeAdvance(false).build(), VirtualDisk.of("a", 4_000));
        Ticket big = queued(c.acquire(0, IoKind.WRITE, 0, 2_500));
        assertThat(c.onInterval(T0 + DELTA).admitted()).isEmpty();
        assertThat(c.waitingRequests()).isEqualTo(1);
        IntervalReport granted = c.grantSpare(1_500, T0 + DELTA);
        assertThat(granted.admitted()).containsExactly(big);
        assertThat(granted.debtCostUnits()).isZero();
        assertThat(c.waitingRequests()).isZero();
        // A grant nothing drew expires with its interval and is not counted as this proxy's unused budget.
        c.onInterval(T0 + 2 * DELTA);
        assertThat(c.expiredCostUnits()).isZero();
        assertThat(c.grantSpare(700, T0 + 2 * DELTA).admitted()).isEmpty();
        c.onInterval(T0 + 3 * DELTA);
        assertThat(c.expiredCostUnits()).isEqualTo(1_000);
        assertThatThrownBy(() -> c.grantSpare(-1, T0 + 3 * DELTA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("costUnits: expected >= 0, got -1");
    }

    @Test
    void requestCostingExactlyABudget_noAdvance() {
        // C itself is not more than C: it collects its cost as without advances, at the next boundary.
        AdmissionController c = controller(
                CONFIG.toBuilder().reserveFraction(0).oversizeAdvance(true).build(), VirtualDisk.of("a", 4_000));
        admitted(c.acquire(0, IoKind.WRITE, 0, 1));
        Ticket whole = queued(c.acquire(0, IoKind.WRITE, 0, 1_000));
        assertThat(c.onInterval(T0 + DELTA / 10).admitted()).isEmpty();
        assertThat(c.onInterval(T0 + DELTA).admitted()).containsExactly(whole);
        assertThat(c.stats().advancedCostUnits()).isZero();
        assertThat(c.stats().debtCostUnits()).isZero();
    }

    @Test
    void borrow_onlyInTheFirstIntervalOfABurst_upToMeasuredHeadroom_andRepaidFirst() {
        // Interval 1: 20 requests of 40 (800, all from main), each completed after 2 ms. The
        // boundary closes a latency window: t95 = 2 ms, mean cost 40, so
        // H = 0.5 × ln 20 × (10 ms / 2 ms) × 40 = 299.6 (HdrHistogram's 2 ms bucket reads 2.001 ms,
        // so 299). Interval 1 had no deficit and there is no debt: interval 2 may borrow up to H.
        HeadroomConfig trusting =
                HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build();
        AdmissionController c = controller(
                CONFIG.toBuilder().headroom(trusting).queueCapacityPerSegment(4).build(), VirtualDisk.of("a", 1_200));
        for (int i = 0; i < 20; i++) {
            admitted(c.acquire(0, IoKind.READ, 0, 40)).onSuccess(2_000_000);
        }
        IntervalReport r1 = c.onInterval(T0 + DELTA);
        assertThat(r1.p95LatencyNanos()).isCloseTo(2_000_000, within(2_000.0));
        assertThat(r1.headroomCostUnits()).isBetween(298L, 300L);
        long h = r1.headroomCostUnits();
        assertThat(r1.borrowWindowCostUnits()).isEqualTo(h);

        // Interval 2: 1,000 fits main + reserve (steady); 250 more is borrowed (<= H); then only
        // h − 250 is left to borrow, so a request of 100 waits.
        admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        Ticket borrowed = admitted(c.acquire(0, IoKind.READ, 0, 250));
        assertThat(c.stats().borrowedCostUnits()).isEqualTo(250);
        assertThat(c.stats().debtCostUnits()).isEqualTo(250);
        assertThat(borrowed.admittedAs()).isEqualTo(SegmentClass.STEADY);
        Ticket waits = queued(c.acquire(0, IoKind.READ, 0, 100));

        // Boundary 2: reserve 200 first, then the debt of 250, main gets 550; the waiting 100 takes
        // main to 450. The burst goes on (interval 2 was in deficit): no borrowing in interval 3.
        IntervalReport r2 = c.onInterval(T0 + 2 * DELTA);
        assertThat(r2.repaidCostUnits()).isEqualTo(250);
        assertThat(r2.debtCostUnits()).isZero();
        assertThat(r2.reserveCostUnits()).isEqualTo(200);
        assertThat(r2.mainCostUnits()).isEqualTo(450);
        assertThat(r2.admitted()).containsExactly(waits);
        assertThat(r2.borrowWindowCostUnits()).isZero();
        admitted(c.acquire(0, IoKind.READ, 0, 650)); // main 450 + reserve 200
        assertThat(c.acquire(0, IoKind.READ, 0, 1))
                .as("nothing to borrow after the first interval")
                .isInstanceOf(Admission.Queued.class);

        // Boundary 3: interval 3 was in deficit too. Boundary 4 follows a calm interval: a window again.
        assertThat(c.onInterval(T0 + 3 * DELTA).borrowWindowCostUnits()).isZero();
        assertThat(c.onInterval(T0 + 4 * DELTA).borrowWindowCostUnits()).isEqualTo(h);
        assertThat(c.stats().burstsBorrowing()).isEqualTo(1);
    }

    @Test
    void borrowing_off_noWindowEvenWithHeadroom() {
        HeadroomConfig trusting =
                HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build();
        AdmissionController c = controller(
                CONFIG.toBuilder().headroom(trusting).borrowing(false).build(), VirtualDisk.of("a", 1_200));
        for (int i = 0; i < 20; i++) {
            admitted(c.acquire(0, IoKind.READ, 0, 40)).onSuccess(2_000_000);
        }
        IntervalReport r = c.onInterval(T0 + DELTA);
        assertThat(r.borrowWindowCostUnits()).isZero();
        assertThat(r.headroomCostUnits()).isZero();
        assertThat(r.p95LatencyNanos()).isCloseTo(2_000_000, within(2_000.0));
    }

    @Test
    void onInterval_idleForAnHour_passesAllBoundariesQuicklyAndRecovers() {
        // A hot segment with a waiting request, then an hour without calls: the segment recovers
        // after W + R boundaries, the remaining ~360,000 are skipped, and the last one serves the
        // queue from its budget (main 1,000 - 100).
        // Disk "a" commits 1,000/s over 10 segments: 1 cost unit per interval and segment, so the
        // first request (100 in each segment) turns all of them hot; main (r = 0) still admits it.
        AdmissionController c =
                controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.committed("a", 4_000, 1_000));
        admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        Ticket waiting = queued(c.acquire(0, IoKind.READ, 0, 100));
        assertThat(c.segmentClass(0)).isEqualTo(SegmentClass.HOT);
        long hour = 3_600_000_000_000L;
        IntervalReport r = c.onInterval(T0 + hour + DELTA / 2);
        assertThat(r.intervalsElapsed()).isEqualTo(360_000);
        assertThat(r.intervalStartNanos()).isEqualTo(T0 + hour);
        assertThat(r.admitted()).containsExactly(waiting);
        assertThat(c.segmentClass(0)).isEqualTo(SegmentClass.STEADY);
        assertThat(r.mainCostUnits()).isEqualTo(900);
        AdmissionStats s = c.stats();
        assertThat(s.intervalsBegun()).isEqualTo(360_001);
        assertThat(s.budgetIssuedCostUnits()).isEqualTo(360_001_000L);
    }

    @Test
    void onInterval_timeNotAdvancing_changesNothing() {
        AdmissionController c = controller(CONFIG, VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 700));
        assertThat(c.onInterval(T0).intervalsElapsed()).isZero();
        assertThat(c.onInterval(T0 + DELTA - 1).intervalsElapsed()).isZero();
        IntervalReport still = c.onInterval(T0 + DELTA - 1);
        assertThat(still.mainCostUnits()).isEqualTo(100);
        assertThat(c.onInterval(T0 + DELTA).intervalsElapsed()).isEqualTo(1);
    }

    @Test
    void onInterval_clockSteppedBackFiveSeconds_issuesNothingThenServesWithinOneInterval() {
        // A waiting request, then the clock steps back 5 s and runs on from there, called every
        // millisecond. The backward call issues nothing; the running interval restarts at its time,
        // so the request goes at the boundary one interval later. (Ignoring every call until the
        // clock caught up with the old grid held the queue, and refused newcomers once it was full,
        // for 5 s.)
        AdmissionController c = controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        Ticket waiting = queued(c.acquire(0, IoKind.READ, 0, 100));
        long stepped = T0 + DELTA / 2 - 5_000_000_000L;
        IntervalReport back = c.onInterval(stepped);
        assertThat(back.intervalsElapsed()).isZero();
        assertThat(back.admitted()).isEmpty();
        assertThat(back.intervalStartNanos()).isEqualTo(stepped);
        assertThat(back.mainCostUnits())
                .as("nothing issued by the backward call")
                .isZero();
        long admittedAt = -1;
        for (long t = stepped + 1_000_000; t <= stepped + 2 * DELTA && admittedAt < 0; t += 1_000_000) {
            if (c.onInterval(t).admitted().contains(waiting)) {
                admittedAt = t;
            }
        }
        assertThat(admittedAt - stepped)
                .as("ns from the step back to the waiting request's admission")
                .isEqualTo(DELTA);
    }

    @Test
    void onInterval_clockSteppedBack_drawsNothingEvenWithTokensLeft() {
        // r = 0: main 1,000. 600 go at once, 500 wait with 400 left: a call inside the interval would
        // fund the waiting request from those; a call before the interval's start draws nothing.
        AdmissionController c = controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 600));
        queued(c.acquire(0, IoKind.READ, 0, 500));
        long drawn = c.stats().drawnMainCostUnits();
        IntervalReport back = c.onInterval(T0 - DELTA);
        assertThat(back.admitted()).isEmpty();
        assertThat(back.mainCostUnits()).isEqualTo(400);
        assertThat(c.stats().drawnMainCostUnits())
                .as("cost drawn by the backward call")
                .isEqualTo(drawn);
        assertThat(c.onInterval(T0 - DELTA + 1).mainCostUnits())
                .as("a call inside the interval serves")
                .isLessThan(400);
    }

    @Test
    void onInterval_strayReadingBehindTheGrid_costsAtMostOneBudget() {
        // A stray reading 5 s behind, then the clock as before: the call at the old time passes 500
        // boundaries of the moved grid, and like any late call issues one interval's budget.
        AdmissionController c = controller(
                CONFIG.toBuilder().reserveFraction(0).queueCapacityPerSegment(4).build(), VirtualDisk.of("a", 1_200));
        admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        c.onInterval(T0 - 5_000_000_000L);
        long drawnBefore = c.stats().drawnMainCostUnits();
        for (int i = 0; i < 3; i++) {
            queued(c.acquire(0, IoKind.READ, 0, 400));
        }
        IntervalReport r = c.onInterval(T0 + 1);
        assertThat(r.intervalsElapsed()).isEqualTo(500);
        assertThat(r.admitted()).hasSize(2);
        assertThat(c.stats().drawnMainCostUnits() - drawnBefore).isEqualTo(1_000);
    }

    @Test
    void onInterval_clockJumpsElevenSeconds_issuesOneIntervalsBudgetNotElevenHundred() {
        // The proxy's setting that showed it: capacity 1e7 cost units/s (C = 100,000 per 10 ms), 64
        // requests per segment, blk-iocost's SSD prices. One segment's queue holds 64 writes of
        // 4 KiB (45,579 each: about 29 intervals' worth); the time passed jumps 11 s ahead. Passing
        // 1,100 boundaries used to serve the queue at each, releasing all 64 in one call; the budgets
        // of the intervals the call was late for expire, so it releases one interval's worth: 2.
        AdmissionConfig proxy = AdmissionConfig.PAPER.toBuilder()
                .capacityCostUnitsPerSecond(1e7)
                .queueCapacityPerSegment(64)
                .build();
        AdmissionController c = controller(proxy, VirtualDisk.of("vm", 1L << 30));
        int admittedAtOnce = 0;
        int queued = 0;
        for (int i = 0; i < 66; i++) {
            Admission a = c.acquire(0, IoKind.WRITE, 4096L * i, 4096);
            admittedAtOnce += a instanceof Admission.Admitted ? 1 : 0;
            queued += a instanceof Admission.Queued ? 1 : 0;
        }
        assertThat(queued).isEqualTo(64);
        AdmissionStats before = c.stats();
        IntervalReport jump = c.onInterval(T0 + 11_000_000_000L);
        AdmissionStats after = c.stats();
        long drawn = after.drawnMainCostUnits()
                + after.drawnReserveCostUnits()
                + after.lentReserveCostUnits()
                - before.drawnMainCostUnits()
                - before.drawnReserveCostUnits()
                - before.lentReserveCostUnits();
        assertThat(jump.intervalsElapsed()).isEqualTo(1_100);
        assertThat(drawn).as("cost units drawn by the one call").isLessThanOrEqualTo(proxy.budgetCostUnits());
        assertThat(jump.admitted()).hasSize((int) (proxy.budgetCostUnits() / 45_579));
        assertThat(jump.waitingRequests()).isEqualTo(64 - jump.admitted().size());
        assertThat(admittedAtOnce).isEqualTo(2);
    }

    @Test
    void onInterval_clockCrossingLongMaxValue_countsByDifference() {
        // System.nanoTime may start anywhere, and may overflow: only differences matter.
        long start = Long.MAX_VALUE - DELTA / 2;
        AdmissionController c = new AdmissionController(CONFIG, List.of(VirtualDisk.of("a", 1_200)), start);
        IntervalReport r = c.onInterval(start + 3 * DELTA); // wraps to a negative long
        assertThat(r.intervalsElapsed()).isEqualTo(3);
        assertThat(r.intervalStartNanos()).isEqualTo(start + 3 * DELTA);
    }

    @Test
    void ticket_completion_exactlyOnceAndOnlyWhenAdmitted() {
        AdmissionController c = controller(CONFIG.toBuilder().reserveFraction(0).build(), VirtualDisk.of("a", 1_200));
        Ticket t = admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        Ticket w = queued(c.acquire(0, IoKind.READ, 0, 1));
        assertThatThrownBy(() -> w.onSuccess(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("ticket 1 is still queued (expected: complete it only after it has been admitted)");
        assertThatThrownBy(() -> t.onSuccess(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("latencyNanos : -1 (expected: >= 0)");
        assertThat(t.isCompleted()).isFalse();
        t.onDropped(5_000_000);
        assertThat(t.isCompleted()).isTrue();
        assertThatThrownBy(t::onIgnore)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("ticket 0 was already completed as dropped (expected: exactly one completion)");
        c.onInterval(T0 + DELTA);
        w.onIgnore();
        AdmissionStats s = c.stats();
        assertThat(s.completedDropped()).isEqualTo(1);
        assertThat(s.completedIgnored()).isEqualTo(1);
        assertThat(s.completedSuccess()).isZero();
    }

    @Test
    void cancel_waitingRequest_leavesItsQueueAndIsNeverAdmitted() {
        // r = 0: main 1,000. The first request takes it all; three wait (queue capacity 4). The
        // middle one is withdrawn (its client went away): the boundary admits the other two, in order.
        AdmissionController c = controller(
                CONFIG.toBuilder().reserveFraction(0).queueCapacityPerSegment(4).build(), VirtualDisk.of("a", 1_200));
        Ticket first = admitted(c.acquire(0, IoKind.READ, 0, 1_000));
        Ticket a = queued(c.acquire(0, IoKind.READ, 0, 300));
        Ticket b = queued(c.acquire(0, IoKind.READ, 0, 300));
        Ticket d = queued(c.acquire(0, IoKind.READ, 0, 300));
        assertThat(c.cancel(b)).isTrue();
        assertThat(c.cancel(b)).as("withdrawn once").isFalse();
        assertThat(c.cancel(first)).as("admitted already: completed as usual").isFalse();
        assertThat(c.waitingRequests(0)).isEqualTo(2);
        IntervalReport r = c.onInterval(T0 + DELTA);
        assertThat(r.admitted()).containsExactly(a, d);
        assertThat(b.isAdmitted()).isFalse();
        AdmissionStats s = c.stats();
        assertThat(s.cancelledRequests()).isEqualTo(1);
        assertThat(s.admittedRequests() + s.waitingRequests() + s.refusedRequests() + s.cancelledRequests())
                .isEqualTo(4);
        AdmissionController other = controller(CONFIG, VirtualDisk.of("b", 1_200));
        assertThatThrownBy(() -> other.cancel(a))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected: a ticket of this controller");
    }

    @Test
    void setReserveFraction_appliesAtTheNextBoundary_andRejectsBadValues() {
        AdmissionController c = controller(CONFIG, VirtualDisk.of("a", 1_200));
        c.setReserveFraction(0.5);
        assertThat(c.reserveFraction()).isEqualTo(0.5);
        IntervalReport r = c.onInterval(T0 + DELTA);
        assertThat(r.reserveCostUnits()).isEqualTo(500);
        assertThat(r.mainCostUnits()).isEqualTo(500);
        assertThatThrownBy(() -> c.setReserveFraction(1.01))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("reserveFraction : 1.01 (expected: a number in [0, 1])");
        assertThatThrownBy(() -> c.setReserveFraction(Double.NaN))
                .hasMessage("reserveFraction : NaN (expected: a number in [0, 1])");
    }

    @Test
    void acquire_badRequest_rejectedNamingTheField() {
        AdmissionController c = controller(CONFIG, VirtualDisk.of("a", 1_200));
        assertThatThrownBy(() -> c.acquire(0, IoKind.READ, 0, 0))
                .hasMessageStartingWith("lengthBytes : 0 (expected: 1 ..");
        assertThatThrownBy(() -> c.acquire(0, IoKind.READ, -5, 1)).hasMessageStartingWith("offsetBytes : -5");
        assertThatThrownBy(() -> c.acquire(0, IoKind.READ, 1_100, 101)).hasMessageStartingWith("lengthBytes : 101");
        assertThatThrownBy(() -> c.acquire(2, IoKind.READ, 0, 1)).hasMessage("disk : 2 (expected: 0 .. 0)");
        assertThatThrownBy(() -> c.acquire(0, null, 0, 1)).hasMessage("kind : null (expected: READ or WRITE)");
        assertThatThrownBy(() -> new AdmissionController(null, List.of(VirtualDisk.of("a", 1)), 0))
                .hasMessageStartingWith("config : null");
        assertThat(c.stats().admittedRequests()).isZero();
    }

    @Test
    void thresholds_defaultFairShare_capacitySplitOverDisksThenSegments() {
        // Capacity 100,000/s over 2 disks: 50,000/s each. Disk "a" has 3 segments: 16,666.7/s each,
        // 166.67 per 10 ms interval, 1,666.7 per 10-interval window. Disk "b" commits 4,000/s in one
        // segment: 40 per interval, 400 per window.
        List<VirtualDisk> disks = List.of(VirtualDisk.of("a", 1_200), VirtualDisk.committed("b", 1, 4_000));
        double[] t = AdmissionController.thresholds(CONFIG, new SegmentMap(disks, 400, 100));
        assertThat(t).hasSize(4);
        assertThat(t[0]).isCloseTo(50_000.0 / 3 * 0.01 * 10, within(1e-9));
        assertThat(t[2]).isEqualTo(t[0]);
        assertThat(t[3]).isCloseTo(400, within(1e-9));
    }
}
