package dev.tailor.nbd.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

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
 * <p>Threads: every method is thread-safe (connections of one export run on different event loops).
 * A write within one 1 MiB chunk takes the monitor of one of 64 stripes and scans the pending writes
 * of that stripe (a few, for random writes over a disk); a write spanning k chunks takes min(k, 64) of
 * them. A release callback runs on the thread that called {@link #finish}, outside the monitors.
 */
/*
 * Maintainer note. Striped lists rather than one ordered tree under one lock: the export is cut into
 * 1 MiB chunks, chunk c belongs to stripe c mod 64, and a pending write is listed in the stripe of
 * every chunk it touches (in all 64 when it spans 64 chunks or more). Two writes that overlap share a
 * chunk, hence a stripe, and a write registers and finishes while holding the monitors of all its
 * stripes (taken in ascending order, so no deadlock), so of two overlapping writes one has registered
 * entirely before the other starts: "older" is well defined, and each stripe's list, kept in
 * registration order, records it (a newer write comes after an older one in every stripe both are
 * in). Nothing on the path is shared by all writes: no global counter or sequence number (each one
 * a cache line that both cores would fight over for every write). Costs: the first version, a
 * TreeSet under one lock, took about 1.5 µs of the proxy's CPU per write of fio's 4 KiB random writes
 * (4 jobs, queue depth 32, two event loops, a loaded machine: +10 %). This one takes 85 to 120 ns per
 * write (register and finish) on one thread and 165 to 200 ns with two threads on two cores (a throwaway
 * loop of 5 million random 4 KiB writes over 512 MiB, 32 pending per thread); docs/nbd-record.md,
 * "Guarantees", has the fio figures.
 *
 * Counting instead of waiting lists: an arriving write counts, in each of its stripes, the pending
 * writes listed there (all older) that overlap it (its blockers; a write listed in two shared stripes
 * is counted twice). When a write finishes it decrements, in each of its own stripes, the writes
 * listed after it there that overlap it: the same pairs of (stripe, write), so the counts match. A
 * count reaching zero releases the write. The count is atomic because two writes in different stripes
 * may finish at once. A held write that is dropped finishes like any other: it leaves the lists
 * without ever being released (a finisher that counts it down to zero first has it released, and its
 * connection then finds it dropped and does not send it).
 */
final class WriteOrdering {

    private static final int CHUNK_SHIFT = 20;
    private static final int STRIPES = 64;

    /** One pending write. */
    static final class Entry {
        private static final VarHandle BLOCKERS;

        static {
            try {
                BLOCKERS = MethodHandles.lookup().findVarHandle(Entry.class, "blockers", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long offsetBytes;
        final long endBytes;
        /** Whether it may go at once; set before {@link #register} returns, never changed. */
        final boolean immediate;

        private final int firstStripe;
        private final int stripeCount;
        /** Pairs (stripe, older overlapping pending write) not finished yet; through BLOCKERS. */
        private volatile int blockers;

        private final Runnable release;

        private Entry(
                long offsetBytes, long endBytes, int firstStripe, int stripeCount, int blockers, Runnable release) {
            this.offsetBytes = offsetBytes;
            this.endBytes = endBytes;
            this.firstStripe = firstStripe;
            this.stripeCount = stripeCount;
            this.blockers = blockers;
            this.immediate = blockers == 0;
            this.release = release;
        }

        private boolean overlaps(Entry other) {
            return offsetBytes < other.endBytes && other.offsetBytes < endBytes;
        }

        /** Counts one blocker off; true when that was the last. */
        private boolean unblock() {
            return (int) BLOCKERS.getAndAdd(this, -1) == 1;
        }
    }

    /** One stripe; its monitor guards its list. */
    private static final class Stripe {
        /** The pending writes listed here, oldest first. */
        final ArrayList<Entry> pending = new ArrayList<>();
    }

    private final Stripe[] stripes = new Stripe[STRIPES];
    private final LongAdder heldTotal = new LongAdder();

    WriteOrdering() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    /**
     * Runs {@code body} holding the monitors of the {@code count} stripes from {@code first} on (modulo
     * 64), taken in ascending stripe order, so that two writes never wait for each other's stripes in a
     * circle. Monitors rather than locks: a stripe is held for a few dozen instructions, and a monitor
     * spins briefly before it parks a thread that finds it taken, where a ReentrantLock parks at once
     * (on this 2-core machine the parking and waking showed up as 5 % of the proxy's CPU in fio's 4 KiB
     * random writes).
     */
    private void locked(int first, int count, Runnable body) {
        if (count == 1) {
            synchronized (stripes[first]) {
                body.run();
            }
            return;
        }
        int[] order = new int[count];
        for (int i = 0; i < count; i++) {
            order[i] = (first + i) % STRIPES;
        }
        java.util.Arrays.sort(order);
        lockedFrom(order, 0, body);
    }

    private void lockedFrom(int[] order, int i, Runnable body) {
        if (i == order.length) {
            body.run();
            return;
        }
        synchronized (stripes[order[i]]) {
            lockedFrom(order, i + 1, body);
        }
    }

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
    Entry register(long offsetBytes, long lengthBytes, Runnable release) {
        long end = offsetBytes + lengthBytes;
        long firstChunk = offsetBytes >>> CHUNK_SHIFT;
        long chunks = ((end - 1) >>> CHUNK_SHIFT) - firstChunk + 1;
        int first = chunks >= STRIPES ? 0 : (int) (firstChunk % STRIPES);
        int count = (int) Math.min(chunks, STRIPES);
        Entry entry;
        if (count == 1) {
            synchronized (stripes[first]) {
                entry = registerLocked(offsetBytes, end, first, 1, release);
            }
        } else {
            Entry[] registered = new Entry[1];
            locked(first, count, () -> registered[0] = registerLocked(offsetBytes, end, first, count, release));
            entry = registered[0];
        }
        if (!entry.immediate) {
            heldTotal.increment();
        }
        return entry;
    }

    /** Counts the write's blockers and lists it in its stripes; the caller holds their monitors. */
    private Entry registerLocked(long offsetBytes, long end, int first, int count, Runnable release) {
        int blockers = 0;
        for (int i = 0; i < count; i++) {
            for (Entry older : stripes[(first + i) % STRIPES].pending) {
                if (older.offsetBytes < end && offsetBytes < older.endBytes) {
                    blockers++;
                }
            }
        }
        Entry entry = new Entry(offsetBytes, end, first, count, blockers, blockers == 0 ? null : release);
        for (int i = 0; i < count; i++) {
            stripes[(first + i) % STRIPES].pending.add(entry);
        }
        return entry;
    }

    /**
     * The write of {@code entry} completed, failed or was dropped: it leaves the pending ones, and the
     * newer writes that waited only for it are released (their {@code release} runs here, after the
     * locks are let go). Must be called exactly once per entry.
     */
    void finish(Entry entry) {
        List<Entry> released;
        if (entry.stripeCount == 1) {
            synchronized (stripes[entry.firstStripe]) {
                released = unlist(entry, null);
            }
        } else {
            List<List<Entry>> out = new ArrayList<>(1);
            locked(entry.firstStripe, entry.stripeCount, () -> out.add(unlist(entry, null)));
            released = out.get(0);
        }
        if (released != null) {
            for (Entry e : released) {
                e.release.run();
            }
        }
    }

    /**
     * Takes {@code entry} out of its stripes and counts it off the newer overlapping writes listed there;
     * the caller holds the stripes' monitors.
     *
     * @return the writes that now wait for nothing, or null
     */
    private List<Entry> unlist(Entry entry, List<Entry> released) {
        for (int i = 0; i < entry.stripeCount; i++) {
            ArrayList<Entry> pending = stripes[(entry.firstStripe + i) % STRIPES].pending;
            int at = pending.indexOf(entry); // identity: Entry keeps Object.equals
            for (int j = at + 1; j < pending.size(); j++) {
                Entry newer = pending.get(j);
                if (newer.overlaps(entry) && newer.unblock()) {
                    if (released == null) {
                        released = new ArrayList<>(1);
                    }
                    released.add(newer);
                }
            }
            pending.remove(at);
        }
        return released;
    }

    /** Writes pending now (sent on or held); counts under every stripe's monitor, for tests and status. */
    int pendingWrites() {
        return count(false);
    }

    /** Writes held now behind an older overlapping one; as {@link #pendingWrites()}. */
    int heldWrites() {
        return count(true);
    }

    private int count(boolean heldOnly) {
        int n = 0;
        for (int s = 0; s < STRIPES; s++) {
            synchronized (stripes[s]) {
                for (Entry e : stripes[s].pending) {
                    // Each write once, in its first stripe.
                    if (e.firstStripe == s && (!heldOnly || e.blockers > 0)) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    /** Writes that had to wait behind an older overlapping one, since the start. */
    long heldWritesTotal() {
        return heldTotal.sum();
    }
}
