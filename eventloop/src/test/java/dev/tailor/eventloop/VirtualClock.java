package dev.tailor.eventloop;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A nanosecond clock that moves only when told to. Thread-safe. */
final class VirtualClock implements LongSupplier {

    private final AtomicLong nanos;

    VirtualClock(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    long nanos() {
        return nanos.get();
    }

    /** Moves forward by {@code deltaNanos >= 0}. */
    void advance(long deltaNanos) {
        if (deltaNanos < 0) {
            throw new IllegalArgumentException("deltaNanos : " + deltaNanos + " (expected: >= 0)");
        }
        nanos.addAndGet(deltaNanos);
    }

    /** Moves forward to {@code atNanos}, which must not be in the past. */
    void advanceTo(long atNanos) {
        advance(atNanos - nanos.get());
    }

    @Override
    public long getAsLong() {
        return nanos.get();
    }
}
