package dev.tailor.sim;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ParallelRuns}: a run's failure reaches the caller as it was thrown. */
class ParallelRunsTest {

    @Test
    void run_aRunOutOfMemory_throwsTheOutOfMemoryErrorItself() {
        assertThatThrownBy(() -> ParallelRuns.run(
                        List.of(1, 2),
                        2,
                        null,
                        "test-runs",
                        run -> {
                            if (run == 2) {
                                throw new OutOfMemoryError("Java heap space");
                            }
                            return run;
                        },
                        null))
                .isExactlyInstanceOf(OutOfMemoryError.class)
                .hasMessage("Java heap space");
    }

    @Test
    void run_aRunFails_throwsItsRuntimeException() {
        assertThatThrownBy(() -> ParallelRuns.run(
                        List.of(1),
                        1,
                        null,
                        "test-runs",
                        run -> {
                            throw new IllegalArgumentException("bad run");
                        },
                        null))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad run");
    }
}
