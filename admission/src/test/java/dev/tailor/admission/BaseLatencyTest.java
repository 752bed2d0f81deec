package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class BaseLatencyTest {

    @Test
    void eachClassIsMeasuredAgainstItsOwnLeast() {
        BaseLatency base = new BaseLatency();
        assertThat(base.slowdown(IoKind.READ, 4096, 200_000))
                .as("the first of a class is its own base")
                .isEqualTo(1);
        assertThat(base.slowdown(IoKind.READ, 4096, 800_000)).isEqualTo(4);
        assertThat(base.slowdown(IoKind.READ, 7 * 1024, 400_000))
                .as("7 KiB rounds down to the 4 KiB class")
                .isEqualTo(2);
        assertThat(base.slowdown(IoKind.READ, 1 << 20, 5_000_000))
                .as("a 1 MiB read is not compared with 4 KiB ones")
                .isEqualTo(1);
        assertThat(base.slowdown(IoKind.WRITE, 4096, 600_000))
                .as("nor a write with reads")
                .isEqualTo(1);
        assertThat(base.slowdown(IoKind.READ, 4096, 100_000))
                .as("a new least is its own base")
                .isEqualTo(1);
        assertThat(base.slowdown(IoKind.READ, 4096, 200_000)).isEqualTo(2);
        assertThat(base.leastNanos(IoKind.READ, 4096)).isEqualTo(OptionalLong.of(100_000));
        assertThat(base.leastNanos(IoKind.WRITE, 1 << 20)).isEmpty();
    }

    @Test
    void aClockThatDidNotMove_keepsTheSlowdownFinite() {
        BaseLatency base = new BaseLatency();
        assertThat(base.slowdown(IoKind.READ, 1, 0)).isEqualTo(1);
        assertThat(base.slowdown(IoKind.READ, 1, -5)).isEqualTo(1);
        assertThat(base.slowdown(IoKind.READ, 1, 3)).isEqualTo(3);
        assertThat(base.slowdown(IoKind.READ, Long.MAX_VALUE, 10)).isEqualTo(1);
        assertThatThrownBy(() -> base.slowdown(IoKind.READ, 0, 10)).hasMessage("lengthBytes: 0 (expected: >= 1)");
    }

    @Test
    void theBaseIsTheLeastOfEverySampleOfItsClass() {
        qt().forAll(lists().of(integers().between(1, 1_000_000)).ofSizeBetween(1, 200))
                .checkAssert(latencies -> {
                    BaseLatency base = new BaseLatency();
                    for (int latency : latencies) {
                        assertThat(base.slowdown(IoKind.WRITE, 65_536, latency)).isGreaterThanOrEqualTo(1);
                    }
                    long least = latencies.stream()
                            .mapToLong(Integer::longValue)
                            .min()
                            .orElseThrow();
                    assertThat(base.leastNanos(IoKind.WRITE, 65_536)).isEqualTo(OptionalLong.of(least));
                    assertThat(base.slowdown(IoKind.WRITE, 100_000, 2 * least)).isEqualTo(2);
                });
    }
}
