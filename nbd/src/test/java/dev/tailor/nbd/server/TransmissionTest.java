package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Transmission-phase edge cases with a raw socket against a 1 GiB sparse file export and a read-only
 * one (proto.md, "Request types", "Error values", "Block size constraints").
 */
class TransmissionTest {

    private static final long SIZE = 1L << 30;
    private static final long MAX_LENGTH = 0xffff_ffffL;

    @TempDir
    static Path dir;

    private static NbdServer server;

    @BeforeAll
    static void start() throws Exception {
        Files.write(dir.resolve("ro.img"), new byte[8192]);
        NbdConfig config = TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.file("disk", "acme", SIZE, false, dir.resolve("disk.img")),
                ExportConfig.file("ro", "acme", 8192, true, dir.resolve("ro.img")));
        server = NbdServer.start(config);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static RawClient open(String export, boolean structured) throws Exception {
        RawClient client = RawClient.connect(server.localAddress()).handshake();
        client.go(export, structured);
        return client;
    }

    /** The error of the reply to one request without payload in the reply. */
    private static int error(RawClient client, boolean structured, long cookie) throws Exception {
        if (!structured) {
            RawClient.SimpleReply reply = client.simpleReply(0);
            assertThat(reply.cookie()).isEqualTo(cookie);
            return reply.error();
        }
        // Successes without data may come as simple replies; errors come as error chunks.
        int magic = client.in.readInt();
        if (magic == NbdProtocol.SIMPLE_REPLY_MAGIC) {
            int error = client.in.readInt();
            assertThat(client.in.readLong()).isEqualTo(cookie);
            return error;
        }
        assertThat(magic).isEqualTo(NbdProtocol.STRUCTURED_REPLY_MAGIC);
        int flags = client.in.readUnsignedShort();
        int type = client.in.readUnsignedShort();
        assertThat(client.in.readLong()).isEqualTo(cookie);
        byte[] payload = new byte[client.in.readInt()];
        client.in.readFully(payload);
        RawClient.Chunk chunk = new RawClient.Chunk(flags, type, cookie, payload);
        assertThat(chunk.done()).isTrue();
        if (type == NbdProtocol.REPLY_TYPE_NONE) {
            return 0;
        }
        assertThat(type).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
        assertThat(chunk.message()).isNotEmpty();
        return chunk.error();
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void writeThenRead_returnsTheBytes(boolean structured) throws Exception {
        byte[] data = new byte[70_000];
        new Random(1).nextBytes(data);
        long offset = SIZE - data.length;
        try (RawClient client = open("disk", structured)) {
            client.write(NbdProtocol.CMD_FLAG_FUA, 1, offset, data);
            assertThat(error(client, structured, 1)).isZero();
            client.request(0, NbdProtocol.CMD_FLUSH, 2, 0, 0);
            assertThat(error(client, structured, 2)).isZero();
            client.request(0, NbdProtocol.CMD_READ, 3, offset, data.length);
            if (structured) {
                RawClient.Chunk chunk = client.chunk();
                assertThat(chunk.type()).isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
                assertThat(chunk.done()).isTrue();
                assertThat(chunk.cookie()).isEqualTo(3);
                ByteBuffer payload = ByteBuffer.wrap(chunk.payload());
                assertThat(payload.getLong()).isEqualTo(offset);
                assertThat(Arrays.copyOfRange(chunk.payload(), 8, chunk.payload().length))
                        .isEqualTo(data);
            } else {
                assertThat(client.simpleReply(data.length).data()).isEqualTo(data);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void zeroLengthReadWriteTrimAndZeroes_succeedAtAnyOffsetUpToTheEnd(boolean structured) throws Exception {
        try (RawClient client = open("disk", structured)) {
            for (long offset : new long[] {0, 4096, SIZE}) {
                client.request(0, NbdProtocol.CMD_READ, 1, offset, 0);
                assertThat(error(client, structured, 1)).isZero();
                client.write(0, 2, offset, new byte[0]);
                assertThat(error(client, structured, 2)).isZero();
                client.request(0, NbdProtocol.CMD_TRIM, 3, offset, 0);
                assertThat(error(client, structured, 3)).isZero();
                client.request(0, NbdProtocol.CMD_WRITE_ZEROES, 4, offset, 0);
                assertThat(error(client, structured, 4)).isZero();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void pastTheEnd_writesAreNoSpaceReadsAndTrimsInvalid(boolean structured) throws Exception {
        try (RawClient client = open("disk", structured)) {
            // One byte past the end, from the last byte and from the end itself.
            client.write(0, 1, SIZE - 1, new byte[2]);
            assertThat(error(client, structured, 1)).isEqualTo(NbdProtocol.ENOSPC);
            client.write(0, 2, SIZE, new byte[1]);
            assertThat(error(client, structured, 2)).isEqualTo(NbdProtocol.ENOSPC);
            client.request(0, NbdProtocol.CMD_WRITE_ZEROES, 3, SIZE - 4096, 4097);
            assertThat(error(client, structured, 3)).isEqualTo(NbdProtocol.ENOSPC);
            client.request(0, NbdProtocol.CMD_READ, 4, SIZE - 1, 2);
            assertThat(error(client, structured, 4)).isEqualTo(NbdProtocol.EINVAL);
            client.request(0, NbdProtocol.CMD_TRIM, 5, SIZE, 1);
            assertThat(error(client, structured, 5)).isEqualTo(NbdProtocol.EINVAL);
            // An offset of 2^64 - 1 (unsigned): no overflow into a valid range.
            client.request(0, NbdProtocol.CMD_READ, 6, -1L, 1);
            assertThat(error(client, structured, 6)).isEqualTo(NbdProtocol.EINVAL);
            client.write(0, 7, -4096L, new byte[4096]);
            assertThat(error(client, structured, 7)).isEqualTo(NbdProtocol.ENOSPC);
            // The connection is still good.
            client.write(0, 8, SIZE - 1, new byte[1]);
            assertThat(error(client, structured, 8)).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void lengthOf4GiBMinus1_isInvalidForEveryCommand(boolean structured) throws Exception {
        // READ: over the 32 MiB maximum block size, EINVAL (proto.md, "Block size constraints"). TRIM and
        // WRITE_ZEROES are not bound by the maximum but reach past the 1 GiB end: EINVAL and ENOSPC.
        try (RawClient client = open("disk", structured)) {
            client.request(0, NbdProtocol.CMD_READ, 1, 0, MAX_LENGTH);
            assertThat(error(client, structured, 1)).isEqualTo(NbdProtocol.EINVAL);
            client.request(0, NbdProtocol.CMD_TRIM, 2, 0, MAX_LENGTH);
            assertThat(error(client, structured, 2)).isEqualTo(NbdProtocol.EINVAL);
            client.request(0, NbdProtocol.CMD_WRITE_ZEROES, 3, 0, MAX_LENGTH);
            assertThat(error(client, structured, 3)).isEqualTo(NbdProtocol.ENOSPC);
            // A write's header alone is answered at once; its 4 GiB payload would be skipped, not held.
            client.request(0, NbdProtocol.CMD_WRITE, 4, 0, MAX_LENGTH);
            assertThat(error(client, structured, 4)).isEqualTo(NbdProtocol.EINVAL);
        }
    }

    @Test
    void writeOverTheMaximum_isInvalidAndItsPayloadSkipped() throws Exception {
        int max = 32 << 20;
        try (RawClient client = open("disk", false)) {
            client.write(0, 1, 0, new byte[max + 1]);
            assertThat(error(client, false, 1)).isEqualTo(NbdProtocol.EINVAL);
            // The payload was skipped exactly: the next request parses.
            client.request(0, NbdProtocol.CMD_READ, 2, 0, 16);
            assertThat(client.simpleReply(16).cookie()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void unknownCommandsAndFlags_areInvalidAndTheConnectionGoesOn(boolean structured) throws Exception {
        try (RawClient client = open("disk", structured)) {
            int cookie = 1;
            for (int type : new int[] {NbdProtocol.CMD_CACHE, NbdProtocol.CMD_BLOCK_STATUS, 8, 0x00ff, 0xffff}) {
                client.request(0, type, cookie, 0, 4096);
                assertThat(error(client, structured, cookie++))
                        .as("command %d", type)
                        .isEqualTo(NbdProtocol.EINVAL);
            }
            // An undefined flag, FAST_ZERO (not offered), NO_HOLE on a write, DF without structured replies.
            client.request(1 << 9, NbdProtocol.CMD_TRIM, cookie, 0, 4096);
            assertThat(error(client, structured, cookie++)).isEqualTo(NbdProtocol.EINVAL);
            client.request(NbdProtocol.CMD_FLAG_FAST_ZERO, NbdProtocol.CMD_WRITE_ZEROES, cookie, 0, 4096);
            assertThat(error(client, structured, cookie++)).isEqualTo(NbdProtocol.EINVAL);
            client.write(NbdProtocol.CMD_FLAG_NO_HOLE, cookie, 0, new byte[512]);
            assertThat(error(client, structured, cookie++)).isEqualTo(NbdProtocol.EINVAL);
            if (!structured) {
                client.request(NbdProtocol.CMD_FLAG_DF, NbdProtocol.CMD_READ, cookie, 0, 512);
                assertThat(error(client, false, cookie++)).isEqualTo(NbdProtocol.EINVAL);
            }
            // FLUSH's offset and length are reserved and must be zero.
            client.request(0, NbdProtocol.CMD_FLUSH, cookie, 0, 1);
            assertThat(error(client, structured, cookie++)).isEqualTo(NbdProtocol.EINVAL);
            // Allowed flags: FUA everywhere, NO_HOLE on write zeroes, DF on structured reads.
            client.request(
                    NbdProtocol.CMD_FLAG_FUA | NbdProtocol.CMD_FLAG_NO_HOLE,
                    NbdProtocol.CMD_WRITE_ZEROES,
                    cookie,
                    8192,
                    8192);
            assertThat(error(client, structured, cookie++)).isZero();
            client.request(NbdProtocol.CMD_FLAG_FUA, NbdProtocol.CMD_FLUSH, cookie, 0, 0);
            assertThat(error(client, structured, cookie++)).isZero();
            client.request(structured ? NbdProtocol.CMD_FLAG_DF : 0, NbdProtocol.CMD_READ, cookie, 8192, 512);
            if (structured) {
                RawClient.Chunk chunk = client.chunk();
                assertThat(chunk.type()).isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
                assertThat(chunk.payload()).hasSize(8 + 512);
            } else {
                assertThat(client.simpleReply(512).error()).isZero();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void readOnlyExport_refusesWritesWithPermissionDenied(boolean structured) throws Exception {
        try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            RawClient.Go go = client.go("ro", structured);
            assertThat(go.transmissionFlags() & NbdProtocol.FLAG_READ_ONLY).isNotZero();
            assertThat(go.transmissionFlags()
                            & (NbdProtocol.FLAG_SEND_TRIM
                                    | NbdProtocol.FLAG_SEND_WRITE_ZEROES
                                    | NbdProtocol.FLAG_SEND_FUA))
                    .isZero();
            client.write(0, 1, 0, new byte[512]);
            assertThat(error(client, structured, 1)).isEqualTo(NbdProtocol.EPERM);
            client.request(0, NbdProtocol.CMD_TRIM, 2, 0, 512);
            assertThat(error(client, structured, 2)).isEqualTo(NbdProtocol.EPERM);
            client.request(0, NbdProtocol.CMD_WRITE_ZEROES, 3, 0, 512);
            assertThat(error(client, structured, 3)).isEqualTo(NbdProtocol.EPERM);
            client.request(0, NbdProtocol.CMD_FLUSH, 4, 0, 0);
            assertThat(error(client, structured, 4)).isZero();
        }
        assertThat(Files.readAllBytes(dir.resolve("ro.img"))).containsOnly(0);
    }

    @Test
    void requestWithBadMagic_closesThatConnectionOnly() throws Exception {
        try (RawClient healthy = open("disk", false);
                RawClient hostile = open("disk", false)) {
            hostile.out.write("GET /".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            hostile.out.flush();
            assertThat(hostile.closedByServer()).isTrue();
            healthy.request(0, NbdProtocol.CMD_READ, 9, 0, 512);
            assertThat(healthy.simpleReply(512).cookie()).isEqualTo(9);
        }
    }

    @Test
    void disc_closesTheConnectionWithoutReply() throws Exception {
        try (RawClient client = open("disk", false)) {
            client.request(0, NbdProtocol.CMD_DISC, 1, 0, 0);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void writeZeroes_zeroesTheRangeAndKeepsItsNeighbours() throws Exception {
        ExecutorService io = Executors.newSingleThreadExecutor();
        Path file = dir.resolve("zeroes.img");
        byte[] ones = new byte[3 << 20];
        Arrays.fill(ones, (byte) 1);
        Files.write(file, ones);
        try (FileBackend backend = FileBackend.open(file, null, false, io, ByteBufAllocator.DEFAULT)) {
            Promise<ByteBuf> done = ImmediateEventExecutor.INSTANCE.newPromise();
            backend.submit(
                    new BlockRequest(NbdProtocol.CMD_WRITE_ZEROES, 0, 1, 100, (2 << 20) + 5, Unpooled.EMPTY_BUFFER),
                    done);
            assertThat(done.awaitUninterruptibly(10_000)).isTrue();
            assertThat(done.isSuccess()).isTrue();
        } finally {
            io.shutdown();
        }
        byte[] after = Files.readAllBytes(file);
        assertThat(Arrays.copyOfRange(after, 0, 100)).containsOnly(1);
        assertThat(Arrays.copyOfRange(after, 100, 100 + (2 << 20) + 5)).containsOnly(0);
        assertThat(Arrays.copyOfRange(after, 100 + (2 << 20) + 5, after.length)).containsOnly(1);
        assertThat(List.of(after.length)).containsExactly(3 << 20);
    }
}
