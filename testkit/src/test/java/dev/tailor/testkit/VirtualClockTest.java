package dev.tailor.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The virtual clock and its scheduler: tasks run only when the test moves the clock, in deadline order. */
class VirtualClockTest {

    @Test
    void advance_runsDueTasksInDeadlineOrder_atTheirInstant() {
        // Each task sees the clock at its own deadline, as it would on real time.
        VirtualClock clock = new VirtualClock(1_000);
        ScheduledExecutorService scheduler = clock.scheduler();
        List<String> ran = new ArrayList<>();
        scheduler.schedule(() -> ran.add("b@" + clock.nanos()), 20, TimeUnit.NANOSECONDS);
        scheduler.schedule(() -> ran.add("a@" + clock.nanos()), 10, TimeUnit.NANOSECONDS);
        scheduler.schedule(() -> ran.add("c@" + clock.nanos()), 20, TimeUnit.NANOSECONDS);

        assertThat(clock.advance(15)).isEqualTo(1);
        assertThat(ran).containsExactly("a@1010");
        assertThat(clock.nanos()).isEqualTo(1_015);
        assertThat(clock.advance(5)).as("a deadline exactly at the target runs").isEqualTo(2);
        assertThat(ran).containsExactly("a@1010", "b@1020", "c@1020");
    }

    @Test
    void nothingRunsByItself_executeRunsAtTheNextAdvance() {
        VirtualClock clock = new VirtualClock(0);
        int[] runs = {0};
        clock.scheduler().execute(() -> runs[0]++);
        assertThat(runs[0]).isZero();
        assertThat(clock.pendingTasks()).isEqualTo(1);
        assertThat(clock.runDueTasks()).isEqualTo(1);
        assertThat(runs[0]).isEqualTo(1);
        assertThat(clock.nanos()).isZero();
    }

    @Test
    void fixedRate_runsOncePerPeriodCrossed_andStopsWhenCancelled() {
        VirtualClock clock = new VirtualClock(0);
        List<Long> at = new ArrayList<>();
        ScheduledFuture<?> periodic =
                clock.scheduler().scheduleAtFixedRate(() -> at.add(clock.millis()), 0, 1, TimeUnit.SECONDS);
        assertThat(clock.advance(Duration.ofMillis(3_500))).isEqualTo(4);
        assertThat(at).containsExactly(0L, 1_000L, 2_000L, 3_000L);
        periodic.cancel(false);
        assertThat(clock.advance(Duration.ofSeconds(5))).isZero();
        assertThat(clock.nanosToNextTask()).isEqualTo(-1);
    }

    @Test
    void tasksScheduledByATask_runInTheSameAdvanceWhenDue() {
        VirtualClock clock = new VirtualClock(0);
        List<Long> at = new ArrayList<>();
        clock.scheduler()
                .schedule(
                        () -> {
                            at.add(clock.nanos());
                            clock.scheduler().schedule(() -> at.add(clock.nanos()), 5, TimeUnit.NANOSECONDS);
                            clock.scheduler().schedule(() -> at.add(clock.nanos()), 50, TimeUnit.NANOSECONDS);
                        },
                        10,
                        TimeUnit.NANOSECONDS);
        assertThat(clock.advance(20)).isEqualTo(2);
        assertThat(at).containsExactly(10L, 15L);
        assertThat(clock.nanosToNextTask()).isEqualTo(40);
    }

    @Test
    void aFailingTask_failsTheAdvance_andATaskMayNotMoveTheClock() {
        VirtualClock clock = new VirtualClock(0);
        clock.scheduler().execute(() -> {
            throw new IllegalStateException("boom");
        });
        assertThatThrownBy(clock::runDueTasks)
                .isInstanceOf(AssertionError.class)
                .hasRootCauseMessage("boom");

        clock.scheduler().execute(() -> clock.advance(1));
        assertThatThrownBy(clock::runDueTasks)
                .hasRootCauseInstanceOf(IllegalStateException.class)
                .hasStackTraceContaining("may not move it");
    }

    @Test
    void advance_backwards_isRefusedByName() {
        VirtualClock clock = new VirtualClock(100);
        assertThatThrownBy(() -> clock.advance(-1)).hasMessage("deltaNanos: -1 (expected: >= 0)");
        assertThatThrownBy(() -> clock.advanceTo(99)).hasMessage("atNanos: 99 (expected: >= now, 100)");
    }

    @Test
    void await_failsNamingWhatWasAwaited_andPassesOnAConditionThatComesTrue() {
        assertThatThrownBy(() -> Await.until("the moon", Duration.ofMillis(30), () -> false, () -> "still night"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("waiting for the moon: not within 0.03 s; still night");
        int[] polls = {0};
        Await.until("three polls", () -> ++polls[0] == 3);
        assertThat(polls[0]).isEqualTo(3);
        assertThat(Await.holds(Duration.ofMillis(20), () -> false)).isFalse();
    }
}
