package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** Which connections are taken, and which handshakes are closed to make room. */
class ConnectionAdmissionTest {

    @Test
    void handshakeLimit_evictsTheLeastRecentlyActiveHandshake() {
        ConnectionAdmission admission = new ConnectionAdmission(3, 2);
        EmbeddedChannel a = new EmbeddedChannel();
        EmbeddedChannel b = new EmbeddedChannel();
        EmbeddedChannel c = new EmbeddedChannel();
        assertThat(admission.admit(a)).isTrue();
        assertThat(admission.admit(b)).isTrue();
        admission.active(a); // a sent something after b connected: b is now the idler
        assertThat(admission.admit(c)).isTrue();
        assertThat(b.isOpen()).as("the least recently active handshake").isFalse();
        assertThat(a.isOpen()).isTrue();
        assertThat(admission.counts()).containsExactly(2, 2);
        assertThat(admission.evictions()).isEqualTo(1);
    }

    @Test
    void connectionLimit_evictsHandshakesButNeverTransmission_thenRefuses() {
        ConnectionAdmission admission = new ConnectionAdmission(2, 2);
        EmbeddedChannel served = new EmbeddedChannel();
        EmbeddedChannel waiting = new EmbeddedChannel();
        EmbeddedChannel newcomer = new EmbeddedChannel();
        assertThat(admission.admit(served)).isTrue();
        admission.handshakeDone(served);
        assertThat(admission.admit(waiting)).isTrue();
        assertThat(admission.admit(newcomer)).as("room made by closing the handshake").isTrue();
        assertThat(waiting.isOpen()).isFalse();
        assertThat(served.isOpen()).as("past its handshake: never evicted").isTrue();
        admission.handshakeDone(newcomer);
        // Every open connection is in transmission: a newcomer is refused, and nobody is closed for it.
        EmbeddedChannel late = new EmbeddedChannel();
        assertThat(admission.admit(late)).isFalse();
        assertThat(served.isOpen()).isTrue();
        assertThat(newcomer.isOpen()).isTrue();
        admission.closed(served);
        admission.closed(served); // idempotent
        assertThat(admission.admit(late)).isTrue();
        assertThat(admission.counts()).containsExactly(2, 1);
    }

    @Test
    void limits_areChecked() {
        assertThatThrownBy(() -> new ConnectionAdmission(2, 3)).hasMessageContaining("maxHandshakes: 3");
        assertThatThrownBy(() -> new ConnectionAdmission(0, 0)).hasMessageContaining("maxConnections: 0");
    }
}
