package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SegmentQueuesTest {

    @Test
    void boundLag_negative_isEchoedAsWritten() {
        SegmentQueues queues = new SegmentQueues(1, 1);
        assertThatThrownBy(() -> queues.boundLag(-1e-7))
                .hasMessage("lag : -0.0000001 (expected: a finite number >= 0)");
    }
}
