package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.tailor.eventloop.PriorityPolicy.Step;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The policy's invariants over random policies and inputs: the allowance stays within [base, cap] and grows with I/O
 * time; and a phase driven by {@link PriorityPolicy#next} (a small model of the loop's unrelated phase) spends at most
 * the allowance plus one task, and runs at least one task whenever the oldest is overdue.
 */
class PriorityPolicyPropertiesTest {

    private static Gen<PriorityPolicy> policies() {
        Gen<Long> base = longs().between(1, 1_000_000);
        Gen<Double> multiplier = doubles().between(0, 10);
        Gen<Long> capExtra = longs().between(0, 100_000_000);
        Gen<Long> holdBack = longs().between(0, 10_000_000);
        return base.zip(multiplier, capExtra, holdBack, (b, m, c, h) -> new PriorityPolicy(b, m, b + c, h));
    }

    /** I/O times from negative (a clock step back) through ordinary to absurd (a pause of hours, Long.MAX_VALUE). */
    private static Gen<Long> ioNanos() {
        return longs().between(-1_000_000, 100_000_000).mix(longs().between(0, Long.MAX_VALUE), 20);
    }

    @Test
    void allowanceNanos_anyIo_withinBaseAndCap_andFormulaBelowCap() {
        qt().withExamples(2_000).forAll(policies(), ioNanos()).checkAssert((policy, io) -> {
            long a = policy.allowanceNanos(io);
            assertThat(a).isBetween(policy.baseAllowanceNanos(), policy.maxAllowanceNanos());
            double earned = policy.ioMultiplier() * Math.max(0, io);
            if (earned < policy.maxAllowanceNanos()) {
                // Below the cap the formula of docs/design.md#io-priority-event-loop holds exactly (up to
                // truncation to whole ns).
                assertThat(a).isEqualTo(Math.max(policy.baseAllowanceNanos(), (long) earned));
            }
            assertThat(policy.allowanceCapped(io)).isEqualTo(earned > policy.maxAllowanceNanos());
        });
    }

    @Test
    void allowanceNanos_moreIo_neverLess() {
        // Monotone: a longer I/O phase never earns less background time, and a pause cannot earn beyond the cap.
        qt().withExamples(2_000)
                .forAll(policies(), ioNanos(), longs().between(0, Long.MAX_VALUE / 2))
                .checkAssert((policy, io, extra) -> {
                    long more = io > Long.MAX_VALUE - extra ? Long.MAX_VALUE : io + extra;
                    assertThat(policy.allowanceNanos(more)).isGreaterThanOrEqualTo(policy.allowanceNanos(io));
                });
    }

    /** One unrelated phase: task durations in ns, whether each look at I/O finds work, the oldest task's age. */
    record Phase(List<Long> taskNanos, List<Boolean> ioFound, long oldestAgeNanos, long ioNanos) {}

    private static Gen<Phase> phases() {
        Gen<List<Long>> tasks = lists().of(longs().between(0, 2_000_000)).ofSizeBetween(0, 60);
        Gen<List<Boolean>> found = lists().of(booleans().all()).ofSizeBetween(60, 60);
        return tasks.zip(found, longs().between(0, 20_000_000), longs().between(0, 50_000_000), Phase::new);
    }

    /** Runs the phase as the loop does; returns {background time, tasks run}. */
    private static long[] simulate(PriorityPolicy policy, Phase phase) {
        long allowance = policy.allowanceNanos(phase.ioNanos());
        long elapsed = 0;
        int next = 0;
        while (true) {
            long age = next < phase.taskNanos().size() ? phase.oldestAgeNanos() + elapsed : -1;
            if (policy.next(elapsed, allowance, age, false) != Step.RUN_UNRELATED) {
                break;
            }
            if (policy.next(elapsed, allowance, age, phase.ioFound().get(next)) != Step.RUN_UNRELATED) {
                break;
            }
            elapsed += phase.taskNanos().get(next);
            next++;
        }
        return new long[] {elapsed, next};
    }

    @Test
    void phase_anyTasks_backgroundAtMostAllowancePlusOneTask() {
        // The bound that makes the loop an I/O-priority loop: I/O waits for background work at most A + one task,
        // and A <= cap whatever the I/O time was.
        qt().withExamples(2_000).forAll(policies(), phases()).checkAssert((policy, phase) -> {
            long[] result = simulate(policy, phase);
            long longest =
                    phase.taskNanos().stream().mapToLong(Long::longValue).max().orElse(0);
            long allowance = policy.allowanceNanos(phase.ioNanos());
            assertThat(result[0]).isLessThanOrEqualTo(allowance + longest);
            assertThat(allowance).isLessThanOrEqualTo(policy.maxAllowanceNanos());
        });
    }

    @Test
    void phase_overdueOldest_atLeastOneTaskRuns() {
        // The starvation guard: whatever the I/O does, an overdue task runs in every phase.
        qt().withExamples(2_000)
                .forAll(policies(), phases(), integers().between(0, 1))
                .checkAssert((policy, p, x) -> {
                    if (p.taskNanos().isEmpty()) {
                        return;
                    }
                    Phase overdue =
                            new Phase(p.taskNanos(), p.ioFound(), policy.maxUnrelatedDelayNanos() + x, p.ioNanos());
                    assertThat(simulate(policy, overdue)[1]).isGreaterThanOrEqualTo(1);
                });
    }

    @Test
    void phase_noIoFound_runsUntilAllowanceSpentOrDrained() {
        // Without I/O, background work is held back only by the allowance: no idle loop leaves work pending.
        qt().withExamples(2_000).forAll(policies(), phases()).checkAssert((policy, p) -> {
            Phase quiet =
                    new Phase(p.taskNanos(), java.util.Collections.nCopies(60, false), p.oldestAgeNanos(), p.ioNanos());
            long[] result = simulate(policy, quiet);
            boolean drained = result[1] == p.taskNanos().size();
            boolean spent = result[0] >= policy.allowanceNanos(p.ioNanos());
            assertThat(drained || spent).isTrue();
        });
    }
}
