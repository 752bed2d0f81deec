package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tailor's three departures from the paper (AdmissionConfig#baselineGuarantee, #pacedRelease,
 * #adaptiveReserve), each against the paper's behaviour ({@link AdmissionConfig#PAPER}) on the same
 * input: the test fails when the departure is switched off.
 */
class SteadyTenantProtectionTest {

    private static final long DELTA = 10_000_000L;
    private static final long C = 100_000; // budget per interval, cost units: 1 cost unit per byte

    /** 1 MiB segments and blocks; a byte costs one unit; C = 100,000 per 10 ms. */
    private static AdmissionConfig config(AdmissionConfig base) {
        return base.toBuilder()
                .capacityCostUnitsPerSecond(C * 1e9 / DELTA)
                .segmentSizeBytes(1L << 20)
                .blockSizeBytes(1L << 20)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false)
                .build();
    }

    /**
     * Disk 0 ("small", one segment) has a baseline of 10 % of the capacity; disk 1 ("large", 8
     * segments) far below its demand. The small disk bursts on its one segment so that the segment
     * turns hot, while the large one keeps a backlog: the small disk's requests within its baseline
     * are still admitted at once.
     */
    @Test
    void baselineGuarantee_requestWithinItsDisksBaseline_isAdmittedAtOnce_onAHotSegmentWithABacklog() {
        for (boolean guarantee : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                    .baselineGuarantee(guarantee)
                    .build();
            List<VirtualDisk> disks = List.of(
                    VirtualDisk.committed("small", 1L << 20, 0.1 * C * 1e9 / DELTA),
                    VirtualDisk.committed("large", 8L << 20, 1));
            AdmissionController c = new AdmissionController(cfg, disks, 0);
            // The large disk floods: its segments are hot and a backlog waits.
            for (int i = 0; i < 40; i++) {
                c.acquire(1, IoKind.READ, (long) (i % 8) << 20, 10_000);
            }
            // The small disk sends 2 × its per-interval baseline in one interval: a burst its window
            // (W = 10 intervals of baseline, 100,000) absorbs, though its one segment's own window
            // threshold is the same 100,000; then one more that exceeds it.
            List<Admission> outcomes = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                outcomes.add(c.acquire(0, IoKind.READ, 0, 5_000));
            }
            outcomes.add(c.acquire(0, IoKind.READ, 0, 5_000));
            long admittedAtOnce = outcomes.stream()
                    .filter(a -> a instanceof Admission.Admitted)
                    .count();
            if (guarantee) {
                // 100,000 of baseline in the bucket: all 20 requests at once; the 21st exceeds the
                // bucket, turns the segment hot (window 105,000 > 100,000) and finds the pools empty.
                assertThat(admittedAtOnce).isEqualTo(20);
                assertThat(outcomes.get(20)).isInstanceOf(Admission.Queued.class);
                // The small disk's 20, and the large disk's first: its bucket (one window of 1 cost unit
                // per second) was full, and a full bucket covers one request, however deep.
                assertThat(c.stats().admittedSteadyRequests()).isEqualTo(21);
            } else {
                // The paper: the main pool and the reserve run dry (the large disk's backlog took
                // main) and the rest of the small disk's requests wait.
                assertThat(admittedAtOnce).isLessThan(20);
            }
        }
    }

    @Test
    void baselineGuarantee_whatThePoolsLackBecomesDebt_repaidBeforeTheNextMainPool() {
        AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                .baselineGuarantee(true)
                .reserveFraction(0.2)
                .build();
        // Baseline: the whole capacity, so the bucket holds 10 intervals' worth.
        List<VirtualDisk> disks = List.of(VirtualDisk.committed("a", 4L << 20, C * 1e9 / DELTA));
        AdmissionController c = new AdmissionController(cfg, disks, 0);
        for (int i = 0; i < 15; i++) {
            assertThat(c.acquire(0, IoKind.READ, (long) (i % 4) << 20, 10_000)).isInstanceOf(Admission.Admitted.class);
        }
        // 150,000 admitted from a budget of 100,000: 50,000 of debt, repaid first at the boundary.
        IntervalReport next = c.onInterval(DELTA);
        assertThat(next.repaidCostUnits()).isEqualTo(50_000);
        assertThat(next.mainCostUnits()).isEqualTo(C - 20_000 - 50_000);
        assertThat(next.debtCostUnits()).isZero();
    }

    @Test
    void baselineGuarantee_neverQueuesOrRefusesARequestWithinTheBaseline_property() {
        // Random floods of a hot disk and random requests of a committed one: every request of the
        // committed disk that fits its bucket (tracked here independently) is admitted at once.
        qt().withExamples(100)
                .forAll(integers().between(1, 1_000_000), integers().between(1, 50))
                .checkAssert((seed, baselinePercent) -> {
                    var random = new java.util.SplittableRandom(seed);
                    double baselinePerSecond = baselinePercent / 100.0 * C * 1e9 / DELTA;
                    AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                            .baselineGuarantee(true)
                            .queueCapacityPerSegment(4)
                            .build();
                    AdmissionController c = new AdmissionController(
                            cfg,
                            List.of(
                                    VirtualDisk.committed("b", 4L << 20, baselinePerSecond),
                                    VirtualDisk.committed("h", 8L << 20, 1)),
                            0);
                    double depth = baselinePerSecond * DELTA / 1e9 * 10;
                    double bucket = depth;
                    long now = 0;
                    for (int step = 0; step < 400; step++) {
                        long dt = random.nextLong(3_000_000);
                        now += dt;
                        c.onInterval(now);
                        bucket = Math.min(depth, bucket + baselinePerSecond * dt / 1e9);
                        for (int k = random.nextInt(6); k > 0; k--) {
                            c.acquire(1, IoKind.WRITE, (long) random.nextInt(8) << 20, 1 + random.nextInt(30_000));
                        }
                        long cost = 1 + random.nextInt(20_000);
                        Admission a = c.acquire(0, IoKind.READ, (long) random.nextInt(4) << 20, cost);
                        // A full bucket also covers one request deeper than it (baselines of 1 % here
                        // are 10,000 deep, requests up to 20,000) and goes below zero.
                        if (bucket >= cost || bucket >= depth) {
                            bucket -= cost;
                            assertThat(a).isInstanceOf(Admission.Admitted.class);
                        }
                    }
                });
    }

    @Test
    void pacedRelease_hotBacklogDrawsTheMainPoolInTenthsOfTheInterval() {
        for (boolean paced : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                    .pacedRelease(paced)
                    .reserveLending(false)
                    .build();
            AdmissionController c =
                    new AdmissionController(cfg, List.of(VirtualDisk.committed("hot", 16L << 20, 1)), 0);
            long atOnce = 0;
            for (int i = 0; i < 200; i++) {
                if (c.acquire(0, IoKind.READ, (long) (i % 16) << 20, 1_000) instanceof Admission.Admitted) {
                    atOnce += 1_000;
                }
            }
            long main = C - 20_000;
            assertThat(atOnce).isEqualTo(paced ? main / 10 : main); // new arrivals are paced too
            IntervalReport atBoundary = c.onInterval(DELTA);
            long firstSlice =
                    atBoundary.admitted().stream().mapToLong(Ticket::costUnits).sum();
            IntervalReport midway = c.onInterval(DELTA + DELTA / 2);
            long byHalf = firstSlice
                    + midway.admitted().stream().mapToLong(Ticket::costUnits).sum();
            IntervalReport late = c.onInterval(DELTA + 9 * DELTA / 10);
            long byEnd = byHalf
                    + late.admitted().stream().mapToLong(Ticket::costUnits).sum();
            if (paced) {
                assertThat(firstSlice).isEqualTo(main / 10);
                assertThat(byHalf).isEqualTo(main * 6 / 10);
            } else {
                assertThat(firstSlice).isEqualTo(main);
            }
            assertThat(byEnd).isEqualTo(main); // all of main goes to the backlog by the interval's end
        }
    }

    @Test
    void pacedRelease_doesNotPaceSteadyRequests() {
        AdmissionConfig cfg =
                config(AdmissionConfig.PAPER).toBuilder().pacedRelease(true).build();
        AdmissionController c =
                new AdmissionController(cfg, List.of(VirtualDisk.committed("steady", 8L << 20, 1e18)), 0);
        // Steady requests take the whole main pool at the interval's start.
        long admitted = 0;
        for (int i = 0; i < 8; i++) {
            if (c.acquire(0, IoKind.READ, (long) i << 20, 10_000) instanceof Admission.Admitted) {
                admitted += 10_000;
            }
        }
        assertThat(admitted).isEqualTo(80_000);
    }

    @Test
    void adaptiveReserve_followsTheLargestRecentSteadyInterval_timesTheMargin_withinBounds() {
        for (boolean adaptive : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                    .adaptiveReserve(adaptive)
                    .build();
            AdmissionController c =
                    new AdmissionController(cfg, List.of(VirtualDisk.committed("steady", 8L << 20, 1e18)), 0);
            c.acquire(0, IoKind.READ, 0, 24_000); // steady demand of 24 % of C
            IntervalReport r1 = c.onInterval(DELTA);
            assertThat(r1.reserveCostUnits()).isEqualTo(adaptive ? 30_000 : 20_000); // 1.25 × 24,000
            c.acquire(0, IoKind.READ, 0, 2_000);
            IntervalReport r2 = c.onInterval(2 * DELTA);
            assertThat(r2.reserveCostUnits()).isEqualTo(adaptive ? 30_000 : 20_000); // the largest of the last W
            c.acquire(0, IoKind.READ, 1L << 20, 60_000);
            IntervalReport r3 = c.onInterval(3 * DELTA);
            assertThat(r3.reserveCostUnits()).isEqualTo(adaptive ? 50_000 : 20_000); // capped at 0.5 C
            IntervalReport r14 = c.onInterval(14 * DELTA); // ten quiet intervals later
            assertThat(r14.reserveCostUnits()).isEqualTo(adaptive ? 5_000 : 20_000); // floor 0.05 C
        }
    }

    @Test
    void weightedHotService_aTenantWithOneHotSegment_isServedAsOftenAsOneWithEight() {
        for (boolean weighted : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                    .weightedHotService(weighted)
                    .reserveLending(false)
                    .build();
            // Equal baselines (both far below demand: hot at once).
            AdmissionController c = new AdmissionController(
                    cfg,
                    List.of(VirtualDisk.committed("big", 8L << 20, 1), VirtualDisk.committed("small", 1L << 20, 1)),
                    0);
            for (int i = 0; i < 160; i++) {
                c.acquire(0, IoKind.READ, (long) (i % 8) << 20, 1_000); // 80 admitted (main), 80 wait
            }
            for (int i = 0; i < 4; i++) {
                assertThat(c.acquire(1, IoKind.READ, 0, 1_000)).isInstanceOf(Admission.Queued.class);
            }
            List<Ticket> order = c.onInterval(DELTA).admitted();
            int lastSmall = -1;
            for (int i = 0; i < order.size(); i++) {
                if (order.get(i).disk() == 1) {
                    lastSmall = i;
                }
            }
            // Weighted: the two disks alternate, so the small one's 4 are among the first 8; round-robin
            // over segments: one turn in 9, the 4th at the 36th place.
            assertThat(lastSmall).isEqualTo(weighted ? 7 : 35);
        }
    }

    /**
     * A disk with a full guarantee bucket (W intervals of its baseline, half the capacity) sends three
     * budgets' worth at once: with the bounded overdraft only what the pools hold plus one interval of
     * its baseline goes at once, and the rest waits as steady; unbounded, all of it goes.
     */
    @Test
    void boundedOverdraft_guaranteeAdmitsAtOnceOnlyThePoolsPlusOneIntervalOfTheBaseline() {
        for (boolean bounded : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.DEFAULTS).toBuilder()
                    .boundedOverdraft(bounded)
                    .build();
            AdmissionController c = new AdmissionController(
                    cfg,
                    List.of(
                            VirtualDisk.committed("a", 4L << 20, 0.5 * C * 1e9 / DELTA),
                            VirtualDisk.committed("b", 4L << 20, 0.5 * C * 1e9 / DELTA)),
                    0);
            List<Admission> outcomes = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                outcomes.add(c.acquire(0, IoKind.READ, (long) (i % 4) << 20, 10_000));
            }
            long atOnce = outcomes.stream()
                    .filter(a -> a instanceof Admission.Admitted)
                    .count();
            // Pools: main 80,000 + reserve 20,000; overdraft: one interval of 50,000.
            assertThat(atOnce).isEqualTo(bounded ? 15 : 30);
            if (bounded) {
                assertThat(outcomes.subList(15, 30)).allMatch(a -> a instanceof Admission.Queued);
                List<Ticket> next = c.onInterval(DELTA).admitted();
                assertThat(next).isNotEmpty().allMatch(t -> t.admittedAs() == SegmentClass.STEADY);
            }
        }
    }

    /**
     * Two disks each committed at the whole capacity: with the bounded overdraft the guarantee scales
     * both down to half (as mClock scales reservations), so a disk may overdraw one interval of half the
     * capacity, not of all of it.
     */
    @Test
    void boundedOverdraft_baselinesAboveTheCapacity_areScaledDownTogetherForTheGuarantee() {
        AdmissionConfig cfg = config(AdmissionConfig.DEFAULTS).toBuilder()
                .boundedOverdraft(true)
                .build();
        AdmissionController c = twoDisksEachCommittedTheCapacity(cfg);
        long atOnce = admittedAtOnce(c, 30);
        // Pools 100,000 + one interval of the scaled baseline, 50,000 (unscaled: up to C − R = 80,000).
        assertThat(atOnce).isEqualTo(15);
    }

    /**
     * A disk sending at exactly its baseline (1,000 cost units per ms), each request half a millisecond
     * after the controller's call (every ms, as the proxy and the simulator call it), after a burst left
     * its bucket 750 short of full: refilled up to each arrival, the bucket holds 1,250 at every arrival
     * and all 30 requests are admitted at once, although its one segment is hot and another disk's
     * backlog has drained the pools. Refilled at the calls only (the overload without a time, or the
     * option off), the bucket holds 750 at every arrival and the requests wait behind the pools.
     */
    /**
     * A disk whose guarantee bucket (W·Δ of its baseline of 200,000 per second: 20,000) is shallower than
     * each of its requests (25,000: large I/O, or a small baseline) sends one every 300 ms, within its
     * baseline, beside a large disk's backlog: each is admitted at once by a full bucket, which goes below
     * zero, so a second request right after one waits until the bucket has refilled (125 ms).
     */
    @Test
    void baselineGuarantee_aFullBucketAdmitsOneRequestDeeperThanIt_andItsRateStillBounds() {
        AdmissionConfig cfg = config(AdmissionConfig.DEFAULTS);
        List<VirtualDisk> disks = List.of(
                VirtualDisk.committed("small", 1L << 20, 0.02 * C * 1e9 / DELTA),
                VirtualDisk.committed("large", 8L << 20, 1));
        AdmissionController c = new AdmissionController(cfg, disks, 0);
        int atOnce = 0;
        long now = 0;
        for (int k = 0; k < 10; k++) {
            now = k * 30 * DELTA;
            c.onInterval(now);
            for (int i = 0; i < 20; i++) {
                c.acquire(1, IoKind.READ, (long) (i % 8) << 20, 10_000, now);
            }
            if (c.acquire(0, IoKind.READ, 0, 25_000, now + 1) instanceof Admission.Admitted) {
                atOnce++;
            }
        }
        assertThat(atOnce)
                .as("one request every 300 ms, each deeper than the bucket")
                .isEqualTo(10);
        // Right after the last one the bucket is 5,000 below zero, and the pools are the large disk's.
        assertThat(c.acquire(0, IoKind.READ, 0, 25_000, now + 2)).isNotInstanceOf(Admission.Admitted.class);
        // The meter the simulator labels requests with agrees: full at 1 ns, refilled 125 ms later.
        BaselineMeter meter = new BaselineMeter(cfg, disks, 0);
        assertThat(meter.within(0, IoKind.READ, 0, 25_000, 1)).isTrue();
        assertThat(meter.within(0, IoKind.READ, 0, 25_000, 2)).isFalse();
        assertThat(meter.within(0, IoKind.READ, 0, 25_000, 124_000_001)).isFalse();
        assertThat(meter.within(0, IoKind.READ, 0, 25_000, 126_000_001)).isTrue();
    }

    @Test
    void baselineRefillOnArrival_aDiskAtExactlyItsBaseline_isAdmittedAtOnceBetweenCalls() {
        for (int variant = 0; variant < 3; variant++) {
            // 0: acquire with the arrival time; 1: acquire without a time; 2: with it, option off.
            AdmissionConfig cfg = config(AdmissionConfig.DEFAULTS).toBuilder()
                    .baselineRefillOnArrival(variant != 2)
                    .build();
            List<VirtualDisk> disks = List.of(
                    VirtualDisk.committed("small", 1L << 20, 0.1 * C * 1e9 / DELTA),
                    VirtualDisk.committed("large", 8L << 20, 1));
            AdmissionController c = new AdmissionController(cfg, disks, 0);
            // The bucket holds one window of baseline (100,000): a burst of 99,250 leaves 750.
            for (int i = 0; i < 19; i++) {
                assertThat(c.acquire(0, IoKind.READ, 0, 5_000, 0)).isInstanceOf(Admission.Admitted.class);
            }
            assertThat(c.acquire(0, IoKind.READ, 0, 4_250, 0)).isInstanceOf(Admission.Admitted.class);
            long admittedAtOnce = 0;
            for (int ms = 0; ms < 30; ms++) {
                long tick = ms * 1_000_000L;
                c.onInterval(tick);
                if (ms % 10 == 0) {
                    // The large disk floods every interval: its segments are hot and a backlog waits.
                    for (int i = 0; i < 20; i++) {
                        c.acquire(1, IoKind.READ, (long) (i % 8) << 20, 10_000, tick);
                    }
                }
                long arrival = tick + 500_000;
                Admission a = variant == 1
                        ? c.acquire(0, IoKind.READ, 0, 1_000)
                        : c.acquire(0, IoKind.READ, 0, 1_000, arrival);
                if (a instanceof Admission.Admitted) {
                    admittedAtOnce++;
                }
            }
            if (variant == 0) {
                assertThat(admittedAtOnce).isEqualTo(30);
            } else {
                assertThat(admittedAtOnce).as("variant %s", variant).isLessThan(30);
            }
        }
    }

    /**
     * Two disks each committed at the whole capacity (an overcommitted backend): with scaled baselines
     * the guarantee meters each at half the capacity, so a disk that had been idle sends at once one
     * classifier window (W = 10 intervals) of half the capacity, not of all of it; the rest waits.
     */
    @Test
    void scaledBaselines_anOvercommittedBackend_guaranteesEachDiskItsShareOfTheCapacity() {
        for (boolean scaled : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.DEFAULTS).toBuilder()
                    .scaledBaselines(scaled)
                    .build();
            AdmissionController c = twoDisksEachCommittedTheCapacity(cfg);
            long atOnce = admittedAtOnce(c, 150);
            // The bucket: W × the baseline per interval, 10 × 50,000 scaled, 10 × 100,000 as given.
            assertThat(atOnce).as("scaled: %s", scaled).isEqualTo(scaled ? 50 : 100);
        }
    }

    /**
     * Baselines that add up to the capacity (fair shares, here half each) are guaranteed as given: the
     * bucket holds exactly W intervals of half the capacity, 50 requests of 10,000, with or without the
     * option.
     */
    @Test
    void scaledBaselines_baselinesThatFitTheCapacity_areGuaranteedAsGiven() {
        for (boolean scaled : new boolean[] {true, false}) {
            AdmissionController c = new AdmissionController(
                    config(AdmissionConfig.DEFAULTS).toBuilder()
                            .scaledBaselines(scaled)
                            .build(),
                    List.of(VirtualDisk.of("a", 4L << 20), VirtualDisk.of("b", 4L << 20)),
                    0);
            long atOnce = admittedAtOnce(c, 150);
            assertThat(atOnce).as("scaled: %s", scaled).isEqualTo(50);
        }
    }

    /**
     * A large disk has been far beyond its baseline for two intervals when a small one (same
     * baseline) starts to wait: by virtual clock the small disk's requests are served first; by
     * start-time fair queueing the two alternate.
     */
    @Test
    void virtualClockHotService_aDiskWithinItsBaselineIsServedBeforeOneFarBeyond() {
        for (boolean clock : new boolean[] {true, false}) {
            AdmissionConfig cfg = config(AdmissionConfig.PAPER).toBuilder()
                    .weightedHotService(true)
                    .virtualClockHotService(clock)
                    .reserveLending(false)
                    .hotThresholdRatio(1e-6)
                    .build();
            double baseline = 0.1 * C * 1e9 / DELTA;
            AdmissionController c = new AdmissionController(
                    cfg,
                    List.of(
                            VirtualDisk.committed("big", 8L << 20, baseline),
                            VirtualDisk.committed("small", 1L << 20, baseline)),
                    0);
            for (int i = 0; i < 400; i++) {
                c.acquire(0, IoKind.READ, (long) (i % 8) << 20, 1_000); // 80 at once, the rest waits
            }
            assertThat(c.onInterval(DELTA).admitted()).hasSize(80).allMatch(t -> t.disk() == 0);
            for (int i = 0; i < 20; i++) {
                assertThat(c.acquire(1, IoKind.READ, 0, 1_000)).isInstanceOf(Admission.Queued.class);
            }
            List<Ticket> order = c.onInterval(2 * DELTA).admitted();
            int lastSmall = -1;
            for (int i = 0; i < order.size(); i++) {
                if (order.get(i).disk() == 1) {
                    lastSmall = i;
                }
            }
            // Clock: big is 150 ms ahead, small at now: small's 20 first. Fair queueing: they alternate.
            assertThat(lastSmall).isEqualTo(clock ? 19 : 38);
        }
    }

    /** Two disks of 4 MiB, each committed the whole capacity (together twice what the backend serves). */
    private static AdmissionController twoDisksEachCommittedTheCapacity(AdmissionConfig cfg) {
        return new AdmissionController(
                cfg,
                List.of(
                        VirtualDisk.committed("a", 4L << 20, C * 1e9 / DELTA),
                        VirtualDisk.committed("b", 4L << 20, C * 1e9 / DELTA)),
                0);
    }

    /** Sends {@code n} reads of 10,000 cost units on disk 0 at once; how many were admitted at once. */
    private static long admittedAtOnce(AdmissionController c, int n) {
        long atOnce = 0;
        for (int i = 0; i < n; i++) {
            atOnce += c.acquire(0, IoKind.READ, (long) (i % 4) << 20, 10_000) instanceof Admission.Admitted ? 1 : 0;
        }
        return atOnce;
    }
}
