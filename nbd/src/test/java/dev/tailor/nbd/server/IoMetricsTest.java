package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.LoopSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-export I/O metrics on {@code /metrics}: requests, bytes, durations, errors, requests dropped, connections,
 * JVM.
 */
class IoMetricsTest {

    @TempDir
    Path dir;

    @Test
    void requests_areCountedPerExportAndOperation_onTheMetricsEndpoint() throws Exception {
        NbdConfig config = TestServers.config(
                        Limits.DEFAULTS,
                        ExportConfig.file("disk", "acme", 1L << 20, false, dir.resolve("disk.img")),
                        ExportConfig.file("ro", "acme", 1L << 20, false, dir.resolve("ro.img")))
                .toBuilder()
                .loop(LoopSettings.builder().metricsListen("127.0.0.1:0").build())
                .build();
        try (NbdServer server = NbdServer.start(config)) {
            try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
                client.go("disk", false);
                client.write(0, 1, 0, new byte[8192]);
                assertThat(client.simpleReply(0).error()).isZero();
                client.request(0, NbdProtocol.CMD_READ, 2, 0, 4096);
                assertThat(client.simpleReply(4096).error()).isZero();
                client.request(0, NbdProtocol.CMD_READ, 3, 4096, 4096);
                assertThat(client.simpleReply(4096).error()).isZero();
                client.request(0, NbdProtocol.CMD_READ, 4, 1L << 20, 4096);
                assertThat(client.simpleReply(0).error()).isEqualTo(NbdProtocol.EINVAL);
                client.request(0, NbdProtocol.CMD_CACHE, 5, 0, 4096);
                assertThat(client.simpleReply(0).error()).isEqualTo(NbdProtocol.EINVAL);

                String metrics = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                                + server.metricsAddress().getPort() + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
                assertThat(metrics)
                        .contains("tailor_nbd_requests_total{export=\"disk\",operation=\"read\"} 3")
                        .contains("tailor_nbd_requests_total{export=\"disk\",operation=\"write\"} 1")
                        .contains("tailor_nbd_requests_total{export=\"disk\",operation=\"other\"} 1")
                        .contains("tailor_nbd_requests_total{export=\"ro\",operation=\"read\"} 0")
                        .contains("tailor_nbd_request_bytes_total{export=\"disk\",operation=\"read\"} 8192")
                        .contains("tailor_nbd_request_bytes_total{export=\"disk\",operation=\"write\"} 8192")
                        .contains("tailor_nbd_request_errors_total{error=\"einval\",export=\"disk\","
                                + "operation=\"read\"} 1")
                        .contains("tailor_nbd_request_errors_total{error=\"einval\",export=\"disk\","
                                + "operation=\"other\"} 1")
                        .contains("tailor_nbd_request_duration_seconds_count{export=\"disk\",operation=\"read\"} 3")
                        .contains("tailor_nbd_request_duration_seconds_bucket{export=\"disk\",operation=\"read\","
                                + "le=\"+Inf\"} 3")
                        .contains("tailor_nbd_export_connections{export=\"disk\"} 1")
                        .contains("tailor_nbd_export_connections{export=\"ro\"} 0")
                        .contains("jvm_memory_used_bytes")
                        .contains("process_cpu_seconds_total")
                        .contains("tailor_nbd_loop_unrelated_tasks_total");
            }
        }
    }

    @Test
    void durations_areTheTimeFromDecodeToReply_inSecondsAndBuckets() {
        AtomicLong now = new AtomicLong(1_000_000);
        IoMetrics metrics = new IoMetrics(now::get, false);
        IoMetrics.ForExport disk = metrics.forExport("disk");
        long start = metrics.nowNanos();
        now.addAndGet(3_000_000); // 3 ms
        disk.answered(NbdProtocol.CMD_WRITE, start, 4096, 0);
        disk.answered(NbdProtocol.CMD_FLUSH, metrics.nowNanos(), 0, NbdProtocol.EIO);
        disk.connected();
        disk.connected();
        disk.disconnected();
        String text = new ProxyBackgroundWorkTextFormat().render(metrics);
        assertThat(text)
                .contains("tailor_nbd_request_duration_seconds_bucket{export=\"disk\",operation=\"write\","
                        + "le=\"0.0025\"} 0")
                .contains("tailor_nbd_request_duration_seconds_bucket{export=\"disk\",operation=\"write\",le=\"0.005\"}"
                        + " 1")
                .contains("tailor_nbd_request_duration_seconds_sum{export=\"disk\",operation=\"write\"} 0.003")
                .contains("tailor_nbd_request_bytes_total{export=\"disk\",operation=\"write\"} 4096")
                .contains("tailor_nbd_request_errors_total{error=\"eio\",export=\"disk\",operation=\"flush\"} 1")
                .contains("tailor_nbd_export_connections{export=\"disk\"} 1")
                .doesNotContain("jvm_");
        assertThat(disk.requests(NbdProtocol.CMD_WRITE)).isEqualTo(1);
        assertThat(disk.bytes(NbdProtocol.CMD_FLUSH)).isZero();
    }

    @Test
    void requestsOfAClientThatWentAway_countAsDropped_notAsErrorReplies() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend)) {
            RawClient client = RawClient.connect(server.localAddress()).handshake();
            client.go("disk", false);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            client.request(0, NbdProtocol.CMD_READ, 2, 4096, 4096);
            client.write(0, 3, 8192, new byte[4096]);
            // One connection's requests reach the backend in their order. The first read has not started there when
            // the client goes, so it is dropped (failed with EIO, never run); the second read and the write have,
            // and finish after it: the read failing on the disk, the write succeeding.
            GatedBackend.Held notStarted = backend.next();
            GatedBackend.Held failing = backend.next();
            GatedBackend.Held succeeding = backend.next();
            assertThat(notStarted.request().cookie()).isEqualTo(1);
            assertThat(failing.request().claim()).isTrue();
            assertThat(succeeding.request().claim()).isTrue();
            client.reset();
            Await.until("the server to see the reset", () -> server.connections() == 0);
            failing.request().release();
            failing.completion().tryFailure(new NbdException(NbdProtocol.EIO, "a disk error"));
            backend.pass(succeeding);
            IoMetrics.ForExport disk = server.exports().get(0).io();
            Await.until(
                    "the three requests to finish",
                    () -> disk.requests(NbdProtocol.CMD_READ) == 2 && disk.requests(NbdProtocol.CMD_WRITE) == 1);
            // Their counting ends in the loop task that began it: once a task queued on every loop after it has run.
            for (io.netty.util.concurrent.EventExecutor loop : server.eventLoops()) {
                loop.submit(() -> {}).get(10, java.util.concurrent.TimeUnit.SECONDS);
            }

            // No reply was sent: none is an error reply (an alert on error replies would fire on a quiet export
            // whose client was killed), each is counted as dropped.
            String text = new ProxyBackgroundWorkTextFormat().render(server.ioMetrics());
            assertThat(text)
                    .doesNotContain("tailor_nbd_request_errors_total{")
                    .contains("tailor_nbd_requests_dropped_total{export=\"disk\",operation=\"read\"} 2")
                    .contains("tailor_nbd_requests_dropped_total{export=\"disk\",operation=\"write\"} 1")
                    .contains("tailor_nbd_requests_dropped_total{export=\"disk\",operation=\"flush\"} 0")
                    .contains("tailor_nbd_requests_total{export=\"disk\",operation=\"read\"} 2");
            assertThat(server.exports().get(0).droppedRequests())
                    .as("of them, those that never reached the backend")
                    .isEqualTo(1);

            // A client still there gets its error reply, and it counts as one.
            try (RawClient next = RawClient.connect(server.localAddress()).handshake()) {
                next.go("disk", false);
                next.request(0, NbdProtocol.CMD_READ, 4, 0, 4096);
                GatedBackend.Held read = backend.next();
                assertThat(read.request().claim()).isTrue();
                read.request().release();
                read.completion().tryFailure(new NbdException(NbdProtocol.EIO, "a disk error"));
                assertThat(next.simpleReply(0).error()).isEqualTo(NbdProtocol.EIO);
            }
            assertThat(new ProxyBackgroundWorkTextFormat().render(server.ioMetrics()))
                    .contains("tailor_nbd_request_errors_total{error=\"eio\",export=\"disk\",operation=\"read\"} 1")
                    .contains("tailor_nbd_requests_dropped_total{export=\"disk\",operation=\"read\"} 2");
        }
    }

    @Test
    void loopTrace_keepsTheArrivalPartOfTheUnrelatedWaitApart_soTheWaitBehindOtherWorkIsExact() {
        IoMetrics metrics = new IoMetrics(System::nanoTime, false);
        IoMetrics.ForExport disk = metrics.forExport("disk");
        // Unrelated 7 µs (3 of them at arrival), own work 2 µs, loop wait 10 µs at completion and flush: 6 µs of the
        // loop wait was behind other requests' work and the scheduler. A second request waited behind nothing.
        disk.traced(7_000, 3_000, 2_000, 10_000);
        disk.traced(0, 0, 1_000, 0);
        String text = new ProxyBackgroundWorkTextFormat().render(metrics);
        assertThat(text)
                .contains("tailor_nbd_request_loop_wait_seconds_count{export=\"disk\"} 2")
                .contains("tailor_nbd_request_loop_wait_seconds_sum{export=\"disk\"} 1.0E-5")
                .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"1.0E-6\"} 1")
                .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"1.0E-5\"} 2")
                .contains("tailor_nbd_request_loop_unrelated_wait_seconds_sum{export=\"disk\"} 7.0E-6")
                .contains("tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total{export=\"disk\"} 3.0E-6")
                .contains("tailor_nbd_request_loop_work_seconds_sum{export=\"disk\"} 3.0E-6");
    }

    /** Renders a registry's snapshots as the endpoint does. */
    private static final class ProxyBackgroundWorkTextFormat {
        String render(IoMetrics metrics) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            try {
                io.prometheus.metrics.expositionformats.ExpositionFormats.init()
                        .getPrometheusTextFormatWriter()
                        .write(out, metrics.scrape());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return out.toString(java.nio.charset.StandardCharsets.UTF_8);
        }
    }
}
