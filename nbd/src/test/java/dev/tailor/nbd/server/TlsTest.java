package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.TlsSettings;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.TestCertificates;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS through {@code NBD_OPT_STARTTLS} (proto.md, "TLS support"): real clients over {@code nbds://}
 * (nbdinfo, nbdcopy) and qemu-img with {@code tls-creds-x509}, client certificates checked against the
 * CA, and with a raw client the attacks STARTTLS protocols are known for: options refused before TLS
 * when it is required, plain-text options forgotten at the upgrade, and plain-text bytes sent behind
 * STARTTLS never read as TLS. The test makes its own CA and certificates.
 */
class TlsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SIZE_BYTES = 8 << 20;

    @TempDir
    static Path dir;

    private static TestCertificates ca;
    /** The server's folder: ca-cert.pem, server-cert.pem, server-key.pem. */
    private static Path serverCertificates;
    /** A client's folder with the CA and a client certificate it signed. */
    private static Path clientCertificates;
    /** A client's folder with the CA only. */
    private static Path caOnly;

    private static NbdServer required;
    private static NbdServer optional;
    private static NbdServer verifying;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCertificates.newCa("tailor test CA");
        serverCertificates = ca.writeServer(ca.writeCa(dir.resolve("server")));
        clientCertificates = ca.writeClient(ca.writeCa(dir.resolve("client")), "client");
        caOnly = ca.writeCa(dir.resolve("ca-only"));
        required = start("require", false, null);
        optional = start("on", false, null);
        verifying = start("require", true, dir.resolve("nbd.sock"));
    }

    /** A server with one 8 MiB file export, TLS in {@code mode}, on TCP and, if given, a Unix socket. */
    private static NbdServer start(String mode, boolean verifyPeer, Path socket) throws Exception {
        NbdConfig config = TestServers.config(
                        Limits.DEFAULTS,
                        ExportConfig.file("disk", "acme", SIZE_BYTES, false, dir.resolve(mode + verifyPeer + ".img")))
                .toBuilder()
                .tls(new TlsSettings(mode, serverCertificates, verifyPeer))
                .build();
        return NbdServer.start(socket == null ? config : config.withUnix(socket.toString(), true));
    }

    @AfterAll
    static void stop() {
        for (NbdServer server : new NbdServer[] {required, optional, verifying}) {
            if (server != null) {
                server.close();
            }
        }
    }

    private static String nbds(NbdServer server, Path certificates) {
        return "nbds://127.0.0.1:" + server.localAddress().getPort() + "/disk?tls-certificates=" + certificates;
    }

    private static RawClient startTls(RawClient client) throws Exception {
        client.option(NbdProtocol.OPT_STARTTLS, new byte[0]);
        RawClient.OptionReply reply = client.optionReply();
        assertThat(reply.option()).isEqualTo(NbdProtocol.OPT_STARTTLS);
        assertThat(reply.type()).as("STARTTLS reply: %s", reply.text()).isEqualTo(NbdProtocol.REP_ACK);
        return client.startTls(ca.clientContext());
    }

    private static byte[] metaContextData(String export, String... queries) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream data = new DataOutputStream(bytes)) {
            byte[] name = export.getBytes(StandardCharsets.UTF_8);
            data.writeInt(name.length);
            data.write(name);
            data.writeInt(queries.length);
            for (String query : queries) {
                byte[] q = query.getBytes(StandardCharsets.UTF_8);
                data.writeInt(q.length);
                data.write(q);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    // ---------------------------------------------------------------- real clients

    @Test
    void nbdinfo_overNbds_connectsWithTlsAndSeesTheExport() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        JsonNode info = JSON.readTree(Programs.run(TIMEOUT, nbdinfo, "--json", nbds(required, caOnly))
                .ok()
                .stdout());
        assertThat(info.get("TLS").asBoolean()).as("TLS negotiated: %s", info).isTrue();
        assertThat(info.get("exports").get(0).get("export-size").asLong()).isEqualTo(SIZE_BYTES);
        // Without TLS the client is refused: every option gets NBD_REP_ERR_TLS_REQD.
        Programs.Result plain = Programs.run(
                TIMEOUT,
                nbdinfo,
                "--size",
                "nbd://127.0.0.1:" + required.localAddress().getPort() + "/disk");
        assertThat(plain.exitCode()).isNotZero();
        assertThat(plain.stderr()).containsIgnoringCase("tls");
        // With TLS on (not required), both work.
        assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", nbds(optional, caOnly))
                        .ok()
                        .stdout()
                        .strip())
                .isEqualTo(String.valueOf(SIZE_BYTES));
        assertThat(Programs.run(
                                TIMEOUT,
                                nbdinfo,
                                "--size",
                                "nbd://127.0.0.1:" + optional.localAddress().getPort() + "/disk")
                        .ok()
                        .stdout()
                        .strip())
                .isEqualTo(String.valueOf(SIZE_BYTES));
    }

    @Test
    void nbdinfo_withAnotherCa_refusesTheServer() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        Path otherCa = TestCertificates.newCa("another CA").writeCa(dir.resolve("other-ca"));
        Programs.Result result = Programs.run(TIMEOUT, nbdinfo, "--size", nbds(required, otherCa));
        assertThat(result.exitCode())
                .as("a server certificate from an unknown CA is not trusted")
                .isNotZero();
    }

    @Test
    void nbdcopy_overNbds_copiesInAndOutExactly() throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        byte[] data = new byte[SIZE_BYTES];
        new Random(11).nextBytes(data);
        Path source = Files.write(dir.resolve("nbdcopy-source.img"), data);
        Path back = dir.resolve("nbdcopy-back.img");
        Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), nbds(optional, caOnly))
                .ok();
        Programs.run(TIMEOUT, nbdcopy, nbds(optional, caOnly), back.toString()).ok();
        assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
    }

    @Test
    void qemuImg_withTlsCredsX509_copiesInAndOutExactly() throws Exception {
        String qemuImg = Programs.require("qemu-img");
        byte[] data = new byte[SIZE_BYTES];
        new Random(12).nextBytes(data);
        Path source = Files.write(dir.resolve("qemu-source.img"), data);
        Path back = dir.resolve("qemu-back.img");
        int port = required.localAddress().getPort();
        String creds = "tls-creds-x509,id=tls0,endpoint=client,dir=" + caOnly;
        String image = "driver=nbd,host=127.0.0.1,port=" + port + ",export=disk,tls-creds=tls0";
        Programs.run(
                        TIMEOUT,
                        qemuImg,
                        "convert",
                        "-n",
                        "--object",
                        creds,
                        "-f",
                        "raw",
                        source.toString(),
                        "--target-image-opts",
                        image)
                .ok();
        Programs.run(
                        TIMEOUT,
                        qemuImg,
                        "convert",
                        "--object",
                        creds,
                        "--image-opts",
                        image,
                        "-O",
                        "raw",
                        back.toString())
                .ok();
        assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
    }

    @Test
    void verifyPeer_servesClientsWithACertificateOfTheCaOnly() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        String qemuImg = Programs.require("qemu-img");
        assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", nbds(verifying, clientCertificates))
                        .ok()
                        .stdout()
                        .strip())
                .isEqualTo(String.valueOf(SIZE_BYTES));
        long failedBefore = verifying.ioMetrics().tlsHandshakes(false);
        Programs.Result noCertificate = Programs.run(TIMEOUT, nbdinfo, "--size", nbds(verifying, caOnly));
        assertThat(noCertificate.exitCode())
                .as("a client without a certificate is refused")
                .isNotZero();
        assertThat(verifying.ioMetrics().tlsHandshakes(false))
                .as("counted as a failed handshake")
                .isGreaterThan(failedBefore);
        TestCertificates otherCa = TestCertificates.newCa("another CA");
        Path foreign = otherCa.writeClient(ca.writeCa(dir.resolve("foreign-client")), "intruder");
        Programs.Result foreignCertificate = Programs.run(TIMEOUT, nbdinfo, "--size", nbds(verifying, foreign));
        assertThat(foreignCertificate.exitCode())
                .as("a client certificate of another CA is refused")
                .isNotZero();

        String info = Programs.run(
                        TIMEOUT,
                        qemuImg,
                        "info",
                        "--output=json",
                        "--object",
                        "tls-creds-x509,id=tls0,endpoint=client,dir=" + clientCertificates,
                        "--image-opts",
                        "driver=nbd,host=127.0.0.1,port="
                                + verifying.localAddress().getPort() + ",export=disk,tls-creds=tls0")
                .ok()
                .stdout();
        assertThat(JSON.readTree(info).get("virtual-size").asLong()).isEqualTo(SIZE_BYTES);
    }

    @Test
    void overAUnixSocket_nbdinfoAndQemuImgUseTls() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        String qemuImg = Programs.require("qemu-img");
        Path socket = verifying.unixSocket();
        assertThat(Programs.run(
                                TIMEOUT,
                                nbdinfo,
                                "--size",
                                "nbds+unix:///disk?socket=" + socket + "&tls-certificates=" + clientCertificates)
                        .ok()
                        .stdout()
                        .strip())
                .isEqualTo(String.valueOf(SIZE_BYTES));
        // qemu checks the server's certificate against a host name, which a socket has not: tls-hostname.
        String info = Programs.run(
                        TIMEOUT,
                        qemuImg,
                        "info",
                        "--output=json",
                        "--object",
                        "tls-creds-x509,id=tls0,endpoint=client,dir=" + clientCertificates,
                        "--image-opts",
                        "driver=nbd,server.type=unix,server.path=" + socket + ",export=disk,tls-creds=tls0,"
                                + "tls-hostname=localhost")
                .ok()
                .stdout();
        assertThat(JSON.readTree(info).get("virtual-size").asLong()).isEqualTo(SIZE_BYTES);
    }

    // ---------------------------------------------------------------- the protocol, byte by byte

    @Test
    void require_refusesEveryOptionButStartTlsAndAbortWithTlsReqd_thenServesOverTls() throws Exception {
        try (LogRecords log = LogRecords.of(HandshakeHandler.class);
                RawClient client = RawClient.connect(required.localAddress()).handshake()) {
            int[] options = {
                NbdProtocol.OPT_LIST,
                NbdProtocol.OPT_INFO,
                NbdProtocol.OPT_GO,
                NbdProtocol.OPT_STRUCTURED_REPLY,
                NbdProtocol.OPT_LIST_META_CONTEXT,
                NbdProtocol.OPT_SET_META_CONTEXT,
                0x4242
            };
            for (int option : options) {
                client.option(
                        option,
                        option == NbdProtocol.OPT_GO || option == NbdProtocol.OPT_INFO
                                ? RawClient.infoRequest("disk")
                                : new byte[0]);
                RawClient.OptionReply reply = client.optionReply();
                assertThat(reply.option()).isEqualTo(option);
                assertThat(reply.type())
                        .as("%s before STARTTLS", NbdProtocol.optionName(option))
                        .isEqualTo(NbdProtocol.REP_ERR_TLS_REQD);
            }
            // Data over the buffering limit is skipped unread, and refused the same way.
            client.option(NbdProtocol.OPT_LIST, new byte[HandshakeHandler.MAX_OPTION_DATA_BYTES + 1]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_TLS_REQD);
            // The operator sees it once per connection, naming the first option refused (libnbd's user
            // sees only "operation not supported").
            assertThat(log.messages())
                    .filteredOn(m -> m.contains("before STARTTLS"))
                    .singleElement()
                    .asString()
                    .startsWith("INFO")
                    .contains("NBD_OPT_LIST refused before STARTTLS: TLS is required");

            try (RawClient tls = startTls(client)) {
                RawClient.Go go = tls.go("disk", true);
                assertThat(go.sizeBytes()).isEqualTo(SIZE_BYTES);
                tls.write(0, 1, 4096, "over TLS".getBytes(StandardCharsets.UTF_8));
                assertThat(tls.simpleReply(0).error()).isZero();
                tls.request(0, NbdProtocol.CMD_READ, 2, 4096, 8);
                RawClient.Chunk chunk = tls.chunk();
                assertThat(chunk.type()).isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
                assertThat(new String(chunk.payload(), 8, 8, StandardCharsets.UTF_8))
                        .isEqualTo("over TLS");
            }
        }
    }

    @Test
    void require_exportNameBeforeStartTls_endsTheSession() throws Exception {
        // proto.md, FORCEDTLS: EXPORT_NAME cannot be refused, so the server terminates the session.
        try (RawClient client = RawClient.connect(required.localAddress()).handshake()) {
            client.option(NbdProtocol.OPT_EXPORT_NAME, "disk".getBytes(StandardCharsets.UTF_8));
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void require_abortBeforeStartTls_isAcknowledged() throws Exception {
        try (RawClient client = RawClient.connect(required.localAddress()).handshake()) {
            client.option(NbdProtocol.OPT_ABORT, new byte[0]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void require_clientWithoutFixedNewstyle_isClosed() throws Exception {
        // Such a client cannot send STARTTLS (proto.md), so it could never be served.
        try (RawClient client = RawClient.connect(required.localAddress())) {
            client.greeting();
            client.clientFlags(NbdProtocol.FLAG_C_NO_ZEROES);
            assertThat(client.closedByServer()).isTrue();
        }
    }

    @Test
    void optionsNegotiatedBeforeStartTls_areForgotten() throws Exception {
        // A man in the middle can inject plain-text options before STARTTLS; none may shape the TLS session.
        try (RawClient client = RawClient.connect(optional.localAddress()).handshake()) {
            client.option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            client.option(NbdProtocol.OPT_SET_META_CONTEXT, metaContextData("disk", NbdProtocol.BASE_ALLOCATION));
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_META_CONTEXT);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);

            try (RawClient tls = startTls(client)) {
                RawClient.Go go = tls.go("disk", false);
                assertThat(go.transmissionFlags() & NbdProtocol.FLAG_SEND_DF)
                        .as("DF is offered only with structured replies")
                        .isZero();
                tls.request(0, NbdProtocol.CMD_READ, 1, 0, 512);
                RawClient.SimpleReply read = tls.simpleReply(512);
                assertThat(read.error())
                        .as("a simple reply: structured replies were forgotten")
                        .isZero();
                tls.request(0, NbdProtocol.CMD_BLOCK_STATUS, 2, 0, 512);
                assertThat(tls.simpleReply(0).error())
                        .as("no metadata context after the upgrade")
                        .isEqualTo(NbdProtocol.EINVAL);
            }
        }
    }

    @Test
    void plainTextSentBehindStartTls_isDiscardedNeverReadAsTlsOrOptions() throws Exception {
        long discardedBefore = optional.ioMetrics().tlsDiscardedBytes();
        long handshakesBefore = optional.ioMetrics().tlsHandshakes(true);
        try (RawClient client = RawClient.connect(optional.localAddress()).handshake()) {
            // STARTTLS and, in the same packet, an injected STRUCTURED_REPLY: a client waits for the reply.
            ByteBuffer packet = ByteBuffer.allocate(2 * NbdProtocol.OPTION_HEADER_BYTES);
            packet.putLong(NbdProtocol.IHAVEOPT)
                    .putInt(NbdProtocol.OPT_STARTTLS)
                    .putInt(0);
            packet.putLong(NbdProtocol.IHAVEOPT)
                    .putInt(NbdProtocol.OPT_STRUCTURED_REPLY)
                    .putInt(0);
            client.out.write(packet.array());
            client.out.flush();
            RawClient.OptionReply reply = client.optionReply();
            assertThat(reply.option()).isEqualTo(NbdProtocol.OPT_STARTTLS);
            assertThat(reply.type()).isEqualTo(NbdProtocol.REP_ACK);
            // Had the injected bytes been fed to TLS, the handshake would fail; had they been parsed as an
            // option, its reply would come next, in plain text or inside TLS.
            try (RawClient tls = client.startTls(ca.clientContext())) {
                RawClient.Go go = tls.go("disk", false);
                assertThat(go.transmissionFlags() & NbdProtocol.FLAG_SEND_DF).isZero();
                tls.request(0, NbdProtocol.CMD_READ, 1, 0, 512);
                assertThat(tls.simpleReply(512).error()).isZero();
            }
        }
        // Counted on /metrics: an operator can see clients (or someone between them) doing this.
        assertThat(optional.ioMetrics().tlsDiscardedBytes() - discardedBefore)
                .isEqualTo(NbdProtocol.OPTION_HEADER_BYTES);
        assertThat(optional.ioMetrics().tlsHandshakes(true) - handshakesBefore).isEqualTo(1);
    }

    @Test
    void startTls_whenTlsRunsOrWithData_isInvalid() throws Exception {
        try (RawClient client = RawClient.connect(optional.localAddress()).handshake()) {
            client.option(NbdProtocol.OPT_STARTTLS, new byte[] {1});
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
            try (RawClient tls = startTls(client)) {
                tls.option(NbdProtocol.OPT_STARTTLS, new byte[0]);
                assertThat(tls.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_INVALID);
                // And TLS_REQD is never sent once TLS runs (proto.md).
                tls.option(0x4242, new byte[3]);
                assertThat(tls.optionReply().type()).isEqualTo(NbdProtocol.REP_ERR_UNSUP);
            }
        }
    }

    @Test
    void on_clientWithoutTls_isServedInPlainText() throws Exception {
        try (RawClient client = RawClient.connect(optional.localAddress()).handshake()) {
            client.option(NbdProtocol.OPT_LIST, new byte[0]);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_SERVER);
            assertThat(client.optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
            assertThat(client.go("disk", true).sizeBytes()).isEqualTo(SIZE_BYTES);
        }
    }
}
