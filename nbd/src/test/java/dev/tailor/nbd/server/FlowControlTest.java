package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Order and memory, deterministically in an embedded channel: replies in completion order, and a
 * connection that stops decoding and reading at its in-flight limits.
 */
class FlowControlTest {

    @Test
    void replies_goOutInTheOrderRequestsComplete() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS)) {
            server.feed(new Wire()
                            .handshake("disk", false)
                            .request(0, NbdProtocol.CMD_READ, 1, 0, 512)
                            .request(0, NbdProtocol.CMD_READ, 2, 512, 512)
                            .request(0, NbdProtocol.CMD_READ, 3, 1024, 512))
                    .skipHandshake();
            GatedBackend.Held first = backend.next();
            GatedBackend.Held second = backend.next();
            GatedBackend.Held third = backend.next();
            backend.pass(third);
            backend.pass(first);
            backend.pass(second);
            server.drain();
            assertThat(List.of(
                            server.simpleReplyCookie(512),
                            server.simpleReplyCookie(512),
                            server.simpleReplyCookie(512)))
                    .containsExactly(3L, 1L, 2L);
        }
    }

    @Test
    void inFlightRequestLimit_stopsDecodingAndReadingUntilRepliesAreWritten() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        Limits limits = Limits.builder().maxInFlightRequestsPerConnection(4).build();
        try (Embedded server = new Embedded(backend, limits)) {
            Wire wire = new Wire().handshake("disk", false);
            for (int cookie = 1; cookie <= 10; cookie++) {
                wire.request(0, NbdProtocol.CMD_READ, cookie, 0, 4096);
            }
            server.feed(wire).skipHandshake();
            // Ten requests arrived in one buffer; four are dispatched, six wait undecoded.
            assertThat(backend.heldCount()).isEqualTo(4);
            assertThat(server.channel.config().isAutoRead()).isFalse();

            List<Long> replied = new ArrayList<>();
            while (replied.size() < 10) {
                backend.pass(backend.next());
                server.drain();
                replied.add(server.simpleReplyCookie(4096));
                assertThat(backend.heldCount()).isLessThanOrEqualTo(4);
            }
            assertThat(replied).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
            assertThat(server.channel.config().isAutoRead()).isTrue();
        }
    }

    @Test
    void inFlightByteLimit_countsReadDataAndWritePayloads() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        Limits limits = Limits.builder()
                .maxRequestSize(new ByteSize(16 << 10))
                .maxInFlightPerConnection(new ByteSize(32 << 10))
                .build();
        try (Embedded server = new Embedded(backend, limits)) {
            Wire wire = new Wire().handshake("disk", false);
            for (int cookie = 1; cookie <= 5; cookie++) {
                wire.request(0, NbdProtocol.CMD_READ, cookie, 0, 16 << 10);
            }
            for (int cookie = 6; cookie <= 10; cookie++) {
                wire.write(0, cookie, 0, new byte[16 << 10]);
            }
            server.feed(wire).skipHandshake();
            // 32 KiB in flight: two 16 KiB requests.
            assertThat(backend.heldCount()).isEqualTo(2);
            for (int done = 0; done < 10; done++) {
                backend.pass(backend.next());
                server.drain();
                assertThat(backend.heldCount()).isLessThanOrEqualTo(2);
            }
            assertThat(backend.heldCount()).isZero();
        }
    }

    @Test
    void disc_finishesTheRequestsInFlightThenCloses() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS)) {
            server.feed(new Wire()
                            .handshake("disk", false)
                            .write(NbdProtocol.CMD_FLAG_FUA, 1, 0, new byte[4096])
                            .request(0, NbdProtocol.CMD_READ, 2, 0, 4096)
                            .request(0, NbdProtocol.CMD_DISC, 3, 0, 0)
                            // A client must send nothing after DISC; whatever it sends is ignored.
                            .request(0, NbdProtocol.CMD_READ, 4, 0, 4096))
                    .skipHandshake();
            GatedBackend.Held write = backend.next();
            GatedBackend.Held read = backend.next();
            assertThat(backend.heldCount()).isZero();
            assertThat(server.channel.isOpen()).isTrue();
            backend.pass(read);
            server.drain();
            assertThat(server.simpleReplyCookie(4096)).isEqualTo(2);
            assertThat(server.channel.isOpen())
                    .as("one request still in flight")
                    .isTrue();
            backend.pass(write);
            server.drain();
            assertThat(server.simpleReplyCookie(0)).isEqualTo(1);
            assertThat(server.channel.isOpen()).isFalse();
            assertThat(server.received.isReadable())
                    .as("no reply to DISC or to what followed it")
                    .isFalse();
        }
    }

    @Test
    void failedRequests_areAnsweredWithTheirErrorAndTheConnectionGoesOn() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS)) {
            server.feed(new Wire()
                            .handshake("disk", true)
                            .request(0, NbdProtocol.CMD_READ, 1, 0, 4096)
                            .request(0, NbdProtocol.CMD_FLUSH, 2, 0, 0))
                    .skipHandshake();
            GatedBackend.Held read = backend.next();
            read.request().release();
            read.completion().setFailure(new java.io.IOException("No space left on device"));
            GatedBackend.Held flush = backend.next();
            flush.request().release();
            flush.completion().setFailure(new IllegalStateException("boom"));
            server.drain();
            for (int expected : new int[] {NbdProtocol.ENOSPC, NbdProtocol.EIO}) {
                assertThat(server.received.readInt()).isEqualTo(NbdProtocol.STRUCTURED_REPLY_MAGIC);
                assertThat(server.received.readUnsignedShort()).isEqualTo(NbdProtocol.REPLY_FLAG_DONE);
                assertThat(server.received.readUnsignedShort()).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
                server.received.readLong();
                int length = server.received.readInt();
                assertThat(server.received.readInt()).isEqualTo(expected);
                server.received.skipBytes(length - 4);
            }
            assertThat(server.channel.isOpen()).isTrue();
        }
    }

    @Test
    void payloadsSlicedFromTheInput_stayIntactWhileTheInputWaitsUndecoded() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        Limits limits = Limits.builder().maxInFlightRequestsPerConnection(2).build();
        try (Embedded server = new Embedded(backend, limits)) {
            server.feed(new Wire().handshake("disk", false)).skipHandshake();
            byte[][] payloads = {filled(8192, 0x11), filled(8192, 0x22), filled(8192, 0x33)};
            Wire wire = new Wire();
            for (int cookie = 1; cookie <= 3; cookie++) {
                wire.write(0, cookie, (cookie - 1) * 8192L, payloads[cookie - 1]);
            }
            byte[] bytes = wire.toBytes();
            ByteBuf input = Unpooled.directBuffer(bytes.length, bytes.length).writeBytes(bytes);
            server.feed(input);

            // Three whole writes in one buffer: two are dispatched as slices of it, the third waits undecoded
            // in the same buffer, which must not be compacted under the slices.
            GatedBackend.Held first = backend.next();
            GatedBackend.Held second = backend.next();
            assertThat(backend.heldCount()).isZero();
            assertThat(first.request().payload().memoryAddress())
                    .as("the first payload is the input's memory after its 28-byte header")
                    .isEqualTo(input.memoryAddress() + NbdProtocol.REQUEST_HEADER_BYTES);
            assertThat(ByteBufUtil.getBytes(first.request().payload())).isEqualTo(payloads[0]);
            assertThat(ByteBufUtil.getBytes(second.request().payload())).isEqualTo(payloads[1]);

            backend.pass(first);
            backend.pass(second);
            server.drain();
            GatedBackend.Held third = backend.next();
            assertThat(ByteBufUtil.getBytes(third.request().payload())).isEqualTo(payloads[2]);
            backend.pass(third);
            server.drain();
            for (int i = 0; i < 3; i++) {
                server.simpleReplyCookie(0);
            }
            for (int i = 0; i < 3; i++) {
                assertThat(Arrays.copyOfRange(backend.memory.bytes, i * 8192, (i + 1) * 8192))
                        .isEqualTo(payloads[i]);
            }
        }
    }

    @Test
    void aPayloadSmallAgainstItsInputBuffer_isCopiedSoItDoesNotPinTheBuffer() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS)) {
            server.feed(new Wire().handshake("disk", false)).skipHandshake();
            byte[] payload = filled(1024, 0x44);
            byte[] bytes = new Wire().write(0, 1, 0, payload).toBytes();
            // The write fills less than a quarter of its 16 KiB buffer.
            ByteBuf input = Unpooled.directBuffer(16 << 10, 16 << 10).writeBytes(bytes);
            long inputStart = input.memoryAddress();
            server.feed(input);

            GatedBackend.Held write = backend.next();
            long payloadAddress = write.request().payload().memoryAddress();
            assertThat(payloadAddress < inputStart || payloadAddress >= inputStart + (16 << 10))
                    .as("the payload lives outside the input buffer")
                    .isTrue();
            assertThat(ByteBufUtil.getBytes(write.request().payload())).isEqualTo(payload);
            backend.pass(write);
            server.drain();
            server.simpleReplyCookie(0);
        }
    }

    private static byte[] filled(int length, int value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }
}
