package dev.tailor.nbd.server;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How often a refusal reaches the log: the first at once, further ones within 10 s counted (by kind),
 * and the count summed up in one line 10 s later, or when the owner stops. The owner logs the lines;
 * this only says when. Used by {@link ConnectionAdmission} for refused connections and
 * {@link AdmissionDispatcher} for requests refused by segment admission.
 *
 * <p>Threads: thread-safe (one lock, held for O(kinds) at most).
 */
final class RefusalWarnings {

    /** The window: one warning line per 10 s, plus its summary. */
    static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** {@link #refused}: log this refusal now. */
    static final long LOG_NOW = -1;

    /** {@link #refused}: counted; its summary is already due later. */
    static final long COUNTED = -2;

    private final LongSupplier nanoClock;
    private final long[] counted;
    private boolean warned;
    private long lastWarningNanos;
    private boolean summaryPending;

    /**
     * @param kinds     how many kinds of refusal are counted apart (their indexes: 0 to kinds - 1)
     * @param nanoClock the clock ({@code System::nanoTime}; tests pass a virtual one)
     */
    RefusalWarnings(int kinds, LongSupplier nanoClock) {
        this.counted = new long[kinds];
        this.nanoClock = nanoClock;
    }

    /**
     * Notes a refusal of {@code kind}.
     *
     * @return {@link #LOG_NOW} when none was logged in the last 10 s (the caller logs it); else it is
     *     counted, and the return is {@link #COUNTED}, or, for the first one counted since the last
     *     line, the nanoseconds until its summary is due (the caller arranges for {@link #summarize}
     *     then, or calls {@link #summarizeIfDue} often enough)
     */
    synchronized long refused(int kind) {
        long now = nanoClock.getAsLong();
        if (!warned || now - lastWarningNanos >= INTERVAL_NANOS) {
            warned = true;
            lastWarningNanos = now;
            return LOG_NOW;
        }
        counted[kind]++;
        if (summaryPending) {
            return COUNTED;
        }
        summaryPending = true;
        return Math.max(0, lastWarningNanos + INTERVAL_NANOS - now);
    }

    /**
     * Takes the refusals counted since the last line, per kind, and starts a new window; all zero
     * when there were none (then nothing is to be logged).
     */
    synchronized long[] summarize() {
        long[] taken = counted.clone();
        Arrays.fill(counted, 0);
        summaryPending = false;
        warned = true;
        lastWarningNanos = nanoClock.getAsLong();
        return taken;
    }

    /** As {@link #summarize}, but only once the counted refusals' 10 s are up; else null. */
    synchronized long[] summarizeIfDue() {
        if (!summaryPending || nanoClock.getAsLong() - lastWarningNanos < INTERVAL_NANOS) {
            return null;
        }
        return summarize();
    }

    /** The sum of {@code counts}. */
    static long total(long[] counts) {
        return Arrays.stream(counts).sum();
    }
}
