package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waiting, with a deadline, for the server's own threads to catch up: a poll, never a fixed sleep. */
final class Await {

    private Await() {
    }

    /**
     * Polls {@code condition} every millisecond until it holds; fails naming {@code what} and the state
     * {@code state} describes then, after 10 s.
     */
    static void until(String what, BooleanSupplier condition, java.util.function.Supplier<Object> state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waiting for " + what + ": not within 10 s; " + state.get());
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Polls {@code condition} every millisecond until it holds; fails naming {@code what} after 10 s. */
    static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
            LockSupport.parkNanos(1_000_000);
        }
    }
}
