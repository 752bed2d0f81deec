package dev.tailor.nbd;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * Write ordering of one export (docs/nbd.md, "Guarantees"): a write ({@code WRITE}, {@code WRITE_ZEROES},
 * {@code TRIM}) whose byte range overlaps an older write of the same export that is still pending — from
 * any connection — is held until every such older write has completed or been dropped, then released.
 * Writes that overlap nothing pending go at once. So an acknowledged write is never overwritten by an
 * older one that was still queued or in flight somewhere (admission's queue, a file export's I/O
 * threads, an upstream that runs requests in parallel), and overlapping writes reach the backend in the
 * order the server received them. Reads are not ordered (proto.md leaves reads and writes in flight
 * together unordered).
 *
 * <p>Threads: every method is thread-safe (one lock per export; connections of one export run on
 * different event loops). {@link #register} and {@link #finish} cost O(log n) for n writes pending, plus
 * the pending writes whose start lies within one maximum write length before the range (none, for
 * random 4 KiB writes over a disk); a release callback runs on the thread that called {@link #finish},
 * outside the lock.
 */
/*
 * Maintainer note. The pending writes are kept in a tree ordered by first byte (then by age), with the
 * longest length among them: the writes that can overlap [offset, end) are those starting in
 * (offset - longest, end), found by one range query. The longest length is reset when nothing is
 * pending, so a single large WRITE_ZEROES widens the queries only while something is pending after it.
 * An interval tree would bound the query without that; overlap is rare and the pending set small
 * (a few hundred writes at most: 256 per connection), so this is what the fio figures in docs/nbd.md
 * were measured with.
 *
 * Counting instead of waiting lists: a write that arrives counts the older pending writes it overlaps
 * (its blockers). When a write finishes, every newer pending write overlapping it counted it at
 * arrival (it was pending then, being older), so decrementing those is exact; a write whose count
 * reaches zero is released. A held write that is dropped finishes like any other and is never
 * released. Sequence numbers, not arrival at the backend, define "older": the order in which
 * connections handed their writes to {@link #register}.
 */
final class WriteOrdering {

    /** One pending write. */
    static final class Entry {
        final long offsetBytes;
        final long endBytes;
        final long sequence;
        /** Whether it may go at once; set before {@link #register} returns, never changed. */
        final boolean immediate;
        /** Older pending writes it overlaps that have not finished; guarded by the ordering's lock. */
        private int blockers;
        private final Runnable release;

        private Entry(long offsetBytes, long endBytes, long sequence, int blockers, Runnable release) {
            this.offsetBytes = offsetBytes;
            this.endBytes = endBytes;
            this.sequence = sequence;
            this.blockers = blockers;
            this.immediate = blockers == 0;
            this.release = release;
        }

        private boolean overlaps(long offset, long end) {
            return offsetBytes < end && offset < endBytes;
        }
    }

    private static final Comparator<Entry> BY_OFFSET_THEN_AGE = Comparator.<Entry>comparingLong(e -> e.offsetBytes)
            .thenComparingLong(e -> e.sequence);

    // Guarded by this.
    private final NavigableSet<Entry> pending = new TreeSet<>(BY_OFFSET_THEN_AGE);
    private long longestBytes;
    private long nextSequence;
    private int held;
    private long heldTotal;

    /**
     * Adds a write of {@code lengthBytes} at {@code offsetBytes} to the pending ones. When it overlaps
     * no older pending write, the returned entry is {@link Entry#immediate} and the caller sends the
     * write on; otherwise {@code release} runs once the last of those has {@linkplain #finish finished}
     * (on the thread that finished it). Either way the caller calls {@link #finish} exactly once, when
     * the write completes or is dropped.
     *
     * @param offsetBytes first byte, {@code >= 0}
     * @param lengthBytes bytes, {@code >= 1}
     * @param release     what to do when a held write may go
     */
    synchronized Entry register(long offsetBytes, long lengthBytes, Runnable release) {
        long end = offsetBytes + lengthBytes;
        int blockers = 0;
        for (Entry older : candidates(offsetBytes, end)) {
            if (older.overlaps(offsetBytes, end)) {
                blockers++;
            }
        }
        Entry entry = new Entry(offsetBytes, end, nextSequence++, blockers, blockers == 0 ? null : release);
        pending.add(entry);
        longestBytes = Math.max(longestBytes, lengthBytes);
        if (blockers > 0) {
            held++;
            heldTotal++;
        }
        return entry;
    }

    /** The pending writes that start in {@code (offset - longest, end)}: every one that can overlap. */
    private NavigableSet<Entry> candidates(long offset, long end) {
        if (pending.isEmpty()) {
            return pending;
        }
        Entry from = new Entry(Math.max(0, offset - longestBytes + 1), 0, Long.MIN_VALUE, 1, null);
        Entry to = new Entry(end, 0, Long.MIN_VALUE, 1, null);
        return pending.subSet(from, true, to, false);
    }

    /**
     * The write of {@code entry} completed, failed or was dropped: it leaves the pending ones, and the
     * newer writes that waited only for it are released (their {@code release} runs here, after the
     * lock is let go). Must be called exactly once per entry.
     */
    void finish(Entry entry) {
        List<Entry> released = null;
        synchronized (this) {
            if (!pending.remove(entry)) {
                throw new IllegalStateException("finish of a write that is not pending: " + entry.offsetBytes);
            }
            if (entry.blockers > 0) {
                held--;   // dropped while held: it is never released
                entry.blockers = 0;
            }
            if (held > 0) {
                for (Entry newer : candidates(entry.offsetBytes, entry.endBytes)) {
                    if (newer.sequence > entry.sequence && newer.blockers > 0
                            && newer.overlaps(entry.offsetBytes, entry.endBytes) && --newer.blockers == 0) {
                        held--;
                        if (released == null) {
                            released = new ArrayList<>(1);
                        }
                        released.add(newer);
                    }
                }
            }
            if (pending.isEmpty()) {
                longestBytes = 0;
            }
        }
        if (released != null) {
            for (Entry e : released) {
                e.release.run();
            }
        }
    }

    /** Writes pending now (sent on or held). */
    synchronized int pendingWrites() {
        return pending.size();
    }

    /** Writes held now behind an older overlapping one. */
    synchronized int heldWrites() {
        return held;
    }

    /** Writes that had to wait behind an older overlapping one, since the start. */
    synchronized long heldWritesTotal() {
        return heldTotal;
    }
}
