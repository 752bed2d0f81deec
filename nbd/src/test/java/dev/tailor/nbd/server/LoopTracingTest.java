package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.Await;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Per-request loop tracing on a real server (sockets, the I/O-priority loops): a request whose completion arrives
 * while its loop runs a long unrelated task is recorded as having waited behind that task, and the time its loop spent
 * on its own work is recorded beside it, once per request.
 */
class LoopTracingTest {

    private static final long BUSY_NANOS = 30_000_000L;

    @Test
    void completionArrivingDuringAnUnrelatedTask_isRecordedAsWaitingBehindIt() throws Exception {
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = TestServers.start(backend);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("disk", false);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            GatedBackend.Held held = backend.next();

            // Every loop starts a background task that spins until the test has completed the read, then 30 ms more:
            // the completion is queued on the connection's loop while the task runs, so it waits at least 30 ms.
            List<IoPriorityEventLoop> loops = server.eventLoops().loops();
            CountDownLatch started = new CountDownLatch(loops.size());
            CountDownLatch completed = new CountDownLatch(1);
            for (IoPriorityEventLoop loop : loops) {
                loop.executeUnrelated(() -> {
                    started.countDown();
                    try {
                        completed.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    long until = System.nanoTime() + BUSY_NANOS;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                });
            }
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            backend.pass(held);
            completed.countDown();
            assertThat(client.simpleReply(4096).error()).isZero();

            // Recorded right after the flush, which may be a moment after the client has its reply.
            Await.until("the read's loop trace", () -> count(server, "unrelated_wait") == 1, () -> text(server));
            String text = text(server);
            assertThat(text)
                    .contains("tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export=\"disk\",le=\"0.025\"} 0")
                    .contains("tailor_nbd_request_loop_work_seconds_count{export=\"disk\"} 1");
            assertThat(sum(text, "unrelated_wait")).isGreaterThanOrEqualTo(BUSY_NANOS / 1e9);
            assertThat(sum(text, "work")).isGreaterThan(0);
        }
    }

    private static String text(NbdServer server) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            ExpositionFormats.init()
                    .getPrometheusTextFormatWriter()
                    .write(out, server.ioMetrics().scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static double value(String text, String series) {
        Matcher m =
                Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    private static double count(NbdServer server, String histogram) {
        return value(text(server), "tailor_nbd_request_loop_" + histogram + "_seconds_count{export=\"disk\"}");
    }

    private static double sum(String text, String histogram) {
        return value(text, "tailor_nbd_request_loop_" + histogram + "_seconds_sum{export=\"disk\"}");
    }
}
