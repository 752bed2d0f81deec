package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections over real sockets from start to end: DISC and shutdown with requests in flight, clients
 * that vanish mid-request, the connection limits (idle handshakes make room for real clients), and no
 * file descriptor left behind after 1,000 connections.
 */
class ConnectionLifecycleTest {

    @TempDir
    Path dir;

    @Test
    void discWithRequestsInFlight_repliesToThemThenCloses() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("disk", false);
            client.write(0, 1, 0, new byte[4096]);
            client.request(0, NbdProtocol.CMD_READ, 2, 0, 4096);
            client.request(0, NbdProtocol.CMD_DISC, 3, 0, 0);
            GatedBackend.Held write = backend.next();
            GatedBackend.Held read = backend.next();
            backend.pass(read);
            assertThat(client.simpleReply(4096).cookie()).isEqualTo(2);
            backend.pass(write);
            assertThat(client.simpleReply(0).cookie()).isEqualTo(1);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void discThenAReset_heldWriteStillReachesTheBackend() throws Exception {
        // proto.md: after NBD_CMD_DISC the server handles every outstanding request. B's write waits
        // behind A's older overlapping one; B sends DISC and resets. A reply B cannot take (its read)
        // makes the server see the reset while the write is still held: it must run all the same.
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient a = RawClient.connect(server.localAddress()).handshake();
                RawClient b = RawClient.connect(server.localAddress()).handshake()) {
            a.go("disk", false);
            b.go("disk", false);
            a.write(0, 1, 0, new byte[4096]);
            GatedBackend.Held older = backend.next();
            b.request(0, NbdProtocol.CMD_READ, 2, 65536, 4096);
            GatedBackend.Held read = backend.next();
            byte[] newer = new byte[4096];
            Arrays.fill(newer, (byte) 0x5b);
            b.write(0, 3, 0, newer);
            b.request(0, NbdProtocol.CMD_DISC, 4, 0, 0);
            WriteOrdering ordering = server.exports().get(0).writeOrdering();
            Await.until("B's write to wait behind A's", () -> ordering.heldWrites() == 1);
            b.reset();
            backend.pass(read);
            Await.until("the server to see B's reset", () -> server.connections() == 1);
            backend.pass(older);
            GatedBackend.Held held = backend.next();
            assertThat(held.request().cookie()).as("B's write, after its DISC").isEqualTo(3);
            backend.pass(held);
            assertThat(Arrays.copyOf(backend.memory.bytes, 4096)).isEqualTo(newer);
            assertThat(server.exports().get(0).droppedRequests()).isZero();
        }
    }

    @Test
    void requestsInFlight_countsEveryConnectionsRequestsUntilAnswered() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient a = RawClient.connect(server.localAddress()).handshake();
                RawClient b = RawClient.connect(server.localAddress()).handshake()) {
            a.go("disk", false);
            b.go("disk", false);
            assertThat(server.requestsInFlight()).isZero();
            a.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            a.request(0, NbdProtocol.CMD_READ, 2, 8192, 4096);
            b.request(0, NbdProtocol.CMD_READ, 3, 0, 4096);
            List<GatedBackend.Held> held = List.of(backend.next(), backend.next(), backend.next());
            assertThat(server.requestsInFlight()).as("a's two and b's one").isEqualTo(3);
            GatedBackend.Held ofB = held.stream()
                    .filter(h -> h.request().cookie() == 3)
                    .findFirst()
                    .orElseThrow();
            backend.pass(ofB);
            assertThat(b.simpleReply(4096).cookie()).isEqualTo(3);
            Await.until("b's reply to be written", () -> server.requestsInFlight() == 2);
            for (GatedBackend.Held h : held) {
                if (h != ofB) {
                    backend.pass(h);
                }
            }
            a.simpleReply(4096);
            a.simpleReply(4096);
            Await.until("a's replies to be written", () -> server.requestsInFlight() == 0);
        }
    }

    @Test
    void shutdown_letsRequestsInFlightFinishThenCloses() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        NbdServer server = TestServers.start(backend);
        try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("disk", true);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            GatedBackend.Held read = backend.next();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
            Await.until("the listener to close", () -> {
                try (Socket probe = new Socket()) {
                    probe.connect(server.localAddress(), 1000);
                    return false;
                } catch (IOException refused) {
                    return true;
                }
            });
            assertThat(closing).isNotDone();
            backend.pass(read);
            RawClient.Chunk reply = client.chunk();
            assertThat(reply.cookie()).isEqualTo(1);
            assertThat(reply.type()).isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
            assertThat(client.closedByServer()).isTrue();
            closing.get(10, TimeUnit.SECONDS);
        } finally {
            server.close();
        }
    }

    @Test
    void clientVanishingMidWrite_leavesNoConnectionOrBuffer() throws Exception {
        GatedBackend backend = new GatedBackend(4 << 20);
        try (NbdServer server = TestServers.start(backend)) {
            // Half a write's payload, then a reset.
            RawClient writer = RawClient.connect(server.localAddress()).handshake();
            writer.go("disk", false);
            writer.request(0, NbdProtocol.CMD_WRITE, 1, 0, 1 << 20);
            writer.out.write(new byte[300_000]);
            writer.out.flush();
            writer.reset();
            // A read the backend is still working on when the client goes.
            RawClient reader = RawClient.connect(server.localAddress()).handshake();
            reader.go("disk", true);
            reader.request(0, NbdProtocol.CMD_READ, 2, 0, 1 << 20);
            GatedBackend.Held read = backend.next();
            reader.reset();
            Await.until("both connections to close", () -> server.connections() == 0);
            // Its data has nowhere to go now: the server must release it (LeakCheck verifies).
            backend.pass(read);
            assertThat(backend.heldCount()).isZero();
        }
    }

    @Test
    void connectionsOverTheLimit_whenAllAreInTransmission_areClosedOnAccept() throws Exception {
        Limits limits = Limits.builder().maxConnections(2).build();
        try (NbdServer server = TestServers.start(limits, Map.of("disk", new MemoryBackend(4096)))) {
            RawClient first = RawClient.connect(server.localAddress()).handshake();
            first.go("disk", false);
            RawClient second = RawClient.connect(server.localAddress()).handshake();
            second.go("disk", false);
            try (RawClient third = RawClient.connect(server.localAddress())) {
                assertThat(third.closedByServer()).isTrue();
            }
            first.close();
            Await.until("a free slot", () -> server.connections() < 2);
            try (RawClient fourth = RawClient.connect(server.localAddress())) {
                fourth.greeting();
            }
            second.close();
        }
    }

    @Test
    void refusalsNotYetSummedUp_areLoggedWhenTheServerStops() throws Exception {
        // The summary of the refusals after the first comes 10 s later; a server stopped sooner logs it as
        // it stops, so no refusal goes unreported.
        Limits limits = Limits.builder().maxConnections(1).build();
        try (LogRecords log = LogRecords.of(ConnectionAdmission.class)) {
            try (NbdServer server = TestServers.start(limits, Map.of("disk", new MemoryBackend(4096)));
                    RawClient served = RawClient.connect(server.localAddress()).handshake()) {
                served.go("disk", false);
                for (int i = 0; i < 3; i++) {
                    try (RawClient refused = RawClient.connect(server.localAddress())) {
                        assertThat(refused.closedByServer()).isTrue();
                    }
                }
                assertThat(log.messages()).as("the first refusal only, so far").hasSize(1);
            }
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 2 more connections refused in the last 10 s: 0 over limits.maxConnections,"
                            + " 2 over limits.maxConnectionsPerAddress");
        }
    }

    @Test
    void connectionsOverTheLimit_closeTheLongestIdleHandshakeInstead() throws Exception {
        Limits limits = Limits.builder().maxConnections(2).build();
        try (NbdServer server = TestServers.start(limits, Map.of("disk", new MemoryBackend(4096)));
                RawClient idle = RawClient.connect(server.localAddress()).greeting();
                RawClient active = RawClient.connect(server.localAddress()).greeting()) {
            // The older connection sent its flags, the younger one nothing: the younger is the idler.
            active.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
            try (RawClient newcomer = RawClient.connect(server.localAddress()).handshake()) {
                assertThat(newcomer.go("disk", false).sizeBytes()).isEqualTo(4096);
                assertThat(idle.closedByServer()).isTrue();
                assertThat(active.go("disk", false).sizeBytes())
                        .as("the active handshake stays")
                        .isEqualTo(4096);
            }
        }
    }

    @Test
    void threeHundredIdleSockets_doNotLockOutARealClient() throws Exception {
        // Sockets that connect and never send a byte used to take every slot until the handshake timeout.
        String nbdinfo = Programs.require("nbdinfo");
        List<Socket> idle = new ArrayList<>();
        try (NbdServer server = TestServers.start(new MemoryBackend(1 << 20))) {
            for (int i = 0; i < 300; i++) {
                Socket socket = new Socket();
                idle.add(socket);
                socket.connect(server.localAddress(), 10_000);
            }
            long start = System.nanoTime();
            Programs.Result info = Programs.run(
                            Duration.ofSeconds(30),
                            nbdinfo,
                            "--size",
                            "nbd://127.0.0.1:" + server.localAddress().getPort() + "/disk")
                    .ok();
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(info.stdout().strip()).isEqualTo(Integer.toString(1 << 20));
            assertThat(elapsedMillis)
                    .as("nbdinfo's run, ms (the handshake timeout is 10 s)")
                    .isLessThan(5_000);
            Await.until(
                    "the idle sockets beyond the handshake limit to be closed",
                    () -> server.connections() <= Limits.DEFAULT_MAX_HANDSHAKES);
        } finally {
            for (Socket socket : idle) {
                socket.close();
            }
        }
    }

    @Test
    void thousandConnections_leaveNoFileDescriptorBehind() throws Exception {
        NbdConfig config = TestServers.config(
                Limits.DEFAULTS, ExportConfig.file("disk", "acme", 16 << 20, false, dir.resolve("disk.img")));
        try (NbdServer server = NbdServer.start(config)) {
            cycle(server, 0);
            Await.until("the warm-up connection to close", () -> server.connections() == 0);
            long before = openFileDescriptors();
            for (int i = 1; i <= 1000; i++) {
                cycle(server, i);
            }
            Await.until("all connections to close", () -> server.connections() == 0);
            long after = openFileDescriptors();
            assertThat(after)
                    .as("file descriptors after 1,000 connections (before: %d)", before)
                    .isLessThanOrEqualTo(before + 2);
        }
    }

    /** One connection that ends in one of five ways. */
    private static void cycle(NbdServer server, int i) throws IOException {
        RawClient client = RawClient.connect(server.localAddress()).greeting();
        switch (i % 5) {
            case 0 -> {
                client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
                client.go("disk", i % 2 == 0);
                client.write(0, i, 4096L * (i % 100), new byte[4096]);
                client.simpleReply(0);
                client.request(0, NbdProtocol.CMD_DISC, 0, 0, 0);
                client.closedByServer();
                client.close();
            }
            case 1 -> client.close();
            case 2 -> {
                client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
                client.option(NbdProtocol.OPT_ABORT, new byte[0]);
                client.closedByServer();
                client.close();
            }
            case 3 -> {
                client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
                client.go("disk", false);
                client.request(0, NbdProtocol.CMD_WRITE, i, 0, 65536);
                client.out.write(new byte[1000]);
                client.out.flush();
                client.reset();
            }
            default -> {
                client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
                client.go("disk", true);
                client.request(0, NbdProtocol.CMD_READ, i, 0, 65536);
                client.close();
            }
        }
    }

    private static long openFileDescriptors() throws IOException {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
