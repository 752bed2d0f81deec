package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waiting, with a deadline, for the server's own threads to catch up: a poll, never a fixed sleep. */
final class Await {

    private Await() {
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
