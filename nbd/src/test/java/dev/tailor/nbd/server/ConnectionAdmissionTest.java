package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.nbd.testing.LogRecords;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
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
        assertThat(admission.admit(newcomer))
                .as("room made by closing the handshake")
                .isTrue();
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

    /** An embedded channel that says it comes from {@code address}. */
    private static EmbeddedChannel from(String address) {
        return new EmbeddedChannel() {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress(address, 40_000);
            }
        };
    }

    @Test
    void perAddressLimit_evictsThatAddressesIdleHandshake_thenRefuses_othersUnaffected() throws Exception {
        ConnectionAdmission admission = new ConnectionAdmission(10, 10, 2);
        EmbeddedChannel a1 = from("127.0.0.1");
        EmbeddedChannel b1 = from("127.0.0.2");
        EmbeddedChannel a2 = from("127.0.0.1");
        assertThat(admission.admit(a1)).isTrue();
        assertThat(admission.admit(b1)).isTrue();
        assertThat(admission.admit(a2)).isTrue();
        admission.handshakeDone(a1);
        // 127.0.0.1 is at 2: its handshake a2 makes room, not 127.0.0.2's older b1.
        EmbeddedChannel a3 = from("127.0.0.1");
        assertThat(admission.admit(a3)).isTrue();
        assertThat(a2.isOpen()).isFalse();
        assertThat(b1.isOpen()).isTrue();
        admission.handshakeDone(a3);
        // Both past their handshake: the next one from 127.0.0.1 is refused; 127.0.0.2 still gets in.
        assertThat(admission.admit(from("127.0.0.1"))).isFalse();
        assertThat(admission.refused(ConnectionAdmission.Refusal.MAX_CONNECTIONS_PER_ADDRESS))
                .isEqualTo(1);
        assertThat(admission.admit(from("127.0.0.2"))).isTrue();
        assertThat(admission.openFrom(InetAddress.getByName("127.0.0.1"))).isEqualTo(2);
        admission.closed(a1);
        assertThat(admission.openFrom(InetAddress.getByName("127.0.0.1"))).isEqualTo(1);
        assertThat(admission.admit(from("127.0.0.1"))).isTrue();
    }

    @Test
    void refusals_firstLoggedAtOnce_theRestSummedUpTenSecondsLater() {
        // Never silent: a burst of refusals is one warning at once and one summary, not one line each.
        ConnectionAdmission admission = new ConnectionAdmission(1, 1);
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class)) {
            serveOne(admission);
            EmbeddedChannel first = new EmbeddedChannel();
            first.freezeTime();
            assertThat(admission.admit(first)).isFalse();
            assertThat(log.messages())
                    .singleElement()
                    .asString()
                    .startsWith("WARNING connection from")
                    .contains("refused: 1 connection is open, all past their handshake (limits.maxConnections)");
            EmbeddedChannel second = new EmbeddedChannel();
            second.freezeTime();
            assertThat(admission.admit(second)).isFalse();
            assertThat(admission.admit(new EmbeddedChannel())).isFalse();
            assertThat(log.messages()).hasSize(1);
            second.advanceTimeBy(10, TimeUnit.SECONDS);
            second.runScheduledPendingTasks();
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 2 more connections refused in"
                            + " the last 10 s: 2 over limits.maxConnections, 0 over limits.maxConnectionsPerAddress");
            assertThat(admission.refused(ConnectionAdmission.Refusal.MAX_CONNECTIONS))
                    .isEqualTo(3);
        }
    }

    @Test
    void refusals_summedUpAtStop_areNotSummedUpAgainLater() {
        // The server stopping logs the summary before its 10 s are up; the scheduled one, should it
        // still run, finds nothing left to report.
        ConnectionAdmission admission = new ConnectionAdmission(1, 1);
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class)) {
            serveOne(admission);
            assertThat(admission.admit(new EmbeddedChannel())).isFalse();
            EmbeddedChannel second = new EmbeddedChannel();
            second.freezeTime();
            assertThat(admission.admit(second)).isFalse();
            assertThat(log.messages()).hasSize(1);
            admission.summarizeRefusals();
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 1 more connection refused in the last 10 s: 1 over limits.maxConnections,"
                            + " 0 over limits.maxConnectionsPerAddress");
            second.advanceTimeBy(10, TimeUnit.SECONDS);
            second.runScheduledPendingTasks();
            admission.summarizeRefusals();
            assertThat(log.messages()).hasSize(2);
        }
    }

    @Test
    void refusalLines_countConnectionsInTheSingularForOne() {
        ConnectionAdmission admission = new ConnectionAdmission(2, 2, 1);
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class)) {
            EmbeddedChannel a = from("127.0.0.1");
            assertThat(admission.admit(a)).isTrue();
            admission.handshakeDone(a);
            assertThat(admission.admit(from("127.0.0.1"))).isFalse();
            assertThat(log.messages())
                    .singleElement()
                    .asString()
                    .contains("refused: 1 connection from 127.0.0.1 is open, all past their handshake"
                            + " (limits.maxConnectionsPerAddress, --max-connections-per-address)");
            EmbeddedChannel b = from("127.0.0.2");
            assertThat(admission.admit(b)).isTrue();
            admission.handshakeDone(b);
            // Both slots past their handshake: counted, and summed up 10 s later (on its event loop).
            EmbeddedChannel refusedC = from("127.0.0.3");
            refusedC.freezeTime();
            assertThat(admission.admit(refusedC)).isFalse();
            assertThat(log.messages()).hasSize(1);
            refusedC.advanceTimeBy(10, TimeUnit.SECONDS);
            refusedC.runScheduledPendingTasks();
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 1 more connection refused in the last 10 s: 1 over limits.maxConnections,"
                            + " 0 over limits.maxConnectionsPerAddress");
        }
        // Two open: plural.
        ConnectionAdmission full = new ConnectionAdmission(2, 2);
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class)) {
            for (int i = 0; i < 2; i++) {
                EmbeddedChannel served = new EmbeddedChannel();
                assertThat(full.admit(served)).isTrue();
                full.handshakeDone(served);
            }
            assertThat(full.admit(new EmbeddedChannel())).isFalse();
            assertThat(log.messages())
                    .singleElement()
                    .asString()
                    .contains("refused: 2 connections are open, all past their handshake (limits.maxConnections)");
        }
    }

    @Test
    void limits_areChecked() {
        assertThatThrownBy(() -> new ConnectionAdmission(2, 3)).hasMessageContaining("maxHandshakes: 3");
        assertThatThrownBy(() -> new ConnectionAdmission(0, 0)).hasMessageContaining("maxConnections: 0");
        assertThatThrownBy(() -> new ConnectionAdmission(2, 2, 3)).hasMessageContaining("maxConnectionsPerAddress: 3");
    }

    /** Admits one connection and completes its handshake, so that a limit of one is reached. */
    private static void serveOne(ConnectionAdmission admission) {
        EmbeddedChannel served = new EmbeddedChannel();
        assertThat(admission.admit(served)).isTrue();
        admission.handshakeDone(served);
    }
}
