package dev.tailor.heart.controller;

import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.VirtualClock;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What the tests of the round loop on virtual time share, so that nothing they assert depends on
 * how fast the machine is. Prometheus ({@link TestPrometheus#shop()}) answers from history loaded
 * before the tests instead of its scrapes, and the loops' wall clock ({@link #wall}) is a fixed instant of that history moved on
 * with the virtual clock. Its timeout ({@link TestPrometheus#TIMEOUT_SECONDS}) is a failure's bound
 * only, no test here being about a query's timeout. Waits are for conditions: {@link #pump} runs
 * what the loops' threads handed back without moving the clock, {@link #stepUntil} moves the clock
 * only while no real answer is awaited and is bounded in virtual time. Only each wait for real
 * answers is bounded in real time ({@link Await}): a failure's bound, never a timing target.
 */
final class VirtualLoops {

    /**
     * The loops' wall clock at virtual 0: {@link TestPrometheus#IN_HISTORY}, far enough into the
     * history for every window of a round, and early enough that no test moves it beyond its end.
     */
    static final long WALL_START_MILLIS = TestPrometheus.IN_HISTORY.toEpochMilli();

    private VirtualLoops() {}

    /** The configuration of {@code prometheus}: 5 s windows, {@link TestPrometheus#TIMEOUT_SECONDS}. */
    static ControllerConfig.Prometheus prometheusConfig(PrometheusServer prometheus) {
        return ControllerConfig.Prometheus.builder()
                .url(prometheus.url().toString())
                .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                .windowSeconds(5.0)
                .delayWindowSeconds(5.0)
                .build();
    }

    /** The loops' wall clock: {@link #WALL_START_MILLIS} moved on with {@code clock}. */
    static LongSupplier wall(VirtualClock clock) {
        return () -> WALL_START_MILLIS + clock.millis();
    }

    /**
     * Runs what the loops' threads handed back to the scheduler until {@code condition} holds,
     * without moving the clock (the loops' calls are real; waiting for them is bounded); a failure
     * says what {@code state} describes then.
     */
    static void pump(VirtualClock clock, String what, BooleanSupplier condition, Supplier<?> state) {
        Await.until(
                what,
                () -> {
                    clock.runDueTasks();
                    return condition.getAsBoolean();
                },
                () -> "at " + clock.millis() + " ms; " + state.get());
    }

    /**
     * Moves the clock on by {@code stepMillis} (to the next task at most) each time the loops'
     * threads handed nothing back and {@code answering} says no real answer is awaited, until
     * {@code condition} holds, and fails once {@code withinMillis} of virtual time have passed
     * without it: for waits that need both virtual time (a debounce, the Lease's retry period) and
     * real answers. Each wait for the real answers is bounded on its own ({@link Await}), not the
     * whole: how many answers a span of virtual time needs is the loops' schedule, how long they
     * take is the machine's.
     *
     * @param answering whether a call of the loops waits for its answer now (a Lease attempt, a
     *                  round in flight): the clock stands still until it is answered
     */
    static void stepUntil(
            VirtualClock clock,
            String what,
            long stepMillis,
            long withinMillis,
            BooleanSupplier answering,
            BooleanSupplier condition,
            Supplier<?> state) {
        long limit = clock.nanos() + TimeUnit.MILLISECONDS.toNanos(withinMillis);
        boolean[] holds = {false};
        while (true) {
            Await.until(
                    what + ": the loops' calls at " + clock.millis() + " ms answered",
                    () -> {
                        if (clock.runDueTasks() > 0) {
                            return false;
                        }
                        holds[0] = condition.getAsBoolean();
                        return holds[0] || !answering.getAsBoolean();
                    },
                    state);
            if (holds[0]) {
                return;
            }
            if (clock.nanos() >= limit) {
                throw new AssertionError("waiting for " + what + ": not within " + withinMillis
                        + " ms of virtual time; at " + clock.millis() + " ms; " + state.get());
            }
            // To the next task at most, so no decision is taken while a call it waits for is unanswered.
            long next = clock.nanosToNextTask();
            long step = TimeUnit.MILLISECONDS.toNanos(stepMillis);
            clock.advance(next < 0 ? step : Math.min(next, step));
        }
    }
}
