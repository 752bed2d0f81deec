package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.TestServers;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Serving on a Unix-domain socket ({@code unix} in the config): real clients over
 * {@code nbd+unix:///NAME?socket=PATH}, the socket's life (created at start, removed on close, a stale
 * one replaced, one in use left alone), and TCP beside it when an address is given too.
 */
class UnixSocketTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private NbdConfig unixOnly(Path socket, ExportConfig... exports) {
        return TestServers.config(Limits.DEFAULTS, exports).withUnix(socket.toString(), false);
    }

    /** On both file I/O paths: io_uring's domain socket channels, or epoll's with the thread pool. */
    @ParameterizedTest(name = "fileIo {0}")
    @ValueSource(strings = {NbdConfig.FILE_IO_URING, NbdConfig.FILE_IO_THREADS})
    void realClients_overTheSocket_seeTheExportAndCopyItExactly(String fileIo) throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        String nbdcopy = Programs.require("nbdcopy");
        String qemuImg = Programs.require("qemu-img");
        Path socket = dir.resolve("nbd.sock");
        try (NbdServer server = NbdServer.start(
                unixOnly(socket, ExportConfig.file("disk", "acme", 16L << 20, false, dir.resolve("disk.img")))
                        .toBuilder()
                        .fileIo(fileIo)
                        .build())) {
            assertThat(server.transport().name()).isEqualTo(fileIo.equals("io_uring") ? "IO_URING" : "EPOLL");
            assertThat(server.localAddress())
                    .as("no TCP listener without an address")
                    .isNull();
            assertThat(server.unixSocket()).isEqualTo(socket.toAbsolutePath());
            assertThat(socket).exists();
            String uri = "nbd+unix:///disk?socket=" + socket;

            assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", uri)
                            .ok()
                            .stdout()
                            .strip())
                    .isEqualTo("16777216");
            JsonNode info = JSON.readTree(Programs.run(TIMEOUT, qemuImg, "info", "--output=json", uri)
                    .ok()
                    .stdout());
            assertThat(info.get("virtual-size").asLong()).isEqualTo(16L << 20);
            // The empty name is the default export, as with qemu-nbd.
            assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", "nbd+unix:///?socket=" + socket)
                            .ok()
                            .stdout()
                            .strip())
                    .isEqualTo("16777216");

            byte[] data = new byte[16 << 20];
            new Random(7).nextBytes(data);
            Path source = Files.write(dir.resolve("source.img"), data);
            Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri).ok();
            Path back = dir.resolve("back.img");
            Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
            assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
            assertThat(Files.mismatch(source, dir.resolve("disk.img"))).isEqualTo(-1L);
        }
        assertThat(socket).as("removed on close").doesNotExist();
    }

    @Test
    void staleSocket_isReplaced_butOneInUseIsLeftAlone() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        Path socket = dir.resolve("stale.sock");
        // A socket file nothing accepts on, as a killed server leaves it.
        try (ServerSocketChannel old = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            old.bind(UnixDomainSocketAddress.of(socket));
        }
        assertThat(socket).exists();
        try (NbdServer server = NbdServer.start(
                unixOnly(socket, ExportConfig.file("disk", "acme", 1L << 20, false, dir.resolve("disk.img"))))) {
            Programs.run(TIMEOUT, nbdinfo, "--size", "nbd+unix:///disk?socket=" + socket)
                    .ok();
            // A second server on the same socket: it is in use, so the start fails and leaves it.
            assertThatThrownBy(() -> NbdServer.start(unixOnly(
                            socket, ExportConfig.file("other", "acme", 1L << 20, false, dir.resolve("other.img")))))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("cannot listen on unix socket " + socket);
            assertThat(dir.resolve("other.img"))
                    .as("the failed start removed the file it created")
                    .doesNotExist();
            Programs.run(TIMEOUT, nbdinfo, "--size", "nbd+unix:///disk?socket=" + socket)
                    .ok();
        }
        assertThat(socket).doesNotExist();
    }

    @Test
    void socketInAMissingFolder_orAFileThatIsNotASocket_isAConfigProblem() throws Exception {
        ExportConfig export = ExportConfig.file("disk", "acme", 1L << 20, false, dir.resolve("disk.img"));
        assertThat(unixOnly(dir.resolve("missing/nbd.sock"), export).problems())
                .singleElement()
                .asString()
                .contains("unix: \"" + dir.resolve("missing/nbd.sock") + "\": the folder " + dir.resolve("missing")
                        + " does not exist");
        Path regular = Files.writeString(dir.resolve("notes.txt"), "keep me");
        assertThat(unixOnly(regular, export).problems())
                .singleElement()
                .asString()
                .contains("exists and is not a socket");
        assertThat(unixOnly(Path.of("/tmp/" + "x".repeat(120)), export).problems())
                .singleElement()
                .asString()
                .contains("(expected: at most 107");
        assertThatThrownBy(() -> NbdServer.start(unixOnly(regular, export)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a socket");
        assertThat(regular).hasContent("keep me");
    }

    @Test
    void unixAndTcp_bothServeTheSameExports() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        Path socket = dir.resolve("both.sock");
        NbdConfig config = TestServers.config(
                        Limits.DEFAULTS, ExportConfig.file("disk", "acme", 1L << 20, false, dir.resolve("disk.img")))
                .withUnix(socket.toString(), true);
        try (NbdServer server = NbdServer.start(config)) {
            assertThat(server.localAddress()).isNotNull();
            Programs.run(TIMEOUT, nbdinfo, "--size", "nbd+unix:///disk?socket=" + socket)
                    .ok();
            Programs.run(
                            TIMEOUT,
                            nbdinfo,
                            "--size",
                            "nbd://127.0.0.1:" + server.localAddress().getPort() + "/disk")
                    .ok();
        }
    }
}
