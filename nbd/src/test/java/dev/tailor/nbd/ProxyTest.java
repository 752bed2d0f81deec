package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Proxy mode: exports served by a real upstream NBD server (nbdkit, qemu-nbd) through the pool. */
class ProxyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static NbdServer proxy(int upstreamPort, String upstreamExport) throws IOException {
        return NbdServer.start(TestServers.config(NbdConfig.Limits.DEFAULTS, NbdConfig.ExportConfig.upstream(
                "proxied", "acme", false, new NbdConfig.Upstream("127.0.0.1", upstreamPort, upstreamExport, 4))));
    }

    private static String uri(NbdServer server) {
        return "nbd://127.0.0.1:" + server.localAddress().getPort() + "/proxied";
    }

    @Test
    void inFrontOfNbdkitMemory_servesQemuIoNbdcopyAndFio() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String qemuIo = Programs.require("qemu-io");
        String nbdcopy = Programs.require("nbdcopy");
        String nbdinfo = Programs.require("nbdinfo");
        String fio = Programs.require("fio");
        try (Programs.Daemon upstream = Programs.Daemon.start(nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1",
                "-p", "{port}", "memory", "64M");
                NbdServer server = proxy(upstream.port, "")) {
            UpstreamBackend backend = (UpstreamBackend) server.exports().get(0).backend();
            assertThat(backend.poolSize()).as("nbdkit memory offers multi-conn: the whole pool").isEqualTo(4);
            JsonNode info = JSON.readTree(Programs.run(TIMEOUT, nbdinfo, "--json", uri(server)).ok().stdout())
                    .get("exports").get(0);
            assertThat(info.get("export-size").asLong()).isEqualTo(64L << 20);
            for (String flag : new String[] {"can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"}) {
                assertThat(info.get(flag).asBoolean()).as(flag).isTrue();
            }

            Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri(server),
                    "-c", "write -P 0xa5 0 1M", "-c", "write -f -P 0x5a 1M 64k", "-c", "write -z 2M 40M",
                    "-c", "discard 50M 1M", "-c", "flush",
                    "-c", "read -P 0xa5 0 1M", "-c", "read -P 0x5a 1M 64k", "-c", "read -P 0 2M 40M").ok();

            byte[] data = new byte[8 << 20];
            new Random(5).nextBytes(data);
            Path source = Files.write(dir.resolve("source.img"), data);
            Path back = dir.resolve("back.img");
            Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri(server)).ok();
            Programs.run(TIMEOUT, nbdcopy, uri(server), back.toString()).ok();
            assertThat(Files.mismatch(source, back)).isEqualTo(8L << 20).as("the rest is the upstream's zeroes");
            byte[] head = new byte[8 << 20];
            System.arraycopy(Files.readAllBytes(back), 0, head, 0, head.length);
            assertThat(head).isEqualTo(data);

            Programs.run(TIMEOUT, fio, "--name=proxied", "--ioengine=nbd", "--uri=" + uri(server), "--rw=randwrite",
                    "--bs=4k", "--size=8M", "--numjobs=4", "--offset_increment=8M", "--iodepth=16",
                    "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0").ok();
        }
    }

    @Test
    void inFrontOfQemuNbdWithoutMultiConn_usesOneConnectionAndWritesTheFile() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        String qemuIo = Programs.require("qemu-io");
        String nbdcopy = Programs.require("nbdcopy");
        byte[] data = new byte[4 << 20];
        new Random(6).nextBytes(data);
        Path file = Files.write(dir.resolve("base.img"), data);
        try (Programs.Daemon upstream = Programs.Daemon.start(qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1",
                "-p", "{port}", "-t", file.toString());
                NbdServer server = proxy(upstream.port, "base")) {
            UpstreamBackend backend = (UpstreamBackend) server.exports().get(0).backend();
            assertThat(backend.poolSize()).as("qemu-nbd without --shared offers no multi-conn").isEqualTo(1);
            Path back = dir.resolve("back.img");
            Programs.run(TIMEOUT, nbdcopy, uri(server), back.toString()).ok();
            assertThat(Files.mismatch(file, back)).isEqualTo(-1L);

            Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri(server), "-c", "write -f -P 0x42 1M 4k", "-c", "flush")
                    .ok();
            byte[] after = Files.readAllBytes(file);
            for (int i = 1 << 20; i < (1 << 20) + 4096; i++) {
                assertThat(after[i]).isEqualTo((byte) 0x42);
            }
        }
    }

    @Test
    void upstreamThatRefusesTheExport_failsTheStartWithItsReason() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        Path file = Files.write(dir.resolve("base.img"), new byte[4096]);
        try (Programs.Daemon upstream = Programs.Daemon.start(qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1",
                "-p", "{port}", "-t", file.toString())) {
            assertThatThrownBy(() -> proxy(upstream.port, "missing"))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("export proxied")
                    .hasMessageContaining("refused export \"missing\"");
        }
    }

    @Test
    void unreachableUpstream_failsTheStart() {
        int port = Programs.freePort();
        assertThatThrownBy(() -> proxy(port, ""))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("upstream nbd://127.0.0.1:" + port);
    }

    @Test
    void upstreamThatDies_failsRequestsWithIoErrorAndTheProxyStaysUp() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream = Programs.Daemon.start(nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1",
                "-p", "{port}", "memory", "1M");
        try (NbdServer server = proxy(upstream.port, "");
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", false);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            assertThat(client.simpleReply(4096).error()).isZero();
            upstream.kill();
            client.request(0, NbdProtocol.CMD_READ, 2, 0, 4096);
            RawClient.SimpleReply reply = client.simpleReply(4096);
            assertThat(reply.cookie()).isEqualTo(2);
            assertThat(reply.error()).isEqualTo(NbdProtocol.EIO);
            // The downstream connection is still usable.
            client.request(0, NbdProtocol.CMD_READ, 3, 0, 4096);
            assertThat(client.simpleReply(4096).error()).isEqualTo(NbdProtocol.EIO);
        } finally {
            upstream.close();
        }
    }
}
