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
        // The builder holds these defaults (each builder makes its own NIO handler factory).
        EventLoopConfig built = EventLoopConfig.builder().build();
        assertThat(built.toBuilder().ioHandlerFactory(D.ioHandlerFactory()).build())
                .isEqualTo(D);
        assertThat(built.threadFactory()).isSameAs(EventLoopConfig.DEFAULT_THREAD_FACTORY);
    }

    @Test
    void constructor_badValues_namedInMessage() {
        assertThatThrownBy(() -> D.toBuilder().mode(null).build())
                .hasMessage("mode : null (expected: PRIORITY or FIFO)");
        assertThatThrownBy(() -> D.toBuilder().policy(null).build())
                .hasMessage("policy : null (expected: a PriorityPolicy, e.g. PriorityPolicy.DEFAULTS)");
        assertThatThrownBy(() -> D.toBuilder().ioTaskQuantumNanos(999).build())
                .hasMessage("ioTaskQuantumNanos : 999 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.toBuilder().fifoTaskQuantumNanos(0).build())
                .hasMessage("fifoTaskQuantumNanos : 0 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.toBuilder().ioHandlerFactory(null).build())
                .hasMessageStartingWith("ioHandlerFactory : null");
        assertThatThrownBy(() -> D.toBuilder().nanoClock(null).build()).hasMessageStartingWith("nanoClock : null");
        assertThatThrownBy(() -> D.toBuilder().threadFactory(null).build())
                .hasMessageStartingWith("threadFactory : null");
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        LongSupplier clock = () -> 42;
        EventLoopConfig c = D.toBuilder()
                .mode(LoopMode.FIFO)
                .nanoClock(clock)
                .ioTaskQuantumNanos(5_000)
                .fifoTaskQuantumNanos(7_000)
                .iterationListener(t -> {})
                .build();
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
