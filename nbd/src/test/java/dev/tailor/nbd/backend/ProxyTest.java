package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.FairDispatchSettings;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.nbd.testing.LogRecords;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.RealClients;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Proxy mode: exports served by a real upstream NBD server (nbdkit, qemu-nbd) through the pool. */
class ProxyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static NbdServer proxy(int upstreamPort, String upstreamExport) throws IOException {
        return proxy(upstreamPort, upstreamExport, null);
    }

    private static NbdServer proxy(int upstreamPort, String upstreamExport, Double idleTimeoutSeconds)
            throws IOException {
        return NbdServer.start(TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.upstream(
                        "proxied",
                        "acme",
                        false,
                        new ExportConfig.Upstream(
                                "127.0.0.1", upstreamPort, upstreamExport, 4, idleTimeoutSeconds, null))));
    }

    /** A proxy whose pool has one connection, with the reply timeout given. */
    private static NbdServer proxyWithReplyTimeout(int upstreamPort, double requestTimeoutSeconds) throws IOException {
        return NbdServer.start(TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.upstream(
                        "proxied",
                        "acme",
                        false,
                        new ExportConfig.Upstream("127.0.0.1", upstreamPort, "", 1, null, requestTimeoutSeconds))));
    }

    /** Sends {@code signal} ({@code STOP}, {@code CONT}) to the process, as {@code kill -SIGNAL PID} does. */
    private static void signal(Programs.Daemon daemon, String signal) {
        Programs.run(Duration.ofSeconds(10), "kill", "-" + signal, Long.toString(daemon.process.pid()))
                .ok();
    }

    /**
     * Stops {@code daemon} with SIGSTOP and returns once every one of its threads is stopped: the
     * kernel wakes one thread for the signal, which then stops the others, so a thread of nbdkit
     * that is running at {@code kill}'s return may still answer a request sent right after it.
     */
    private static void stop(Programs.Daemon daemon) {
        signal(daemon, "STOP");
        Path tasks = Path.of("/proc", Long.toString(daemon.process.pid()), "task");
        Await.until("every thread of " + tasks.getParent() + " stopped", () -> allStopped(tasks), () -> states(tasks));
    }

    private static boolean allStopped(Path tasks) {
        List<String> states = states(tasks);
        return !states.isEmpty() && states.stream().allMatch(state -> state.equals("T"));
    }

    /** The state letter of each thread under {@code /proc/PID/task} (after the command's closing parenthesis). */
    private static List<String> states(Path tasks) {
        List<String> states = new ArrayList<>();
        try (var threads = Files.list(tasks)) {
            for (Path thread : (Iterable<Path>) threads::iterator) {
                try {
                    String stat = Files.readString(thread.resolve("stat"));
                    states.add(stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
                } catch (IOException gone) {
                    // a thread that ended meanwhile has no state to wait for
                }
            }
        } catch (IOException e) {
            throw new AssertionError("reading " + tasks + ": " + e, e);
        }
        return states;
    }

    private static UpstreamBackend backend(NbdServer server) {
        return (UpstreamBackend) server.exports().get(0).backend();
    }

    /**
     * Stops nbdkit with SIGTERM and returns once it answers ESHUTDOWN, so that a request sent next gets
     * ESHUTDOWN too: nbdkit handles the signal in its own time, and a request that arrives meanwhile may
     * still be served, or its connection reset. Probe clients connected directly (before the signal:
     * nbdkit accepts no one after it) read until one gets 108; a probe that is reset hands over to the next.
     */
    private static void stopNbdkit(Programs.Daemon nbdkit) throws IOException {
        List<RawClient> probes = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                RawClient probe = RawClient.connect(new InetSocketAddress("127.0.0.1", nbdkit.port))
                        .handshake();
                probes.add(probe);
                probe.go("", false);
            }
            nbdkit.process.destroy(); // SIGTERM
            long[] cookie = {0};
            int[] asking = {0};
            Await.until("nbdkit answering ESHUTDOWN", () -> {
                if (asking[0] == probes.size()) {
                    throw new AssertionError("every probe was reset before nbdkit answered ESHUTDOWN");
                }
                RawClient probe = probes.get(asking[0]);
                try {
                    probe.request(0, NbdProtocol.CMD_READ, cookie[0]++, 0, 512);
                    return probe.simpleReply(512).error() == NbdProtocol.ESHUTDOWN;
                } catch (IOException reset) {
                    asking[0]++; // reset as nbdkit handled the signal: the next probe asks again
                    return false;
                }
            });
        } finally {
            for (RawClient probe : probes) {
                probe.close();
            }
        }
    }

    /** Every event loop of a server, each held by a task that waits until {@link #close()}: nothing else runs on them. */
    private static final class HeldLoops implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);

        static HeldLoops hold(NbdServer server) {
            HeldLoops held = new HeldLoops();
            List<IoPriorityEventLoop> loops = server.eventLoops().loops();
            CountDownLatch holding = new CountDownLatch(loops.size());
            for (IoPriorityEventLoop loop : loops) {
                loop.execute(() -> {
                    holding.countDown();
                    try {
                        held.release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            Await.until("every event loop held", () -> holding.getCount() == 0);
            return held;
        }

        @Override
        public void close() {
            release.countDown();
        }
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** Reads 4 KiB at {@code offset} over structured replies and returns the data. */
    private static byte[] read(RawClient client, long cookie, long offset) throws IOException {
        client.request(0, NbdProtocol.CMD_READ, cookie, offset, 4096);
        RawClient.Chunk chunk = client.chunk();
        assertThat(chunk.cookie()).isEqualTo(cookie);
        assertThat(chunk.type())
                .as(
                        "reply type; an error says: %s",
                        chunk.type() == NbdProtocol.REPLY_TYPE_ERROR ? chunk.message() : "")
                .isEqualTo(NbdProtocol.REPLY_TYPE_OFFSET_DATA);
        return Arrays.copyOfRange(chunk.payload(), 8, chunk.payload().length);
    }

    /** The error chunk a failed 4 KiB read gets, with how long it took. */
    private static RawClient.Chunk failedRead(RawClient client, long cookie) throws IOException {
        client.request(0, NbdProtocol.CMD_READ, cookie, 0, 4096);
        RawClient.Chunk chunk = client.chunk();
        assertThat(chunk.cookie()).isEqualTo(cookie);
        assertThat(chunk.type()).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
        return chunk;
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
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "64M");
                NbdServer server = proxy(upstream.port, "")) {
            UpstreamBackend backend = (UpstreamBackend) server.exports().get(0).backend();
            assertThat(backend.poolSize())
                    .as("nbdkit memory offers multi-conn: the whole pool")
                    .isEqualTo(4);
            RealClients.assertSizeAndFlags(nbdinfo, uri(server), 64L << 20);
            RealClients.writeAndReadPatterns(qemuIo, uri(server), 40, "discard 50M 1M");
            byte[] back = RealClients.copyThereAndBack(nbdcopy, uri(server), dir, 5, 8 << 20);
            assertThat(back).as("the rest is the upstream's zeroes").hasSize(64 << 20);

            Programs.run(
                            TIMEOUT,
                            fio,
                            "--name=proxied",
                            "--ioengine=nbd",
                            "--uri=" + uri(server),
                            "--rw=randwrite",
                            "--bs=4k",
                            "--size=8M",
                            "--numjobs=4",
                            "--offset_increment=8M",
                            "--iodepth=16",
                            "--verify=crc32c",
                            "--do_verify=1",
                            "--verify_fatal=1",
                            "--verify_state_save=0")
                    .ok();
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
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1", "-p", "{port}", "-t", file.toString());
                NbdServer server = proxy(upstream.port, "base")) {
            UpstreamBackend backend = (UpstreamBackend) server.exports().get(0).backend();
            assertThat(backend.poolSize())
                    .as("qemu-nbd without --shared offers no multi-conn")
                    .isEqualTo(1);
            RealClients.readsTheFileAndWritesThrough(nbdcopy, qemuIo, uri(server), file, dir);
        }
    }

    /** The door's default depth counts the pool as opened: one connection of 16, not the 4 configured. */
    @Test
    void inFrontOfQemuNbdWithoutMultiConn_theDoorIsAsDeepAsOneConnection() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        Path file = Files.write(dir.resolve("base.img"), new byte[1 << 20]);
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1", "-p", "{port}", "-t", file.toString());
                NbdServer server = NbdServer.start(TestServers.config(
                                Limits.DEFAULTS,
                                ExportConfig.upstream(
                                        "proxied",
                                        "acme",
                                        false,
                                        new ExportConfig.Upstream("127.0.0.1", upstream.port, "base", 4, null, null)))
                        .toBuilder()
                        .fairDispatch(new FairDispatchSettings(true, null))
                        .build())) {
            assertThat(backend(server).poolSize()).isEqualTo(1);
            String door = server.fairDispatch().backends().get(0);
            assertThat(door).isEqualTo("upstream:127.0.0.1:" + upstream.port);
            assertThat(server.fairDispatch().depth(door))
                    .as("16 for the one connection qemu-nbd allows, not 64 for the 4 configured")
                    .isEqualTo(FairDispatchSettings.UPSTREAM_REQUESTS_PER_CONNECTION);
        }
    }

    @Test
    void upstreamThatRefusesTheExport_failsTheStartWithItsReason() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        Path file = Files.write(dir.resolve("base.img"), new byte[4096]);
        try (Programs.Daemon upstream = Programs.Daemon.start(
                qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1", "-p", "{port}", "-t", file.toString())) {
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
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "1M");
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

    @Test
    void nbdkitStoppedAndRestartedOnTheSamePort_failsPromptlyWithEioThenReconnects() throws Exception {
        // nbdkit, stopped, answers its clients' requests ESHUTDOWN (108) and exits only once they have all
        // gone: the proxy used to pass the 108 on, keep its pool connections, and so keep nbdkit running.
        String nbdkit = Programs.require("nbdkit");
        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        Path file = Files.write(dir.resolve("disk.img"), data);
        String[] command = {nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "file", file.toString()};
        Programs.Daemon upstream = Programs.Daemon.start(command);
        int port = upstream.port;
        try (NbdServer server = proxy(port, "");
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            assertThat(read(client, 1, 0)).isEqualTo(Arrays.copyOfRange(data, 0, 4096));

            stopNbdkit(upstream);
            long start = System.nanoTime();
            RawClient.Chunk error = failedRead(client, 2);
            assertThat(millisSince(start))
                    .as("ms to the error (the handshake timeout is 10 s)")
                    .isLessThan(5_000);
            assertThat(error.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(error.message()).contains("upstream nbd://127.0.0.1:" + port + "/");
            assertThat(upstream.process.waitFor(10, TimeUnit.SECONDS))
                    .as("nbdkit exits: the pool let it go")
                    .isTrue();
            Await.until("the pool to be empty", () -> backend(server).openConnections() == 0);

            try (Programs.Daemon restarted = Programs.Daemon.start(port, command)) {
                assertThat(read(client, 3, 8192))
                        .as("the next request reconnects")
                        .isEqualTo(Arrays.copyOfRange(data, 8192, 8192 + 4096));
                server.close(); // first, or the restarted nbdkit waits for the pool's idle timeout to stop
            }
        } finally {
            upstream.close();
        }
    }

    @Test
    void nbdkitStopped_aFlushItRefusedIsNotSentAgainElsewhere() throws Exception {
        // A flush vouches for every write acknowledged before it; another upstream instance cannot.
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream =
                Programs.Daemon.start(nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "1M");
        try (NbdServer server = proxy(upstream.port, "");
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            client.write(0, 1, 0, new byte[4096]);
            assertThat(client.simpleReply(0).error()).isZero();
            stopNbdkit(upstream);
            client.request(0, NbdProtocol.CMD_FLUSH, 2, 0, 0);
            RawClient.Chunk error = client.chunk();
            assertThat(error.type()).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
            assertThat(error.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(error.message())
                    .isEqualTo("upstream nbd://127.0.0.1:" + upstream.port + "/ is shutting"
                            + " down (a FLUSH is not sent again elsewhere: it could not cover the writes this upstream"
                            + " acknowledged)");
            assertThat(upstream.process.waitFor(10, TimeUnit.SECONDS))
                    .as("nbdkit exits")
                    .isTrue();
        } finally {
            upstream.close();
        }
    }

    @Test
    void qemuNbdStoppedAndRestartedOnTheSamePort_failsPromptlyWithEioThenReconnects() throws Exception {
        // qemu-nbd, stopped, closes its connections at once.
        String qemuNbd = Programs.require("qemu-nbd");
        byte[] data = new byte[1 << 20];
        new Random(8).nextBytes(data);
        Path file = Files.write(dir.resolve("base.img"), data);
        String[] command = {qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1", "-p", "{port}", "-t", file.toString()
        };
        Programs.Daemon upstream = Programs.Daemon.start(command);
        int port = upstream.port;
        try (LogRecords log = LogRecords.of(UpstreamBackend.class);
                NbdServer server = proxy(port, "base");
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            assertThat(read(client, 1, 0)).isEqualTo(Arrays.copyOfRange(data, 0, 4096));
            upstream.close(); // SIGTERM, and waits for the exit
            // The connection is closed (and out of the pool) a moment before its event loop tells the pool;
            // a request sent in between could find the upstream gone first. Here the pool is told first.
            Await.until("the lost upstream to be logged", () -> !log.messages().isEmpty(), log::messages);
            Await.until(
                    "the closed connection to leave the pool",
                    () -> backend(server).openConnections() == 0);

            long start = System.nanoTime();
            RawClient.Chunk error = failedRead(client, 2);
            assertThat(millisSince(start)).as("ms to the error").isLessThan(5_000);
            assertThat(error.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(error.message()).contains("upstream nbd://127.0.0.1:" + port + "/base is unreachable");
            assertThat(log.messages())
                    .as("the lost connection, once; the failed request adds nothing")
                    .containsExactly("WARNING export proxied: upstream nbd://127.0.0.1:" + port + "/base lost: it"
                            + " closed the connection; its requests fail with EIO (Input/output error) until a"
                            + " connection to it succeeds again (each request tries once)");

            try (Programs.Daemon restarted = Programs.Daemon.start(port, command)) {
                assertThat(read(client, 3, 4096)).isEqualTo(Arrays.copyOfRange(data, 4096, 8192));
                assertThat(log.messages())
                        .hasSize(2)
                        .last()
                        .isEqualTo("INFO export proxied: upstream nbd://127.0.0.1:" + port + "/base reached again:"
                                + " a new connection did its handshake");
            }
        } finally {
            upstream.close();
        }
    }

    @Test
    void upstreamKilledUnderFio_isLoggedOnceLostAndOnceBackWhateverTheConnectionsAndRequests() throws Exception {
        // A new user's fio got EIO when the upstream died, and the server's log said nothing, either then or
        // when the upstream came back. Four fio jobs keep every pool connection busy, so the upstream's
        // death closes several connections and fails dozens of requests: still one line.
        String nbdkit = Programs.require("nbdkit");
        String fio = Programs.require("fio");
        String[] command = {nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "64M"};
        Programs.Daemon upstream = Programs.Daemon.start(command);
        int port = upstream.port;
        String upstreamName = "upstream nbd://127.0.0.1:" + port + "/";
        try (LogRecords log = LogRecords.of(UpstreamBackend.class);
                NbdServer server = proxy(port, "")) {
            Process load = new ProcessBuilder(
                            fio,
                            "--name=lost",
                            "--ioengine=nbd",
                            "--uri=" + uri(server),
                            "--rw=randread",
                            "--bs=4k",
                            "--size=8M",
                            "--numjobs=4",
                            "--iodepth=16",
                            "--time_based",
                            "--runtime=300")
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("fio.log").toFile())
                    .start();
            try {
                Await.until(
                        "fio to keep every pool connection open",
                        () -> backend(server).openConnections()
                                == backend(server).poolSize());
                upstream.kill();
                assertThat(load.waitFor(60, TimeUnit.SECONDS)).as("fio stops").isTrue();
                assertThat(Files.readString(dir.resolve("fio.log"))).contains("Input/output error");
            } finally {
                load.destroyForcibly().waitFor();
            }
            Await.until("the pool to be empty", () -> backend(server).openConnections() == 0);
            try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
                client.go("proxied", true);
                assertThat(failedRead(client, 1).error()).isEqualTo(NbdProtocol.EIO);
                // Whichever thread finds the upstream lost first logs it, and may still be writing the line
                // as the read's error, found on another thread, comes back.
                Await.until(
                        "the lost upstream to be logged", () -> !log.messages().isEmpty());
                List<String> lost = log.messages();
                assertThat(lost).as("one line for the upstream lost").hasSize(1);
                assertThat(lost.get(0))
                        .startsWith("WARNING export proxied: " + upstreamName + " lost: ")
                        .contains("; its requests fail with EIO");

                try (Programs.Daemon restarted = Programs.Daemon.start(port, command)) {
                    read(client, 2, 0);
                    read(client, 3, 4096);
                    assertThat(log.messages())
                            .as("one line for the upstream back")
                            .containsExactly(
                                    lost.get(0),
                                    "INFO export proxied: " + upstreamName + " reached again: a new connection did"
                                            + " its handshake");
                    server.close();
                }
            }
        } finally {
            upstream.close();
        }
    }

    @Test
    void upstreamStoppedWhileTheProxyIsIdle_isLetGoAfterTheIdleTimeout() throws Exception {
        // No request, so no ESHUTDOWN to notice: the idle timeout is what lets nbdkit finish stopping.
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream =
                Programs.Daemon.start(nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "1M");
        try (NbdServer server = proxy(upstream.port, "", 0.2);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", false);
            // The idle timeout runs on the event loops: held, they cannot let the connection go before nbdkit
            // has its signal. The one opened at start may have gone already on a slow machine; a read opens
            // one again.
            HeldLoops[] held = {HeldLoops.hold(server)};
            try {
                long[] cookie = {0};
                Await.until("a pool connection open while the event loops are held", () -> {
                    if (backend(server).openConnections() > 0) {
                        return true;
                    }
                    held[0].close();
                    try {
                        client.request(0, NbdProtocol.CMD_READ, ++cookie[0], 0, 4096);
                        assertThat(client.simpleReply(4096).error()).isZero();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    held[0] = HeldLoops.hold(server);
                    return false;
                });
                upstream.process.destroy(); // SIGTERM
            } finally {
                held[0].close();
            }
            assertThat(upstream.process.waitFor(10, TimeUnit.SECONDS))
                    .as("nbdkit exits")
                    .isTrue();
            assertThat(backend(server).openConnections()).isZero();
        } finally {
            upstream.close();
        }
    }

    @Test
    void stop_withAReadHungUpstream_takesTheDrainAndNoLonger() throws Exception {
        // A new user's Ctrl-C took 20 s: the 10 s drain, then 10 s more waiting for the upstream pool's
        // soft disconnect, which waits for the hung read's reply. Once the drain has given up on the
        // read, so does the pool.
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "--filter=delay", "memory", "1M", "rdelay=60");
        try {
            NbdServer server = proxy(upstream.port, "");
            try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
                client.go("proxied", true);
                client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
                Await.until(
                        "the read to reach the upstream", () -> backend(server).requestsAwaitingReply() == 1);
                long start = System.nanoTime();
                server.close();
                // Waiting for the soft disconnect too would add its 10 s: anything less is the drain alone.
                assertThat(millisSince(start))
                        .as("ms to stop")
                        .isGreaterThanOrEqualTo(NbdServer.DRAIN_TIMEOUT_MILLIS - 500)
                        .isLessThan(NbdServer.DRAIN_TIMEOUT_MILLIS + UpstreamBackend.CONNECT_TIMEOUT_MILLIS);
                assertThat(backend(server).openConnections()).isZero();
            }
        } finally {
            upstream.close();
        }
    }

    @Test
    void upstreamThatClosesWithARequestInFlight_failsItAtOnceWithEio() throws Exception {
        // Reads take 60 s upstream; the connection closing must fail the read now, not after a timeout.
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "--filter=delay", "memory", "1M", "rdelay=60");
        try (NbdServer server = proxy(upstream.port, "");
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            Await.until("the read to reach the upstream", () -> backend(server).requestsAwaitingReply() == 1);
            long start = System.nanoTime();
            upstream.kill();
            RawClient.Chunk error = client.chunk();
            assertThat(millisSince(start)).as("ms to the error").isLessThan(5_000);
            assertThat(error.type()).isEqualTo(NbdProtocol.REPLY_TYPE_ERROR);
            assertThat(error.error()).isEqualTo(NbdProtocol.EIO);
            // A killed nbdkit's socket is closed or reset, depending on timing; both are told in words.
            assertThat(error.message())
                    .startsWith("upstream nbd://127.0.0.1:" + upstream.port + "/: ")
                    .matches(".*: (the connection closed|the connection was reset) with the request in flight");
        } finally {
            upstream.close();
        }
    }

    @Test
    void upstreamThatHangs_failsTheReadWithEioAfterTheReplyTimeout_logsOnce_andTheNextReadReconnects()
            throws Exception {
        // Stopped with SIGSTOP, nbdkit keeps its connections open and answers nothing: without a reply
        // timeout the read waited forever, and nothing was logged.
        String nbdkit = Programs.require("nbdkit");
        byte[] data = new byte[1 << 20];
        new Random(11).nextBytes(data);
        Path file = Files.write(dir.resolve("disk.img"), data);
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", "{port}", "file", file.toString());
        boolean stopped = false;
        try (LogRecords log = LogRecords.of(UpstreamBackend.class);
                NbdServer server = proxyWithReplyTimeout(upstream.port, 0.2);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            assertThat(read(client, 1, 0)).isEqualTo(Arrays.copyOfRange(data, 0, 4096));

            stop(upstream);
            stopped = true;
            long start = System.nanoTime();
            RawClient.Chunk error = failedRead(client, 2);
            assertThat(millisSince(start))
                    .as("ms to the error (the reply timeout is 200 ms)")
                    .isGreaterThanOrEqualTo(150)
                    .isLessThan(5_000);
            assertThat(error.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(error.message())
                    .isEqualTo("upstream nbd://127.0.0.1:" + upstream.port + "/: no reply to a READ in 0.2 s:"
                            + " the connection was closed with the request in flight");
            Await.until("the warning", () -> log.messages().stream().anyMatch(m -> m.startsWith("WARNING")));
            assertThat(backend(server).requestsAwaitingReply()).isZero();

            // The next read opens a new connection, which the stopped nbdkit's kernel accepts and nbdkit never
            // greets: the read's reply timeout bounds its wait too, not the 10 s connect timeout.
            start = System.nanoTime();
            RawClient.Chunk connecting = failedRead(client, 3);
            assertThat(millisSince(start))
                    .as("ms to the error while connecting (the reply timeout is 200 ms, the connect timeout 10 s)")
                    .isGreaterThanOrEqualTo(150)
                    .isLessThan(5_000);
            assertThat(connecting.error()).isEqualTo(NbdProtocol.EIO);
            assertThat(connecting.message())
                    .isEqualTo("upstream nbd://127.0.0.1:" + upstream.port + "/: no reply to a READ in 0.2 s: it"
                            + " waited for a new connection, which had not done its handshake");

            signal(upstream, "CONT");
            stopped = false;
            assertThat(read(client, 4, 8192))
                    .as("the next read reconnects")
                    .isEqualTo(Arrays.copyOfRange(data, 8192, 8192 + 4096));
            assertThat(log.messages())
                    .containsExactly(
                            "WARNING export proxied: upstream nbd://127.0.0.1:" + upstream.port + "/ lost: no reply"
                                    + " to a READ in 0.2 s; its requests fail with EIO (Input/output error) until a"
                                    + " connection to it succeeds again (each request tries once)",
                            "INFO export proxied: upstream nbd://127.0.0.1:" + upstream.port + "/ reached again:"
                                    + " a new connection did its handshake");
        } finally {
            if (stopped) {
                signal(upstream, "CONT");
            }
            upstream.close();
        }
    }

    @Test
    void slowUpstreamThatAnswersWithinTheReplyTimeout_keepsItsConnection() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "--filter=delay", "memory", "1M", "rdelay=500ms");
        try (LogRecords log = LogRecords.of(UpstreamBackend.class);
                NbdServer server = proxyWithReplyTimeout(upstream.port, 2);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", true);
            long start = System.nanoTime();
            for (long cookie = 1; cookie <= 3; cookie++) {
                assertThat(read(client, cookie, 0)).hasSize(4096);
            }
            assertThat(millisSince(start))
                    .as("ms for three reads delayed 0.5 s each")
                    .isGreaterThanOrEqualTo(1_400);
            assertThat(backend(server).openConnections())
                    .as("the pool's one connection")
                    .isEqualTo(1);
            assertThat(log.messages()).as("nothing lost").isEmpty();
        } finally {
            upstream.close();
        }
    }

    @Test
    void idleConnectionWithUnflushedWrites_flushesBeforeItDisconnects() throws Exception {
        // Without multi-conn, a flush on the connection that replaces an idle one need not cover its writes.
        String nbdkit = Programs.require("nbdkit");
        Path log = dir.resolve("nbdkit.log");
        Programs.Daemon upstream = Programs.Daemon.start(
                nbdkit, "-f", "-i", "127.0.0.1", "-p", "{port}", "--filter=log", "memory", "1M", "logfile=" + log);
        try (NbdServer server = proxy(upstream.port, "", 0.2);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("proxied", false);
            client.write(0, 1, 0, new byte[4096]);
            assertThat(client.simpleReply(0).error()).isZero();
            Await.until(
                    "the pool to disconnect when idle", () -> backend(server).openConnections() == 0);
            Await.until(
                    "nbdkit to log the disconnect",
                    () -> logLines(log).stream()
                            .anyMatch(l -> l.contains("Write id=")
                                    && logLines(log).stream()
                                            .anyMatch(d -> d.contains(connection(l) + " Disconnect"))));
            List<String> lines = logLines(log);
            String writer = connection(lines.stream()
                    .filter(l -> l.contains(" Write id="))
                    .findFirst()
                    .orElseThrow());
            List<String> after = lines.subList(indexOf(lines, writer + " Write id="), lines.size());
            assertThat(indexOf(after, writer + " Flush id="))
                    .as("a flush after the write, in:%n%s", lines)
                    .isBetween(0, indexOf(after, writer + " Disconnect"));
        } finally {
            upstream.close();
        }
    }

    private static List<String> logLines(Path log) {
        try {
            return Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** {@code connection=N} of an nbdkit log line. */
    private static String connection(String line) {
        return line.replaceAll(".*(connection=\\d+).*", "$1");
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }
}
