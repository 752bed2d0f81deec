package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.admission.SegmentClass;
import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.backend.UpstreamBackend;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.LoopSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingDeque;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection that dies with writes queued must not overwrite what another connection wrote and was
 * told was written. The case that showed it: with admission on (10⁷ cost units/s, 64 requests per
 * segment), connection A sends 20 writes of 1 MiB at offset 0 and resets its socket; connection B
 * then writes 4 KiB at offset 0 and has the write and a FLUSH acknowledged; a read showed B's data,
 * then A's 0.27 s later, as admission let A's queued writes through one by one.
 *
 * <p>Each test plays that sequence over raw sockets against a real server and a real backend, where
 * a request can wait before it reaches the backend: in admission's queue (file and upstream
 * backends), in a file backend's I/O queue (admission off), and in flight at a slow upstream (admission
 * off: not droppable any more, so B's overlapping write must wait for it). After B's acknowledged
 * write and FLUSH, once nothing is left waiting, a read must return B's data.
 */
class DeadConnectionWritesTest {

    private static final int MIB = 1 << 20;
    private static final int STALE_WRITES = 20;
    private static final byte STALE = (byte) 0xaa;
    private static final byte NEWER = (byte) 0xbb;

    @TempDir
    Path dir;

    /** Admission as the proxy ran it when the bug showed. */
    private static AdmissionSettings admission(boolean on) {
        return AdmissionSettings.builder()
                .enabled(on)
                .capacityCostUnitsPerSecond(1e7)
                .queueCapacityPerSegment(64)
                .build();
    }

    private static NbdConfig config(ExportConfig export, boolean admissionOn) {
        return NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(2)
                .fileIoThreads(2)
                .exports(export)
                .admission(admission(admissionOn))
                .loop(LoopSettings.builder().metricsListen("127.0.0.1:0").build())
                .build();
    }

    private static byte[] filled(int bytes, byte value) {
        byte[] data = new byte[bytes];
        Arrays.fill(data, value);
        return data;
    }

    /**
     * Connection A: {@code count} writes of 1 MiB of {@link #STALE} at offset 0, then a read past the
     * end, which the server answers EINVAL at once. A connection handles its requests in order, so that
     * answer means the server has taken all the writes; their replies are not read (A resets next).
     */
    private static RawClient sendStaleWrites(NbdServer server, int count) throws IOException {
        RawClient a = RawClient.connect(server.localAddress()).handshake();
        long sizeBytes = a.go("disk", false).sizeBytes();
        for (int i = 1; i <= count; i++) {
            a.write(0, i, 0, filled(MIB, STALE));
        }
        a.request(0, NbdProtocol.CMD_READ, 999, sizeBytes, 4096);
        RawClient.SimpleReply reply;
        do {
            reply = a.simpleReply(0);
        } while (reply.cookie() != 999);
        assertThat(reply.error()).isEqualTo(NbdProtocol.EINVAL);
        return a;
    }

    /** Connection B: a 4 KiB write of {@link #NEWER} at offset 0, acknowledged, then a FLUSH. */
    private static RawClient writeNewerAndFlush(NbdServer server) throws IOException {
        RawClient b = RawClient.connect(server.localAddress()).handshake();
        b.go("disk", false);
        b.write(0, 100, 0, filled(4096, NEWER));
        RawClient.SimpleReply written = b.simpleReply(0);
        assertThat(written.cookie()).isEqualTo(100);
        assertThat(written.error()).as("B's write acknowledged").isZero();
        b.request(0, NbdProtocol.CMD_FLUSH, 101, 0, 0);
        assertThat(b.simpleReply(0).error()).as("B's FLUSH acknowledged").isZero();
        return b;
    }

    private static byte[] read4k(RawClient client, long cookie) throws IOException {
        client.request(0, NbdProtocol.CMD_READ, cookie, 0, 4096);
        RawClient.SimpleReply reply = client.simpleReply(4096);
        assertThat(reply.error()).isZero();
        return reply.data();
    }

    private static String metrics(NbdServer server) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + server.metricsAddress().getPort() + "/metrics");
        return HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }

    @Test
    void admissionOn_fileBackend_queuedWritesOfAResetConnectionAreDropped_andCounted() throws Exception {
        try (NbdServer server = NbdServer.start(
                config(ExportConfig.file("disk", "acme", 64L * MIB, false, dir.resolve("disk.img")), true))) {
            int admitted = deadWriterThenNewerWriter(server);
            // A's writes that admission had not let through were dropped and counted (one it let
            // through may have been dropped too, on its way to a file thread); those waiting in its
            // queue were withdrawn from it.
            String text = metrics(server);
            long dropped = counter(text, "tailor_nbd_export_dropped_requests_total{export=\"disk\"}");
            long cancelled = counter(text, "tailor_nbd_admission_cancelled_total");
            assertThat(dropped).isBetween((long) STALE_WRITES - admitted, (long) STALE_WRITES);
            // Admission lets four of A's writes through per second: most were still waiting at the reset.
            // (Without the drop, B's write would wait behind them all and still be read back, so this
            // is what fails.)
            assertThat(dropped).as("A's writes dropped").isPositive();
            assertThat(cancelled).isBetween(0L, dropped);
            assertThat(dropped).isEqualTo(server.exports().get(0).droppedRequests());
        }
    }

    private static long counter(String metrics, String series) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series + " ")) {
                return (long)
                        Double.parseDouble(line.substring(series.length() + 1).strip());
            }
        }
        throw new AssertionError("no " + series + " in\n" + metrics);
    }

    @Test
    void admissionOn_upstreamBackend_queuedWritesOfAResetConnectionAreDropped() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit, "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", "{port}", "memory", "64M");
                NbdServer server = NbdServer.start(config(
                        ExportConfig.upstream(
                                "disk",
                                "acme",
                                false,
                                new ExportConfig.Upstream("127.0.0.1", upstream.port, "", 4, null, null)),
                        true))) {
            int admitted = deadWriterThenNewerWriter(server);
            long dropped = server.exports().get(0).droppedRequests();
            assertThat(dropped).isBetween((long) STALE_WRITES - admitted, (long) STALE_WRITES);
            assertThat(dropped).as("A's writes dropped").isPositive();
        }
    }

    /**
     * A's writes wait in admission's queue (a 1 MiB write costs 25 intervals' budget: four go per
     * second); A resets; B writes.
     *
     * @return how many of A's writes admission let through
     */
    private static int deadWriterThenNewerWriter(NbdServer server) throws Exception {
        RawClient a = sendStaleWrites(server, STALE_WRITES);
        a.reset();
        Await.until("the server to see A's reset", () -> server.connections() == 0);
        // A's burst made the segment hot, so a write arriving at once would wait behind A's (hot requests
        // wait behind everything). In the case that showed the bug B wrote 1 s later, when the segment
        // had calmed down (R = 50 calm boundaries) and B's steady write went ahead of A's hot backlog.
        Await.until(
                "the segment to calm down",
                () -> server.admission().controller().segmentClass(0) == SegmentClass.STEADY);
        try (RawClient b = writeNewerAndFlush(server)) {
            // Admission lets a queued 1 MiB write through every 0.25 s: had A's writes stayed queued,
            // they would all have reached the disk by the time nothing waits.
            Await.until(
                    "nothing to wait for admission", () -> server.admission().waitingRequests() == 0);
            assertThat(read4k(b, 102)).as("B's acknowledged data").isEqualTo(filled(4096, NEWER));
            assertThat(read4k(b, 103)).as("B's acknowledged data, read again").isEqualTo(filled(4096, NEWER));
        }
        // Admitted: A's that reached the disk (or were on their way), B's write and two reads.
        return (int) server.admission().stats().admittedRequests() - 3;
    }

    /**
     * The file backend's I/O queue, made visible: tasks wait until the test runs them, newest first
     * (a pool of several threads finishes them in no fixed order; this is the worst one).
     */
    private static final class HeldTasks implements Executor {
        private final LinkedBlockingDeque<Runnable> tasks = new LinkedBlockingDeque<>();

        @Override
        public void execute(Runnable task) {
            tasks.addLast(task);
        }

        int size() {
            return tasks.size();
        }

        void runNewest() {
            tasks.pollLast().run();
        }

        void runAll() {
            Runnable task;
            while ((task = tasks.pollLast()) != null) {
                task.run();
            }
        }
    }

    @Test
    void admissionOff_fileBackend_writesQueuedForTheFileThreadsOfAResetConnectionAreDropped() throws Exception {
        HeldTasks io = new HeldTasks();
        Path file = dir.resolve("disk.img");
        NbdConfig config = config(ExportConfig.file("disk", "acme", 64L * MIB, false, file), false);
        try (NbdServer server = NbdServer.start(
                config,
                RequestDispatcher.DIRECT,
                (export, context) -> FileBackend.open(file, 64L * MIB, false, io, context.alloc()))) {
            RawClient a = sendStaleWrites(server, STALE_WRITES);
            a.reset();
            Await.until("the server to see A's reset", () -> server.connections() == 0);
            try (RawClient b = RawClient.connect(server.localAddress()).handshake()) {
                b.go("disk", false);
                int queued = io.size();
                b.write(0, 100, 0, filled(4096, NEWER));
                Await.until("B's write to wait for a file thread", () -> io.size() == queued + 1);
                io.runNewest();
                assertThat(b.simpleReply(0).error())
                        .as("B's write acknowledged")
                        .isZero();
                b.request(0, NbdProtocol.CMD_FLUSH, 101, 0, 0);
                Await.until("B's FLUSH to wait for a file thread", () -> io.size() == queued + 1);
                io.runNewest();
                assertThat(b.simpleReply(0).error())
                        .as("B's FLUSH acknowledged")
                        .isZero();
                io.runAll();
                b.request(0, NbdProtocol.CMD_READ, 102, 0, 4096);
                Await.until("B's read to wait for a file thread", () -> io.size() == 1);
                io.runNewest();
                RawClient.SimpleReply read = b.simpleReply(4096);
                assertThat(read.data()).as("B's acknowledged data").isEqualTo(filled(4096, NEWER));
            }
        }
    }

    @Test
    void admissionOff_upstreamBackend_aWriteOverlappingOlderOnesInFlightUpstreamWaitsForThem() throws Exception {
        // nbdkit with one thread per connection and 200 ms per write. Sent together, A's five writes,
        // spread over the pool connections of A's event loop, would reach the disk over 600 ms, and B's
        // write, on the other event loop's pool connections, would be done after 200 ms and then
        // overwritten. A write in flight upstream cannot be taken back: B's must wait for it.
        String nbdkit = Programs.require("nbdkit");
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit,
                        "--exit-with-parent",
                        "-f",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        "{port}",
                        "-t",
                        "1",
                        "--filter=delay",
                        "memory",
                        "64M",
                        "wdelay=200ms");
                NbdServer server = NbdServer.start(config(
                        ExportConfig.upstream(
                                "disk",
                                "acme",
                                false,
                                new ExportConfig.Upstream("127.0.0.1", upstream.port, "", 4, null, null)),
                        false))) {
            UpstreamBackend pool = (UpstreamBackend) server.exports().get(0).backend();
            RawClient a = sendStaleWrites(server, 5);
            Await.until("A's first write to be in flight upstream", () -> pool.requestsAwaitingReply() >= 1);
            a.reset();
            Await.until("the server to see A's reset", () -> server.connections() == 0);
            try (RawClient b = writeNewerAndFlush(server)) {
                Await.until("nothing in flight upstream", () -> pool.requestsAwaitingReply() == 0);
                assertThat(read4k(b, 102)).as("B's acknowledged data").isEqualTo(filled(4096, NEWER));
            }
        }
    }
}
