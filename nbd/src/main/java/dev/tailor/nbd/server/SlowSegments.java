package dev.tailor.nbd.server;

import dev.tailor.nbd.protocol.BlockRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which segments the slow requests fall in: the {@code capacity} (export, segment) pairs with the most
 * requests above the slow threshold since the start, kept in bounded memory with the space-saving
 * algorithm, so an operator sees whether slow I/O gathers in a few hot segments without one series per
 * segment. Thread-safe (slow requests are few by definition, so one lock is enough).
 *
 * <p>Guarantees (Metwally, Agrawal and El Abbadi, "Efficient computation of frequent and top-k elements in
 * data streams", ICDT 2005, section 3): every reported {@link Entry#requests()} is at least the pair's true
 * count and at most {@link Entry#overcount()} above it; any pair with more than N / {@code capacity} slow
 * requests (N: all slow requests so far) is reported.
 *
 * <p>Each kept pair also sums, over the slow requests recorded since it took its counter
 * ({@link Entry#seen()}, that is {@code requests - overcount}), where their time went: queued in admission and on
 * the backend, and how many were admitted as steady or hot (the rest did not pass admission: admission off, or an
 * operation that bypasses it). Our reading of the paper's "first useful measurement": whether the slow requests of a
 * hot segment waited in admission (its own burst held back) or at the backend (someone else's burst).
 */
/*
 * Maintainer note. Space-saving keeps `capacity` counters. A pair already counted is incremented; a new one
 * takes a free counter, or else replaces the counter with the smallest count and inherits that count plus
 * one, remembering the inherited part as its overcount. The minimum is found by a scan: capacity is small
 * (10 on the server) and the structure is touched only by slow requests, so a heap would not pay.
 */
final class SlowSegments {

    /**
     * One pair's slow requests.
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

        /** Slow requests recorded since the pair took its counter: the ones the sums and class counts cover. */
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

    private final int capacity;
    private final long segmentSizeBytes;
    private final Map<Key, Counter> counters = new HashMap<>();

    /**
     * @param capacity         how many pairs are kept (and reported), at least 1
     * @param segmentSizeBytes bytes per segment, at least 1 (admission's {@code segmentSize})
     * @throws IllegalArgumentException when either is below 1
     */
    SlowSegments(int capacity, long segmentSizeBytes) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: at least 1)");
        }
        if (segmentSizeBytes < 1) {
            throw new IllegalArgumentException("segmentSizeBytes: " + segmentSizeBytes + " (expected: at least 1)");
        }
        this.capacity = capacity;
        this.segmentSizeBytes = segmentSizeBytes;
    }

    /** Counts one slow request of {@code export} at {@code offsetBytes} (unsigned), without its split (tests). */
    void record(String export, long offsetBytes) {
        record(export, offsetBytes, 0, 0, NOT_ADMITTED);
    }

    /**
     * Counts one slow request of {@code export} at {@code offsetBytes} (unsigned).
     *
     * @param admissionWaitNanos its time queued in admission, ns
     * @param backendNanos       its time on the backend, ns
     * @param admittedClass      {@link #NOT_ADMITTED}, {@link #STEADY} or {@link #HOT}
     */
    synchronized void record(
            String export, long offsetBytes, long admissionWaitNanos, long backendNanos, int admittedClass) {
        Key key = new Key(export, Long.divideUnsigned(offsetBytes, segmentSizeBytes));
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

    /** The pairs kept, most slow requests first (ties by export, then segment). */
    synchronized List<Entry> top() {
        List<Entry> entries = new ArrayList<>(counters.size());
        counters.forEach((key, c) -> entries.add(new Entry(
                key.export(),
                key.segment(),
                c.requests,
                c.overcount,
                c.admissionWaitNanos,
                c.backendNanos,
                c.admittedSteady,
                c.admittedHot)));
        entries.sort(Comparator.comparingLong(Entry::requests)
                .reversed()
                .thenComparing(Entry::export)
                .thenComparingLong(Entry::segment));
        return entries;
    }
}
