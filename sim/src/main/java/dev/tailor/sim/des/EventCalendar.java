package dev.tailor.sim.des;

import java.util.Arrays;

/**
 * The event calendar of a discrete-event simulation: simulated time in nanoseconds, and the
 * pending {@link Event}s ordered by (time, order of scheduling). Firing an event may schedule,
 * reschedule or cancel others. Events at the same instant fire in the order they were (last)
 * scheduled, so a run is a pure function of its inputs and seeds. No wall clock anywhere.
 *
 * <p>Not thread-safe: one calendar belongs to one simulation, driven from one thread.
 *
 * <p>Maintainer note: an indexed binary heap of the events themselves; each event knows its slot,
 * so {@link #schedule} of a pending event is a decrease/increase-key in O(log n) and {@link #cancel}
 * is O(log n), without tombstones. Components keep their events and reschedule them (a replica's
 * next completion moves with every arrival), which is why the heap is indexed rather than a
 * {@code PriorityQueue} with lazy deletion: that one grew to millions of dead entries under
 * processor sharing. Events are reused objects, so a run allocates little.
 */
public final class EventCalendar {

    /**
     * Something that happens at an instant of simulated time. Subclass it; an instance is scheduled
     * at most once at a time (scheduling it again moves it).
     */
    public abstract static class Event {
        private long timeNanos;
        private long order;
        private int slot = -1;

        /**
         * Runs the event.
         *
         * @param nowNanos the simulated time, in ns, equal to the time the event was scheduled for
         */
        protected abstract void fire(long nowNanos);

        /** Whether the event is pending in a calendar. */
        public final boolean isScheduled() {
            return slot >= 0;
        }

        /** The simulated time, in ns, the event is (or was last) scheduled for. */
        public final long timeNanos() {
            return timeNanos;
        }
    }

    private Event[] heap = new Event[64];
    private int size;
    private long nowNanos;
    private long nextOrder;
    private long fired;

    /** The current simulated time in ns (starts at 0). */
    public long nowNanos() {
        return nowNanos;
    }

    /** Events fired so far. */
    public long eventsFired() {
        return fired;
    }

    /** Events pending. */
    public int pending() {
        return size;
    }

    /**
     * Schedules {@code event} at {@code timeNanos}, moving it if it is already pending.
     *
     * @throws IllegalArgumentException if {@code timeNanos} lies before {@link #nowNanos()}
     */
    public void schedule(Event event, long timeNanos) {
        if (timeNanos < nowNanos) {
            throw new IllegalArgumentException("timeNanos : " + timeNanos + " (expected: >= now, " + nowNanos + ")");
        }
        event.timeNanos = timeNanos;
        event.order = nextOrder++;
        if (event.slot < 0) {
            if (size == heap.length) {
                heap = Arrays.copyOf(heap, size * 2);
            }
            event.slot = size;
            heap[size++] = event;
            siftUp(event.slot);
        } else {
            // Moved: up if it is now earlier than its parent, else down.
            int slot = event.slot;
            siftUp(slot);
            if (event.slot == slot) {
                siftDown(slot);
            }
        }
    }

    /** Schedules {@code event} {@code delayNanos} (≥ 0) after now. */
    public void scheduleAfter(Event event, long delayNanos) {
        schedule(event, nowNanos + Math.max(0, delayNanos));
    }

    /** Removes {@code event} if it is pending; does nothing otherwise. */
    public void cancel(Event event) {
        int slot = event.slot;
        if (slot < 0) {
            return;
        }
        event.slot = -1;
        Event last = heap[--size];
        heap[size] = null;
        if (slot < size) {
            heap[slot] = last;
            last.slot = slot;
            siftUp(slot);
            if (last.slot == slot) {
                siftDown(slot);
            }
        }
    }

    /**
     * Fires every event due at or before {@code endNanos}, in order, then sets the time to
     * {@code endNanos}.
     *
     * @return the number of events fired by this call
     */
    public long runUntil(long endNanos) {
        long before = fired;
        while (size > 0 && heap[0].timeNanos <= endNanos) {
            Event next = heap[0];
            cancel(next);
            nowNanos = next.timeNanos;
            fired++;
            next.fire(nowNanos);
        }
        nowNanos = Math.max(nowNanos, endNanos);
        return fired - before;
    }

    private static boolean before(Event a, Event b) {
        return a.timeNanos < b.timeNanos || (a.timeNanos == b.timeNanos && a.order < b.order);
    }

    private void siftUp(int slot) {
        Event event = heap[slot];
        while (slot > 0) {
            int parent = (slot - 1) >>> 1;
            Event above = heap[parent];
            if (!before(event, above)) {
                break;
            }
            heap[slot] = above;
            above.slot = slot;
            slot = parent;
        }
        heap[slot] = event;
        event.slot = slot;
    }

    private void siftDown(int slot) {
        Event event = heap[slot];
        int half = size >>> 1;
        while (slot < half) {
            int child = 2 * slot + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], event)) {
                break;
            }
            heap[slot] = heap[child];
            heap[slot].slot = slot;
            slot = child;
        }
        heap[slot] = event;
        event.slot = slot;
    }
}
