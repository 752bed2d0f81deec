package dev.tailor.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Bounded waiting for a real process or another thread to get somewhere (a port that listens, a
 * scrape that arrived, a server thread that took a request): polls a condition until it holds and
 * fails, naming what was awaited, once the timeout has passed. Never a fixed sleep, and never for
 * time to pass: what runs on virtual time is moved on with {@link VirtualClock} instead.
 *
 * <p>The condition is polled at once, then after 1 ms, doubling up to 10 ms between polls, so a
 * condition that holds soon is seen soon while a long wait costs little CPU. An exception thrown
 * by the condition (for example "the process exited") ends the wait at once and reaches the
 * caller. Timeouts are generous on purpose: they bound a failure, they are no timing target.
 */
public final class Await {

    /** The timeout of {@link #until(String, BooleanSupplier)}: a failure's bound on a busy machine. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private Await() {}

    /**
     * Polls {@code condition} until it holds, for at most {@link #DEFAULT_TIMEOUT}.
     *
     * @param what      what is awaited, for the failure ("nbdkit listening on 10809")
     * @throws AssertionError naming {@code what} when the condition did not hold in time
     */
    public static void until(String what, BooleanSupplier condition) {
        until(what, DEFAULT_TIMEOUT, condition, () -> null);
    }

    /**
     * Polls {@code condition} until it holds, for at most {@code timeout}.
     *
     * @throws AssertionError naming {@code what} and the timeout when the condition did not hold in time
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        until(what, timeout, condition, () -> null);
    }

    /**
     * Polls {@code condition} until it holds, for at most {@link #DEFAULT_TIMEOUT}; a failure also
     * says what {@code state} describes then (e.g. the log so far).
     */
    public static void until(String what, BooleanSupplier condition, Supplier<?> state) {
        until(what, DEFAULT_TIMEOUT, condition, state);
    }

    /**
     * Polls {@code condition} until it holds, for at most {@code timeout} (&gt; 0); a failure also
     * says what {@code state} describes then.
     *
     * @throws AssertionError "waiting for WHAT: not within T s; STATE" when the condition did not
     *         hold in time, or when the waiting thread was interrupted (its flag is set again)
     * @throws IllegalArgumentException when {@code timeout} is not positive
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition, Supplier<?> state) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                Object described = state.get();
                throw new AssertionError("waiting for " + what + ": not within " + seconds(timeout)
                        + (described == null ? "" : "; " + described));
            }
            LockSupport.parkNanos(pause);
            if (Thread.currentThread().isInterrupted()) {
                throw new AssertionError("waiting for " + what + ": interrupted");
            }
            pause = Math.min(MAX_PAUSE_NANOS, pause * 2);
        }
    }

    /**
     * Whether {@code condition} held within {@code timeout}, polled as {@link #until} does: for a
     * caller that reports its own failure (a fixture that says why a server did not start).
     */
    public static boolean holds(Duration timeout, BooleanSupplier condition) {
        try {
            until("the condition", timeout, condition, () -> null);
            return true;
        } catch (AssertionError e) {
            return condition.getAsBoolean();
        }
    }

    private static String seconds(Duration timeout) {
        long millis = timeout.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis / 1000.0 + " s";
    }
}
