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
        assertThat(base.record(IoKind.READ, 4096, 200_000))
                .as("the first of a class is its own base")
                .isEqualTo(200_000);
        assertThat(base.record(IoKind.READ, 4096, 800_000)).isEqualTo(200_000);
        assertThat(base.record(IoKind.READ, 7 * 1024, 400_000))
                .as("7 KiB rounds down to the 4 KiB class")
                .isEqualTo(200_000);
        assertThat(base.record(IoKind.READ, 1 << 20, 5_000_000))
                .as("a 1 MiB read is not compared with 4 KiB ones")
                .isEqualTo(5_000_000);
        assertThat(base.record(IoKind.WRITE, 4096, 600_000))
                .as("nor a write with reads")
                .isEqualTo(600_000);
        assertThat(base.record(IoKind.READ, 4096, 100_000))
                .as("a new least is its own base")
                .isEqualTo(100_000);
        assertThat(base.leastNanos(IoKind.READ, 4096)).isEqualTo(OptionalLong.of(100_000));
        assertThat(base.leastNanos(IoKind.WRITE, 1 << 20)).isEmpty();
    }

    @Test
    void aClockThatDidNotMove_keepsTheBaseAboveZero() {
        BaseLatency base = new BaseLatency();
        assertThat(base.record(IoKind.READ, 1, 0)).isEqualTo(1);
        assertThat(base.record(IoKind.READ, 1, -5)).isEqualTo(1);
        assertThat(base.record(IoKind.READ, Long.MAX_VALUE, 10)).isEqualTo(10);
        assertThatThrownBy(() -> base.record(IoKind.READ, 0, 10)).hasMessage("lengthBytes: 0 (expected: >= 1)");
        assertThatThrownBy(() -> base.leastNanos(IoKind.READ, -1)).hasMessage("lengthBytes: -1 (expected: >= 1)");
    }

    @Test
    void theBaseIsTheLeastOfEverySampleOfItsClass() {
        qt().forAll(lists().of(integers().between(1, 1_000_000)).ofSizeBetween(1, 200))
                .checkAssert(latencies -> {
                    BaseLatency base = new BaseLatency();
                    long least = Long.MAX_VALUE;
                    for (int latency : latencies) {
                        least = Math.min(least, latency);
                        assertThat(base.record(IoKind.WRITE, 65_536, latency)).isEqualTo(least);
                    }
                    assertThat(base.leastNanos(IoKind.WRITE, 100_000)).isEqualTo(OptionalLong.of(least));
                });
    }
}
