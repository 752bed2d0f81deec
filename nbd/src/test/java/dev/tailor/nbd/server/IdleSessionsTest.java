package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sessions past their handshake that send nothing, over real sockets. The case that showed the need:
 * 256 sessions finished the handshake and then sent nothing, and the server closed every new client
 * at connect, for good. Now an idle timeout closes such sessions, a per-address limit keeps one
 * client from taking every slot meanwhile, and a refused newcomer is refused with a reason in the log.
 */
class IdleSessionsTest {

    private static RawClient session(NbdServer server, InetAddress from) throws Exception {
        RawClient client = RawClient.connect(server.localAddress(), from).handshake();
        client.go("disk", false);
        return client;
    }

    @Test
    void idleSessionsFillingTheServer_areClosedByTheIdleTimeout_thenANewClientGetsIn() throws Exception {
        // All 256 slots held by sessions past their handshake (one address may hold all of them here, to
        // isolate the idle timeout), with an idle timeout of 1 s. Each holds a read the backend has not
        // answered, sent with its GO, so none is idle while the others connect, however long that takes;
        // once the reads are answered they send nothing more.
        Limits limits = Limits.builder()
                .idleTimeoutSeconds(1.0)
                .maxConnectionsPerAddress(256)
                .build();
        GatedBackend backend = new GatedBackend(1 << 20);
        List<RawClient> idle = new ArrayList<>();
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class);
                NbdServer server = TestServers.start(limits, Map.of("disk", backend))) {
            for (int i = 0; i < 256; i++) {
                RawClient client = RawClient.connect(server.localAddress()).handshake();
                idle.add(client);
                client.goWithRead("disk", i, 0, 4096);
            }
            Await.until("every session's read at the backend", () -> backend.heldCount() == 256);
            // Full: a newcomer is closed at accept, and the log says why.
            try (RawClient newcomer = RawClient.connect(server.localAddress())) {
                assertThat(newcomer.closedByServer()).isTrue();
            }
            // (The one address holds them all: both limits apply, and the per-address one is named.)
            assertThat(log.messages())
                    .anySatisfy(m -> assertThat(m)
                            .startsWith("WARNING connection from /127.0.0.1:")
                            .contains("refused: 256 connections")
                            .contains("are open, all past their handshake (limits."));
            // The reads answered, the sessions go quiet: the idle timeout closes them, each seeing its
            // connection end.
            assertThat(server.connections()).isEqualTo(256);
            backend.passAll();
            Await.until("the idle sessions to be closed", () -> server.connections() == 0);
            for (RawClient client : idle) {
                assertThat(client.closedByServer()).isTrue();
            }
            try (RawClient newcomer = session(server, null)) {
                newcomer.write(0, 1, 0, new byte[4096]);
                backend.pass(backend.next());
                assertThat(newcomer.simpleReply(0).error()).isZero();
            }
        } finally {
            for (RawClient client : idle) {
                client.close();
            }
        }
    }

    @Test
    void oneAddressAtItsLimit_isRefusedWithTheReasonLogged_otherAddressesStillGetIn() throws Exception {
        // The idle timeout off: the per-address limit alone keeps 127.0.0.1 from taking every slot.
        Limits limits = Limits.builder()
                .maxConnections(8)
                .idleTimeoutSeconds(0.0)
                .maxConnectionsPerAddress(4)
                .build();
        InetAddress first = InetAddress.getByName("127.0.0.1");
        InetAddress second = InetAddress.getByName("127.0.0.2");
        List<RawClient> sessions = new ArrayList<>();
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class);
                NbdServer server = TestServers.start(limits, Map.of("disk", new MemoryBackend(1 << 20)))) {
            for (int i = 0; i < 4; i++) {
                sessions.add(session(server, first));
            }
            try (RawClient fifth = RawClient.connect(server.localAddress(), first)) {
                assertThat(fifth.closedByServer())
                        .as("a fifth connection from 127.0.0.1")
                        .isTrue();
            }
            assertThat(log.messages())
                    .anySatisfy(m -> assertThat(m)
                            .startsWith("WARNING connection from /127.0.0.1:")
                            .contains("refused: 4 connections from 127.0.0.1 are open, all past their handshake"
                                    + " (limits.maxConnectionsPerAddress, --max-connections-per-address)"));
            try (RawClient other = session(server, second)) {
                other.write(0, 1, 0, new byte[4096]);
                assertThat(other.simpleReply(0).error())
                        .as("a client from 127.0.0.2")
                        .isZero();
            }
            // A slot of 127.0.0.1 freed is 127.0.0.1's again.
            sessions.remove(0).close();
            Await.until("the closed session to be gone", () -> server.connections() == 3);
            sessions.add(session(server, first));
        } finally {
            for (RawClient client : sessions) {
                client.close();
            }
        }
    }

    @Test
    void idleTimeout_neverClosesAConnectionWhileARequestIsInFlight() throws Exception {
        // A read the backend holds for longer than five idle timeouts (0.3 s): the connection stays. Once
        // it is answered and nothing else comes, the idle timeout closes it.
        GatedBackend backend = new GatedBackend(1 << 20);
        Limits limits = Limits.builder().idleTimeoutSeconds(0.3).build();
        try (NbdServer server = TestServers.start(limits, Map.of("disk", backend));
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            // The read leaves with the GO: the idle timeout has nothing to count before it.
            client.goWithRead("disk", 1, 0, 4096);
            GatedBackend.Held read = backend.next();
            client.readTimeoutMillis(1_500);
            assertThatThrownBy(() -> client.in.read())
                    .as("nothing, not even EOF, for 1.5 s")
                    .isInstanceOf(SocketTimeoutException.class);
            backend.pass(read);
            client.readTimeoutMillis(10_000);
            assertThat(client.simpleReply(4096).cookie()).isEqualTo(1);
            assertThat(client.closedByServer()).as("idle again: closed").isTrue();
        }
    }
}
