package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.FairDispatchSettings;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.TlsSettings;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.server.FairDispatchDoor;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.RealClients;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.TestCertificates;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Proxy mode with the upstream on a Unix-domain socket ({@code upstream.unix}): nbdkit {@code -U} and qemu-nbd
 * {@code -k}, read, written and flushed through the proxy by qemu-io and nbdcopy; the upstream killed and
 * started again on the same path; a path nothing listens on at start; clients served over TLS in front of the
 * plain socket.
 */
class UnixUpstreamTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static NbdConfig proxyConfig(Path socket, String upstreamExport, int connections) {
        return TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.upstream(
                        "proxied",
                        "acme",
                        false,
                        ExportConfig.Upstream.onUnixSocket(
                                socket.toString(), upstreamExport, connections, null, null)));
    }

    private static String uri(NbdServer server) {
        return "nbd://127.0.0.1:" + server.localAddress().getPort() + "/proxied";
    }

    private static UpstreamBackend backend(NbdServer server) {
        return (UpstreamBackend) server.exports().get(0).backend();
    }

    /** On both transports the server picks on Linux: io_uring's domain socket channels, and epoll's. */
    @ParameterizedTest(name = "fileIo {0}")
    @ValueSource(strings = {NbdConfig.FILE_IO_URING, NbdConfig.FILE_IO_THREADS})
    void inFrontOfNbdkitOnASocket_servesQemuIoAndNbdcopy(String fileIo) throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String qemuIo = Programs.require("qemu-io");
        String nbdcopy = Programs.require("nbdcopy");
        String nbdinfo = Programs.require("nbdinfo");
        Path socket = dir.resolve("nbdkit.sock");
        try (Programs.Daemon upstream = Programs.Daemon.startOnSocket(
                        socket, nbdkit, "--exit-with-parent", "-f", "-U", socket.toString(), "memory", "64M");
                NbdServer server = NbdServer.start(
                        proxyConfig(socket, "", 4).toBuilder().fileIo(fileIo).build())) {
            assertThat(server.transport().name()).isEqualTo(fileIo.equals("io_uring") ? "IO_URING" : "EPOLL");
            assertThat(backend(server).poolSize())
                    .as("nbdkit memory offers multi-conn: the whole pool")
                    .isEqualTo(4);
            assertThat(backend(server)).hasToString("upstream nbd+unix:///?socket=" + socket);
            RealClients.assertSizeAndFlags(nbdinfo, uri(server), 64L << 20);
            RealClients.writeAndReadPatterns(qemuIo, uri(server), 4);
            // What the proxy wrote is on the upstream: read straight from nbdkit's socket.
            Programs.run(TIMEOUT, qemuIo, "-f", "raw", "nbd+unix:///?socket=" + socket, "-c", "read -P 0xa5 0 1M")
                    .ok();

            RealClients.copyThereAndBack(nbdcopy, uri(server), dir, 11, 8 << 20);
        }
    }

    /**
     * Clients over TLS ({@code nbds://}, {@code nbds+unix://}), the upstream on a plain Unix socket: what nbdcopy
     * writes through the TLS front is on nbdkit, read straight from its socket, and comes back the same way.
     */
    @ParameterizedTest(name = "fileIo {0}")
    @ValueSource(strings = {NbdConfig.FILE_IO_URING, NbdConfig.FILE_IO_THREADS})
    void tlsClientsInFrontOfNbdkitOnASocket_writeThroughAndReadBackExactly(String fileIo) throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String nbdcopy = Programs.require("nbdcopy");
        String nbdinfo = Programs.require("nbdinfo");
        TestCertificates ca = TestCertificates.newCa("tailor test CA");
        Path serverCertificates = ca.writeServer(ca.writeCa(dir.resolve("server-tls")));
        Path clientCertificates = ca.writeCa(dir.resolve("client-tls"));
        Path socket = dir.resolve("nbdkit.sock");
        Path front = dir.resolve("front.sock");
        try (Programs.Daemon upstream = Programs.Daemon.startOnSocket(
                        socket, nbdkit, "--exit-with-parent", "-f", "-U", socket.toString(), "memory", "16M");
                NbdServer server = NbdServer.start(proxyConfig(socket, "", 4).toBuilder()
                        .fileIo(fileIo)
                        .tls(new TlsSettings("require", serverCertificates, false))
                        .build()
                        .withUnix(front.toString(), true))) {
            String tcp = "nbds://127.0.0.1:" + server.localAddress().getPort() + "/proxied?tls-certificates="
                    + clientCertificates;
            String unix = "nbds+unix:///proxied?socket=" + front + "&tls-certificates=" + clientCertificates;
            int bytes = 16 << 20;
            RealClients.assertSizeAndFlags(nbdinfo, tcp, bytes);
            assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", unix)
                            .ok()
                            .stdout()
                            .strip())
                    .isEqualTo(Integer.toString(bytes));
            assertThat(Programs.run(TIMEOUT, nbdinfo, "--size", uri(server)).exitCode())
                    .as("TLS is required: a plain client is refused")
                    .isNotZero();

            byte[] data = new byte[bytes];
            new Random(14).nextBytes(data);
            Path source = Files.write(dir.resolve("tls-source.img"), data);
            Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), tcp).ok();
            Path direct = dir.resolve("direct.img");
            Programs.run(TIMEOUT, nbdcopy, "nbd+unix:///?socket=" + socket, direct.toString())
                    .ok();
            assertThat(Files.mismatch(source, direct))
                    .as("what went in over TLS is on the upstream")
                    .isEqualTo(-1L);
            for (String uri : new String[] {tcp, unix}) {
                Path back = dir.resolve("tls-back.img");
                Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
                assertThat(Files.mismatch(source, back))
                        .as("%s reads the upstream back", uri)
                        .isEqualTo(-1L);
                Files.delete(back);
            }
        }
    }

    @Test
    void inFrontOfQemuNbdOnASocket_usesOneConnectionAndWritesTheFile() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        String qemuIo = Programs.require("qemu-io");
        String nbdcopy = Programs.require("nbdcopy");
        byte[] data = new byte[4 << 20];
        new Random(12).nextBytes(data);
        Path file = Files.write(dir.resolve("base.img"), data);
        Path socket = dir.resolve("qemu.sock");
        try (Programs.Daemon upstream = Programs.Daemon.startOnSocket(
                        socket, qemuNbd, "-f", "raw", "-x", "base", "-k", socket.toString(), "-t", file.toString());
                NbdServer server = NbdServer.start(proxyConfig(socket, "base", 4))) {
            assertThat(backend(server).poolSize())
                    .as("qemu-nbd without --shared offers no multi-conn")
                    .isEqualTo(1);
            RealClients.readsTheFileAndWritesThrough(nbdcopy, qemuIo, uri(server), file, dir);
        }
    }

    @Test
    void nbdkitKilledAndStartedAgainOnTheSameSocket_failsWithEioThenReconnects() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        byte[] data = new byte[1 << 20];
        new Random(13).nextBytes(data);
        Path file = Files.write(dir.resolve("disk.img"), data);
        Path socket = dir.resolve("restart.sock");
        String[] command = {nbdkit, "-f", "-U", socket.toString(), "file", file.toString()};
        String upstreamName = "upstream nbd+unix:///?socket=" + socket;
        Programs.Daemon upstream = Programs.Daemon.startOnSocket(socket, command);
        try (LogRecords log = LogRecords.of(UpstreamBackend.class);
                NbdServer server = NbdServer.start(proxyConfig(socket, "", 4));
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", false);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            RawClient.SimpleReply first = client.simpleReply(4096);
            assertThat(first.error()).isZero();
            assertThat(first.data()).isEqualTo(Arrays.copyOfRange(data, 0, 4096));

            upstream.kill(); // SIGKILL: nbdkit leaves its socket file behind
            Await.until("the lost upstream to be logged", () -> !log.messages().isEmpty(), log::messages);
            Await.until(
                    "the closed connections to leave the pool",
                    () -> backend(server).openConnections() == 0);
            client.request(0, NbdProtocol.CMD_READ, 2, 0, 4096);
            RawClient.SimpleReply failed = client.simpleReply(4096);
            assertThat(failed.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(log.messages())
                    .first()
                    .asString()
                    .startsWith("WARNING export proxied: " + upstreamName + " lost: ");

            // nbdkit does not take over a socket file left behind (Address already in use): removed, as a
            // service manager does before starting it again.
            Files.delete(socket);
            try (Programs.Daemon restarted = Programs.Daemon.startOnSocket(socket, command)) {
                client.request(0, NbdProtocol.CMD_READ, 3, 8192, 4096);
                RawClient.SimpleReply again = client.simpleReply(4096);
                assertThat(again.error()).as("the next request reconnects").isZero();
                assertThat(again.data()).isEqualTo(Arrays.copyOfRange(data, 8192, 8192 + 4096));
                assertThat(log.messages())
                        .last()
                        .isEqualTo("INFO export proxied: " + upstreamName + " reached again: a new connection did"
                                + " its handshake");
                server.close(); // first, or the restarted nbdkit waits for the pool's idle timeout to stop
            }
        } finally {
            upstream.close();
        }
    }

    /** As a TCP upstream that does not answer: the start fails (exit status 1), naming the export and the path. */
    @Test
    void socketThatDoesNotExistAtStart_failsTheStartAsAnUnreachableTcpUpstreamDoes() {
        Path socket = dir.resolve("missing.sock");
        assertThatThrownBy(() -> NbdServer.start(proxyConfig(socket, "", 4)))
                .isInstanceOf(IOException.class)
                .hasMessage("export proxied: upstream nbd+unix:///?socket=" + socket + ": no such file or directory");
    }

    /** A socket file nothing accepts on (a killed upstream's): refused, as a TCP port nothing listens on. */
    @Test
    void socketNothingListensOn_failsTheStartWithConnectionRefused() throws Exception {
        Path socket = dir.resolve("stale.sock");
        try (var old = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            old.bind(java.net.UnixDomainSocketAddress.of(socket));
        }
        assertThatThrownBy(() -> NbdServer.start(proxyConfig(socket, "", 4)))
                .isInstanceOf(IOException.class)
                .hasMessage("export proxied: upstream nbd+unix:///?socket=" + socket + ": connection refused");
    }

    /**
     * Two exports of one nbdkit socket, its path written two ways, pass one fair dispatch door, named by the
     * path; a third on another socket has its own.
     */
    @Test
    void exportsOnOneSocket_shareTheirDoor_namedByThePath() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String qemuIo = Programs.require("qemu-io");
        Path socket = dir.resolve("shared.sock");
        Path other = dir.resolve("other.sock");
        Files.createDirectory(dir.resolve("sub"));
        try (Programs.Daemon upstream = Programs.Daemon.startOnSocket(
                        socket, nbdkit, "--exit-with-parent", "-f", "-U", socket.toString(), "memory", "8M");
                Programs.Daemon second = Programs.Daemon.startOnSocket(
                        other, nbdkit, "--exit-with-parent", "-f", "-U", other.toString(), "memory", "8M");
                NbdServer server = NbdServer.start(TestServers.config(
                                Limits.DEFAULTS,
                                ExportConfig.upstream(
                                        "a",
                                        "t1",
                                        false,
                                        ExportConfig.Upstream.onUnixSocket(socket.toString(), "", 1, null, null)),
                                ExportConfig.upstream(
                                        "b",
                                        "t2",
                                        false,
                                        ExportConfig.Upstream.onUnixSocket(
                                                dir.resolve("sub/../shared.sock")
                                                        .toString(),
                                                "",
                                                1,
                                                null,
                                                null)),
                                ExportConfig.upstream(
                                        "c",
                                        "t3",
                                        false,
                                        ExportConfig.Upstream.onUnixSocket(other.toString(), "", 1, null, null)))
                        .toBuilder()
                        .fairDispatch(new FairDispatchSettings(true, null))
                        .build())) {
            FairDispatchDoor door = server.fairDispatch();
            assertThat(door.backends())
                    .containsExactlyInAnyOrder(
                            "upstream:unix:" + socket.toAbsolutePath(), "upstream:unix:" + other.toAbsolutePath());
            assertThat(door.depth("upstream:unix:" + socket.toAbsolutePath()))
                    .as("16 for each of the two exports' one connection")
                    .isEqualTo(2 * FairDispatchSettings.UPSTREAM_REQUESTS_PER_CONNECTION);
            String port = Integer.toString(server.localAddress().getPort());
            for (String name : new String[] {"a", "b", "c"}) {
                Programs.run(
                                TIMEOUT,
                                qemuIo,
                                "-f",
                                "raw",
                                "nbd://127.0.0.1:" + port + "/" + name,
                                "-c",
                                "write -P 0x11 0 64k",
                                "-c",
                                "read -P 0x11 0 64k")
                        .ok();
            }
        }
    }

    /** On NIO (where Netty's native library cannot load): the JDK's domain sockets, with the same messages. */
    @Test
    void onNio_connectsToTheSocket_andAMissingOneIsToldTheSame() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        Path socket = dir.resolve("nio.sock");
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (Programs.Daemon upstream = Programs.Daemon.startOnSocket(
                socket, nbdkit, "--exit-with-parent", "-f", "-U", socket.toString(), "memory", "8M")) {
            UpstreamBackend backend = UpstreamBackend.connect(
                    "proxied",
                    ExportConfig.Upstream.onUnixSocket(socket.toString(), "", 2, null, null),
                    loops,
                    ByteBufAllocator.DEFAULT);
            try {
                assertThat(backend.sizeBytes()).isEqualTo(8L << 20);
                assertThat(backend.poolSize()).isEqualTo(2);
            } finally {
                backend.close();
            }
            Path missing = dir.resolve("missing.sock");
            assertThatThrownBy(() -> UpstreamBackend.connect(
                            "proxied",
                            ExportConfig.Upstream.onUnixSocket(missing.toString(), "", 2, null, null),
                            loops,
                            ByteBufAllocator.DEFAULT))
                    .isInstanceOf(IOException.class)
                    .hasMessage("upstream nbd+unix:///?socket=" + missing + ": no such file or directory");
        } finally {
            loops.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS)
                    .awaitUninterruptibly();
        }
    }
}
