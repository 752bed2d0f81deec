package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two live connections of one export over raw sockets, a backend that holds every request until the
 * test lets it through: a write that overlaps an older write still pending (any connection) reaches
 * the backend only once that one has completed, so it can never be overwritten by it; writes that
 * overlap nothing pending, and reads, go at once.
 */
class WriteOrderingTest {

    @Test
    void overlappingWriteOfAnotherConnection_waitsForTheOlderOne_othersGoAtOnce() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient a = RawClient.connect(server.localAddress()).handshake();
                RawClient b = RawClient.connect(server.localAddress()).handshake()) {
            a.go("disk", false);
            b.go("disk", false);
            a.write(0, 1, 0, new byte[8192]);
            GatedBackend.Held older = backend.next();
            // B: a write over the second half of A's, then one elsewhere, a trim overlapping A's, a read.
            b.write(0, 2, 4096, new byte[4096]);
            b.write(0, 3, 65536, new byte[4096]);
            b.request(0, NbdProtocol.CMD_TRIM, 4, 0, 512);
            b.request(0, NbdProtocol.CMD_READ, 5, 0, 4096);
            GatedBackend.Held elsewhere = backend.next();
            GatedBackend.Held read = backend.next();
            assertThat(elsewhere.request().offsetBytes()).isEqualTo(65536);
            assertThat(read.request().command()).isEqualTo(NbdProtocol.CMD_READ);
            assertThat(backend.heldCount())
                    .as("the overlapping write and trim are held back")
                    .isZero();
            backend.pass(elsewhere);
            backend.pass(read);
            assertThat(b.simpleReply(0).cookie()).isEqualTo(3);
            assertThat(b.simpleReply(4096).cookie()).isEqualTo(5);
            assertThat(backend.heldCount()).isZero();

            backend.pass(older);
            assertThat(a.simpleReply(0).cookie()).isEqualTo(1);
            // Now both go: the write [4096, 8192) and the trim [0, 512) overlap each other nowhere.
            GatedBackend.Held first = backend.next();
            GatedBackend.Held second = backend.next();
            assertThat(List.of(first.request().cookie(), second.request().cookie()))
                    .containsExactlyInAnyOrder(2L, 4L);
            backend.pass(first);
            backend.pass(second);
            assertThat(List.of(b.simpleReply(0).cookie(), b.simpleReply(0).cookie()))
                    .containsExactlyInAnyOrder(2L, 4L);
        }
    }

    /** Sends a write that overlaps nothing, checks it is the next request to reach the backend, completes it. */
    private static void passMarker(GatedBackend backend, RawClient client, long cookie, long offset) throws Exception {
        client.write(0, cookie, offset, new byte[4096]);
        GatedBackend.Held marker = backend.next();
        assertThat(marker.request().cookie())
                .as("the next request to reach the backend")
                .isEqualTo(cookie);
        backend.pass(marker);
        assertThat(client.simpleReply(0).cookie()).isEqualTo(cookie);
    }

    @Test
    void chainOfOverlappingWrites_reachTheBackendOneAtATimeInArrivalOrder() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient a = RawClient.connect(server.localAddress()).handshake();
                RawClient b = RawClient.connect(server.localAddress()).handshake()) {
            a.go("disk", false);
            b.go("disk", false);
            a.write(0, 1, 0, new byte[4096]);
            GatedBackend.Held first = backend.next();
            // Each connection handles its requests in order: once the write elsewhere that follows an
            // overlapping one has reached the backend, the overlapping one has been registered (and,
            // being held, has not). That fixes the order 2, 3, 4 across the two connections.
            b.write(0, 2, 0, new byte[4096]);
            passMarker(backend, b, 10, 512 << 10);
            a.write(0, 3, 2048, new byte[4096]);
            passMarker(backend, a, 11, 640 << 10);
            b.request(0, NbdProtocol.CMD_WRITE_ZEROES, 4, 0, 1 << 16);
            passMarker(backend, b, 12, 768 << 10);
            // Nothing else reaches the backend until the first completes; then the next, and so on.
            for (long cookie = 2; cookie <= 4; cookie++) {
                assertThat(backend.heldCount()).isZero();
                backend.pass(first);
                first = backend.next();
                assertThat(first.request().cookie()).isEqualTo(cookie);
            }
            backend.pass(first);
            assertThat(a.simpleReply(0).cookie()).isEqualTo(1);
            assertThat(b.simpleReply(0).cookie()).isEqualTo(2);
            assertThat(a.simpleReply(0).cookie()).isEqualTo(3);
            assertThat(b.simpleReply(0).cookie()).isEqualTo(4);
        }
    }
}
