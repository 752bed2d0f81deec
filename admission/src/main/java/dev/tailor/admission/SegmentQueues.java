package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Bounded FIFO queues of waiting requests, two per segment — one for the requests that arrived
 * steady, one for those that arrived hot — served round-robin from the token pool at each interval
 * boundary and at each call between (docs/design.md#queues: bounded per-segment queues served
 * round-robin): first the steady queues, round-robin among them, then all, round-robin.
 *
 * <p>Contract. A segment never holds more than its capacity, both queues together; {@link #offer} of
 * one more fails and the caller refuses the request. {@link #serve} visits the queues with waiting
 * requests in a ring: each visit gives the head request at most one quantum of cost units from the
 * pools its class may draw (steady: main, then the reserve; hot: main, then what is lent of the
 * reserve, or all of it once every segment it touches is steady again; never borrowing), admits it
 * once it has collected its whole cost, and moves on. With {@link #advanceAbove advances} (ours,
 * {@link AdmissionConfig#oversizeAdvance}), a head costing more than C that drew something on its visit
 * is admitted then if the pool {@linkplain DualTokenPool#mayAdvance may advance}: what it still lacks
 * becomes an advance of the pool, debt (so what is admitted beyond what was drawn stays below one such
 * request's cost, or twice the largest with overlapping advances), and the weighted service charges its
 * disk the whole cost. A queue whose class can draw nothing keeps its place, ahead of those served, for the next call. Requests
 * leave a queue by admission, or by {@link #cancel} (the request's client went away); what a cancelled
 * request had collected stays drawn.
 * Not thread-safe: the {@link AdmissionController} serialises access.
 */
/*
 * Maintainer note. Round-robin by request, with a cost quantum per visit (in the spirit of deficit
 * round-robin [1]): a request costing no more than the quantum is admitted in one visit, so segments
 * of small requests take turns request by request, while a request larger than the quantum collects
 * its cost over several visits (and several intervals when it costs more than a budget) instead of
 * taking the whole budget in one visit or never fitting at all. The cost collected is drawn from the
 * pools at once, so the pool accounting stays exact: nothing is admitted beyond what was drawn.
 *
 * Advances (ours, AdmissionConfig.oversizeAdvance). Collecting a whole cost larger than C takes
 * ⌈cost ÷ C⌉ intervals or more, while the backend may idle (on a backend shared by 16 proxies, whose
 * budgets are C·Δ ÷ 16 each, a 1 MiB read costs two budgets: docs/admission-record.md has the figures). The
 * advance is taken on the request's turn (its visit drew something), not at its arrival, so the order
 * of the service, steady queues first and the disks' shares, decides which oversized request goes
 * next. Requiring it to collect a whole C first would add an interval of waiting, while the backend may
 * idle, and lower the bound only by C: the one-outstanding rule is what bounds the rate. Its disk's
 * virtual time or clock is charged the whole cost, so under the weighted service a disk is not served
 * more often for sending larger requests. A request costing no more than C never takes an advance:
 * everything about it is as without the option.
 *
 * Two queues per segment (our reading). A segment's backlog outlives its class: a segment that was hot
 * during a burst and has calmed down (R calm windows) may still hold the burst's requests. With one
 * queue its new, steady requests would wait behind them, and a steady request would be held by hot
 * ones after all (on burst-microbench ×16 such requests waited 150 ms). Block storage does not order
 * requests that are in flight together (NBD leaves it to the client to wait for a reply before
 * issuing a dependent request), so nothing requires first-come-first-served across classes; within a
 * class it is kept. A request waits in the queue of its class at arrival, when its cost was charged,
 * and steady queues are served first: a steady request that had to wait (main and reserve were empty)
 * goes ahead of hot ones, and of a calmed segment's backlog, at the next call. A hot request whose
 * segments have all turned steady while it waited may draw the reserve in the second pass, after the
 * steady queues; without that, a hot request could wait forever when r = 1 leaves no main pool.
 *
 * Ring order. Serving rotates the ring: a visited queue goes to the back. Queues that could draw
 * nothing (their class's pools are empty) are set aside and put back at the front, in their order,
 * when serving stops; otherwise the last rounds of a boundary, in which nobody draws, would rotate
 * the ring back to where it started and the same segment would be first at every boundary. Serving
 * stops when no request waits, when main and reserve are both empty, or when every waiting segment
 * has been set aside. Each visit either draws at least one cost unit or sets a segment aside, so a
 * boundary costs O(admitted + C ÷ quantum + segments waiting).
 *
 * [1] M. Shreedhar, G. Varghese, "Efficient fair queueing using deficit round robin", SIGCOMM 1995.
 * [2] P. Goyal, H. M. Vin, H. Cheng, "Start-time fair queueing", SIGCOMM 1996.
 *
 * Weighted hot service costs a scan of the waiting queues per visit of the hot pass (O(queues waiting)
 * instead of O(1)); the steady pass stays round-robin. Arrival order within a disk adds nothing to that
 * scan: among the queues of the disk with the least tag, the one whose head has the smallest ticket id
 * (ids are given in arrival order) wins the tie, instead of the first in ring order. Late-first service
 * adds a scan of the disks and one of the waiting queues per visit of the hot pass. Served out of turn, a
 * late request moves its disk's start-time tag (or virtual clock) but not the system's virtual time, so
 * the other disks keep their places. Only disks with no more cost waiting than the mean take part: with
 * every late request first, the large tenants' backlogs (late whenever the backend is overloaded) went
 * ahead of everything else.
 */
final class SegmentQueues {

    private final int capacityPerSegment;
    /** Weighted hot service (ours): per disk its weight (baseline), or null for round-robin. */
    private double[] diskWeights;

    private double[] diskVirtualTime;
    private double virtualNow;
    /**
     * Bounded lag (ours, {@link AdmissionConfig#boundedLagHotService}): how far behind the system's
     * virtual time a disk's start tag may be, in the virtual time's unit; 0 is start-time fair queueing.
     */
    private double lag;
    /** Arrival order within a disk (ours, {@link AdmissionConfig#arrivalOrderWithinDisk}). */
    private boolean arrivalOrderWithinDisk;
    /**
     * Hot service by virtual clock (ours, {@link AdmissionConfig#virtualClockHotService}): per disk the
     * lead of its clock over now in ns is {@code clockNanos[d] − nowNanos}, kept in [0, leadCapNanos];
     * null when off.
     */
    private long[] clockNanos;

    private double[] nanosPerCostUnit;
    private long leadCapNanos;
    private long nowNanos;
    /**
     * Late-first service (ours, {@link AdmissionConfig#lateFirstHotService}): per disk the cost of its
     * waiting requests (both classes, whole costs), or null when off.
     */
    private long[] waitingCostUnits;

    /**
     * Advances (ours, {@link AdmissionConfig#oversizeAdvance}): a head costing more than this may be
     * admitted on an advance; {@code Long.MAX_VALUE} when off.
     */
    private long advanceAboveCostUnits = Long.MAX_VALUE;

    private final Queue[] queues;
    private final ArrayDeque<Queue> ring = new ArrayDeque<>();
    private final ArrayDeque<Queue> setAside = new ArrayDeque<>();
    private int waiting;

    private static final class Queue {
        final ArrayDeque<Ticket> tickets = new ArrayDeque<>();
        boolean inRing;
    }

    SegmentQueues(int segments, int capacityPerSegment) {
        this.capacityPerSegment = capacityPerSegment;
        this.queues = new Queue[2 * segments];
    }

    /**
     * Weighted hot service (ours, {@link AdmissionConfig#weightedHotService}): the pass that serves
     * hot requests picks, instead of the next queue in the ring, the queue whose disk has the least
     * virtual time, and advances that disk's virtual time by the cost drawn ÷ its weight (start-time
     * fair queueing over disks [2], weights = baselines). A disk that returns from idle starts at the
     * virtual time of the last service, so it banks no credit.
     *
     * With {@code arrivalOrderWithinDisk}, the queue served for the chosen disk is the one whose head
     * arrived first (smallest ticket id), not the disk's first queue in ring order.
     *
     * @param weights                per disk, positive (the disks' baselines in cost units per second)
     * @param arrivalOrderWithinDisk serve the chosen disk's oldest waiting request first
     */
    void weightHotService(double[] weights, boolean arrivalOrderWithinDisk) {
        this.diskWeights = weights.clone();
        this.arrivalOrderWithinDisk = arrivalOrderWithinDisk;
        this.diskVirtualTime = new double[weights.length];
    }

    /**
     * Bounded lag (ours, {@link AdmissionConfig#boundedLagHotService}; needs {@link #weightHotService}):
     * a disk's start tag is its own virtual time, but no less than the system's virtual time minus
     * {@code lag}, instead of no less than the system's virtual time. A disk whose hot queue stayed empty
     * while the others were served thus comes back up to {@code lag} behind them (in the virtual time's
     * unit, cost ÷ weight), and is served first until it has caught up; disks that wait all along keep
     * their shares. What a disk can gain over start-time fair queueing is bounded by {@code lag} × its
     * weight per return from idle, and a return gains only the virtual time that passed while it was idle.
     *
     * @param lag how far behind the system's virtual time a start tag may be, {@code >= 0}
     */
    void boundLag(double lag) {
        Checks.requireRange("lag", lag, 0, Double.MAX_VALUE);
        this.lag = lag;
    }

    /** The least start tag a disk may have: the system's virtual time, less the bounded lag. */
    private double floorTag() {
        return virtualNow - lag;
    }

    /**
     * Hot service by virtual clock (ours, {@link AdmissionConfig#virtualClockHotService}; needs
     * {@link #weightHotService}): the hot pass picks the queue whose disk's clock is least ahead of now,
     * and every admission of a disk's cost, at once ({@link #chargeClock}) or from a queue, moves its
     * clock cost ÷ baseline ahead, starting from now at the earliest and ending at most
     * {@code leadCapNanos} ahead of now.
     *
     * @param baselinePerNano per disk, its baseline in cost units per ns, positive
     * @param leadCapNanos    how far ahead of now a clock may run, ns, {@code >= 0}
     * @param startNanos      now, on the controller's clock
     */
    void useVirtualClock(double[] baselinePerNano, long leadCapNanos, long startNanos) {
        this.nanosPerCostUnit = new double[baselinePerNano.length];
        for (int d = 0; d < baselinePerNano.length; d++) {
            nanosPerCostUnit[d] = 1 / Math.max(baselinePerNano[d], Double.MIN_NORMAL);
        }
        this.clockNanos = new long[baselinePerNano.length];
        this.leadCapNanos = leadCapNanos;
        setNow(startNanos);
        java.util.Arrays.fill(clockNanos, startNanos);
    }

    /**
     * Late-first service (ours, {@link AdmissionConfig#lateFirstHotService}): in the pass after the steady
     * queues, a queue whose head is late — its fifo finish ({@link Ticket#fifoDeadlineNanos}) is at or before
     * now — and whose disk has no more cost waiting than the mean over the disks with requests waiting is
     * served before any other, the earliest fifo finish first; the others keep their order (virtual clock,
     * start-time fair queueing or round-robin).
     *
     * @param disks the number of disks, {@code >= 1}
     */
    void serveLateFirst(int disks) {
        this.waitingCostUnits = new long[disks];
    }

    /**
     * Advances (ours, {@link AdmissionConfig#oversizeAdvance}): from now on a head request costing more
     * than {@code budgetCostUnits} (C) that drew something on its visit is admitted then, when the pool
     * {@linkplain DualTokenPool#mayAdvance may advance}, what it lacks becoming the pool's advance.
     *
     * @param budgetCostUnits C, {@code >= 1}
     */
    void advanceAbove(long budgetCostUnits) {
        this.advanceAboveCostUnits = Checks.requireRange("budgetCostUnits", budgetCostUnits, 1, Long.MAX_VALUE);
    }

    /** The time of the controller's latest call, which the virtual clocks are read against. */
    void setNow(long nanos) {
        this.nowNanos = nanos;
    }

    /** Moves disk {@code disk}'s virtual clock by {@code costUnits} ÷ its baseline (no-op when off). */
    void chargeClock(int disk, long costUnits) {
        if (clockNanos == null) {
            return;
        }
        double lead = lead(disk) + costUnits * nanosPerCostUnit[disk];
        clockNanos[disk] = nowNanos + (long) Math.min(lead, (double) leadCapNanos);
    }

    /** How far disk {@code disk}'s clock is ahead of now, in [0, leadCapNanos] (times by difference). */
    private long lead(int disk) {
        long lead = clockNanos[disk] - nowNanos;
        return lead < 0 ? 0 : Math.min(lead, leadCapNanos);
    }

    /** Requests waiting at {@code segment}, both classes. */
    int size(int segment) {
        return size(segment, SegmentClass.STEADY) + size(segment, SegmentClass.HOT);
    }

    /** Requests of class {@code asClass} waiting at {@code segment}. */
    int size(int segment, SegmentClass asClass) {
        Queue q = queues[index(segment, asClass)];
        return q == null ? 0 : q.tickets.size();
    }

    private static int index(int segment, SegmentClass asClass) {
        return 2 * segment + (asClass == SegmentClass.STEADY ? 0 : 1);
    }

    /** Requests waiting in all queues. */
    int waiting() {
        return waiting;
    }

    /** The most requests one segment's queue holds. */
    int capacityPerSegment() {
        return capacityPerSegment;
    }

    /**
     * Appends {@code ticket} to its segment's queue.
     *
     * @return its position (1 for the head), or -1 when the queue is full
     */
    int offer(Ticket ticket) {
        int segment = ticket.segment();
        if (size(segment) >= capacityPerSegment) {
            return -1;
        }
        int at = index(segment, ticket.arrivedAs());
        Queue q = queues[at];
        if (q == null) {
            q = new Queue();
            queues[at] = q;
        }
        q.tickets.addLast(ticket);
        waiting++;
        if (waitingCostUnits != null) {
            waitingCostUnits[ticket.disk()] += ticket.costUnits();
        }
        if (!q.inRing) {
            q.inRing = true;
            ring.addLast(q);
        }
        return q.tickets.size();
    }

    /**
     * Takes a waiting request out of its queue; a queue left empty leaves the ring.
     *
     * @return whether it was waiting (false: admitted or cancelled before)
     */
    boolean cancel(Ticket ticket) {
        Queue q = queues[index(ticket.segment(), ticket.arrivedAs())];
        if (q == null || !q.tickets.removeFirstOccurrence(ticket)) {
            return false;
        }
        waiting--;
        if (waitingCostUnits != null) {
            waitingCostUnits[ticket.disk()] -= ticket.costUnits();
        }
        if (q.tickets.isEmpty() && q.inRing) {
            ring.removeFirstOccurrence(q);
            q.inRing = false;
        }
        return true;
    }

    /**
     * Serves the queues round-robin from {@code pool} (see the class description), appending the
     * requests admitted to {@code admitted} and marking them admitted.
     *
     * @param quantumCostUnits the most one visit gives a request, {@code >= 1}
     */
    void serve(DualTokenPool pool, SegmentClassifier classifier, long quantumCostUnits, List<Ticket> admitted) {
        serveRound(pool, classifier, quantumCostUnits, admitted, true);
        serveRound(pool, classifier, quantumCostUnits, admitted, false);
    }

    /**
     * One round-robin pass until the pools or the queues run out; with {@code steadyOnly}, queues whose
     * head arrived hot are set aside (they keep their place) and only heads that arrived steady are
     * served, as steady, whatever their segments' class is now.
     */
    private void serveRound(
            DualTokenPool pool,
            SegmentClassifier classifier,
            long quantumCostUnits,
            List<Ticket> admitted,
            boolean steadyOnly) {
        boolean weighted = diskWeights != null && !steadyOnly;
        boolean clocked = clockNanos != null;
        boolean late = waitingCostUnits != null && !steadyOnly;
        while (!ring.isEmpty() && pool.available(true) > 0) {
            Queue q = late ? pollEarliestLate() : null;
            boolean outOfTurn = q != null;
            if (q == null) {
                q = clocked ? pollLeastClock() : weighted ? pollLeastVirtualTime() : ring.pollFirst();
            }
            Ticket head = q.tickets.peekFirst();
            boolean arrivedSteady = head.arrivedAs() == SegmentClass.STEADY;
            if (steadyOnly && !arrivedSteady) {
                setAside.addLast(q);
                continue;
            }
            // A hot request whose segments have all calmed down since draws as steady, after the
            // steady queues (otherwise, with r = 1 or a long debt, it could wait forever).
            boolean steady = arrivedSteady || head.allSteady(classifier);
            long wanted = Math.min(quantumCostUnits, head.costUnits() - head.fundedCostUnits);
            long drawn = pool.drawUpTo(wanted, steady);
            if (drawn == 0) {
                setAside.addLast(q);
                continue;
            }
            head.fundedCostUnits += drawn;
            if (head.costUnits() > advanceAboveCostUnits
                    && head.fundedCostUnits < head.costUnits()
                    && pool.mayAdvance(head.costUnits(), head.mayOverlapAdvance)) {
                long lacking = head.costUnits() - head.fundedCostUnits;
                pool.advance(lacking);
                head.fundedCostUnits = head.costUnits();
                drawn += lacking;
            }
            if (clockNanos != null) {
                chargeClock(head.disk(), drawn);
            } else if (weighted) {
                int d = head.disk();
                double start = Math.max(diskVirtualTime[d], floorTag());
                if (!outOfTurn) {
                    // Served in its turn: the system's virtual time is its start tag (never moved back by a
                    // lagging disk's). A late request served out of turn charges its disk but leaves the
                    // others' tags where they are.
                    virtualNow = Math.max(virtualNow, start);
                }
                diskVirtualTime[d] = start + drawn / diskWeights[d];
            }
            if (head.fundedCostUnits == head.costUnits()) {
                q.tickets.pollFirst();
                waiting--;
                if (waitingCostUnits != null) {
                    waitingCostUnits[head.disk()] -= head.costUnits();
                }
                head.admit(steady ? SegmentClass.STEADY : SegmentClass.HOT);
                admitted.add(head);
            }
            if (q.tickets.isEmpty()) {
                q.inRing = false;
            } else {
                ring.addLast(q);
            }
        }
        while (!setAside.isEmpty()) {
            ring.addFirst(setAside.pollLast());
        }
    }

    /**
     * Late-first: takes out of the ring the queue whose head is late (fifo finish at or before now) and
     * whose disk waits with no more cost than the mean over the disks with requests waiting, the earliest
     * fifo finish first (first on ties); null when there is none.
     */
    private Queue pollEarliestLate() {
        double sum = 0;
        int disksWaiting = 0;
        for (long w : waitingCostUnits) {
            if (w > 0) {
                sum += w;
                disksWaiting++;
            }
        }
        double mean = disksWaiting == 0 ? 0 : sum / disksWaiting;
        Queue best = null;
        long bestDeadline = 0;
        for (Queue q : ring) {
            Ticket head = q.tickets.peekFirst();
            long deadline = head.fifoDeadlineNanos;
            if (deadline - nowNanos <= 0
                    && waitingCostUnits[head.disk()] <= mean
                    && (best == null || deadline - bestDeadline < 0)) {
                best = q;
                bestDeadline = deadline;
            }
        }
        if (best != null) {
            ring.removeFirstOccurrence(best);
        }
        return best;
    }

    /**
     * Arrival order within a disk: whether {@code head} is of the same disk as {@code best}'s head and
     * arrived before it (ticket ids are given in arrival order).
     */
    private boolean olderOfSameDisk(Ticket head, Queue best) {
        if (!arrivalOrderWithinDisk) {
            return false;
        }
        Ticket other = best.tickets.peekFirst();
        return head.disk() == other.disk() && head.id() < other.id();
    }

    /**
     * Takes out of the ring the queue whose head's disk's clock is least ahead of now (first on ties; of
     * that disk, the oldest head with arrival order within a disk).
     */
    private Queue pollLeastClock() {
        Queue best = null;
        long bestLead = Long.MAX_VALUE;
        for (Queue q : ring) {
            Ticket head = q.tickets.peekFirst();
            long lead = lead(head.disk());
            if (lead < bestLead) {
                best = q;
                bestLead = lead;
            } else if (lead == bestLead && olderOfSameDisk(head, best)) {
                best = q;
            }
        }
        ring.removeFirstOccurrence(best);
        return best;
    }

    /**
     * Takes out of the ring the queue whose head's disk has the least virtual time (first on ties; of that
     * disk, the oldest head with arrival order within a disk).
     */
    private Queue pollLeastVirtualTime() {
        Queue best = null;
        double bestTime = Double.POSITIVE_INFINITY;
        for (Queue q : ring) {
            Ticket head = q.tickets.peekFirst();
            double t = Math.max(diskVirtualTime[head.disk()], floorTag());
            if (t < bestTime) {
                best = q;
                bestTime = t;
            } else if (t == bestTime && olderOfSameDisk(head, best)) {
                best = q;
            }
        }
        ring.removeFirstOccurrence(best);
        return best;
    }
}
