package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Wire;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The change from the handshake to the transmission phase: the {@link HandshakeHandler} replaces itself
 * with a {@link TransmissionHandler}, hands it what was negotiated, and the requests a client sent in the
 * same packet as {@code NBD_OPT_GO} reach the new handler's framer.
 */
class PhaseChangeTest {

    private static final byte[] PAYLOAD = {1, 2, 3, 4, 5, 6, 7, 8};

    @Test
    void beforeGo_theHandshakeHandlerHoldsTheConnection() {
        try (Embedded server = new Embedded(new MemoryBackend(1 << 16), Limits.DEFAULTS)) {
            server.feed(new Wire()
                    .clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES)
                    .option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]));

            assertThat(server.channel.pipeline().get(HandshakeHandler.class)).isNotNull();
            assertThat(server.channel.pipeline().get(TransmissionHandler.class)).isNull();
        }
    }

    @Test
    void requestsInTheSamePacketAsGo_areAnsweredByTheTransmissionHandler() {
        MemoryBackend backend = new MemoryBackend(1 << 16);
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS)) {
            server.feed(new Wire()
                    .handshake("disk", false)
                    .write(0, 1, 4096, PAYLOAD)
                    .request(0, NbdProtocol.CMD_READ, 2, 4096, PAYLOAD.length));

            assertThat(server.channel.pipeline().get(HandshakeHandler.class)).isNull();
            assertThat(server.channel.pipeline().get(TransmissionHandler.class)).isNotNull();
            assertThat(server.channel.pipeline().names()).contains("transmission");
            server.skipHandshake();
            assertThat(server.simpleReplyCookie(0)).isEqualTo(1);
            assertThat(server.simpleReplyCookie(0)).isEqualTo(2);
            byte[] read = new byte[PAYLOAD.length];
            server.received.readBytes(read);
            assertThat(read).containsExactly(PAYLOAD);
            assertThat(Arrays.copyOfRange(backend.bytes, 4096, 4096 + PAYLOAD.length))
                    .containsExactly(PAYLOAD);
        }
    }

    @Test
    void structuredRepliesNegotiated_carryIntoTheTransmissionPhase() {
        try (Embedded server = new Embedded(new MemoryBackend(1 << 16), Limits.DEFAULTS)) {
            server.feed(new Wire().handshake("disk", true).request(0, NbdProtocol.CMD_READ, 7, 0, 512));

            server.skipHandshake();
            ByteBuf reply = server.received;
            assertThat(reply.readInt()).isEqualTo(NbdProtocol.STRUCTURED_REPLY_MAGIC);
            assertThat(reply.readUnsignedShort()).as("flags").isEqualTo(NbdProtocol.REPLY_FLAG_DONE);
            assertThat(reply.readUnsignedShort()).as("type").isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
            assertThat(reply.readLong()).as("cookie").isEqualTo(7);
        }
    }
}
