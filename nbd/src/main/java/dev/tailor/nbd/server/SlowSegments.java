package dev.tailor.nbd.server;

import dev.tailor.nbd.protocol.BlockRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which segments the slow requests fall in <em>now</em>: the {@code capacity} (export, segment) pairs with the most
 * requests above the slow threshold in the last window, kept in bounded memory, so an operator sees whether slow
 * I/O gathers in a few hot segments without one series per segment.
 *
 * <p>Time is cut into epochs of half the window ({@code floor(now / epoch)}, the time passed in by the caller: this
 * class reads no clock). Each epoch has a space-saving table of {@code capacity} counters (Metwally, Agrawal and El
 * Abbadi, "Efficient computation of frequent and top-k elements in data streams", ICDT 2005, section 3); the current
 * epoch's and the previous one's are kept, older ones dropped. What is reported is the two tables merged: it covers
 * the slow requests from the start of the previous epoch to now, between half a window and a window (the
 * <em>span</em>). A pair with no slow request in the span is not reported.
 *
 * <p>Guarantees over the span: every reported {@link Entry#requests()} is at least the pair's true count in it and at
 * most {@link Entry#overcount()} above it; any pair with more than N / {@code capacity} slow requests in it (N: all
 * slow requests in the span) is reported. Memory: at most 2 × {@code capacity} counters.
 *
 * <p>Each reported pair also sums, over the slow requests recorded in the span since it took a counter
 * ({@link Entry#seen()}, that is {@code requests - overcount}), where their time went: queued in admission and on
 * the backend, and how many were admitted as steady or hot (the rest did not pass admission: admission off, or an
 * operation that bypasses it). Our reading of the paper's "first useful measurement": whether the slow requests of a
 * hot segment waited in admission (its own burst held back) or at the backend (someone else's burst).
 *
 * <p>Thread-safe (slow requests are few by definition, so one lock is enough; requests under the threshold never
 * come here).
 */
/*
 * Maintainer note. Space-saving keeps `capacity` counters. A pair already counted is incremented; a new one takes a
 * free counter, or else replaces the counter with the smallest count and inherits that count plus one, remembering
 * the inherited part as its overcount. The minimum is found by a scan: capacity is small (10 on the server) and the
 * structure is touched only by slow requests, so a heap would not pay.
 *
 * Merging the two epochs' tables (the idea of mergeable summaries: Agarwal, Cormode, Huang, Phillips, Wei and Yi,
 * "Mergeable summaries", PODS 2012; our merge keeps the space-saving form rather than their Misra-Gries one). Per
 * table T of N_T requests, a pair's estimate est_T is its counter when it has one; without one it is m_T, T's
 * smallest counter when T is full (space-saving: any pair without a counter has at most m_T requests in T's epoch),
 * else 0 (a table never full has counted every pair exactly). The merged count is est_C + est_P, its overcount the
 * counters' overcounts plus each m_T used, so both bounds hold per table and add up. The k largest merged counts are
 * reported. Why a pair x of true count f > (N_C + N_P) / k is among them: it has f_T > N_T / k in some table T, so it
 * has a counter there (space-saving's guarantee) and is a candidate. If k other candidates had a merged count >= that
 * of x (>= f), they would sum to more than N_C + N_P; but for any k distinct pairs, the sum of est_T is at most N_T
 * (the counters of T sum to N_T, every counter is >= m_T, and a full T has k counters: each pair without one, counted
 * at m_T, stands for one of T's counters not among the k), a contradiction.
 */
final class SlowSegments {

    /**
     * One pair's slow requests in the span.
     *
     * @param export             the export
     * @param segment            the segment index (offset / segment size)
     * @param requests           its slow requests (space-saving count: at least the true count)
     * @param overcount          how much {@code requests} may be too high
     * @param admissionWaitNanos of the {@link #seen()} ones, their total time queued in admission, ns
     * @param backendNanos       of the {@link #seen()} ones, their total time on the backend, ns
     * @param admittedSteady     of the {@link #seen()} ones, those admitted as steady
     * @param admittedHot        of the {@link #seen()} ones, those admitted as hot
     */
    record Entry(
            String export,
            long segment,
            long requests,
            long overcount,
            long admissionWaitNanos,
            long backendNanos,
            long admittedSteady,
            long admittedHot) {

        /** Slow requests recorded while the pair had its counters: the ones the sums and class counts cover. */
        long seen() {
            return requests - overcount;
        }
    }

    /** A slow request's class when admitted: none (not through admission), steady or hot. */
    static final int NOT_ADMITTED = BlockRequest.NOT_ADMITTED;

    static final int STEADY = BlockRequest.STEADY;
    static final int HOT = BlockRequest.HOT;

    private record Key(String export, long segment) {}

    private static final class Counter {
        long requests;
        long overcount;
        long admissionWaitNanos;
        long backendNanos;
        long admittedSteady;
        long admittedHot;
    }

    /** One epoch's space-saving table. */
    private static final class Table {
        final Map<Key, Counter> counters = new HashMap<>();

        void record(Key key, int capacity, long admissionWaitNanos, long backendNanos, int admittedClass) {
            Counter counter = counters.get(key);
            if (counter == null) {
                counter = new Counter();
                if (counters.size() >= capacity) {
                    Map.Entry<Key, Counter> smallest = null;
                    for (Map.Entry<Key, Counter> entry : counters.entrySet()) {
                        if (smallest == null || entry.getValue().requests < smallest.getValue().requests) {
                            smallest = entry;
                        }
                    }
                    counters.remove(smallest.getKey());
                    counter.requests = smallest.getValue().requests;
                    counter.overcount = smallest.getValue().requests;
                }
                counters.put(key, counter);
            }
            counter.requests++;
            counter.admissionWaitNanos += admissionWaitNanos;
            counter.backendNanos += backendNanos;
            if (admittedClass == STEADY) {
                counter.admittedSteady++;
            } else if (admittedClass == HOT) {
                counter.admittedHot++;
            }
        }

        /** What a pair without a counter may have had in this epoch: the smallest counter when full, else 0. */
        long absentBound(int capacity) {
            if (counters.size() < capacity) {
                return 0;
            }
            long min = Long.MAX_VALUE;
            for (Counter c : counters.values()) {
                min = Math.min(min, c.requests);
            }
            return min;
        }
    }

    private final int capacity;
    private final long segmentSizeBytes;
    private final long epochNanos;
    private Table current = new Table();
    private Table previous = new Table();
    /** The current table's epoch, floor(now / epochNanos); none recorded yet: {@link Long#MIN_VALUE}. */
    private long epoch = Long.MIN_VALUE;

    /**
     * @param capacity         how many pairs are reported (and counters kept per epoch), at least 1
     * @param segmentSizeBytes bytes per segment, at least 1 (admission's {@code segmentSize})
     * @param windowNanos      the window, ns, at least 2: epochs are half of it
     * @throws IllegalArgumentException when one is out of range
     */
    SlowSegments(int capacity, long segmentSizeBytes, long windowNanos) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: at least 1)");
        }
        if (segmentSizeBytes < 1) {
            throw new IllegalArgumentException("segmentSizeBytes: " + segmentSizeBytes + " (expected: at least 1)");
        }
        if (windowNanos < 2) {
            throw new IllegalArgumentException("windowNanos: " + windowNanos + " (expected: at least 2)");
        }
        this.capacity = capacity;
        this.segmentSizeBytes = segmentSizeBytes;
        this.epochNanos = windowNanos / 2;
    }

    /** The epoch length, ns: half the window. */
    long epochNanos() {
        return epochNanos;
    }

    /** Counts one slow request of {@code export} at {@code offsetBytes} (unsigned), without its split (tests). */
    void record(long nowNanos, String export, long offsetBytes) {
        record(nowNanos, export, offsetBytes, 0, 0, NOT_ADMITTED);
    }

    /**
     * Counts one slow request of {@code export} at {@code offsetBytes} (unsigned), answered at {@code nowNanos}.
     *
     * @param nowNanos           when it was answered, ns on the caller's clock (a reading older than the current
     *                           epoch, from a thread that read the clock just before another, counts in the current
     *                           epoch)
     * @param admissionWaitNanos its time queued in admission, ns
     * @param backendNanos       its time on the backend, ns
     * @param admittedClass      {@link #NOT_ADMITTED}, {@link #STEADY} or {@link #HOT}
     */
    synchronized void record(
            long nowNanos,
            String export,
            long offsetBytes,
            long admissionWaitNanos,
            long backendNanos,
            int admittedClass) {
        advance(nowNanos);
        current.record(
                new Key(export, Long.divideUnsigned(offsetBytes, segmentSizeBytes)),
                capacity,
                admissionWaitNanos,
                backendNanos,
                admittedClass);
    }

    /** The pairs reported at {@code nowNanos}, most slow requests first (ties by export, then segment). */
    synchronized List<Entry> top(long nowNanos) {
        advance(nowNanos);
        long absentCurrent = current.absentBound(capacity);
        long absentPrevious = previous.absentBound(capacity);
        Set<Key> keys = new LinkedHashSet<>(current.counters.keySet());
        keys.addAll(previous.counters.keySet());
        List<Entry> entries = new ArrayList<>(keys.size());
        for (Key key : keys) {
            Counter c = current.counters.get(key);
            Counter p = previous.counters.get(key);
            entries.add(new Entry(
                    key.export(),
                    key.segment(),
                    (c == null ? absentCurrent : c.requests) + (p == null ? absentPrevious : p.requests),
                    (c == null ? absentCurrent : c.overcount) + (p == null ? absentPrevious : p.overcount),
                    (c == null ? 0 : c.admissionWaitNanos) + (p == null ? 0 : p.admissionWaitNanos),
                    (c == null ? 0 : c.backendNanos) + (p == null ? 0 : p.backendNanos),
                    (c == null ? 0 : c.admittedSteady) + (p == null ? 0 : p.admittedSteady),
                    (c == null ? 0 : c.admittedHot) + (p == null ? 0 : p.admittedHot)));
        }
        entries.sort(Comparator.comparingLong(Entry::requests)
                .reversed()
                .thenComparing(Entry::export)
                .thenComparingLong(Entry::segment));
        return entries.size() <= capacity ? entries : new ArrayList<>(entries.subList(0, capacity));
    }

    /** Moves the tables on to the epoch of {@code nowNanos}: one epoch on, the current becomes the previous. */
    private void advance(long nowNanos) {
        long now = Math.floorDiv(nowNanos, epochNanos);
        if (epoch == Long.MIN_VALUE) {
            epoch = now;
            return;
        }
        if (now <= epoch) {
            return;
        }
        Table emptied = previous;
        emptied.counters.clear();
        if (now == epoch + 1) {
            previous = current;
        } else {
            current.counters.clear();
            previous = current;
        }
        current = emptied;
        epoch = now;
    }
}
