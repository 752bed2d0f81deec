package dev.tailor.admission;

import dev.tailor.common.Checks;
import dev.tailor.common.Numbers;

/**
 * Every constant of one admission controller, with the design defaults of docs/design.md#segment-admission
 * where it gives them and ours where it does not. Immutable; build one with {@link #builder()} and variants
 * with {@link #toBuilder()}. The constructor checks every field and names it, its value and the expected range on
 * error. Only the reserve fraction can change while a controller runs
 * ({@link AdmissionController#setReserveFraction}).
 *
 * @param intervalNanos              Δ, the admission interval in ns, {@code 1,000 .. 60·10⁹}
 *                                   (default 10 ms, docs/design.md)
 * @param capacityCostUnitsPerSecond what the backend behind this proxy serves, in cost units
 *                                   ({@link IoCostModel}) per second; the budget per interval is
 *                                   {@code C = floor(capacity × Δ ÷ 10⁹)}, which must lie in
 *                                   {@code 1 .. 2⁵⁰} (default 10⁹: one device kept busy, our choice;
 *                                   set it from the backend)
 * @param segmentSizeBytes           bytes per segment, a multiple of the block size (default 32 GiB,
 *                                   docs/design.md#segment-map)
 * @param blockSizeBytes             bytes per logical block, {@code >= 1} (default 1 MiB, docs/design.md)
 * @param reserveFraction            r, the share of C reserved for steady segments, in [0, 1]
 *                                   (default 0.2, docs/design.md). At 1 there is no main pool: hot
 *                                   segments wait until they calm down, and debt is never repaid
 * @param windowIntervals            W, intervals per classifier window, {@code 1 .. 10,000}
 *                                   (default 10, docs/design.md)
 * @param recoveryWindows            R, consecutive calm windows before a hot segment is steady again,
 *                                   {@code 1 .. 1,000,000} (default 50, docs/design.md)
 * @param hotThresholdRatio          a segment is hot when its window's cost exceeds this multiple of
 *                                   its baseline, in (0, 10⁶] (default 1: the baseline itself,
 *                                   docs/design.md#classifier)
 * @param queueCapacityPerSegment    requests that may wait per segment before further ones are
 *                                   refused, {@code 0 .. 1,000,000} (default 64, our choice; 0 refuses
 *                                   whatever cannot be admitted at once)
 * @param queueQuantumFraction       the most one round-robin visit gives a waiting request, as a
 *                                   fraction of C, in (0, 1] (default 1/16, our choice); a request
 *                                   costing more collects its cost over several visits
 * @param costModel                  prices a request (default {@link IoCostModel#DEFAULT})
 * @param headroom                   the headroom model's constants (default
 *                                   {@link HeadroomConfig#DEFAULTS})
 * @param borrowing                  whether bursts may borrow headroom (default on; off is the
 *                                   no-borrow ablation)
 * @param repayment                  whether borrowed cost becomes debt repaid from later budgets
 *                                   (default on; off is the no-repay ablation)
 * @param reserveLending             whether the part of the reserve that steady segments can no longer
 *                                   need in the running interval is lent to waiting hot requests (our
 *                                   reading, see {@link AdmissionController}; default on; off is the
 *                                   strict reserve of the no-lending ablation)
 * @param baselineGuarantee          (ours, default on) a request that keeps its disk within its
 *                                   provisioned baseline (its commitment, metered over one classifier
 *                                   window) is steady whatever its segment's history and is admitted at
 *                                   once (with {@link #diskOrderAcrossGuarantee}, once its disk's older
 *                                   waiting requests have gone): from main, then the reserve, and what
 *                                   they lack becomes debt that later main pools repay; off: the paper's
 *                                   per-segment classes only, and such a request may wait or be refused
 * @param pacedRelease               (ours, default off: measured, it did not pay) the main pool is
 *                                   released to hot requests in tenths of the interval
 *                                   ({@link #PACING_SLICES}) instead of all at its start, so a
 *                                   boundary does not put a whole interval of hot work into the
 *                                   backend's queue ahead of the steady requests that follow; needs
 *                                   calls between boundaries (a proxy calls every millisecond)
 * @param adaptiveReserve            (ours, default on) the reserve is sized at each boundary from the
 *                                   steady cost of the last W intervals that the baseline guarantee
 *                                   did not already cover (their largest interval × 1.25), bounded to
 *                                   [0.05, 0.5] of C; off: the fixed r·C
 *                                   ({@link #reserveFraction})
 * @param weightedHotService         (ours, default on) waiting hot requests are served in proportion
 *                                   to their disks' baselines (start-time fair queueing over disks)
 *                                   instead of round-robin over segments, so a tenant a little beyond
 *                                   its baseline is not held behind the backlog of a tenant with many
 *                                   hot segments far beyond its own
 * @param boundedOverdraft           (ours, default off: it trades the guarantee's "never waits" for a
 *                                   shorter backend queue; refines {@link #baselineGuarantee}) what the pools
 *                                   lack for a request within its disk's baseline is admitted at once
 *                                   only while it fits the disk's overdraft bucket (one interval of its
 *                                   baseline deep, refilled at the baseline) and keeps the debt within
 *                                   what the next boundary repays (C − R); otherwise the request waits,
 *                                   steady, in its segment's steady queue, served first. Off: the
 *                                   guarantee overdraws whatever its window-deep bucket holds
 * @param virtualClockHotService     (ours, default off: measured, it did not pay on every mix; needs
 *                                   {@link #weightedHotService}) waiting requests, hot and then steady,
 *                                   are served in the order of their disks' virtual clocks (Zhang's
 *                                   VirtualClock, SIGCOMM 1990): each admission of a disk's cost moves
 *                                   its clock cost ÷ baseline ahead, from now at the earliest and at
 *                                   most R·Δ ahead of now; off: start-time fair queueing, which forgets
 *                                   a disk's use whenever its queue empties
 * @param fifoDeadline               (ours, default off: measured, it did not pay on every mix) a waiting
 *                                   request of a disk within its baseline (its credits, baseline × time
 *                                   − the cost of its requests, from 0 and at most R·Δ of baseline,
 *                                   are not negative when it arrives) is admitted at once, whatever
 *                                   the pools hold (what they lack becomes debt), as soon as holding
 *                                   it longer would finish it later than no admission would: its
 *                                   deadline is when a first-come-first-served server at the capacity,
 *                                   fed every request, would finish it, and it is due when the work
 *                                   admitted and not completed, and itself, take the capacity at least
 *                                   that long. Checked at every call of
 *                                   {@link AdmissionController#onInterval}, so such a request waits in
 *                                   admission at most until its fifo finish plus one call period
 * @param lateFirstHotService        (ours, default off: measured, it did not pay on every mix) in the
 *                                   queue service after the steady queues, a waiting request whose fifo
 *                                   finish has passed (the time a first-come-first-served server at the
 *                                   capacity, fed every request, would have finished it, as
 *                                   {@link #fifoDeadline} computes it) and whose disk has no more cost
 *                                   waiting than the mean over the disks with requests waiting goes
 *                                   ahead of the others, the earliest fifo finish first; the others keep
 *                                   their order (virtual clock, start-time fair queueing or
 *                                   round-robin). It draws from the pools as any waiting request does,
 *                                   never beyond them: it reorders the queue service and adds no load
 * @param arrivalOrderWithinDisk     (ours, default on; needs {@link #weightedHotService}) once the hot
 *                                   service has chosen a disk (by its start-time tag or virtual clock), it
 *                                   serves that disk's oldest waiting request, whichever of its segments
 *                                   it waits at, instead of the disk's segment queues in ring order. The
 *                                   disks' shares are unchanged; within a disk the order is first come,
 *                                   first served, which for a given share gives the disk's requests the
 *                                   shortest longest wait (with the virtual clock, which orders the steady
 *                                   pass too, in both passes)
 * @param boundedLagHotService       (ours, default off: measured, it did not pay on every mix; needs
 *                                   {@link #weightedHotService}, without {@link #virtualClockHotService})
 *                                   start-time fair queueing with a bounded lag: a disk whose hot queue
 *                                   was empty while the others were served starts at most one classifier
 *                                   window (W·Δ, the depth of the guarantee's bucket) of its baseline
 *                                   behind the system's virtual time, instead of at it, so a batch after
 *                                   a quiet spell goes ahead of a continuing backlog for up to W·Δ of its
 *                                   baseline; continuously waiting disks keep their shares. It reorders
 *                                   the hot service and adds no load
 * @param scaledBaselines            (ours, default on; refines {@link #baselineGuarantee}) baselines
 *                                   that add up to more than the capacity are scaled down together, to
 *                                   add up to it, for the guarantee (its bucket and refill; the
 *                                   classifier keeps them as given), as mClock's reservations must fit
 *                                   the capacity; off: an overcommitted set of baselines is guaranteed
 *                                   as given, so the at-once flow may exceed what the backend serves
 *                                   and waits in its queue
 * @param baselineRefillOnArrival    (ours, default on; refines {@link #baselineGuarantee}) the
 *                                   guarantee's buckets (and the bounded overdraft's and the fifo
 *                                   deadline's credits) are refilled up to the request's arrival time
 *                                   when {@link AdmissionController#acquire(int, IoKind, long, long, long)}
 *                                   is given it, so a disk sending at its baseline finds its bucket
 *                                   holding the cost; off: they are refilled only by
 *                                   {@link AdmissionController#onInterval}, so between calls a request
 *                                   within its baseline may find the bucket short and be classed by its
 *                                   segment instead (as {@code acquire} without a time always does)
 * @param fairDispatch               (ours, default on) the proxy sends admitted requests to its backend
 *                                   through a {@link FairDispatchQueue}: at most the backend's parallelism
 *                                   at the backend, the rest let in by start-time fair queueing over the
 *                                   disks, weighted by their baselines, with a lag of W·Δ. The controller
 *                                   does not read it; the proxy that drives the controller does. Off: an
 *                                   admitted request goes to the backend at once and waits in its queue
 * @param oversizeAdvance            (ours, the paper is silent; default on) a waiting request that costs
 *                                   more than the whole budget per interval C is admitted on its turn in
 *                                   the queue service once it has drawn a visit's share from the pools,
 *                                   provided no such advance is outstanding (unless
 *                                   {@link #overlappingAdvances}): what it still lacks becomes debt that the
 *                                   next main pools repay first, as a full baseline bucket covers one
 *                                   request larger than its depth. With one advance outstanding per
 *                                   controller at most, what is admitted beyond the budgets grows by less
 *                                   than one request's cost. Off: such a request collects
 *                                   its whole cost from the pools first, over {@code ⌈cost ÷ C⌉} intervals
 *                                   or more. Requests costing no more than C are not affected
 * @param overlappingAdvances        (ours, an option, default off; with {@link #oversizeAdvance}) a new
 *                                   advance may be made while the advances outstanding are less than the
 *                                   cost of the request asking for it, not only when none is: a second
 *                                   such request no longer waits for the first's advance to be repaid.
 *                                   What is outstanding then stays below twice the largest request's cost
 *                                   (each advance is less than its request's cost). It shortens the tail
 *                                   where the oversized requests are steady tenants' and lengthens steady
 *                                   tenants' tail where they are a bursty tenant's (docs/admission-record.md,
 *                                   Overlapping advances), so it is off: at most one advance is
 *                                   outstanding. The storage simulator's {@code overlapping-advances}
 *                                   turns it on
 * @param creditGatedAdvances        (ours, an option, default off; refines {@link #overlappingAdvances},
 *                                   which it needs, with {@link #oversizeAdvance}) an overlapping advance,
 *                                   a new one while one is outstanding, is made only for a request whose
 *                                   disk was within its baseline over the last R·Δ when it arrived: its
 *                                   credits (baseline × time − the cost of its requests, from 0 and at
 *                                   most R·Δ of baseline, as {@link #fifoDeadline} keeps them) are not
 *                                   negative once its cost is charged. A request of a disk beyond that
 *                                   waits until no advance is outstanding, as with one at a time. The
 *                                   credits are kept with this option on even without the fifo deadline.
 *                                   The bound stays that of overlapping advances. Off: every request may
 *                                   take an overlapping advance when {@link #overlappingAdvances} is on.
 *                                   The storage simulator's {@code credit-gated-advances} turns both on
 * @param diskOrderAcrossGuarantee   (ours, default on; off in {@link #PAPER}) a request of a disk that has requests
 *                                   waiting in admission does not take the baseline guarantee itself: it
 *                                   waits behind them, and what the disk's guarantee bucket holds admits
 *                                   the disk's oldest waiting requests first, at each call. Per disk the
 *                                   amount the guarantee admits is unchanged; only the order within the
 *                                   disk is first come, first served. A request of a disk with requests
 *                                   waiting does not draw the pools at once either: it queues, so a full
 *                                   segment queue may refuse it. Needs {@link #baselineGuarantee}; ignored
 *                                   with {@link #boundedOverdraft}, whose limit the admissions at a call do
 *                                   not keep. Off: a request the bucket covers is admitted at once, ahead of
 *                                   its own disk's older waiting requests
 * @param finishTagDoor              (ours, default on; refines {@link #fairDispatch}) the
 *                                   door lets in the waiting disk head with the least finish tag,
 *                                   start + cost ÷ weight (start = max(the disk's tag, virtual time − lag)
 *                                   either way), as weighted fair queueing orders packets by finish time
 *                                   ({@link FairDispatchQueue}), so a large request goes after the small
 *                                   ones that would finish before it. Off: the least start tag. The virtual
 *                                   time, the charging and the lag are the same either way. The controller
 *                                   does not read it (the NBD proxy: fairDispatch.finishTag, by default this
 *                                   while admission is on). The simulator's {@code finish-tag-door} (the door
 *                                   alone) turns it on, {@code start-tag-door-admission} (segment admission
 *                                   then the door by start tag) off
 */
public record AdmissionConfig(
        long intervalNanos,
        double capacityCostUnitsPerSecond,
        long segmentSizeBytes,
        long blockSizeBytes,
        double reserveFraction,
        int windowIntervals,
        int recoveryWindows,
        double hotThresholdRatio,
        int queueCapacityPerSegment,
        double queueQuantumFraction,
        IoCostModel costModel,
        HeadroomConfig headroom,
        boolean borrowing,
        boolean repayment,
        boolean reserveLending,
        boolean baselineGuarantee,
        boolean pacedRelease,
        boolean adaptiveReserve,
        boolean weightedHotService,
        boolean boundedOverdraft,
        boolean virtualClockHotService,
        boolean fifoDeadline,
        boolean lateFirstHotService,
        boolean arrivalOrderWithinDisk,
        boolean boundedLagHotService,
        boolean scaledBaselines,
        boolean baselineRefillOnArrival,
        boolean fairDispatch,
        boolean oversizeAdvance,
        boolean overlappingAdvances,
        boolean creditGatedAdvances,
        boolean finishTagDoor,
        boolean diskOrderAcrossGuarantee) {

    /** The defaults (see the parameters; they are set in one place, {@link Builder}). */
    public static final AdmissionConfig DEFAULTS = builder().build();

    /**
     * The paper's mechanism as Tailor first built it (segment classes from each segment's own
     * history, the whole main pool released at each boundary, a fixed reserve r·C, round-robin over
     * segments): every default but {@link #baselineGuarantee}, {@link #adaptiveReserve} and
     * {@link #weightedHotService} and their refinements {@link #arrivalOrderWithinDisk},
     * {@link #scaledBaselines}, {@link #boundedOverdraft} and {@link #virtualClockHotService}, and
     * {@link #fairDispatch}, {@link #oversizeAdvance}, {@link #overlappingAdvances},
     * {@link #creditGatedAdvances}, {@link #diskOrderAcrossGuarantee} and {@link #finishTagDoor}, which are
     * off (as is {@link #pacedRelease}, off by default too). The {@code segment-admission-paper} policy of the storage simulator.
     */
    public static final AdmissionConfig PAPER = AdmissionConfig.builder()
            .baselineGuarantee(false)
            .adaptiveReserve(false)
            .weightedHotService(false)
            .arrivalOrderWithinDisk(false)
            .scaledBaselines(false)
            .fairDispatch(false)
            .oversizeAdvance(false)
            .overlappingAdvances(false)
            .creditGatedAdvances(false)
            .diskOrderAcrossGuarantee(false)
            .finishTagDoor(false)
            .build();

    /**
     * {@link #pacedRelease}: the slices of an interval in which the main pool is released to hot
     * requests (10: one per millisecond at Δ = 10 ms, the NBD proxy's and the simulator's call period).
     */
    public static final int PACING_SLICES = 10;
    /** {@link #adaptiveReserve}: the reserve is the largest recent steady interval × this. */
    public static final double ADAPTIVE_RESERVE_MARGIN = 1.25;
    /** {@link #adaptiveReserve}: the smallest reserve, a fraction of C. */
    public static final double ADAPTIVE_RESERVE_MIN_FRACTION = 0.05;
    /** {@link #adaptiveReserve}: the largest reserve, a fraction of C. */
    public static final double ADAPTIVE_RESERVE_MAX_FRACTION = 0.5;

    /** Shortest interval, 1 µs. */
    public static final long MIN_INTERVAL_NANOS = 1_000;
    /** Longest interval, 60 s. */
    public static final long MAX_INTERVAL_NANOS = 60_000_000_000L;
    /**
     * Largest budget per interval, 2⁵⁰ cost units: pool sums (budget plus borrowing up to 100 budgets)
     * stay far from overflowing a long.
     */
    public static final long MAX_BUDGET_COST_UNITS = 1L << 50;
    /** Largest W. */
    public static final int MAX_WINDOW_INTERVALS = 10_000;
    /** Largest R. */
    public static final int MAX_RECOVERY_WINDOWS = 1_000_000;
    /** Largest queue per segment. */
    public static final int MAX_QUEUE_CAPACITY = 1_000_000;

    /**
     * @throws IllegalArgumentException naming the field, its value and the expected range when a
     *                                  value is NaN, infinite, null or out of range, or the budget per
     *                                  interval falls outside {@code 1 .. 2⁵⁰}
     */
    public AdmissionConfig {
        Checks.requireRange("intervalNanos", intervalNanos, MIN_INTERVAL_NANOS, MAX_INTERVAL_NANOS);
        Checks.requireAboveAtMost("capacityCostUnitsPerSecond", capacityCostUnitsPerSecond, 0, Double.MAX_VALUE);
        double budget = Math.floor(capacityCostUnitsPerSecond * intervalNanos / 1e9);
        if (!(budget >= 1 && budget <= MAX_BUDGET_COST_UNITS)) {
            throw new IllegalArgumentException(
                    "capacityCostUnitsPerSecond : " + Numbers.written(capacityCostUnitsPerSecond)
                            + " (expected: a budget per interval of 1 .. 2^50 cost units, i.e. "
                            + Numbers.interval(false, 1e9 / intervalNanos, MAX_BUDGET_COST_UNITS * 1e9 / intervalNanos)
                            + " at intervalNanos " + intervalNanos + "; it gives " + Numbers.written(budget) + ")");
        }
        SegmentMap.requireSizes(segmentSizeBytes, blockSizeBytes);
        Checks.requireRange("reserveFraction", reserveFraction, 0, 1);
        Checks.requireRange("windowIntervals", windowIntervals, 1, MAX_WINDOW_INTERVALS);
        Checks.requireRange("recoveryWindows", recoveryWindows, 1, MAX_RECOVERY_WINDOWS);
        Checks.requireAboveAtMost("hotThresholdRatio", hotThresholdRatio, 0, 1e6);
        Checks.requireRange("queueCapacityPerSegment", queueCapacityPerSegment, 0, MAX_QUEUE_CAPACITY);
        Checks.requireAboveAtMost("queueQuantumFraction", queueQuantumFraction, 0, 1);
        Checks.requireNonNull("costModel", costModel, "an IoCostModel, e.g. IoCostModel.DEFAULT");
        Checks.requireNonNull("headroom", headroom, "a HeadroomConfig, e.g. HeadroomConfig.DEFAULTS");
    }

    /** C, the budget per interval in cost units: {@code floor(capacity × Δ ÷ 10⁹)}. */
    public long budgetCostUnits() {
        return (long) Math.floor(capacityCostUnitsPerSecond * intervalNanos / 1e9);
    }

    /** The most one round-robin visit gives a waiting request: {@code max(1, floor(fraction × C))}. */
    public long queueQuantumCostUnits() {
        return Math.max(1, (long) Math.floor(queueQuantumFraction * budgetCostUnits()));
    }

    /** A builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds an {@link AdmissionConfig}: named setters over the defaults (the one place they are
     * set), checked together in {@link #build} so that fields that depend on each other (the interval and
     * the capacity, the segment and the block size) can be set in any order.
     */
    public static final class Builder {
        private long intervalNanos = 10_000_000L;
        private double capacityCostUnitsPerSecond = 1e9;
        private long segmentSizeBytes = SegmentMap.DEFAULT_SEGMENT_SIZE_BYTES;
        private long blockSizeBytes = SegmentMap.DEFAULT_BLOCK_SIZE_BYTES;
        private double reserveFraction = 0.2;
        private int windowIntervals = 10;
        private int recoveryWindows = 50;
        private double hotThresholdRatio = 1.0;
        private int queueCapacityPerSegment = 64;
        private double queueQuantumFraction = 1.0 / 16;
        private IoCostModel costModel = IoCostModel.DEFAULT;
        private HeadroomConfig headroom = HeadroomConfig.DEFAULTS;
        private boolean borrowing = true;
        private boolean repayment = true;
        private boolean reserveLending = true;
        private boolean baselineGuarantee = true;
        private boolean pacedRelease = false;
        private boolean adaptiveReserve = true;
        private boolean weightedHotService = true;
        private boolean boundedOverdraft = false;
        private boolean virtualClockHotService = false;
        private boolean fifoDeadline = false;
        private boolean lateFirstHotService = false;
        private boolean arrivalOrderWithinDisk = true;
        private boolean boundedLagHotService = false;
        private boolean scaledBaselines = true;
        private boolean baselineRefillOnArrival = true;
        private boolean fairDispatch = true;
        private boolean oversizeAdvance = true;
        private boolean overlappingAdvances = false;
        private boolean creditGatedAdvances = false;
        private boolean finishTagDoor = true;
        private boolean diskOrderAcrossGuarantee = true;

        private Builder() {}

        private Builder(AdmissionConfig from) {
            intervalNanos = from.intervalNanos;
            capacityCostUnitsPerSecond = from.capacityCostUnitsPerSecond;
            segmentSizeBytes = from.segmentSizeBytes;
            blockSizeBytes = from.blockSizeBytes;
            reserveFraction = from.reserveFraction;
            windowIntervals = from.windowIntervals;
            recoveryWindows = from.recoveryWindows;
            hotThresholdRatio = from.hotThresholdRatio;
            queueCapacityPerSegment = from.queueCapacityPerSegment;
            queueQuantumFraction = from.queueQuantumFraction;
            costModel = from.costModel;
            headroom = from.headroom;
            borrowing = from.borrowing;
            repayment = from.repayment;
            reserveLending = from.reserveLending;
            baselineGuarantee = from.baselineGuarantee;
            pacedRelease = from.pacedRelease;
            adaptiveReserve = from.adaptiveReserve;
            weightedHotService = from.weightedHotService;
            boundedOverdraft = from.boundedOverdraft;
            virtualClockHotService = from.virtualClockHotService;
            fifoDeadline = from.fifoDeadline;
            lateFirstHotService = from.lateFirstHotService;
            arrivalOrderWithinDisk = from.arrivalOrderWithinDisk;
            boundedLagHotService = from.boundedLagHotService;
            scaledBaselines = from.scaledBaselines;
            baselineRefillOnArrival = from.baselineRefillOnArrival;
            fairDispatch = from.fairDispatch;
            oversizeAdvance = from.oversizeAdvance;
            overlappingAdvances = from.overlappingAdvances;
            creditGatedAdvances = from.creditGatedAdvances;
            finishTagDoor = from.finishTagDoor;
            diskOrderAcrossGuarantee = from.diskOrderAcrossGuarantee;
        }

        /** {@link AdmissionConfig#intervalNanos}. */
        public Builder intervalNanos(long value) {
            intervalNanos = value;
            return this;
        }

        /** {@link AdmissionConfig#capacityCostUnitsPerSecond}. */
        public Builder capacityCostUnitsPerSecond(double value) {
            capacityCostUnitsPerSecond = value;
            return this;
        }

        /** {@link AdmissionConfig#segmentSizeBytes}. */
        public Builder segmentSizeBytes(long value) {
            segmentSizeBytes = value;
            return this;
        }

        /** {@link AdmissionConfig#blockSizeBytes}. */
        public Builder blockSizeBytes(long value) {
            blockSizeBytes = value;
            return this;
        }

        /** {@link AdmissionConfig#reserveFraction}. */
        public Builder reserveFraction(double value) {
            reserveFraction = value;
            return this;
        }

        /** {@link AdmissionConfig#windowIntervals}. */
        public Builder windowIntervals(int value) {
            windowIntervals = value;
            return this;
        }

        /** {@link AdmissionConfig#recoveryWindows}. */
        public Builder recoveryWindows(int value) {
            recoveryWindows = value;
            return this;
        }

        /** {@link AdmissionConfig#hotThresholdRatio}. */
        public Builder hotThresholdRatio(double value) {
            hotThresholdRatio = value;
            return this;
        }

        /** {@link AdmissionConfig#queueCapacityPerSegment}. */
        public Builder queueCapacityPerSegment(int value) {
            queueCapacityPerSegment = value;
            return this;
        }

        /** {@link AdmissionConfig#queueQuantumFraction}. */
        public Builder queueQuantumFraction(double value) {
            queueQuantumFraction = value;
            return this;
        }

        /** {@link AdmissionConfig#costModel}. */
        public Builder costModel(IoCostModel value) {
            costModel = value;
            return this;
        }

        /** {@link AdmissionConfig#headroom}. */
        public Builder headroom(HeadroomConfig value) {
            headroom = value;
            return this;
        }

        /** {@link AdmissionConfig#borrowing}. */
        public Builder borrowing(boolean value) {
            borrowing = value;
            return this;
        }

        /** {@link AdmissionConfig#repayment}. */
        public Builder repayment(boolean value) {
            repayment = value;
            return this;
        }

        /** {@link AdmissionConfig#reserveLending}. */
        public Builder reserveLending(boolean value) {
            reserveLending = value;
            return this;
        }

        /** {@link AdmissionConfig#baselineGuarantee}. */
        public Builder baselineGuarantee(boolean value) {
            baselineGuarantee = value;
            return this;
        }

        /** {@link AdmissionConfig#pacedRelease}. */
        public Builder pacedRelease(boolean value) {
            pacedRelease = value;
            return this;
        }

        /** {@link AdmissionConfig#adaptiveReserve}. */
        public Builder adaptiveReserve(boolean value) {
            adaptiveReserve = value;
            return this;
        }

        /** {@link AdmissionConfig#weightedHotService}. */
        public Builder weightedHotService(boolean value) {
            weightedHotService = value;
            return this;
        }

        /** {@link AdmissionConfig#boundedOverdraft}. */
        public Builder boundedOverdraft(boolean value) {
            boundedOverdraft = value;
            return this;
        }

        /** {@link AdmissionConfig#virtualClockHotService}. */
        public Builder virtualClockHotService(boolean value) {
            virtualClockHotService = value;
            return this;
        }

        /** {@link AdmissionConfig#fifoDeadline}. */
        public Builder fifoDeadline(boolean value) {
            fifoDeadline = value;
            return this;
        }

        /** {@link AdmissionConfig#lateFirstHotService}. */
        public Builder lateFirstHotService(boolean value) {
            lateFirstHotService = value;
            return this;
        }

        /** {@link AdmissionConfig#arrivalOrderWithinDisk}. */
        public Builder arrivalOrderWithinDisk(boolean value) {
            arrivalOrderWithinDisk = value;
            return this;
        }

        /** {@link AdmissionConfig#boundedLagHotService}. */
        public Builder boundedLagHotService(boolean value) {
            boundedLagHotService = value;
            return this;
        }

        /** {@link AdmissionConfig#scaledBaselines}. */
        public Builder scaledBaselines(boolean value) {
            scaledBaselines = value;
            return this;
        }

        /** {@link AdmissionConfig#baselineRefillOnArrival}. */
        public Builder baselineRefillOnArrival(boolean value) {
            baselineRefillOnArrival = value;
            return this;
        }

        /** {@link AdmissionConfig#fairDispatch}. */
        public Builder fairDispatch(boolean value) {
            fairDispatch = value;
            return this;
        }

        /** {@link AdmissionConfig#oversizeAdvance}. */
        public Builder oversizeAdvance(boolean value) {
            oversizeAdvance = value;
            return this;
        }

        /** {@link AdmissionConfig#overlappingAdvances}. */
        public Builder overlappingAdvances(boolean value) {
            overlappingAdvances = value;
            return this;
        }

        /** {@link AdmissionConfig#creditGatedAdvances}. */
        public Builder creditGatedAdvances(boolean value) {
            creditGatedAdvances = value;
            return this;
        }

        /** {@link AdmissionConfig#finishTagDoor}. */
        public Builder finishTagDoor(boolean value) {
            finishTagDoor = value;
            return this;
        }

        /** {@link AdmissionConfig#diskOrderAcrossGuarantee}. */
        public Builder diskOrderAcrossGuarantee(boolean value) {
            diskOrderAcrossGuarantee = value;
            return this;
        }

        /**
         * The configuration, checked as the constructor checks it.
         *
         * @throws IllegalArgumentException naming the field, its value and the expected range when a value is NaN,
         *                                  infinite, null or out of range, or the budget per interval falls
         *                                  outside {@code 1 .. 2⁵⁰}
         */
        public AdmissionConfig build() {
            return new AdmissionConfig(
                    intervalNanos,
                    capacityCostUnitsPerSecond,
                    segmentSizeBytes,
                    blockSizeBytes,
                    reserveFraction,
                    windowIntervals,
                    recoveryWindows,
                    hotThresholdRatio,
                    queueCapacityPerSegment,
                    queueQuantumFraction,
                    costModel,
                    headroom,
                    borrowing,
                    repayment,
                    reserveLending,
                    baselineGuarantee,
                    pacedRelease,
                    adaptiveReserve,
                    weightedHotService,
                    boundedOverdraft,
                    virtualClockHotService,
                    fifoDeadline,
                    lateFirstHotService,
                    arrivalOrderWithinDisk,
                    boundedLagHotService,
                    scaledBaselines,
                    baselineRefillOnArrival,
                    fairDispatch,
                    oversizeAdvance,
                    overlappingAdvances,
                    creditGatedAdvances,
                    finishTagDoor,
                    diskOrderAcrossGuarantee);
        }
    }
}
