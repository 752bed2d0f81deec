package dev.tailor.nbd.server;

import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.tailor.nbd.backend.BackendFeatures;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.Promise;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.quicktheories.generators.Generate;

/**
 * Hostile byte streams into one server connection (an embedded channel, so every byte is processed
 * synchronously): random bytes, random bytes after a valid handshake, and valid sessions with random
 * mutations, cut into random chunks. Whatever arrives, no exception may escape the connection's
 * handler (the embedded channel rethrows any that reaches the end of the pipeline), and no buffer may
 * leak (LeakCheck, paranoid): the connection answers or closes, nothing else.
 */
class DecoderFuzzTest {

    private static final Limits SMALL = Limits.builder()
            .maxRequestSize(new ByteSize(8192))
            .maxInFlightPerConnection(new ByteSize(16384))
            .maxInFlightRequestsPerConnection(8)
            .build();

    @Test
    void randomBytes_closeOrAnswerButNeverThrowOrLeak() {
        qt().withExamples(1500)
                .forAll(
                        Generate.byteArrays(Generate.range(0, 300), Generate.bytes((byte) -128, (byte) 127, (byte) 0)),
                        longs().all())
                .checkAssert((bytes, seed) -> feed(bytes, seed));
    }

    @Test
    void randomBytesAfterAValidHandshake_closeOrAnswerButNeverThrowOrLeak() {
        qt().withExamples(1500)
                .forAll(
                        Generate.byteArrays(Generate.range(0, 400), Generate.bytes((byte) -128, (byte) 127, (byte) 0)),
                        longs().all())
                .checkAssert((bytes, seed) -> {
                    byte[] handshake =
                            new Wire().handshake("disk", seed % 2 == 0).toBytes();
                    byte[] stream = new byte[handshake.length + bytes.length];
                    System.arraycopy(handshake, 0, stream, 0, handshake.length);
                    System.arraycopy(bytes, 0, stream, handshake.length, bytes.length);
                    feed(stream, seed);
                });
    }

    @Test
    void mutatedSessions_closeOrAnswerButNeverThrowOrLeak() {
        qt().withExamples(1000).forAll(longs().all()).checkAssert(seed -> {
            Random random = new Random(seed);
            feed(mutate(session(random), random), seed);
        });
    }

    /** Feeds {@code stream} in random chunks to a fresh connection whose backend sometimes fails. */
    private static void feed(byte[] stream, long seed) {
        Random random = new Random(seed);
        try (Embedded server = new Embedded(new FlakyBackend(64 << 10, random.nextLong()), SMALL)) {
            int at = 0;
            while (at < stream.length && server.channel.isOpen()) {
                int chunk = Math.min(stream.length - at, 1 + random.nextInt(random.nextBoolean() ? 8 : 200));
                server.feed(Unpooled.wrappedBuffer(stream, at, chunk));
                at += chunk;
            }
            server.drain();
        }
    }

    /** A valid client session: flags, a few options, GO or EXPORT_NAME, a few requests. */
    private static byte[] session(Random random) {
        Wire wire = new Wire().clientFlags(random.nextInt(4));
        for (int i = random.nextInt(4); i > 0; i--) {
            switch (random.nextInt(5)) {
                case 0 -> wire.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
                case 1 -> wire.option(NbdProtocol.OPT_LIST, new byte[0]);
                case 2 ->
                    wire.option(
                            NbdProtocol.OPT_INFO,
                            RawClient.infoRequest(
                                    random.nextBoolean() ? "disk" : "x",
                                    NbdProtocol.INFO_NAME,
                                    NbdProtocol.INFO_DESCRIPTION,
                                    NbdProtocol.INFO_BLOCK_SIZE));
                case 3 -> wire.option(random.nextInt(), new byte[random.nextInt(40)]);
                default ->
                    wire.option(NbdProtocol.OPT_SET_META_CONTEXT, "base:allocation".getBytes(StandardCharsets.UTF_8));
            }
        }
        if (random.nextInt(4) == 0) {
            wire.option(NbdProtocol.OPT_EXPORT_NAME, Wire.utf8("disk"));
        } else {
            wire.option(NbdProtocol.OPT_GO, RawClient.infoRequest("disk", NbdProtocol.INFO_BLOCK_SIZE));
        }
        int[] commands = {
            NbdProtocol.CMD_READ,
            NbdProtocol.CMD_WRITE,
            NbdProtocol.CMD_FLUSH,
            NbdProtocol.CMD_TRIM,
            NbdProtocol.CMD_WRITE_ZEROES,
            NbdProtocol.CMD_CACHE,
            NbdProtocol.CMD_DISC,
            0x77
        };
        for (int i = random.nextInt(12); i > 0; i--) {
            int command = commands[random.nextInt(commands.length)];
            int flags = random.nextInt(8) == 0 ? random.nextInt(1 << 16) : random.nextInt(2);
            long offset = random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(64 << 10);
            int length = random.nextInt(4) == 0 ? random.nextInt() : random.nextInt(10_000);
            if (command == NbdProtocol.CMD_WRITE && length >= 0 && length <= 10_000) {
                byte[] payload = new byte[length];
                random.nextBytes(payload);
                wire.write(flags, i, offset, payload);
            } else {
                wire.request(flags, command, i, offset, Integer.toUnsignedLong(length));
            }
        }
        return wire.toBytes();
    }

    /** One to four random edits: flip a byte, overwrite a 32-bit field, cut, duplicate, insert garbage. */
    private static byte[] mutate(byte[] stream, Random random) {
        ByteBuf out = Unpooled.wrappedBuffer(stream.clone());
        try {
            for (int edits = 1 + random.nextInt(4); edits > 0 && out.readableBytes() > 0; edits--) {
                int at = random.nextInt(out.readableBytes());
                switch (random.nextInt(5)) {
                    case 0 -> out.setByte(at, out.getByte(at) ^ (1 << random.nextInt(8)));
                    case 1 -> {
                        if (at + 4 <= out.readableBytes()) {
                            int[] nasty = {0, -1, 0x7fff_ffff, 0x8000_0000, random.nextInt()};
                            out.setInt(at, nasty[random.nextInt(nasty.length)]);
                        }
                    }
                    case 2 -> out = Unpooled.wrappedBuffer(ByteBufCopy.slice(out, 0, at));
                    case 3 ->
                        out = Unpooled.wrappedBuffer(ByteBufCopy.concat(
                                out, ByteBufCopy.slice(out, at, Math.min(64, out.readableBytes() - at))));
                    default -> {
                        byte[] garbage = new byte[1 + random.nextInt(32)];
                        random.nextBytes(garbage);
                        out = Unpooled.wrappedBuffer(ByteBufCopy.insert(out, at, garbage));
                    }
                }
            }
            byte[] bytes = new byte[out.readableBytes()];
            out.getBytes(out.readerIndex(), bytes);
            return bytes;
        } finally {
            out.release();
        }
    }

    /** Byte array edits on heap buffers (releases nothing: wrapped arrays need no release). */
    private static final class ByteBufCopy {
        static byte[] slice(ByteBuf buf, int from, int length) {
            byte[] bytes = new byte[length];
            buf.getBytes(buf.readerIndex() + from, bytes);
            return bytes;
        }

        static byte[] concat(ByteBuf buf, byte[] tail) {
            byte[] all = new byte[buf.readableBytes() + tail.length];
            buf.getBytes(buf.readerIndex(), all, 0, buf.readableBytes());
            System.arraycopy(tail, 0, all, buf.readableBytes(), tail.length);
            return all;
        }

        static byte[] insert(ByteBuf buf, int at, byte[] middle) {
            byte[] all = new byte[buf.readableBytes() + middle.length];
            buf.getBytes(buf.readerIndex(), all, 0, at);
            System.arraycopy(middle, 0, all, at, middle.length);
            buf.getBytes(buf.readerIndex() + at, all, at + middle.length, buf.readableBytes() - at);
            return all;
        }
    }

    /** A memory backend that fails some requests, with an NBD error or an unexpected exception. */
    private static final class FlakyBackend implements BlockBackend {
        private final MemoryBackend memory;
        private final Random random;

        FlakyBackend(int sizeBytes, long seed) {
            this.memory = new MemoryBackend(
                    sizeBytes, new BackendFeatures(false, true, true, true, true, true), new BlockSizes(1, 4096, 8192));
            this.random = new Random(seed);
        }

        @Override
        public long sizeBytes() {
            return memory.sizeBytes();
        }

        @Override
        public BackendFeatures features() {
            return memory.features();
        }

        @Override
        public BlockSizes blockSizes() {
            return memory.blockSizes();
        }

        @Override
        public void submit(BlockRequest request, Promise<ByteBuf> completion) {
            if (!request.claim()) {
                return;
            }
            switch (random.nextInt(6)) {
                case 0 -> {
                    request.release();
                    completion.setFailure(new NbdException(NbdProtocol.EIO, "flaky"));
                }
                case 1 -> {
                    request.release();
                    completion.setFailure(new IllegalStateException("bug in a backend"));
                }
                default -> memory.submit(request, completion);
            }
        }

        @Override
        public void close() {}
    }
}
