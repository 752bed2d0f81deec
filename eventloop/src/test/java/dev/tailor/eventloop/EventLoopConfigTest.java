package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

class EventLoopConfigTest {

    private static final EventLoopConfig D = EventLoopConfig.DEFAULTS;

    @Test
    void defaults_priorityWithDesignPolicyAndNettyFifoQuantum() {
        assertThat(D.mode()).isEqualTo(LoopMode.PRIORITY);
        assertThat(D.policy()).isEqualTo(PriorityPolicy.DEFAULTS);
        assertThat(D.ioTaskQuantumNanos()).isEqualTo(1_000_000L);
        // FIFO is a plain Netty 4.2 loop: io.netty.eventLoop.maxTaskProcessingQuantumMs defaults to 1,000 ms.
        assertThat(D.fifoTaskQuantumNanos()).isEqualTo(1_000_000_000L);
        assertThat(D.nanoClock()).isSameAs(EventLoopConfig.SYSTEM_NANO_CLOCK);
        assertThat(D.iterationListener()).isNull();
    }

    @Test
    void constructor_badValues_namedInMessage() {
        assertThatThrownBy(() -> D.withMode(null)).hasMessage("mode : null (expected: PRIORITY or FIFO)");
        assertThatThrownBy(() -> D.withPolicy(null))
                .hasMessage("policy : null (expected: a PriorityPolicy, e.g. PriorityPolicy.DEFAULTS)");
        assertThatThrownBy(() -> D.withIoTaskQuantumNanos(999))
                .hasMessage("ioTaskQuantumNanos : 999 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.withFifoTaskQuantumNanos(0))
                .hasMessage("fifoTaskQuantumNanos : 0 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.withIoHandlerFactory(null)).hasMessageStartingWith("ioHandlerFactory : null");
        assertThatThrownBy(() -> D.withNanoClock(null)).hasMessageStartingWith("nanoClock : null");
        assertThatThrownBy(() -> D.withThreadFactory(null)).hasMessageStartingWith("threadFactory : null");
    }

    @Test
    void withers_changeOneFieldOnly() {
        LongSupplier clock = () -> 42;
        EventLoopConfig c = D.withMode(LoopMode.FIFO)
                .withNanoClock(clock)
                .withIoTaskQuantumNanos(5_000)
                .withFifoTaskQuantumNanos(7_000)
                .withIterationListener(t -> {});
        assertThat(c.mode()).isEqualTo(LoopMode.FIFO);
        assertThat(c.nanoClock()).isSameAs(clock);
        assertThat(c.ioTaskQuantumNanos()).isEqualTo(5_000);
        assertThat(c.fifoTaskQuantumNanos()).isEqualTo(7_000);
        assertThat(c.iterationListener()).isNotNull();
        assertThat(c.policy()).isSameAs(D.policy());
        assertThat(c.ioHandlerFactory()).isSameAs(D.ioHandlerFactory());
        assertThat(c.threadFactory()).isSameAs(D.threadFactory());
    }
}
