package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fixed newstyle handshake byte by byte (proto.md, "Handshake", "Option types"). */
class HandshakeTest {

    private static NbdServer server;

    @BeforeAll
    static void start() throws Exception {
        Map<String, BlockBackend> backends = new LinkedHashMap<>();
        backends.put("disk", new MemoryBackend(1 << 20));
        backends.put("tenant-b/archive", new MemoryBackend(64 << 10));
        server = TestServers.start(Limits.DEFAULTS, backends, "tenant-b/archive");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static RawClient client() throws Exception {
        return RawClient.connect(server.localAddress());
    }

    @Test
    void greeting_offersFixedNewstyleAndNoZeroes() throws Exception {
        try (RawClient client = client()) {
            client.greeting();
            assertThat(client.handshakeFlags).isEqualTo(NbdProtocol.FLAG_FIXED_NEWSTYLE | NbdProtocol.FLAG_NO_ZEROES);
        }
    }

    @Test
    void unknownClientFlag_closesTheConnection() throws Exception {
        // proto.md, "Client flags": the server MUST drop the connection on an unknown flag.
        try (RawClient client = client()) {
            client.greeting();
            client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | 1 << 7);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void badOptionMagic_closesTheConnection() throws Exception {
        try (RawClient client = client().handshake()) {
            client.out.writeLong(0x1122334455667788L);
            client.out.writeInt(NbdProtocol.OPT_LIST);
            client.out.writeInt(0);
            client.out.flush();
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void unknownOptionBeforeGo_isUnsupportedAndTheNextOptionStillParsed() throws Exception {
        try (RawClient client = client().handshake()) {
            client.option(0x4242, "some data the server must skip".getBytes(StandardCharsets.UTF_8));
            RawClient.OptionReply reply = client.optionReply();
            assertThat(reply.option()).isEqualTo(0x4242);
            assertThat(reply.type()).isEqualTo(NbdProtocol.REP_ERR_UNSUP);
            // STARTTLS with TLS off (the default): refused by policy, as proto.md says for NOTLS mode.
            client.option(NbdProtocol.OPT_STARTTLS, new byte[0]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_POLICY);
            // One we implement, refused as proto.md says (before STRUCTURED_REPLY): the next is still parsed.
            client.option(NbdProtocol.OPT_SET_META_CONTEXT, new byte[12]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);

            RawClient.Go go = client.go("disk", false);
            assertThat(go.sizeBytes()).isEqualTo(1 << 20);
            client.request(0, NbdProtocol.CMD_READ, 7, 0, 512);
            assertThat(client.simpleReply(512).error()).isZero();
        }
    }

    @Test
    void list_repliesOneServerPerExportWithConsistentLengths() throws Exception {
        try (RawClient client = client().handshake()) {
            client.option(NbdProtocol.OPT_LIST, new byte[0]);
            List<String> names = new ArrayList<>();
            while (true) {
                RawClient.OptionReply reply = client.optionReply();
                assertThat(reply.option()).isEqualTo(NbdProtocol.OPT_LIST);
                if (reply.type() == NbdProtocol.REP_ACK) {
                    assertThat(reply.data()).isEmpty();
                    break;
                }
                assertThat(reply.type()).isEqualTo(NbdProtocol.REP_SERVER);
                ByteBuffer data = ByteBuffer.wrap(reply.data());
                int nameLength = data.getInt();
                // proto.md: the name length MUST be no larger than the reply length - 4.
                assertThat(nameLength).isLessThanOrEqualTo(reply.data().length - 4);
                byte[] name = new byte[nameLength];
                data.get(name);
                names.add(new String(name, StandardCharsets.UTF_8));
                String description = new String(reply.data(), 4 + nameLength, data.remaining(), StandardCharsets.UTF_8);
                assertThat(description).startsWith("tenant test");
            }
            assertThat(names).containsExactly("disk", "tenant-b/archive");
        }
    }

    @Test
    void listWithData_isInvalid() throws Exception {
        try (RawClient client = client().handshake()) {
            client.option(NbdProtocol.OPT_LIST, new byte[] {1});
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
        }
    }

    @Test
    void info_describesTheExportWithBlockSizesNameAndDescription() throws Exception {
        try (RawClient client = client().handshake()) {
            client.option(
                    NbdProtocol.OPT_INFO,
                    RawClient.infoRequest(
                            "tenant-b/archive",
                            NbdProtocol.INFO_NAME,
                            NbdProtocol.INFO_DESCRIPTION,
                            NbdProtocol.INFO_BLOCK_SIZE,
                            0x7777));
            Map<Integer, byte[]> infos = new LinkedHashMap<>();
            RawClient.OptionReply reply;
            while ((reply = client.optionReply()).type() == NbdProtocol.REP_INFO) {
                infos.put(((reply.data()[0] & 0xff) << 8) | (reply.data()[1] & 0xff), reply.data());
            }
            assertThat(reply.type()).isEqualTo(NbdProtocol.REP_ACK);
            assertThat(infos)
                    .containsOnlyKeys(
                            NbdProtocol.INFO_EXPORT,
                            NbdProtocol.INFO_BLOCK_SIZE,
                            NbdProtocol.INFO_NAME,
                            NbdProtocol.INFO_DESCRIPTION);
            ByteBuffer export = ByteBuffer.wrap(infos.get(NbdProtocol.INFO_EXPORT));
            assertThat(export.capacity()).isEqualTo(12);
            export.getShort();
            assertThat(export.getLong()).isEqualTo(64 << 10);
            int flags = export.getShort() & 0xffff;
            assertThat(flags & NbdProtocol.FLAG_READ_ONLY).isNotZero();
            assertThat(flags & NbdProtocol.FLAG_SEND_DF)
                    .as("DF needs structured replies")
                    .isZero();
            ByteBuffer blocks = ByteBuffer.wrap(infos.get(NbdProtocol.INFO_BLOCK_SIZE));
            assertThat(blocks.capacity()).isEqualTo(14);
            blocks.getShort();
            assertThat(new int[] {blocks.getInt(), blocks.getInt(), blocks.getInt()})
                    .containsExactly(1, 4096, 1 << 20);
            assertThat(new String(
                            infos.get(NbdProtocol.INFO_NAME),
                            2,
                            infos.get(NbdProtocol.INFO_NAME).length - 2,
                            StandardCharsets.UTF_8))
                    .isEqualTo("tenant-b/archive");

            // INFO does not enter transmission: options still work.
            client.option(NbdProtocol.OPT_INFO, RawClient.infoRequest("nope"));
            reply = client.optionReply();
            assertThat(reply.type()).isEqualTo(NbdProtocol.REP_ERR_UNKNOWN);
            assertThat(reply.text()).contains("nope").contains("disk");
        }
    }

    @Test
    void goWithEmptyName_choosesTheDefaultExport() throws Exception {
        try (RawClient client = client().handshake()) {
            RawClient.Go go = client.go("", true);
            assertThat(go.sizeBytes()).isEqualTo(1 << 20);
            assertThat(go.transmissionFlags())
                    .isEqualTo(NbdProtocol.FLAG_HAS_FLAGS
                            | NbdProtocol.FLAG_SEND_FLUSH
                            | NbdProtocol.FLAG_SEND_FUA
                            | NbdProtocol.FLAG_SEND_TRIM
                            | NbdProtocol.FLAG_SEND_WRITE_ZEROES
                            | NbdProtocol.FLAG_CAN_MULTI_CONN
                            | NbdProtocol.FLAG_SEND_DF);
        }
    }

    @Test
    void malformedInfoRequests_areInvalidAndTheSessionGoesOn() throws Exception {
        try (RawClient client = client().handshake()) {
            // Name length larger than the option data.
            client.option(NbdProtocol.OPT_GO, ByteBuffer.allocate(8).putInt(100).array());
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // Request count that does not match the bytes.
            client.option(
                    NbdProtocol.OPT_GO,
                    ByteBuffer.allocate(8).putInt(0).putShort((short) 3).array());
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // A name that is not UTF-8.
            client.option(
                    NbdProtocol.OPT_GO,
                    ByteBuffer.allocate(8)
                            .putInt(2)
                            .put((byte) 0xC3)
                            .put((byte) 0x28)
                            .putShort((short) 0)
                            .array());
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // A name with NUL.
            client.option(
                    NbdProtocol.OPT_GO,
                    ByteBuffer.allocate(8)
                            .putInt(2)
                            .put((byte) 'a')
                            .put((byte) 0)
                            .putShort((short) 0)
                            .array());
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // Too short to hold a name length and a count.
            client.option(NbdProtocol.OPT_INFO, new byte[3]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            // Structured replies take no data.
            client.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[1]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            assertThat(client.go("disk", false).sizeBytes()).isEqualTo(1 << 20);
        }
    }

    @Test
    void oversizedOption_isSkippedAndRefusedTooBig() throws Exception {
        try (RawClient client = client().handshake()) {
            int length = 1 << 20;
            client.optionHeader(NbdProtocol.OPT_GO, length);
            client.out.write(new byte[length]);
            client.out.flush();
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_TOO_BIG);
            assertThat(client.go("disk", false).sizeBytes()).isEqualTo(1 << 20);
        }
    }

    @Test
    void exportName_repliesSizeAndFlagsWithOrWithoutZeroes() throws Exception {
        try (RawClient client = client().greeting()) {
            client.clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE);
            client.option(NbdProtocol.OPT_EXPORT_NAME, "disk".getBytes(StandardCharsets.UTF_8));
            assertThat(client.in.readLong()).isEqualTo(1 << 20);
            assertThat(client.in.readUnsignedShort() & NbdProtocol.FLAG_HAS_FLAGS)
                    .isNotZero();
            client.in.readFully(new byte[124]);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 8);
            RawClient.SimpleReply reply = client.simpleReply(8);
            assertThat(reply.error()).isZero();
            assertThat(reply.cookie()).isEqualTo(1);
        }
        try (RawClient client = client().handshake()) {
            client.option(NbdProtocol.OPT_EXPORT_NAME, "disk".getBytes(StandardCharsets.UTF_8));
            assertThat(client.in.readLong()).isEqualTo(1 << 20);
            client.in.readUnsignedShort();
            // With NO_ZEROES the next bytes are already the reply to our request.
            client.request(0, NbdProtocol.CMD_READ, 2, 0, 8);
            assertThat(client.simpleReply(8).cookie()).isEqualTo(2);
        }
    }

    @Test
    void exportNameOfAnUnknownExport_closesTheConnection() throws Exception {
        // proto.md: EXPORT_NAME cannot fail with an error reply; the server MUST terminate the session.
        try (RawClient client = client().handshake()) {
            client.option(NbdProtocol.OPT_EXPORT_NAME, "missing".getBytes(StandardCharsets.UTF_8));
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void abort_isAcknowledgedThenClosed() throws Exception {
        try (RawClient client = client().handshake()) {
            client.option(NbdProtocol.OPT_ABORT, new byte[0]);
            RawClient.OptionReply reply = client.optionReply();
            assertThat(reply.type()).isEqualTo(NbdProtocol.REP_ACK);
            assertThat(reply.option()).isEqualTo(NbdProtocol.OPT_ABORT);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void clientThatNeverFinishesTheHandshake_isClosedAfterTheTimeout() throws Exception {
        Limits quick = Limits.builder().handshakeTimeoutSeconds(1.0).build();
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(HandshakeHandler.class.getName());
        java.util.logging.Level level = logger.getLevel();
        logger.setLevel(java.util.logging.Level.FINE);
        try (LogRecords log = LogRecords.of(HandshakeHandler.class);
                NbdServer impatient = TestServers.start(quick, Map.of("disk", new MemoryBackend(4096)));
                RawClient client = RawClient.connect(impatient.localAddress())) {
            client.greeting();
            assertThat(client.closedByServer()).isTrue();
            Await.until("the reason logged", () -> !log.messages().isEmpty());
            assertThat(log.messages())
                    .as("the configured seconds as written (not 1.0)")
                    .anySatisfy(m -> assertThat(m).endsWith(": hard disconnect: no transmission phase within 1 s"));
        } finally {
            logger.setLevel(level);
        }
    }
}
