package dev.tailor.sim.des;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventCalendarTest {

    /** Records the order events fire in. */
    private static final class Recording extends EventCalendar.Event {
        final String name;
        final List<String> log;

        Recording(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        protected void fire(long nowNanos) {
            log.add(name + "@" + nowNanos);
        }
    }

    @Test
    void runUntil_firesByTimeThenSchedulingOrder() {
        // Same-instant events must fire in scheduling order, or runs would not be repeatable.
        EventCalendar calendar = new EventCalendar();
        List<String> log = new ArrayList<>();
        calendar.schedule(new Recording("late", log), 30);
        calendar.schedule(new Recording("first", log), 10);
        calendar.schedule(new Recording("second", log), 10);
        calendar.schedule(new Recording("beyond", log), 100);

        assertThat(calendar.runUntil(50)).isEqualTo(3);

        assertThat(log).containsExactly("first@10", "second@10", "late@30");
        assertThat(calendar.nowNanos()).isEqualTo(50);
        assertThat(calendar.pending()).isEqualTo(1);
    }

    @Test
    void schedule_pendingEvent_movesIt() {
        EventCalendar calendar = new EventCalendar();
        List<String> log = new ArrayList<>();
        Recording a = new Recording("a", log);
        Recording b = new Recording("b", log);
        calendar.schedule(a, 10);
        calendar.schedule(b, 20);
        calendar.schedule(a, 30); // moved after b
        calendar.runUntil(100);
        assertThat(log).containsExactly("b@20", "a@30");
        assertThat(calendar.eventsFired()).isEqualTo(2);
    }

    @Test
    void cancel_removesOnlyThatEvent() {
        EventCalendar calendar = new EventCalendar();
        List<String> log = new ArrayList<>();
        Recording a = new Recording("a", log);
        calendar.schedule(a, 10);
        calendar.schedule(new Recording("b", log), 20);
        calendar.cancel(a);
        calendar.cancel(a); // not pending: nothing happens
        assertThat(a.isScheduled()).isFalse();
        calendar.runUntil(100);
        assertThat(log).containsExactly("b@20");
    }

    @Test
    void schedule_inThePast_isRejected() {
        EventCalendar calendar = new EventCalendar();
        calendar.runUntil(1_000);
        assertThatThrownBy(() -> calendar.schedule(new Recording("x", new ArrayList<>()), 999))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeNanos : 999")
                .hasMessageContaining("now, 1000");
    }

    @Test
    void events_scheduledWhileFiring_runInOrder() {
        EventCalendar calendar = new EventCalendar();
        List<Long> times = new ArrayList<>();
        EventCalendar.Event ticker = new EventCalendar.Event() {
            @Override
            protected void fire(long nowNanos) {
                times.add(nowNanos);
                if (nowNanos < 50) {
                    calendar.schedule(this, nowNanos + 10);
                }
            }
        };
        calendar.schedule(ticker, 0);
        calendar.runUntil(1_000);
        assertThat(times).containsExactly(0L, 10L, 20L, 30L, 40L, 50L);
    }

    @Test
    void anySequenceOfSchedulesAndCancels_firesLikeASortedReference() {
        // Reference model: the surviving (time, last scheduling order) pairs, sorted. Operation k:
        // schedule event (k mod 8) at time t, or cancel it when t is negative.
        qt().withExamples(300)
                .forAll(lists().of(integers().between(-20, 60)).ofSizeBetween(0, 60))
                .checkAssert(ops -> {
                    EventCalendar calendar = new EventCalendar();
                    List<String> log = new ArrayList<>();
                    Recording[] events = new Recording[8];
                    long[][] reference = new long[8][]; // {time, order} or null
                    for (int i = 0; i < events.length; i++) {
                        events[i] = new Recording("e" + i, log);
                    }
                    for (int k = 0; k < ops.size(); k++) {
                        int i = k % events.length;
                        int t = ops.get(k);
                        if (t < 0) {
                            calendar.cancel(events[i]);
                            reference[i] = null;
                        } else {
                            calendar.schedule(events[i], t);
                            reference[i] = new long[] {t, k};
                        }
                    }
                    List<Integer> expected = new ArrayList<>();
                    for (int i = 0; i < reference.length; i++) {
                        if (reference[i] != null) {
                            expected.add(i);
                        }
                    }
                    expected.sort(Comparator.<Integer>comparingLong(i -> reference[i][0])
                            .thenComparingLong(i -> reference[i][1]));
                    calendar.runUntil(100);
                    assertThat(log)
                            .containsExactlyElementsOf(expected.stream()
                                    .map(i -> "e" + i + "@" + reference[i][0])
                                    .toList());
                });
    }
}
