package dev.tailor.admission;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Bounded FIFO queues of waiting requests, one per segment, served round-robin from the token pool
 * at each interval boundary (DESIGN.md, Dual token pool: "bounded per-segment queues (served
 * round-robin)").
 *
 * <p>Contract. A queue never holds more than its capacity; {@link #offer} of one more fails and the
 * caller refuses the request. {@link #serve} visits the segments with waiting requests in a ring:
 * each visit gives the head request at most one quantum of cost units from the pools its class may
 * draw (main, and the reserve when every segment it touches is steady; never borrowing), admits it
 * once it has collected its whole cost, and moves on. A segment whose class can draw nothing keeps
 * its place, ahead of those served, for the next boundary. Requests leave a queue only by admission.
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
 * Ring order. Serving rotates the ring: a visited segment goes to the back. Segments that could draw
 * nothing (their class's pools are empty) are set aside and put back at the front, in their order,
 * when serving stops; otherwise the last rounds of a boundary, in which nobody draws, would rotate
 * the ring back to where it started and the same segment would be first at every boundary. Serving
 * stops when no request waits, when main and reserve are both empty, or when every waiting segment
 * has been set aside. Each visit either draws at least one cost unit or sets a segment aside, so a
 * boundary costs O(admitted + C ÷ quantum + segments waiting).
 *
 * [1] M. Shreedhar, G. Varghese, "Efficient fair queueing using deficit round robin", SIGCOMM 1995.
 */
final class SegmentQueues {

    private final int capacityPerSegment;
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
        this.queues = new Queue[segments];
    }

    /** Requests waiting in {@code segment}'s queue. */
    int size(int segment) {
        Queue q = queues[segment];
        return q == null ? 0 : q.tickets.size();
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
        Queue q = queues[segment];
        if (q == null) {
            if (capacityPerSegment == 0) {
                return -1;
            }
            q = new Queue();
            queues[segment] = q;
        }
        if (q.tickets.size() >= capacityPerSegment) {
            return -1;
        }
        q.tickets.addLast(ticket);
        waiting++;
        if (!q.inRing) {
            q.inRing = true;
            ring.addLast(q);
        }
        return q.tickets.size();
    }

    /**
     * Serves the queues round-robin from {@code pool} (see the class description), appending the
     * requests admitted to {@code admitted} and marking them admitted.
     *
     * @param quantumCostUnits the most one visit gives a request, {@code >= 1}
     */
    void serve(DualTokenPool pool, SegmentClassifier classifier, long quantumCostUnits, List<Ticket> admitted) {
        while (!ring.isEmpty() && pool.available(true) > 0) {
            Queue q = ring.pollFirst();
            Ticket head = q.tickets.peekFirst();
            boolean steady = head.allSteady(classifier);
            long wanted = Math.min(quantumCostUnits, head.costUnits() - head.fundedCostUnits);
            long drawn = pool.drawUpTo(wanted, steady);
            if (drawn == 0) {
                setAside.addLast(q);
                continue;
            }
            head.fundedCostUnits += drawn;
            if (head.fundedCostUnits == head.costUnits()) {
                q.tickets.pollFirst();
                waiting--;
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
}
