package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code NBD_CMD_BLOCK_STATUS} with the {@code base:allocation} context (proto.md, "Metadata querying",
 * "NBD_CMD_BLOCK_STATUS"): the negotiation and malformed requests with a raw client, the holes of a
 * sparse file as {@code nbdinfo --map} and {@code qemu-img map} see them, {@code nbdcopy} of a sparse
 * disk, and TRIM and WRITE_ZEROES punching holes.
 */
class BlockStatusTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int HOLE_ZERO = NbdProtocol.STATE_HOLE | NbdProtocol.STATE_ZERO;

    @TempDir
    static Path dir;

    private static NbdServer server;
    private static Path sparse;

    /** A 64 MiB sparse file with 1 MiB of random data at 8 MiB. */
    @BeforeAll
    static void start() throws Exception {
        sparse = dir.resolve("sparse.img");
        byte[] data = new byte[1 << 20];
        new Random(3).nextBytes(data);
        try (RandomAccessFile file = new RandomAccessFile(sparse.toFile(), "rw")) {
            file.setLength(64L << 20);
            file.seek(8L << 20);
            file.write(data);
        }
        server = NbdServer.start(TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.builder()
                        .name("sparse")
                        .tenant("acme")
                        .readOnly(true)
                        .file(sparse)
                        .build(),
                ExportConfig.file("scratch", "acme", 16L << 20, false, dir.resolve("scratch.img"))));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static boolean holesFound() {
        return server.exports().stream()
                .map(Export::backend)
                .allMatch(b -> b instanceof FileBackend f && f.findsHoles());
    }

    private static RawClient structuredWithContext(String export) throws Exception {
        RawClient client = RawClient.connect(server.localAddress()).handshake();
        client.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
        assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
        client.option(NbdProtocol.OPT_SET_META_CONTEXT, metaContextData(export, NbdProtocol.BASE_ALLOCATION));
        RawClient.OptionReply context = client.optionReply();
        assertThat(context.type()).isEqualTo(NbdProtocol.REP_META_CONTEXT);
        assertThat(ByteBuffer.wrap(context.data()).getInt()).isEqualTo(NbdProtocol.BASE_ALLOCATION_ID);
        assertThat(new String(context.data(), 4, context.data().length - 4, StandardCharsets.UTF_8))
                .isEqualTo(NbdProtocol.BASE_ALLOCATION);
        assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
        client.option(NbdProtocol.OPT_GO, RawClient.infoRequest(export));
        while (client.optionReply().type() != NbdProtocol.REP_ACK) {
            // INFO replies
        }
        return client;
    }

    static byte[] metaContextData(String export, String... queries) {
        byte[] name = export.getBytes(StandardCharsets.UTF_8);
        int length = 8 + name.length;
        for (String query : queries) {
            length += 4 + query.getBytes(StandardCharsets.UTF_8).length;
        }
        ByteBuffer data =
                ByteBuffer.allocate(length).putInt(name.length).put(name).putInt(queries.length);
        for (String query : queries) {
            byte[] bytes = query.getBytes(StandardCharsets.UTF_8);
            data.putInt(bytes.length).put(bytes);
        }
        return data.array();
    }

    /** The descriptors of a BLOCK_STATUS reply chunk, as {length, flags} pairs. */
    private static List<long[]> extents(RawClient.Chunk chunk) {
        assertThat(chunk.type())
                .as("chunk type (error %s)", chunk.type() == NbdProtocol.REPLY_TYPE_ERROR ? chunk.message() : "")
                .isEqualTo(NbdProtocol.REPLY_TYPE_BLOCK_STATUS);
        assertThat(chunk.done()).isTrue();
        ByteBuffer payload = ByteBuffer.wrap(chunk.payload());
        assertThat(payload.getInt()).isEqualTo(NbdProtocol.BASE_ALLOCATION_ID);
        List<long[]> extents = new ArrayList<>();
        while (payload.hasRemaining()) {
            extents.add(new long[] {Integer.toUnsignedLong(payload.getInt()), payload.getInt()});
        }
        return extents;
    }

    @Test
    void sparseFile_reportsItsHoleDataHole() throws Exception {
        Assumptions.assumeTrue(holesFound(), "the JDK or file system here cannot find holes (SEEK_HOLE)");
        try (RawClient client = structuredWithContext("sparse")) {
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 1, 0, 64L << 20);
            List<long[]> extents = extents(client.chunk());
            assertThat(extents)
                    .extracting(e -> e[0] + "/" + e[1])
                    .containsExactly((8L << 20) + "/" + HOLE_ZERO, (1L << 20) + "/0", (55L << 20) + "/" + HOLE_ZERO);
            // REQ_ONE: one descriptor, within the request.
            client.request(NbdProtocol.CMD_FLAG_REQ_ONE, NbdProtocol.CMD_BLOCK_STATUS, 2, 8L << 20, 4096);
            assertThat(extents(client.chunk()))
                    .extracting(e -> e[0] + "/" + e[1])
                    .containsExactly("4096/0");
            // A range inside the hole after the data, up to the end.
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 3, 60L << 20, 4L << 20);
            assertThat(extents(client.chunk()))
                    .extracting(e -> e[0] + "/" + e[1])
                    .containsExactly((4L << 20) + "/" + HOLE_ZERO);
        }
    }

    @Test
    void malformedBlockStatus_isEinvalAndTheConnectionStaysUsable() throws Exception {
        // No metadata context negotiated.
        try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("sparse", true);
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 1, 0, 4096);
            RawClient.Chunk error = client.chunk();
            assertThat(error.type()).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
            assertThat(error.error()).isEqualTo(NbdProtocol.EINVAL);
            assertThat(error.message()).contains("without a metadata context");
        }
        try (RawClient client = structuredWithContext("sparse")) {
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 1, 0, 0);
            RawClient.Chunk zero = client.chunk();
            assertThat(zero.error()).isEqualTo(NbdProtocol.EINVAL);
            assertThat(zero.message()).contains("length 0");
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 2, (64L << 20) - 512, 1024);
            RawClient.Chunk beyond = client.chunk();
            assertThat(beyond.error()).isEqualTo(NbdProtocol.EINVAL);
            assertThat(beyond.message()).contains("ends past the end");
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 3, -1L, 1);
            assertThat(client.chunk().error())
                    .as("offset 2^64 - 1 does not wrap")
                    .isEqualTo(NbdProtocol.EINVAL);
            client.request(NbdProtocol.CMD_FLAG_FUA, NbdProtocol.CMD_BLOCK_STATUS, 4, 0, 4096);
            assertThat(client.chunk().error())
                    .as("FUA is not a BLOCK_STATUS flag")
                    .isEqualTo(NbdProtocol.EINVAL);
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 5, 0, 4096);
            assertThat(client.chunk().type()).isEqualTo(NbdProtocol.REPLY_TYPE_BLOCK_STATUS);
        }
    }

    @Test
    void metaContextNegotiation_followsProtoMd() throws Exception {
        try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            // SET before structured replies: invalid.
            client.option(NbdProtocol.OPT_SET_META_CONTEXT, metaContextData("sparse", NbdProtocol.BASE_ALLOCATION));
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // LIST is fine without them: no query lists every context, "base:" the namespace's.
            for (String[] queries : new String[][] {{}, {"base:"}, {NbdProtocol.BASE_ALLOCATION}}) {
                client.option(NbdProtocol.OPT_LIST_META_CONTEXT, metaContextData("sparse", queries));
                RawClient.OptionReply listed = client.optionReply();
                assertThat(listed.type()).isEqualTo(NbdProtocol.REP_META_CONTEXT);
                assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            }
            client.option(NbdProtocol.OPT_LIST_META_CONTEXT, metaContextData("sparse", "qemu:dirty-bitmap:x"));
            assertThat(client.optionReply().type()).as("no match: just the ACK").isEqualTo(NbdProtocol.REP_ACK);
            client.option(NbdProtocol.OPT_LIST_META_CONTEXT, metaContextData("nope"));
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_UNKNOWN);
            client.option(NbdProtocol.OPT_LIST_META_CONTEXT, new byte[] {0, 0, 0, 9, 0, 0, 0, 0});
            assertThat(client.optionReply().type())
                    .as("a name longer than the data")
                    .isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // Contexts selected for one export, then GO to another: none selected there.
            client.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            client.option(NbdProtocol.OPT_SET_META_CONTEXT, metaContextData("sparse", NbdProtocol.BASE_ALLOCATION));
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_META_CONTEXT);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            client.go("scratch", false);
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 1, 0, 4096);
            assertThat(client.chunk().error()).isEqualTo(NbdProtocol.EINVAL);
        }
    }

    @Test
    void trimAndWriteZeroes_punchHoles() throws Exception {
        Assumptions.assumeTrue(holesFound(), "the JDK or file system here cannot find holes (SEEK_HOLE)");
        byte[] data = new byte[1 << 20];
        new Random(5).nextBytes(data);
        try (RawClient client = structuredWithContext("scratch")) {
            client.write(0, 1, 0, data);
            client.write(0, 2, 1 << 20, data);
            assertThat(client.simpleReply(0).error()).isZero();
            assertThat(client.simpleReply(0).error()).isZero();
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 3, 0, 2 << 20);
            assertThat(extents(client.chunk()))
                    .extracting(e -> e[0] + "/" + e[1])
                    .containsExactly((2L << 20) + "/0");
            client.request(0, NbdProtocol.CMD_TRIM, 4, 0, 1 << 20);
            assertThat(client.simpleReply(0).error()).isZero();
            client.request(0, NbdProtocol.CMD_WRITE_ZEROES, 5, 1 << 20, 512 << 10);
            assertThat(client.simpleReply(0).error()).isZero();
            client.request(NbdProtocol.CMD_FLAG_NO_HOLE, NbdProtocol.CMD_WRITE_ZEROES, 6, (3 << 19), 256 << 10);
            assertThat(client.simpleReply(0).error()).isZero();
            client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 7, 0, 2 << 20);
            assertThat(extents(client.chunk()))
                    .extracting(e -> e[0] + "/" + e[1])
                    .containsExactly((1536L << 10) + "/" + HOLE_ZERO, (512L << 10) + "/0");
            client.request(0, NbdProtocol.CMD_READ, 8, 0, 2 << 20);
            RawClient.Chunk read = client.chunk();
            byte[] expected = new byte[2 << 20];
            System.arraycopy(data, 1 << 19, expected, 3 << 19, 1 << 19);
            System.arraycopy(new byte[256 << 10], 0, expected, 3 << 19, 256 << 10);
            assertThat(java.util.Arrays.copyOfRange(read.payload(), 8, read.payload().length))
                    .isEqualTo(expected);
        }
    }

    @Test
    void backendWithoutHoles_reportsTheWholeRangeAsData() throws Exception {
        try (NbdServer memory = TestServers.start(Limits.DEFAULTS, Map.of("disk", new MemoryBackend(1 << 20)))) {
            try (RawClient client = RawClient.connect(memory.localAddress()).handshake()) {
                client.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
                client.optionReply();
                client.option(NbdProtocol.OPT_SET_META_CONTEXT, metaContextData("disk", NbdProtocol.BASE_ALLOCATION));
                assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_META_CONTEXT);
                client.optionReply();
                client.go("disk", false);
                client.request(0, NbdProtocol.CMD_BLOCK_STATUS, 1, 4096, 65536);
                assertThat(extents(client.chunk()))
                        .extracting(e -> e[0] + "/" + e[1])
                        .containsExactly("65536/0");
            }
        }
    }

    @Test
    void nbdinfoMap_andQemuImgMap_showTheHoles() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        String qemuImg = Programs.require("qemu-img");
        Assumptions.assumeTrue(holesFound(), "the JDK or file system here cannot find holes (SEEK_HOLE)");
        String uri = "nbd://127.0.0.1:" + server.localAddress().getPort() + "/sparse";
        String map = Programs.run(TIMEOUT, nbdinfo, "--map", uri).ok().stdout();
        List<String> lines =
                map.lines().map(l -> l.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines)
                .containsExactly("0 8388608 3 hole,zero", "8388608 1048576 0 data", "9437184 57671680 3 hole,zero");
        String qemuMap = Programs.run(TIMEOUT, qemuImg, "map", "--output=json", "-f", "raw", uri)
                .ok()
                .stdout();
        assertThat(qemuMap.replace(" ", ""))
                .contains("\"start\":8388608,\"length\":1048576,\"depth\":0,"
                        + "\"present\":true,\"zero\":false,\"data\":true");
    }

    @Test
    void nbdcopy_ofASparse1GiBDiskWith4MiBOfData_readsAbout4MiBAndCopiesItExactly() throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        Assumptions.assumeTrue(holesFound(), "the JDK or file system here cannot find holes (SEEK_HOLE)");
        Path big = dir.resolve("big.img");
        byte[] data = new byte[1 << 20];
        Random random = new Random(9);
        try (RandomAccessFile file = new RandomAccessFile(big.toFile(), "rw")) {
            file.setLength(1L << 30);
            for (long at : new long[] {0, 100L << 20, 512L << 20, (1L << 30) - (1 << 20)}) {
                random.nextBytes(data);
                file.seek(at);
                file.write(data);
            }
        }
        try (NbdServer bigServer = NbdServer.start(TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.builder()
                        .name("big")
                        .tenant("acme")
                        .readOnly(true)
                        .file(big)
                        .build()))) {
            Path copy = dir.resolve("big-copy.img");
            Programs.run(
                            TIMEOUT,
                            nbdcopy,
                            "nbd://127.0.0.1:" + bigServer.localAddress().getPort() + "/big",
                            copy.toString())
                    .ok();
            long read = bigServer.exports().get(0).bytesRead();
            // The 4 MiB of data, not the 1 GiB: BLOCK_STATUS told nbdcopy where the holes are.
            assertThat(read).isBetween(4L << 20, 8L << 20);
            assertThat(Files.mismatch(big, copy)).isEqualTo(-1L);
        }
    }

    @Test
    void nbdcopy_ofASparseDisk_isIdentical() throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        Path copy = dir.resolve("copy.img");
        Programs.run(
                        TIMEOUT,
                        nbdcopy,
                        "nbd://127.0.0.1:" + server.localAddress().getPort() + "/sparse",
                        copy.toString())
                .ok();
        assertThat(Files.mismatch(sparse, copy)).isEqualTo(-1L);
    }
}
