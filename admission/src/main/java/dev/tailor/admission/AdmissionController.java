package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Burst-aware segment admission for one storage proxy (docs/design.md#segment-admission): decides when
 * a block request may go to the shared backend. It ties together the {@link SegmentMap} (which
 * segments a request touches), the {@link IoCostModel} (what it costs), the steady/hot classifier,
 * the dual token pool, the per-segment queues and the headroom model. Pure: it never reads a clock
 * and does no I/O; time arrives as {@code nowNanos} in {@link #onInterval} and in {@code acquire}'s
 * arrival time, so the same class runs in the proxy and in the simulator.
 *
 * <h2>Use</h2>
 * <pre>{@code
 * var disks = List.of(VirtualDisk.of("tenant-a", 100L << 30), VirtualDisk.committed("tenant-b", 1L << 40, 4e8));
 * var controller = new AdmissionController(AdmissionConfig.DEFAULTS, disks, System.nanoTime());
 *
 * // per request
 * // disk 0: "tenant-a", by list order; the arrival time refills its baseline bucket up to now
 * switch (controller.acquire(0, IoKind.READ, offset, length, System.nanoTime())) {
 *     case Admission.Admitted a -> send(a.ticket());       // later: ticket.onSuccess(latencyNanos)
 *     case Admission.Queued q -> waiting.put(q.ticket(), request);  // handed out by onInterval when admitted
 *     case Admission.Refused r -> fail(r.message());
 * }
 *
 * // every millisecond or so, at least every Δ = 10 ms
 * IntervalReport report = controller.onInterval(System.nanoTime());
 * report.admitted().forEach(this::send);
 * }</pre>
 *
 * <h2>What happens to a request</h2>
 * <ol>
 *   <li>Its cost, Σ over the segments it touches of {@code a + b × bytes there}, is charged to those
 *       segments' classifier windows; a segment whose window now exceeds its baseline turns hot.</li>
 *   <li>It is steady when every segment it touches is steady, else hot.</li>
 *   <li>If no request of its class waits at its first segment (for a hot one: no request at all) and the
 *       pools cover it — main, then for steady the reserve (for hot, only the part lent to it), then
 *       in the first interval of a burst the borrow allowance — it is admitted.</li>
 *   <li>Otherwise it waits in that segment's queue for its class, keeping its class, or is refused
 *       ({@link RefusalReason#QUEUE_FULL}) when the segment's queues are full.</li>
 *   <li>At each interval boundary the classifier's windows slide, the pools are replenished (reserve,
 *       then debt, then main), the queues are served round-robin, and the headroom model reads the
 *       latencies completed tickets reported. Calls between boundaries serve the queues again.</li>
 * </ol>
 *
 * <h2>Threads</h2>
 * Every public method is thread-safe. {@link #acquire}, {@link #onInterval} and {@link #stats}
 * serialise on one lock and hold it for O(segments the request touches) and O(active segments +
 * requests admitted) respectively.
 * {@link #setReserveFraction} is a volatile write that the next boundary reads; {@link Ticket}
 * completion is wait-free and takes no lock. Nothing calls back into user code.
 *
 * <h2>Time</h2>
 * Intervals lie on a grid: {@code startNanos + k·Δ}. {@link #onInterval} passes every boundary up to
 * {@code nowNanos}; called between boundaries it lends and serves (next paragraph), called late it
 * passes several boundaries at once (idle ones in O(1), so an hour of silence costs no more than one
 * interval). Only the last boundary a call passes serves the queues: the budgets of the intervals it
 * was late for expire unused, as every unused budget does, so one call issues at most one interval's
 * budget C, whatever the gap since the one before (a clock that jumps forward, a loop that stalled),
 * and borrowing stays bounded by the one window a burst may open (advances, for requests costing
 * more than C, add less than twice the largest such cost outstanding, one request's with a single
 * advance). A call whose time lies before the start of the running interval (time that went backwards) issues nothing and restarts the running
 * interval at that time: the grid moves back with the clock, and the next boundary is one interval
 * away rather than wherever the old grid lies ahead. Times compare by difference, as
 * {@link System#nanoTime()} requires.
 *
 * <p>Between boundaries (our reading, see {@link AdmissionConfig#reserveLending}): each call inside the
 * running interval, at its very start included, lends hot requests the part of the reserve steady ones
 * can no longer need in it, {@code reserve − ceil(r·C × time left ÷ Δ)} (whether or not requests wait:
 * hot requests arriving later draw it too; what is lent stays lent, so a call at an earlier time than
 * the one before it lends nothing more), and serves the queues from what the pools still hold. So a
 * proxy that calls every millisecond leaves no capacity idle for lack of a boundary, and the reserve
 * does not expire unused while hot requests wait.
 *
 * <h2>Departures from the paper (ours; each an option of {@link AdmissionConfig}, all off in
 * {@link AdmissionConfig#PAPER}; each says whether it is on by default; docs/admission-record.md has the
 * measurements)</h2>
 * <ul>
 *   <li><b>Baseline guarantee.</b> Each disk meters its requests against its baseline (its commitment,
 *       default a fair share) in a bucket refilled at that rate up to each request's arrival time,
 *       when {@link #acquire(int, IoKind, long, long, long)} is given it, and by every call of
 *       {@link #onInterval}, and one classifier window deep (W·Δ of baseline). (The ablation
 *       {@link AdmissionConfig#baselineRefillOnArrival} off, or {@code acquire} without a time, refills
 *       it at {@link #onInterval} only.) A request the bucket covers is steady whatever
 *       its segments' history, and is admitted at once while its disk has no request waiting here (with
 *       disk order across the guarantee, below; without it, always): from main, then the reserve, and what
 *       they lack becomes debt that the next main pools repay before anything else. So admission never
 *       delays a request within its tenant's baseline but behind that tenant's own older waiting requests,
 *       and without disk order never delays, queues or refuses one. A full bucket also covers one request
 *       costing more than its depth, and goes below zero ({@link #guaranteeHolds}). What it lets through
 *       beyond the budget in one interval is bounded by Σ (baseline × Δ) + Σ max(bucket depth, largest
 *       request's cost).</li>
 *   <li><b>Scaled baselines</b> (refines the guarantee). Baselines that add up to more than the capacity
 *       (an overcommitted backend) are scaled down together, to add up to it, for the guarantee: the
 *       at-once flow then never exceeds what the backend serves, as mClock's reservations must fit the
 *       capacity. The classifier keeps the baselines as given.</li>
 *   <li><b>Bounded overdraft</b> (refines the guarantee; off by default: with it a request within its
 *       baseline may wait, which the guarantee exists to rule out). What the pools lack for a request within its
 *       baseline is admitted at once only while it fits the disk's overdraft bucket (one interval of its
 *       baseline, refilled at it) and keeps the debt within what the next boundary repays (C − R);
 *       otherwise the request waits, steady, in its segment's steady queue, which is served first. So
 *       the guarantee puts at most one interval's budget ahead of the pools into the backend's queue,
 *       where the window-deep bucket alone let a tenant that had been idle send W intervals of its
 *       baseline at once.</li>
 *   <li><b>Virtual-clock hot service</b> (off by default: measured, it did not pay everywhere). Hot
 *       queues are served in the order of their disks' virtual clocks, which every admission moves by
 *       cost ÷ baseline, from now at the earliest and at most R·Δ ahead of now, instead of by start-time
 *       fair queueing; steady queues too.</li>
 *   <li><b>Fifo deadline</b> (off by default: measured, it did not pay on every mix). A waiting request
 *       of a disk within its baseline over the last R·Δ (credits: baseline × time − cost, from 0, at most
 *       R·Δ of baseline) is admitted at once, what the pools lack becoming debt, when holding it longer
 *       would finish it later than a first-come-first-served server at the capacity, fed every request,
 *       would: so it waits in admission at most until that finish plus one call period. It bounds the
 *       path by which a steady tenant's requests beyond its guarantee's bucket, classed hot, wait in
 *       their segment's hot queue beside the large tenants' backlogs for longer than no admission
 *       would make them wait.</li>
 *   <li><b>Late-first hot service</b> (off by default: measured, it did not pay on every mix). In the
 *       queue service after the steady queues, a waiting request whose fifo finish (as the fifo deadline
 *       computes it) has passed, of a disk with no more cost waiting than the mean over the disks with
 *       requests waiting, goes ahead of the others, the earliest fifo finish first. It draws only from
 *       the pools: it reorders the service and adds no load.</li>
 *   <li><b>Bounded lag in the hot service</b> (off by default: measured, it did not pay on every mix). Under
 *       start-time fair queueing a disk whose hot queue was empty starts again at the system's virtual
 *       time; with the bounded lag it may start up to one classifier window (W·Δ) of its baseline behind
 *       it, so a batch after a quiet spell goes ahead of a continuing backlog for that much of its
 *       baseline. It reorders the hot service and adds no load.</li>
 *   <li><b>Paced release.</b> Hot requests draw the main pool in {@link AdmissionConfig#PACING_SLICES}
 *       equal steps over the interval (the step due at a call is released by that call), so the
 *       backlog does not put a whole interval of work into the backend's queue at each boundary,
 *       ahead of the steady requests that follow. Steady requests are not paced. It needs calls
 *       between boundaries (a proxy calls every millisecond); called only at boundaries, hot requests
 *       would get one slice per interval. (Pacing by the cost in flight instead, admitting hot
 *       requests while less than 0.2 or 0.5 of C was admitted and not completed, was measured and
 *       rejected: docs/admission-record.md.)</li>
 *   <li><b>Adaptive reserve.</b> At each boundary the reserve is the largest steady cost of the last W
 *       intervals that the baseline guarantee did not cover (with it on, requests within their
 *       baseline are admitted whatever the pools hold) × {@link AdmissionConfig#ADAPTIVE_RESERVE_MARGIN}, within
 *       [{@link AdmissionConfig#ADAPTIVE_RESERVE_MIN_FRACTION}, {@link AdmissionConfig#ADAPTIVE_RESERVE_MAX_FRACTION}]
 *       of C, instead of r·C; {@link #setReserveFraction} then has no effect.</li>
 *   <li><b>Weighted hot service.</b> Waiting hot requests are served in proportion to their disks'
 *       baselines (start-time fair queueing over disks), not round-robin over segments, so a tenant
 *       a little beyond its baseline is not held behind the backlog of one with many hot segments far
 *       beyond its own. Steady queues are still served first, round-robin.</li>
 *   <li><b>Advances for requests costing more than the budget.</b> A waiting request costing more than
 *       C is admitted on its turn in the queue service, once it has drawn what that visit gives it, if the
 *       pool may advance: what it still lacks becomes debt that the next main pools repay
 *       first ({@link DualTokenPool#advance}), as the guarantee's full bucket covers one request larger
 *       than its depth. Without it such a request waits {@code ⌈cost ÷ C⌉} intervals or more while it
 *       collects its cost, on a backend that may idle meanwhile. With overlapping advances (an option, off) a new
 *       one may be made while the advances outstanding are less than its request's cost, so a second such
 *       request does not wait for the first's to be repaid; what the controller admits beyond the budgets,
 *       borrowing and the guarantee's overdraft grows by less than twice the largest request's cost (one
 *       request's cost with {@link AdmissionConfig#overlappingAdvances} off: one advance outstanding). With
 *       credit-gated advances (an option refining it, off), only a request whose disk was within its credits
 *       when it arrived (as the fifo deadline keeps them, kept for this option too) takes an advance while
 *       another is outstanding; the others wait until none is.</li>
 *   <li><b>Arrival order within a disk.</b> Once the weighted hot service has picked a disk, it serves
 *       that disk's oldest waiting request, whichever segment it waits at, not the disk's segment queues
 *       in ring order: the disks' shares are unchanged, and a disk's requests leave in the order they
 *       came, so a batch on one segment is not held back by the disk's later requests on others.</li>
 *   <li><b>Disk order across the guarantee</b> (on by default; refines the guarantee). A request of a disk
 *       with requests waiting here does not take the guarantee, nor draw the pools: it queues behind them.
 *       At each call, before the queue service, the disk's bucket admits its oldest waiting requests while
 *       it covers them (what the pools lack becoming debt, as above). Per disk the guarantee admits as much
 *       as without it, in arrival order: without it, a request the bucket covers went at once while the
 *       same disk's older requests, beyond the bucket when they came, waited as hot. A request queued this
 *       way may be refused by a full segment queue. It stands aside with the bounded overdraft, whose limit
 *       the admissions at a call do not keep.</li>
 * </ul>
 */
/*
 * Maintainer note. One lock, not gRPC's immutable-picker split: every admission decision mutates
 * shared state (the pools and the classifier windows), so there is no read-only hot path to publish
 * a snapshot to. The lock is held for a few dozen instructions on the common path (one segment; the
 * ticket and outcome record of a request admitted at once are built after it is released, and a
 * charge does not divide); a request spanning several blocks computes its span and part costs before
 * taking it.
 *
 * Contended (two threads on one controller, AdmissionBenchmark's admission2Threads), the lock parks
 * the thread that finds it held, as ReentrantLock does, and that is what a throughput benchmark on a
 * shared 2-core machine rewards: the other thread runs on alone at single-thread speed. Spinning
 * before parking (100 tries with Thread.onSpinWait(), 2.2 µs) was measured and rejected: it cut the
 * parks (JFR, 16 s: 900–1,200 instead of 5,000–17,000) but made the threads take turns, and each turn
 * moved the lock's and the pools' cache lines between the cores; while the machine was loaded that
 * cost 601 ± 153 ns per decision against 278 ± 27 ns without spinning, in adjacent runs. A lock-free
 * fast path is what would remove the lock's cost (not here yet).
 *
 * Completions, which come from I/O threads, stay off the lock entirely: latencies go to an
 * HdrHistogram Recorder (wait-free writers, one interval reader under the lock) and costs and drop
 * counts to LongAdders. Reading the recorder and the adders is not one atomic step, so a completion
 * racing a boundary may land in adjacent windows; the headroom model is a statistical estimate and
 * tolerates that. docs/admission.md (Cost of a decision) has the figures next to Bucket4j's
 * tryConsume.
 */
public final class AdmissionController {

    private final AdmissionConfig config;
    private final SegmentMap segmentMap;
    private final IoCostModel costModel;
    private final long intervalNanos;
    private final long quantumCostUnits;

    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock.
    private final SegmentClassifier classifier;
    private final DualTokenPool pool;
    private final SegmentQueues queues;
    private final HeadroomModel headroom;
    private long intervalStartNanos;
    private long nextTicketId;
    private long admittedRequests;
    private long admittedCostUnits;
    private long admittedSteadyRequests;
    private long queuedRequests;
    private long refusedRequests;
    private long cancelledRequests;
    private Histogram recycledLatencies;
    /** Baseline guarantee: per disk, cost units it may still send within its baseline (a bucket). */
    private final double[] baselineTokens;
    /** Per disk, baseline in cost units per ns, and the bucket's depth (one classifier window). */
    private final double[] baselinePerNano;

    private final double[] baselineDepth;
    /**
     * Per disk, the time its buckets (baseline, overdraft, fifo credits) were last refilled to: each disk
     * is refilled on its own, so a request costs O(1) in the number of disks.
     */
    private final long[] baselineRefilledNanos;
    /** Bounded overdraft: per disk, cost it may still be admitted at once beyond the pools, and the depth. */
    private final double[] overdraftTokens;

    private final double[] overdraftDepth;
    /** Adaptive reserve: steady cost of the running interval, and of the last W completed ones. */
    private long steadyCostThisInterval;

    private final long[] steadyCostHistory;
    private int steadyHistorySlot;
    /**
     * Fifo deadline: the backlog of a first-come-first-served server at the capacity fed every request
     * (cost units, as of fifoNowNanos), the capacity per ns, the waiting tickets in order of arrival
     * (admitted or withdrawn ones are dropped when they reach the head).
     */
    private double fifoBacklogCostUnits;

    private long fifoNowNanos;
    private final double capacityPerNano;
    private final ArrayDeque<Ticket> waitingInArrivalOrder = new ArrayDeque<>();
    /** Disk order across the guarantee: per disk its requests waiting here (null when off). */
    private final int[] waitingOfDisk;
    /** Disk order across the guarantee: per disk its queued requests in arrival order, admitted ones skipped lazily. */
    private final ArrayDeque<Ticket>[] waitingByDisk;
    /**
     * Fifo deadline: per disk, its credits (baseline × time − cost of its requests, from 0, at most R·Δ of
     * baseline), and that depth; a request that leaves them non-negative has a deadline.
     */
    private final double[] fifoCredits;

    private final double[] fifoCreditDepth;
    /** The fifo server above is kept: for the fifo deadline or for late-first hot service. */
    private final boolean fifoClock;
    /** The fifo credits above are kept: for the fifo deadline or for credit-gated advances. */
    private final boolean creditsKept;
    /** Credit-gated advances: only requests of disks within their credits take overlapping advances. */
    private final boolean creditGated;

    // Written by completing threads without the lock.
    private final Recorder latencies = new Recorder(HeadroomModel.HISTOGRAM_DIGITS);
    private final LongAdder completedCostUnits = new LongAdder();
    private final LongAdder completedDrops = new LongAdder();
    private final LongAdder completedSuccess = new LongAdder();
    private final LongAdder completedDropped = new LongAdder();
    private final LongAdder completedIgnored = new LongAdder();
    /** Cost of every completed ticket, whatever the outcome (cumulative): admitted − this is in flight. */
    private final LongAdder completedAllCostUnits = new LongAdder();

    private volatile double reserveFraction;

    /**
     * A controller whose first interval starts at {@code startNanos}, with full pools, every segment
     * steady and no headroom measured yet (so nothing is borrowed until latencies have been reported).
     *
     * @param config     the constants
     * @param disks      the virtual disks this proxy serves, numbered in this order
     * @param startNanos start of the first interval, in ns on the caller's clock
     * @throws IllegalArgumentException when the config or the disks are invalid (see
     *                                  {@link SegmentMap#SegmentMap}); the message names the field
     */
    public AdmissionController(AdmissionConfig config, List<VirtualDisk> disks, long startNanos) {
        Checks.requireNonNull("config", config, "an AdmissionConfig, e.g. AdmissionConfig.DEFAULTS");
        this.config = config;
        this.segmentMap = new SegmentMap(disks, config.segmentSizeBytes(), config.blockSizeBytes());
        this.costModel = config.costModel();
        this.intervalNanos = config.intervalNanos();
        this.quantumCostUnits = config.queueQuantumCostUnits();
        this.reserveFraction = config.reserveFraction();
        this.classifier = new SegmentClassifier(
                config.windowIntervals(), config.recoveryWindows(), thresholds(config, segmentMap));
        this.pool = new DualTokenPool(config.budgetCostUnits(), config.reserveFraction(), config.repayment());
        this.queues = new SegmentQueues(segmentMap.segmentCount(), config.queueCapacityPerSegment());
        this.headroom = new HeadroomModel(config.headroom(), intervalNanos, config.budgetCostUnits());
        this.intervalStartNanos = startNanos;
        int diskCount = segmentMap.diskCount();
        this.baselineTokens = new double[diskCount];
        this.baselinePerNano = new double[diskCount];
        this.baselineDepth = new double[diskCount];
        this.overdraftTokens = new double[diskCount];
        this.overdraftDepth = new double[diskCount];
        // Disk order needs the guarantee, and is not combined with the bounded overdraft, whose limit the
        // admissions at a call would have to keep too.
        if (config.baselineGuarantee() && config.diskOrderAcrossGuarantee() && !config.boundedOverdraft()) {
            this.waitingOfDisk = new int[diskCount];
            @SuppressWarnings("unchecked")
            ArrayDeque<Ticket>[] byDisk = new ArrayDeque[diskCount];
            for (int d = 0; d < diskCount; d++) {
                byDisk[d] = new ArrayDeque<>();
            }
            this.waitingByDisk = byDisk;
        } else {
            this.waitingOfDisk = null;
            this.waitingByDisk = null;
        }
        double[] guaranteed = guaranteedBaselines(config, segmentMap);
        for (int d = 0; d < diskCount; d++) {
            double perSecond = guaranteed[d];
            baselinePerNano[d] = perSecond / 1e9;
            baselineDepth[d] = guaranteeDepth(config, perSecond);
            baselineTokens[d] = baselineDepth[d];
            overdraftDepth[d] = perSecond * (intervalNanos / 1e9);
            overdraftTokens[d] = overdraftDepth[d];
        }
        this.baselineRefilledNanos = new long[diskCount];
        Arrays.fill(baselineRefilledNanos, startNanos);
        this.fifoNowNanos = startNanos;
        this.fifoCredits = new double[diskCount];
        this.fifoCreditDepth = new double[diskCount];
        for (int d = 0; d < diskCount; d++) {
            fifoCreditDepth[d] = baselinePerNano[d] * intervalNanos * config.recoveryWindows();
        }
        this.capacityPerNano = config.capacityCostUnitsPerSecond() / 1e9;
        this.fifoClock = config.fifoDeadline() || config.lateFirstHotService();
        this.creditGated = config.oversizeAdvance() && config.overlappingAdvances() && config.creditGatedAdvances();
        this.creditsKept = config.fifoDeadline() || creditGated;
        if (config.lateFirstHotService()) {
            queues.serveLateFirst(diskCount);
        }
        if (config.oversizeAdvance()) {
            queues.advanceAbove(config.budgetCostUnits());
            if (config.overlappingAdvances()) {
                pool.allowOverlappingAdvances();
            }
        }

        this.steadyCostHistory = new long[config.windowIntervals()];
        if (config.pacedRelease()) {
            pool.enablePacing();
        }
        if (config.weightedHotService()) {
            double[] weights = new double[diskCount];
            for (int d = 0; d < diskCount; d++) {
                weights[d] = Math.max(baselinePerNano[d] * 1e9, Double.MIN_NORMAL);
            }
            queues.weightHotService(weights, config.arrivalOrderWithinDisk());
            if (config.boundedLagHotService()) {
                // Virtual time is in seconds of a disk's baseline (cost ÷ baseline per second): the lag
                // is one classifier window, the depth of the guarantee's bucket.
                queues.boundLag(intervalNanos / 1e9 * config.windowIntervals());
            }
            if (config.virtualClockHotService()) {
                queues.useVirtualClock(
                        baselinePerNano,
                        Math.multiplyExact((long) config.recoveryWindows(), intervalNanos),
                        startNanos);
            }
        }
    }

    /**
     * Per disk, the baseline the guarantee meters it against, cost units per second: its commitment
     * (default: the capacity ÷ the number of disks), with {@link AdmissionConfig#scaledBaselines} scaled
     * down together with the others when they add up to more than the capacity.
     */
    static double[] guaranteedBaselines(AdmissionConfig config, SegmentMap map) {
        int diskCount = map.diskCount();
        double fairShare = config.capacityCostUnitsPerSecond() / diskCount;
        double committed = 0;
        for (int d = 0; d < diskCount; d++) {
            committed += map.disks().get(d).commitmentCostUnitsPerSecond().orElse(fairShare);
        }
        // Scaled baselines: baselines that together exceed what the backend serves are scaled down together
        // for the guarantee (as mClock's reservations must fit the capacity); the classifier keeps them as
        // given. The tolerance keeps fair shares, whose sum may round a hair above the capacity, as they are.
        double scale = config.scaledBaselines() && committed > config.capacityCostUnitsPerSecond() * (1 + 1e-9)
                ? config.capacityCostUnitsPerSecond() / committed
                : 1;
        double[] perSecond = new double[diskCount];
        for (int d = 0; d < diskCount; d++) {
            perSecond[d] = map.disks().get(d).commitmentCostUnitsPerSecond().orElse(fairShare) * scale;
        }
        return perSecond;
    }

    /**
     * Whether a guarantee bucket holding {@code tokens} of its {@code depth} covers a request of {@code
     * costUnits}: when it holds the cost, or when it is full. A full bucket lets one request costing more
     * than its whole depth through and goes below zero, so that a disk whose baseline window is shallower
     * than one of its requests (large I/O, or a small baseline) is not beyond its baseline forever; the
     * bucket's rate still bounds what it lets through over time, as a rate limiter that lets an expensive
     * request through and makes the next ones wait for it (our reading; Guava's {@code RateLimiter} does
     * the same).
     */
    static boolean guaranteeHolds(double tokens, double depth, long costUnits) {
        return tokens >= costUnits || tokens >= depth;
    }

    /** The depth of the guarantee's bucket of a disk at {@code perSecond}: one classifier window (W·Δ) of it. */
    static double guaranteeDepth(AdmissionConfig config, double perSecond) {
        return perSecond * (config.intervalNanos() / 1e9) * config.windowIntervals();
    }

    /**
     * Per segment, the cost per window above which it is hot: its disk's commitment (default: the
     * capacity ÷ the number of disks) ÷ the disk's segments, per interval, × W × the threshold ratio.
     */
    static double[] thresholds(AdmissionConfig config, SegmentMap map) {
        double[] thresholds = new double[map.segmentCount()];
        double fairShare = config.capacityCostUnitsPerSecond() / map.diskCount();
        for (int d = 0; d < map.diskCount(); d++) {
            double perSecond = map.disks().get(d).commitmentCostUnitsPerSecond().orElse(fairShare);
            int n = map.segmentCount(d);
            double perWindow = perSecond
                    / n
                    * (config.intervalNanos() / 1e9)
                    * config.windowIntervals()
                    * config.hotThresholdRatio();
            for (int s = 0; s < n; s++) {
                thresholds[map.firstSegment(d) + s] = perWindow;
            }
        }
        return thresholds;
    }

    /**
     * Asks to send the request {@code [offsetBytes, offsetBytes + lengthBytes)} of disk {@code disk}
     * to the backend.
     *
     * @param disk        disk number ({@link SegmentMap#diskIndex})
     * @param kind        read or write
     * @param offsetBytes first byte, {@code 0 .. size − 1}
     * @param lengthBytes bytes, {@code 1 .. size − offsetBytes}
     * @return admitted (send it now), queued (it will appear in a later {@link IntervalReport}), or
     *         refused with a reason
     * @throws IllegalArgumentException when the disk does not exist or the range is empty or leaves
     *                                  the disk; the message names the field, the value and the range
     */
    public Admission acquire(int disk, IoKind kind, long offsetBytes, long lengthBytes) {
        return acquire(disk, kind, offsetBytes, lengthBytes, false, 0);
    }

    /**
     * As {@link #acquire(int, IoKind, long, long)}, for a request that arrived at {@code nowNanos}: with
     * {@link AdmissionConfig#baselineRefillOnArrival} (the default), the request's disk's guarantee bucket
     * (and its overdraft and fifo-deadline credits) is first refilled up to {@code nowNanos}, as
     * {@link #onInterval} refills every disk's, so a disk within its baseline is not classed by the time
     * of the last {@link #onInterval} call. Only that disk is refilled: the cost does not grow with the
     * number of disks. A time before the disk's last refill refills nothing (time going backwards); the
     * next refill counts from the later time.
     *
     * @param disk        disk number ({@link SegmentMap#diskIndex})
     * @param kind        read or write
     * @param offsetBytes first byte, {@code 0 .. size − 1}
     * @param lengthBytes bytes, {@code 1 .. size − offsetBytes}
     * @param nowNanos    the request's arrival time in ns, on the clock of {@code startNanos} and
     *                    {@link #onInterval}
     * @return admitted (send it now), queued (it will appear in a later {@link IntervalReport}), or
     *         refused with a reason
     * @throws IllegalArgumentException when the disk does not exist or the range is empty or leaves
     *                                  the disk; the message names the field, the value and the range
     */
    public Admission acquire(int disk, IoKind kind, long offsetBytes, long lengthBytes, long nowNanos) {
        return acquire(disk, kind, offsetBytes, lengthBytes, config.baselineRefillOnArrival(), nowNanos);
    }

    private Admission acquire(
            int disk, IoKind kind, long offsetBytes, long lengthBytes, boolean refill, long nowNanos) {
        Checks.requireNonNull("kind", kind, "READ or WRITE");
        segmentMap.checkRequest(disk, offsetBytes, lengthBytes);
        int first;
        int[] segments = null;
        long[] partCosts = null;
        long cost;
        if (segmentMap.singleBlock(offsetBytes, lengthBytes)) {
            first = segmentMap.segmentOf(disk, offsetBytes);
            cost = costModel.costUnits(kind, lengthBytes);
        } else {
            SegmentMap.Span span = segmentMap.span(disk, offsetBytes, lengthBytes);
            int parts = span.parts();
            first = span.segment(0);
            segments = new int[parts];
            partCosts = new long[parts];
            cost = 0;
            for (int i = 0; i < parts; i++) {
                segments[i] = span.segment(i);
                partCosts[i] = costModel.costUnits(kind, span.bytes(i));
                cost = Checks.saturatedAdd(cost, partCosts[i]);
            }
            cost = Math.min(cost, IoCostModel.MAX_COST_UNITS);
            if (parts == 1) {
                segments = null;
            }
        }
        long id;
        SegmentClass asClass;
        lock.lock();
        try {
            if (refill) {
                refillBaseline(disk, nowNanos);
            }
            if (creditsKept) {
                fifoCredits[disk] -= cost;
            }
            boolean withinBaseline = false;
            // With disk order across the guarantee, a disk's requests waiting here go first: what its bucket
            // holds is theirs at the next call, and this one waits behind them.
            boolean behindOwnDisk = waitingOfDisk != null && waitingOfDisk[disk] > 0;
            if (config.baselineGuarantee()
                    && !behindOwnDisk
                    && guaranteeHolds(baselineTokens[disk], baselineDepth[disk], cost)) {
                baselineTokens[disk] -= cost;
                withinBaseline = true;
            }
            boolean steady;
            if (partCosts == null) {
                steady = classifier.charge(first, cost) == SegmentClass.STEADY;
            } else {
                steady = true;
                for (int i = 0; i < partCosts.length; i++) {
                    steady &= classifier.charge(span(segments, first, i), partCosts[i]) == SegmentClass.STEADY;
                }
            }
            steady |= withinBaseline;
            asClass = steady ? SegmentClass.STEADY : SegmentClass.HOT;
            id = nextTicketId++;
            boolean overdraftCovers = true;
            if (withinBaseline && config.boundedOverdraft()) {
                long over = cost - Math.min(cost, pool.available(true));
                overdraftCovers = over == 0 || (over <= overdraftTokens[disk] && over <= pool.overdraftRoomCostUnits());
                if (overdraftCovers) {
                    overdraftTokens[disk] -= over;
                }
            }
            if (steady
                    && !(withinBaseline && overdraftCovers)
                    && !(behindOwnDisk && guaranteeHolds(baselineTokens[disk], baselineDepth[disk], cost))) {
                // The steady demand the reserve is for: what the baseline guarantee does not admit at once (nor,
                // with disk order, at the next call, behind its own disk's waiting requests).
                steadyCostThisInterval = Checks.saturatedAdd(steadyCostThisInterval, cost);
            }
            // Nobody of its class (nor, for a hot one, any steady one) waits at its segment.
            boolean admitted = false;
            if (withinBaseline && overdraftCovers) {
                // Within its disk's baseline: admitted at once, whatever waits or the pools hold (with the
                // bounded overdraft: as long as what the pools lack fits the disk's overdraft bucket).
                pool.drawGuaranteed(cost);
                admitted = true;
            } else if (withinBaseline) {
                // Within its baseline, but the pools and its overdraft are spent: it waits as steady, and
                // steady queues are served first.
                pool.markDeficit();
            } else if (!behindOwnDisk
                    && (steady ? queues.size(first, SegmentClass.STEADY) == 0 : queues.size(first) == 0)) {
                admitted = pool.tryDraw(cost, steady);
            } else {
                // Others of its class wait at this segment already: first come, first served.
                pool.markDeficit();
            }
            if (admitted) {
                countAdmitted(cost, asClass);
                queues.chargeClock(disk, cost);
                if (fifoClock) {
                    fifoBacklogCostUnits += cost;
                }
            } else {
                Ticket ticket =
                        new Ticket(this, id, disk, kind, offsetBytes, lengthBytes, cost, first, segments, asClass);
                if (creditGated) {
                    // Credit-gated advances: an overlapping advance only for a disk within its credits.
                    ticket.mayOverlapAdvance = fifoCredits[disk] >= 0;
                }
                int position = queues.offer(ticket);
                if (position >= 0) {
                    queuedRequests++;
                    if (waitingOfDisk != null) {
                        waitingOfDisk[disk]++;
                        waitingByDisk[disk].addLast(ticket);
                    }
                    if (fifoClock) {
                        fifoBacklogCostUnits += cost;
                        // When a first-come-first-served server at the capacity would have finished it.
                        ticket.fifoDeadlineNanos =
                                fifoNowNanos + (long) Math.ceil(fifoBacklogCostUnits / capacityPerNano);
                        if (config.fifoDeadline() && fifoCredits[disk] >= 0) {
                            // Its disk is within its baseline: it waits no longer than that.
                            waitingInArrivalOrder.addLast(ticket);
                        }
                    }
                    return new Admission.Queued(ticket, position);
                }
                refusedRequests++;
                return new Admission.Refused(
                        RefusalReason.QUEUE_FULL,
                        first,
                        segmentMap.describeSegment(first)
                                + ": " + queues.size(first) + " requests already wait (queueCapacityPerSegment "
                                + queues.capacityPerSegment() + "); request " + kind + " of " + lengthBytes
                                + " bytes at offset " + offsetBytes + " refused, not queued");
            }
        } finally {
            lock.unlock();
        }
        // Admitted: the ticket is the caller's alone, so it is built after the lock is released.
        Ticket ticket = new Ticket(this, id, disk, kind, offsetBytes, lengthBytes, cost, first, segments, asClass);
        ticket.fundedCostUnits = cost;
        ticket.admit(asClass);
        return new Admission.Admitted(ticket);
    }

    private static int span(int[] segments, int first, int i) {
        return segments == null ? first : segments[i];
    }

    /**
     * Passes every interval boundary up to {@code nowNanos}. At each: classifier windows slide and the
     * pools are replenished (reserve, then debt, then main); at the last one the queues are served
     * round-robin (the budgets of the boundaries before it expire unused: one call issues at most C).
     * Then the headroom model takes in the latencies completed since the last call, and the running
     * interval may borrow up to H if it can start a burst. A time before the running interval's start
     * issues nothing and restarts the running interval at that time.
     *
     * @param nowNanos the caller's time in ns, on the clock of {@code startNanos}
     * @return what was done; its {@link IntervalReport#admitted()} requests must now be dispatched
     */
    public IntervalReport onInterval(long nowNanos) {
        lock.lock();
        try {
            long elapsed = nowNanos - intervalStartNanos;
            queues.setNow(nowNanos);
            advanceFifo(nowNanos);
            if (elapsed < 0) {
                // Time went backwards: nothing is issued, and the running interval restarts now, so the
                // next boundary is one interval away instead of wherever the old grid lies ahead.
                intervalStartNanos = nowNanos;
                Arrays.fill(baselineRefilledNanos, nowNanos);
                return report(0, List.of());
            }
            long intervals = elapsed / intervalNanos;
            refillBaselines(nowNanos);
            if (intervals == 0) {
                List<Ticket> admitted = queues.waiting() == 0 ? List.of() : new ArrayList<>();
                if (queues.waiting() > 0) {
                    serveDiskOrder(admitted);
                }
                serveWithin(elapsed, admitted);
                for (Ticket t : admitted) {
                    countAdmitted(t, t.admittedAs());
                }
                releaseDue(nowNanos, admitted);
                return report(0, admitted);
            }
            List<Ticket> admitted = new ArrayList<>();
            for (long i = 0; i < intervals; i++) {
                long left = intervals - i;
                if (left > 1 && quiescent()) {
                    // Nothing can change before the last boundary: pass the others in O(1).
                    classifier.skipIdleIntervals(left - 1);
                    pool.skipIdleIntervals(left - 1);
                    skipSteadyHistory(left - 1);
                    i += left - 1;
                    left = 1;
                }
                classifier.endInterval();
                pool.replenish(endSteadyInterval());
                if (left == 1) {
                    // Only the last boundary serves: the budgets of the intervals this call was late for
                    // expired unused, so one call issues at most one interval's budget, whatever the gap.
                    serveDiskOrder(admitted);
                    queues.serve(pool, classifier, quantumCostUnits, admitted);
                }
                if (queues.waiting() > 0) {
                    pool.markDeficit();
                }
            }
            intervalStartNanos += intervals * intervalNanos;
            for (Ticket t : admitted) {
                countAdmitted(t, t.admittedAs());
            }
            recycledLatencies = latencies.getIntervalHistogram(recycledLatencies);
            headroom.observe(
                    recycledLatencies, completedCostUnits.sumThenReset(), completedDrops.sumThenReset(), intervals);
            if (config.borrowing()) {
                pool.openBorrowWindow(headroom.headroomCostUnits());
            }
            long within = nowNanos - intervalStartNanos;
            pool.pace(within, intervalNanos);
            if (within > 0) {
                int before = admitted.size();
                serveWithin(within, admitted);
                for (Ticket t : admitted.subList(before, admitted.size())) {
                    countAdmitted(t, t.admittedAs());
                }
            }
            releaseDue(nowNanos, admitted);
            return report(intervals, admitted);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Inside the running interval, {@code elapsedNanos} after its start: lends what steady segments
     * can no longer need of the reserve (when lending is on), whether or not requests wait, since hot
     * requests arriving later draw it too; then serves the queues from what the pools hold, so a
     * request never waits for a boundary while tokens lie unused.
     */
    private void serveWithin(long elapsedNanos, List<Ticket> admitted) {
        pool.pace(elapsedNanos, intervalNanos);
        if (config.reserveLending()) {
            pool.lendReserve(elapsedNanos, intervalNanos);
        }
        if (queues.waiting() > 0) {
            queues.serve(pool, classifier, quantumCostUnits, admitted);
        }
    }

    /**
     * Fifo deadline: the first-come-first-served server has served capacity × the time since the last
     * call (its backlog never below 0). Time going backwards serves nothing.
     */
    private void advanceFifo(long nowNanos) {
        if (!fifoClock) {
            return;
        }
        long elapsed = nowNanos - fifoNowNanos;
        if (elapsed > 0) {
            fifoBacklogCostUnits = Math.max(0, fifoBacklogCostUnits - capacityPerNano * elapsed);
        }
        fifoNowNanos = nowNanos;
    }

    /**
     * Disk order across the guarantee: for each disk with requests waiting, admits its oldest waiting
     * requests, in arrival order, while its guarantee bucket covers them (as the at-once path: what the
     * pools lack becomes debt). Appends them to {@code admitted}; the caller counts them.
     */
    private void serveDiskOrder(List<Ticket> admitted) {
        if (waitingOfDisk == null) {
            return;
        }
        for (int d = 0; d < waitingOfDisk.length; d++) {
            ArrayDeque<Ticket> waitingHere = waitingByDisk[d];
            if (waitingOfDisk[d] == 0) {
                waitingHere.clear();
                continue;
            }
            Ticket t;
            while ((t = waitingHere.peekFirst()) != null) {
                if (t.isAdmitted() || t.withdrawn) {
                    waitingHere.pollFirst();
                    continue;
                }
                if (!guaranteeHolds(baselineTokens[d], baselineDepth[d], t.costUnits())) {
                    break;
                }
                waitingHere.pollFirst();
                baselineTokens[d] -= t.costUnits();
                queues.cancel(t);
                long lacking = t.costUnits() - t.fundedCostUnits;
                pool.drawGuaranteed(lacking);
                t.fundedCostUnits = t.costUnits();
                t.admit(SegmentClass.STEADY);
                // What the queue service drew for it charged its disk's clock then; the rest now.
                queues.chargeClock(d, lacking);
                admitted.add(t);
            }
        }
    }

    /**
     * Fifo deadline: admits, oldest first, every waiting request that is due: the work admitted and not yet
     * completed, and the request itself, would take the backend at least until its deadline. What the
     * pools lack becomes debt. Each request admitted is counted and appended to {@code admitted}.
     */
    private void releaseDue(long nowNanos, List<Ticket> admitted) {
        if (!config.fifoDeadline()) {
            return;
        }
        if (queues.waiting() == 0) {
            waitingInArrivalOrder.clear();
            return;
        }
        double inFlight = Math.max(0, (double) admittedCostUnits - completedAllCostUnits.sum());
        Ticket t;
        while ((t = waitingInArrivalOrder.peekFirst()) != null) {
            if (t.isAdmitted() || t.withdrawn) {
                waitingInArrivalOrder.pollFirst();
                continue;
            }
            double finishNanos = nowNanos + (inFlight + t.costUnits()) / capacityPerNano;
            if (finishNanos < t.fifoDeadlineNanos) {
                break;
            }
            waitingInArrivalOrder.pollFirst();
            queues.cancel(t);
            pool.drawGuaranteed(t.costUnits() - t.fundedCostUnits);
            t.fundedCostUnits = t.costUnits();
            t.admit(t.arrivedAs());
            countAdmitted(t, t.arrivedAs());
            admitted.add(t);
            inFlight += t.costUnits();
        }
    }

    /** Refills every disk's buckets up to {@code nowNanos} ({@link #refillBaseline}). */
    private void refillBaselines(long nowNanos) {
        if (!(config.baselineGuarantee() || creditsKept)) {
            return;
        }
        for (int d = 0; d < baselineTokens.length; d++) {
            refillBaseline(d, nowNanos);
        }
    }

    /**
     * Adds disk {@code disk}'s baseline × the time since its last refill to its buckets, each up to its
     * depth. A time before its last refill adds nothing.
     */
    private void refillBaseline(int disk, long nowNanos) {
        long elapsed = nowNanos - baselineRefilledNanos[disk];
        if (!(config.baselineGuarantee() || creditsKept) || elapsed <= 0) {
            return;
        }
        baselineRefilledNanos[disk] = nowNanos;
        double added = baselinePerNano[disk] * elapsed;
        fifoCredits[disk] = Math.min(fifoCreditDepth[disk], fifoCredits[disk] + added);
        baselineTokens[disk] = Math.min(baselineDepth[disk], baselineTokens[disk] + added);
        overdraftTokens[disk] = Math.min(overdraftDepth[disk], overdraftTokens[disk] + added);
    }

    /**
     * Ends the running interval's steady-cost count and returns the reserve fraction of the next
     * interval: with the adaptive reserve, the largest steady cost of the last W intervals × the margin,
     * as a fraction of C, within its bounds; else r.
     */
    private double endSteadyInterval() {
        steadyCostHistory[steadyHistorySlot] = steadyCostThisInterval;
        steadyHistorySlot = steadyHistorySlot + 1 == steadyCostHistory.length ? 0 : steadyHistorySlot + 1;
        steadyCostThisInterval = 0;
        if (!config.adaptiveReserve()) {
            return reserveFraction;
        }
        long peak = 0;
        for (long c : steadyCostHistory) {
            peak = Math.max(peak, c);
        }
        double fraction = peak * AdmissionConfig.ADAPTIVE_RESERVE_MARGIN / pool.budgetCostUnits();
        return Math.max(
                AdmissionConfig.ADAPTIVE_RESERVE_MIN_FRACTION,
                Math.min(AdmissionConfig.ADAPTIVE_RESERVE_MAX_FRACTION, fraction));
    }

    private void skipSteadyHistory(long intervals) {
        for (long i = 0; i < Math.min(intervals, steadyCostHistory.length); i++) {
            endSteadyInterval();
        }
    }

    /**
     * Whether passing a boundary that serves nothing leaves everything but the counters as it is: no
     * active segment, no debt, and the running interval in deficit exactly when requests wait (each
     * such boundary marks it so again).
     */
    private boolean quiescent() {
        return classifier.activeCount() == 0
                && pool.debtCostUnits() == 0
                && steadyCostThisInterval == 0
                && pool.deficit() == (queues.waiting() > 0);
    }

    private void countAdmitted(Ticket ticket, SegmentClass asClass) {
        countAdmitted(ticket.costUnits(), asClass);
        if (waitingOfDisk != null) {
            waitingOfDisk[ticket.disk()]--;
        }
    }

    private void countAdmitted(long costUnits, SegmentClass asClass) {
        admittedRequests++;
        admittedCostUnits = Checks.saturatedAdd(admittedCostUnits, costUnits);
        if (asClass == SegmentClass.STEADY) {
            admittedSteadyRequests++;
        }
    }

    private IntervalReport report(long intervals, List<Ticket> admitted) {
        return new IntervalReport(
                intervals,
                intervalStartNanos,
                admitted,
                pool.budgetCostUnits(),
                pool.mainCostUnits(),
                pool.reserveCostUnits(),
                pool.debtCostUnits(),
                pool.repaidThisIntervalCostUnits(),
                pool.openedWindowCostUnits(),
                config.borrowing() ? headroom.headroomCostUnits() : 0,
                headroom.p95Nanos(),
                headroom.calibration(),
                headroom.predictionError(),
                classifier.hotCount(),
                queues.waiting());
    }

    /**
     * Withdraws a request that is still waiting, e.g. because its client went away: it leaves its
     * segment's queue and will not be admitted. The cost it had collected while waiting stays drawn
     * (it was taken from an interval's budget, which cannot be given back). Thread-safe.
     *
     * @param ticket a ticket this controller returned as {@link Admission.Queued}
     * @return true if it was waiting and is now withdrawn; false if it had been admitted already (then
     *         it must be completed as usual, e.g. {@link Ticket#onIgnore}) or withdrawn before
     * @throws IllegalArgumentException when the ticket is another controller's
     */
    public boolean cancel(Ticket ticket) {
        Checks.requireNonNull("ticket", ticket, "a ticket of this controller");
        if (ticket.controller() != this) {
            throw new IllegalArgumentException("ticket : " + ticket + " (expected: a ticket of this controller)");
        }
        lock.lock();
        try {
            if (!queues.cancel(ticket)) {
                return false;
            }
            ticket.withdrawn = true;
            cancelledRequests++;
            if (waitingOfDisk != null) {
                waitingOfDisk[ticket.disk()]--;
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Records a completion; called by {@link Ticket} without the lock. */
    void completed(Ticket ticket, int how, long latencyNanos) {
        if (config.fifoDeadline()) {
            completedAllCostUnits.add(ticket.costUnits());
        }
        switch (how) {
            case Ticket.SUCCESS -> {
                latencies.recordValue(latencyNanos);
                completedCostUnits.add(ticket.costUnits());
                completedSuccess.increment();
            }
            case Ticket.DROPPED -> {
                latencies.recordValue(latencyNanos);
                completedCostUnits.add(ticket.costUnits());
                completedDrops.increment();
                completedDropped.increment();
            }
            default -> completedIgnored.increment();
        }
    }

    /**
     * Changes r, the share of the budget reserved for steady segments, from the next interval
     * boundary on. Thread-safe.
     *
     * @param fraction r in [0, 1]
     * @throws IllegalArgumentException when {@code fraction} is NaN or outside [0, 1]
     */
    public void setReserveFraction(double fraction) {
        reserveFraction = Checks.requireRange("reserveFraction", fraction, 0, 1);
    }

    /**
     * Spare exchange, for proxies sharing one backend (ours; section Several proxies on one backend): the
     * regular budget, main pool and reserve, that expired unused at the last boundary this controller
     * passed, in cost units; grants ({@link #grantSpare}) excluded. 0 before the first boundary.
     */
    public long expiredCostUnits() {
        lock.lock();
        try {
            return pool.expiredAtLastBoundary();
        } finally {
            lock.unlock();
        }
    }

    /** Requests waiting in any queue now. */
    public int waitingRequests() {
        lock.lock();
        try {
            return queues.waiting();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Spare exchange: adds {@code costUnits} that another proxy of the same backend left unused to the
     * running interval's main pool (expiring with it, never debt) and serves the queues from the pools
     * at once.
     *
     * @param costUnits what to add, {@code >= 0}
     * @param nowNanos  the caller's time, on the clock of {@code startNanos}; not before the running
     *                  interval's start (call it right after {@link #onInterval} at a boundary)
     * @return the requests admitted now; they must be dispatched
     * @throws IllegalArgumentException when {@code costUnits} is negative
     */
    public IntervalReport grantSpare(long costUnits, long nowNanos) {
        if (costUnits < 0) {
            throw new IllegalArgumentException("costUnits: expected >= 0, got " + costUnits);
        }
        lock.lock();
        try {
            pool.grantSpare(costUnits);
            if (queues.waiting() == 0) {
                return report(0, List.of());
            }
            List<Ticket> admitted = new ArrayList<>();
            queues.setNow(nowNanos);
            queues.serve(pool, classifier, quantumCostUnits, admitted);
            for (Ticket t : admitted) {
                countAdmitted(t, t.admittedAs());
            }
            return report(0, admitted);
        } finally {
            lock.unlock();
        }
    }

    /** r as it will apply at the next boundary. */
    public double reserveFraction() {
        return reserveFraction;
    }

    /** The reserve the running interval started with, in cost units (for tests of the adaptive reserve). */
    long reserveAtStartCostUnits() {
        lock.lock();
        try {
            return pool.reserveAtStartCostUnits();
        } finally {
            lock.unlock();
        }
    }

    /** The class of global segment {@code segment} now. */
    public SegmentClass segmentClass(int segment) {
        Checks.requireRange("segment", segment, 0, segmentMap.segmentCount() - 1);
        lock.lock();
        try {
            return classifier.classOf(segment);
        } finally {
            lock.unlock();
        }
    }

    /** Requests waiting in global segment {@code segment}'s queue now. */
    public int waitingRequests(int segment) {
        Checks.requireRange("segment", segment, 0, segmentMap.segmentCount() - 1);
        lock.lock();
        try {
            return queues.size(segment);
        } finally {
            lock.unlock();
        }
    }

    /** Cumulative counters, read under the lock (completions are counted wait-free, so may lag). */
    public AdmissionStats stats() {
        lock.lock();
        try {
            long intervals = pool.intervalsBegun();
            return new AdmissionStats(
                    intervals,
                    Checks.saturatedMultiply(intervals, pool.budgetCostUnits()),
                    admittedRequests,
                    admittedCostUnits,
                    admittedSteadyRequests,
                    queuedRequests,
                    refusedRequests,
                    queues.waiting(),
                    pool.drawnMainCostUnits(),
                    pool.drawnReserveCostUnits(),
                    pool.lentCostUnits(),
                    pool.borrowedCostUnits(),
                    pool.forgivenCostUnits(),
                    pool.advancedCostUnits(),
                    pool.repaidCostUnits(),
                    pool.debtCostUnits(),
                    pool.burstsBorrowing(),
                    completedSuccess.sum(),
                    completedDropped.sum(),
                    completedIgnored.sum(),
                    cancelledRequests);
        } finally {
            lock.unlock();
        }
    }

    /** The segment map of this controller's disks. */
    public SegmentMap segmentMap() {
        return segmentMap;
    }

    /** The configuration it was built with (its reserve fraction is the initial one). */
    public AdmissionConfig config() {
        return config;
    }
}
