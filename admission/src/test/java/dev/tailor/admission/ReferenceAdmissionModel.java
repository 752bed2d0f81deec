package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A deliberately simple, slow re-implementation of what docs/admission.md and the Javadoc of the
 * admission classes promise, with borrowing off, for {@link AdmissionReferenceModelTest} to run next
 * to the real {@link AdmissionController}. It shares no logic with the controller: it uses only
 * {@link AdmissionConfig}'s own derived values ({@code budgetCostUnits}, {@code queueQuantumCostUnits}),
 * the {@link IoCostModel}'s prices, both tested on their own, and {@code Checks.saturatedAdd}.
 *
 * <p>What is modelled, each from its documented definition rather than the controller's data
 * structures:
 * <ul>
 *   <li><b>Segments</b>: a request's parts by walking it block by block (block {@code i} of a disk with
 *       {@code n} segments is in segment {@code i mod n}), in the order of their first byte.</li>
 *   <li><b>Classifier</b>: the whole cost history of every segment, per interval, kept forever. The
 *       window at the boundary that ends interval {@code k} is the sum over intervals
 *       {@code k − W + 1 .. k}; while interval {@code k} runs, the same sum with the cost so far is the
 *       running window, and a charge that pushes it above the threshold turns the segment hot at
 *       once. At each boundary a window above the threshold makes the segment hot and clears its calm
 *       count; otherwise a hot segment counts one more calm window and is steady after {@code R} of
 *       them in a row. Thresholds: the disk's commitment (or the fair share, capacity ÷ disks) ÷ its
 *       segments × Δ × W × {@code hotThresholdRatio}, in the order docs/admission.md writes it.</li>
 *   <li><b>Pool</b>: at every boundary reserve {@code floor(r·C)} with the r of that boundary, then
 *       the debt repaid from what is left, {@code min(debt, C − reserve)}, main the rest; unused tokens
 *       expire. Debt comes only from advances (borrowing is off). Inside an interval, at every call
 *       of {@code onInterval}, everything of the reserve above
 *       {@code ceil(reserveAtStart × (Δ − elapsed) ÷ Δ)} — computed exactly, in integers — is lent to
 *       hot requests, and what is lent stays lent until drawn. A steady request draws main, then the
 *       reserve (the part not lent first, our reading of "stays lent until drawn"); a hot one main,
 *       then the lent part.</li>
 *   <li><b>Queues</b>: per segment a FIFO for requests that arrived steady and one for those that
 *       arrived hot, at most {@code queueCapacityPerSegment} requests in both; a request waits at its
 *       first segment, and its position is its place in its class's queue. A ring of non-empty
 *       queues, a queue joining at the back. Serving: a pass over the steady queues, then a pass over
 *       all; a visit takes the ring's first queue, gives its head at most one quantum from its class's
 *       pools (a hot head whose segments are all steady again draws as steady, in the second pass
 *       only), admits it once its whole cost is collected — or, with {@code oversizeAdvance}, a head
 *       costing more than C once that visit drew something and no advance is outstanding (with
 *       {@code overlappingAdvances}: the advances outstanding are less than its cost; with
 *       {@code creditGatedAdvances} as well, that only for a request whose disk was within its credits
 *       when it arrived), what it lacks becoming debt, an advance, repaid before anything else — and
 *       puts the queue at the back while it
 *       holds requests; a queue skipped in a pass (hot in the steady pass) or whose head could draw
 *       nothing is set aside. A pass ends when the ring is empty or main and reserve are both empty;
 *       the set-aside queues then go back to the front in the order they were set aside. A withdrawn
 *       request leaves its queue, keeping drawn what it had collected; a queue left empty leaves
 *       the ring.</li>
 *   <li><b>Time</b>: intervals on a grid of step Δ from the start; a call before the running
 *       interval's start admits nothing and restarts the running interval at its time (the grid moves
 *       back); a call passes every boundary up to its time, of which only the last serves the queues
 *       (the others only slide the windows and set the pools afresh), then lends and serves at its
 *       place inside the running interval. The model keeps time as an offset from the start, so it
 *       never wraps, while the controller gets {@code start + offset} and must compare by difference.
 *       Long stretches are passed one boundary at a time until the model's state is a fixed point
 *       (every segment steady with an empty window, and no debt or none that a boundary repays, the
 *       reserve taking all of C; what waits does not matter, since those boundaries serve nothing),
 *       then all but the last boundary in one step.</li>
 *   <li><b>Credits</b> (read only by credit-gated advances): per disk, its baseline (commitment or fair
 *       share, as for the thresholds; scaled baselines are off) × the time since the start, less the
 *       cost of every request it sent, refused ones too, from 0 and never above R·Δ of its baseline.
 *       They grow at each {@code onInterval} call, up to its time (a time before the last call's adds
 *       nothing); a call before the running interval, which restarts it, restarts their time there
 *       too (the controller's reading: the time from there to the later call counts again). A
 *       request is within its credits when they are not negative once its cost is charged. Kept in
 *       doubles, cost units per ns, multiplied in the order written here, so that an exact tie (credits
 *       of exactly 0, which whole-number baselines and costs make common) is decided as the controller
 *       decides it: the rounding is not what this model checks.</li>
 * </ul>
 * Not modelled: borrowing, the debt it makes and the headroom model (borrowing is off; the properties of those are
 * {@code AdmissionPropertiesTest}'s and {@code HeadroomModelTest}'s), and deficit marking, which only
 * borrowing reads.
 */
final class ReferenceAdmissionModel {

    /** One part of a request: a segment and the request's bytes and cost there. */
    record Part(int segment, long bytes, long costUnits) {}

    /** A request the model holds. */
    static final class Request {
        final long id;
        final List<Part> parts;
        final long costUnits;
        final boolean arrivedSteady;
        /** Its disk's credits were not negative once its cost was charged (credit-gated advances). */
        boolean withinCredits;

        long fundedCostUnits;
        Boolean admittedSteady;

        Request(long id, List<Part> parts, long costUnits, boolean arrivedSteady) {
            this.id = id;
            this.parts = parts;
            this.costUnits = costUnits;
            this.arrivedSteady = arrivedSteady;
        }

        int firstSegment() {
            return parts.get(0).segment();
        }
    }

    /** What {@link #acquire} decided. */
    sealed interface Outcome {
        record Admitted(Request request) implements Outcome {}

        record Queued(Request request, int position) implements Outcome {}

        record Refused(int segment, long id) implements Outcome {}
    }

    /** What {@link #onInterval} did and left. */
    record Report(long intervalsElapsed, long intervalStartNanos, List<Request> admitted) {}

    private record QueueKey(int segment, boolean steady) {
        @Override
        public String toString() {
            return segment + (steady ? "S" : "H");
        }
    }

    // Configuration.
    private final long segmentBytes;
    private final long blockBytes;
    private final IoCostModel costModel;
    private final long intervalNanos;
    private final long budget;
    private final long quantum;
    private final int windowIntervals;
    private final int recoveryWindows;
    private final double[] threshold;
    private final int capacityPerSegment;
    private final boolean lending;
    private final boolean advances;
    private final boolean overlapping;
    private final boolean creditGated;
    private final long startNanos;
    private final int[] firstSegment;

    // Time: the running interval is number `interval` (the classifier's history is kept by number),
    // starting at offset runningStart (interval × Δ until a call before it moves the grid back).
    private long interval;
    private long runningStart;
    private long intervalsBegun = 1;

    // Classifier: per segment, interval number -> cost charged in it (absent: 0).
    private final List<TreeMap<Long, Long>> history = new ArrayList<>();
    private final boolean[] hot;
    private final int[] calm;

    // Credits: per disk, cost units; their depth; the baseline in cost units per ns; when they last grew.
    private final double[] credits;
    private final double[] creditDepth;
    private final double[] baselinePerNano;
    private long creditsGrownTo;

    // Pool.
    private double reserveFraction;
    private long main;
    private long reserve;
    private long reserveAtStart;
    private long lent;
    private long debt;
    private long advanceOutstanding;
    private long repaidThisInterval;

    // Queues.
    private final Map<QueueKey, ArrayDeque<Request>> queues = new HashMap<>();
    private final List<QueueKey> ring = new ArrayList<>();

    /** How often each rule took effect, for the test to check that the generator reaches every one. */
    final Map<String, Long> events = new TreeMap<>();

    // Counters.
    private long nextId;
    private long admittedRequests;
    private long admittedCostUnits;
    private long admittedSteadyRequests;
    private long queuedRequests;
    private long refusedRequests;
    private long cancelledRequests;
    private long drawnMain;
    private long drawnReserve;
    private long drawnLent;
    private long advanced;
    private long repaid;

    ReferenceAdmissionModel(AdmissionConfig config, List<VirtualDisk> disks, long startNanos) {
        this.segmentBytes = config.segmentSizeBytes();
        this.blockBytes = config.blockSizeBytes();
        this.costModel = config.costModel();
        this.intervalNanos = config.intervalNanos();
        this.budget = config.budgetCostUnits();
        this.quantum = config.queueQuantumCostUnits();
        this.windowIntervals = config.windowIntervals();
        this.recoveryWindows = config.recoveryWindows();
        this.capacityPerSegment = config.queueCapacityPerSegment();
        this.lending = config.reserveLending();
        this.advances = config.oversizeAdvance();
        this.overlapping = config.overlappingAdvances();
        this.creditGated = config.creditGatedAdvances();
        if (creditGated && config.scaledBaselines()) {
            throw new IllegalArgumentException("model: credits with scaled baselines are not modelled");
        }
        this.startNanos = startNanos;
        this.firstSegment = new int[disks.size() + 1];
        List<Double> thresholds = new ArrayList<>();
        double fairShare = config.capacityCostUnitsPerSecond() / disks.size();
        this.credits = new double[disks.size()];
        this.creditDepth = new double[disks.size()];
        this.baselinePerNano = new double[disks.size()];
        for (int d = 0; d < disks.size(); d++) {
            firstSegment[d] = thresholds.size();
            VirtualDisk disk = disks.get(d);
            long n = (disk.sizeBytes() + segmentBytes - 1) / segmentBytes;
            double perSecond = disk.commitmentCostUnitsPerSecond().orElse(fairShare);
            baselinePerNano[d] = perSecond / 1e9;
            creditDepth[d] = baselinePerNano[d] * intervalNanos * recoveryWindows;
            for (long s = 0; s < n; s++) {
                thresholds.add(perSecond / n * (intervalNanos / 1e9) * windowIntervals * config.hotThresholdRatio());
            }
        }
        firstSegment[disks.size()] = thresholds.size();
        this.threshold = thresholds.stream().mapToDouble(Double::doubleValue).toArray();
        this.hot = new boolean[threshold.length];
        this.calm = new int[threshold.length];
        for (int s = 0; s < threshold.length; s++) {
            history.add(new TreeMap<>());
        }
        this.reserveFraction = config.reserveFraction();
        replenish();
    }

    int segmentCount() {
        return threshold.length;
    }

    // ---------------------------------------------------------------- requests

    Outcome acquire(int disk, IoKind kind, long offsetBytes, long lengthBytes) {
        List<Part> parts = walk(disk, kind, offsetBytes, lengthBytes);
        long cost = 0;
        for (Part p : parts) {
            cost = Checks.saturatedAdd(cost, p.costUnits());
        }
        cost = Math.min(cost, IoCostModel.MAX_COST_UNITS);
        long id = nextId++;
        for (Part p : parts) {
            charge(p.segment(), p.costUnits());
        }
        credits[disk] -= cost;
        boolean steady = parts.stream().allMatch(p -> !hot[p.segment()]);
        Request request = new Request(id, parts, cost, steady);
        request.withinCredits = credits[disk] >= 0;
        int first = request.firstSegment();
        boolean nobodyAhead = steady
                ? queue(first, true).isEmpty()
                : queue(first, true).isEmpty() && queue(first, false).isEmpty();
        if (nobodyAhead && cost <= main + (steady ? reserve : lent)) {
            if (cost > main) {
                note(steady ? "acquire draws the reserve" : "acquire draws the lent reserve");
            }
            draw(cost, steady);
            admit(request, steady);
            note(steady ? "acquire admits steady" : "acquire admits hot");
            return new Outcome.Admitted(request);
        }
        if (!nobodyAhead && cost <= main + (steady ? reserve : lent)) {
            note("acquire waits behind its class although the pools cover it");
        }
        if (waitingAt(first) >= capacityPerSegment) {
            note("acquire refused");
            refusedRequests++;
            return new Outcome.Refused(first, id);
        }
        QueueKey key = new QueueKey(first, steady);
        ArrayDeque<Request> q = queue(first, steady);
        if (q.isEmpty()) {
            ring.add(key);
        }
        q.addLast(request);
        queuedRequests++;
        note(steady ? "acquire queues steady" : "acquire queues hot");
        return new Outcome.Queued(request, q.size());
    }

    /**
     * Withdraws a waiting request: it leaves its queue (and the queue the ring, when that leaves it
     * empty); what it had collected stays drawn.
     *
     * @return whether it was waiting
     */
    boolean cancel(Request request) {
        QueueKey key = new QueueKey(request.firstSegment(), request.arrivedSteady);
        ArrayDeque<Request> q = queue(key.segment(), key.steady());
        if (!q.remove(request)) {
            return false;
        }
        cancelledRequests++;
        note(request.fundedCostUnits > 0 ? "cancel of a partly funded request" : "cancel of a waiting request");
        if (q.isEmpty()) {
            ring.remove(key);
        }
        return true;
    }

    long cancelledRequests() {
        return cancelledRequests;
    }

    /** The request's parts, block by block, merged per segment in the order of first appearance. */
    private List<Part> walk(int disk, IoKind kind, long offsetBytes, long lengthBytes) {
        int n = firstSegment[disk + 1] - firstSegment[disk];
        long end = offsetBytes + lengthBytes;
        Map<Integer, Long> bytes = new LinkedHashMap<>();
        for (long block = offsetBytes / blockBytes; block * blockBytes < end; block++) {
            long from = Math.max(offsetBytes, block * blockBytes);
            long to = Math.min(end, (block + 1) * blockBytes);
            bytes.merge(firstSegment[disk] + (int) (block % n), to - from, Long::sum);
        }
        List<Part> parts = new ArrayList<>();
        bytes.forEach((segment, b) -> parts.add(new Part(segment, b, costModel.costUnits(kind, b))));
        return parts;
    }

    private void charge(int segment, long costUnits) {
        history.get(segment).merge(interval, costUnits, Checks::saturatedAdd);
        if (!hot[segment] && window(segment, interval) > threshold[segment]) {
            hot[segment] = true;
            calm[segment] = 0;
            note("segment turns hot at a charge");
        }
    }

    /** Cost of {@code segment} in the intervals {@code last − W + 1 .. last}. */
    private long window(int segment, long last) {
        long sum = 0;
        for (long cost : history.get(segment)
                .subMap(last - windowIntervals + 1, true, last, true)
                .values()) {
            sum = Checks.saturatedAdd(sum, cost);
        }
        return sum;
    }

    private void draw(long costUnits, boolean steady) {
        long fromMain = Math.min(costUnits, main);
        main -= fromMain;
        drawnMain += fromMain;
        long rest = costUnits - fromMain;
        if (rest == 0) {
            return;
        }
        if (steady) {
            if (rest > reserve) {
                throw new AssertionError("model: steady draw beyond the reserve");
            }
            reserve -= rest;
            lent = Math.min(lent, reserve); // the part not lent goes first
            drawnReserve += rest;
        } else {
            if (rest > lent) {
                throw new AssertionError("model: hot draw beyond the lent reserve");
            }
            reserve -= rest;
            lent -= rest;
            drawnLent += rest;
        }
    }

    private void admit(Request request, boolean steady) {
        request.admittedSteady = steady;
        admittedRequests++;
        admittedCostUnits = Checks.saturatedAdd(admittedCostUnits, request.costUnits);
        if (steady) {
            admittedSteadyRequests++;
        }
    }

    // ---------------------------------------------------------------- time

    /**
     * The call {@code onInterval(start + offsetNanos)}.
     *
     * @param offsetNanos time since the model's start, in ns (never wraps)
     */
    Report onInterval(long offsetNanos) {
        List<Request> admitted = new ArrayList<>();
        if (offsetNanos < runningStart) {
            note("call before the running interval restarts it");
            runningStart = offsetNanos;
            creditsGrownTo = offsetNanos;
            return new Report(0, startNanos + runningStart, admitted);
        }
        if (offsetNanos > creditsGrownTo) {
            for (int d = 0; d < credits.length; d++) {
                credits[d] = Math.min(creditDepth[d], credits[d] + baselinePerNano[d] * (offsetNanos - creditsGrownTo));
            }
            creditsGrownTo = offsetNanos;
        }
        long boundaries = (offsetNanos - runningStart) / intervalNanos;
        for (long b = 0; b < boundaries; b++) {
            long left = boundaries - b;
            if (left > 1 && fixedPoint()) {
                // The boundaries before the last would leave everything as it is; the last replenishes.
                note("idle boundaries passed at once");
                interval += left - 1;
                intervalsBegun += left - 1;
                b += left - 1;
                left = 1;
            }
            if (left > 1 && waiting() > 0) {
                note("boundary passed without service, requests waiting");
            }
            boundary(admitted, left == 1);
        }
        runningStart += boundaries * intervalNanos;
        long within = offsetNanos - runningStart;
        if (lending) {
            lend(within);
        }
        serve(admitted);
        return new Report(boundaries, startNanos + runningStart, admitted);
    }

    /**
     * Whether a boundary that serves nothing would change nothing but the pools (which every boundary
     * sets afresh): every segment is steady with an empty window, and no debt is left to repay, or the
     * reserve takes the whole budget (r·C floored is C), so a boundary repays none of it.
     */
    private boolean fixedPoint() {
        if (debt > 0 && Math.min(budget, (long) Math.floor(reserveFraction * budget)) < budget) {
            return false;
        }
        for (int s = 0; s < segmentCount(); s++) {
            if (hot[s] || window(s, interval) != 0) {
                return false;
            }
        }
        return true;
    }

    private void boundary(List<Request> admitted, boolean serve) {
        for (int s = 0; s < segmentCount(); s++) {
            if (window(s, interval) > threshold[s]) {
                if (hot[s] && calm[s] > 0) {
                    note("calm count reset by a hot window");
                }
                hot[s] = true;
                calm[s] = 0;
            } else if (hot[s] && ++calm[s] >= recoveryWindows) {
                hot[s] = false;
                calm[s] = 0;
                note("segment steady again after R calm windows");
            }
        }
        interval++;
        intervalsBegun++;
        replenish();
        if (serve) {
            serve(admitted);
        }
    }

    private void replenish() {
        if (reserveAtStart != Math.min(budget, (long) Math.floor(reserveFraction * budget)) && intervalsBegun > 1) {
            note("reserve changed at a boundary");
        }
        reserve = Math.min(budget, (long) Math.floor(reserveFraction * budget));
        reserveAtStart = reserve;
        lent = 0;
        repaidThisInterval = Math.min(debt, budget - reserve);
        if (repaidThisInterval > 0) {
            note("advance repaid at a boundary");
        }
        debt -= repaidThisInterval;
        advanceOutstanding -= Math.min(advanceOutstanding, repaidThisInterval);
        repaid += repaidThisInterval;
        main = budget - reserve - repaidThisInterval;
    }

    private void lend(long elapsedNanos) {
        BigInteger keep = BigInteger.valueOf(reserveAtStart)
                .multiply(BigInteger.valueOf(intervalNanos - elapsedNanos))
                .add(BigInteger.valueOf(intervalNanos - 1))
                .divide(BigInteger.valueOf(intervalNanos));
        lent = Math.max(lent, Math.max(0, reserve - keep.longValueExact()));
    }

    void setReserveFraction(double fraction) {
        reserveFraction = fraction;
    }

    // ---------------------------------------------------------------- queues

    private void serve(List<Request> admitted) {
        pass(true, admitted);
        pass(false, admitted);
    }

    private void pass(boolean steadyOnly, List<Request> admitted) {
        List<QueueKey> setAside = new ArrayList<>();
        while (!ring.isEmpty() && main + reserve > 0) {
            QueueKey key = ring.remove(0);
            ArrayDeque<Request> q = queues.get(key);
            Request head = q.peekFirst();
            if (steadyOnly && !head.arrivedSteady) {
                setAside.add(key);
                note("steady pass sets a hot queue aside");
                continue;
            }
            boolean steady = head.arrivedSteady || head.parts.stream().allMatch(p -> !hot[p.segment()]);
            if (!head.arrivedSteady && steady) {
                note("hot request draws as steady, its segments calm");
            }
            long want = Math.min(quantum, head.costUnits - head.fundedCostUnits);
            long got = Math.min(want, main + (steady ? reserve : lent));
            if (got == 0) {
                setAside.add(key);
                note("queue set aside, its class can draw nothing");
                continue;
            }
            if (got > main) {
                note(steady ? "queue draws the reserve" : "queue draws the lent reserve");
            }
            draw(got, steady);
            head.fundedCostUnits += got;
            boolean onAdvance = false;
            boolean mayOverlap = overlapping && advanceOutstanding < head.costUnits;
            if (mayOverlap && creditGated && !head.withinCredits) {
                mayOverlap = false;
                if (advances && head.costUnits > budget && head.fundedCostUnits < head.costUnits) {
                    note(
                            advanceOutstanding > 0
                                    ? "no advance while another is outstanding, its disk beyond its credits"
                                    : "advance, none outstanding, its disk beyond its credits");
                }
            }
            if (advances
                    && head.costUnits > budget
                    && head.fundedCostUnits < head.costUnits
                    && (advanceOutstanding == 0 || mayOverlap)) {
                if (advanceOutstanding > 0) {
                    note(
                            creditGated
                                    ? "advance while another is outstanding, its disk within its credits"
                                    : "advance while another is outstanding");
                }
                long lacking = head.costUnits - head.fundedCostUnits;
                debt += lacking;
                advanceOutstanding += lacking;
                advanced += lacking;
                head.fundedCostUnits = head.costUnits;
                onAdvance = true;
            }
            if (head.fundedCostUnits == head.costUnits) {
                q.removeFirst();
                admit(head, steady);
                admitted.add(head);
                note(
                        onAdvance
                                ? "queue admits on an advance"
                                : head.fundedCostUnits > quantum
                                        ? "queue admits after several visits"
                                        : "queue admits in one visit");
            }
            if (!q.isEmpty()) {
                ring.add(key);
            }
        }
        ring.addAll(0, setAside);
    }

    private void note(String event) {
        events.merge(event, 1L, Long::sum);
    }

    private ArrayDeque<Request> queue(int segment, boolean steady) {
        return queues.computeIfAbsent(new QueueKey(segment, steady), k -> new ArrayDeque<>());
    }

    int waitingAt(int segment) {
        return queue(segment, true).size() + queue(segment, false).size();
    }

    int waiting() {
        return queues.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    // ---------------------------------------------------------------- state

    boolean isHot(int segment) {
        return hot[segment];
    }

    int hotCount() {
        int n = 0;
        for (boolean h : hot) {
            n += h ? 1 : 0;
        }
        return n;
    }

    long mainCostUnits() {
        return main;
    }

    long reserveCostUnits() {
        return reserve;
    }

    long budgetCostUnits() {
        return budget;
    }

    long debtCostUnits() {
        return debt;
    }

    long repaidThisIntervalCostUnits() {
        return repaidThisInterval;
    }

    long repaidCostUnits() {
        return repaid;
    }

    long advancedCostUnits() {
        return advanced;
    }

    long intervalsBegun() {
        return intervalsBegun;
    }

    long admittedRequests() {
        return admittedRequests;
    }

    long admittedCostUnits() {
        return admittedCostUnits;
    }

    long admittedSteadyRequests() {
        return admittedSteadyRequests;
    }

    long queuedRequests() {
        return queuedRequests;
    }

    long refusedRequests() {
        return refusedRequests;
    }

    long drawnMainCostUnits() {
        return drawnMain;
    }

    long drawnReserveCostUnits() {
        return drawnReserve;
    }

    long lentReserveCostUnits() {
        return drawnLent;
    }

    /** The ring of non-empty queues, front first, e.g. {@code [3H, 0S]}: for failure messages. */
    String ringDescription() {
        return ring.toString();
    }
}
