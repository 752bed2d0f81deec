package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.nbd.testing.Wire;
import dev.tailor.testkit.Await;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Per-request loop tracing on a real server (sockets, the I/O-priority loops): a request whose completion arrives
 * while its loop runs a long unrelated task is recorded as having waited behind that task, and the time its loop spent
 * on its own work is recorded beside it, once per request. The wall time a request waits for its loop (completion to
 * taken, reply to flush), on the request-timing clock driven by hand: on a real server whose loop is held by other
 * work, and on an embedded connection whose flush the test runs later.
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
            // The wall wait holds the unrelated task too (same clock here: System.nanoTime).
            assertThat(sum(text, "wait")).isGreaterThanOrEqualTo(BUSY_NANOS / 1e9);
        }
    }

    @Test
    void completionTakenLate_andReplyFlushedLate_areTheLoopWait_onTheRequestClock() throws Exception {
        // The request-timing clock is the test's. The backend completes the read at t0 while every loop runs a task of
        // the test (I/O-related work, not unrelated): the loop takes the completion when the task ends, 3 ms later on
        // the clock. It writes the reply and queues its flush behind a second task of the test, which ends 5 ms later.
        AtomicLong now = new AtomicLong(1_000_000_000L);
        GatedBackend backend = new GatedBackend(1 << 20);
        try (NbdServer server = NbdServer.start(
                        TestServers.config(Limits.DEFAULTS, TestServers.export("disk", false)),
                        RequestDispatcher.DIRECT,
                        (export, context) -> backend,
                        now::get);
                RawClient client = RawClient.connect(server.localAddress()).handshake()) {
            client.go("disk", false);
            client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
            GatedBackend.Held held = backend.next();
            List<IoPriorityEventLoop> loops = server.eventLoops().loops();

            CountDownLatch release1 = new CountDownLatch(1);
            CountDownLatch started1 = hold(loops, release1);
            assertThat(started1.await(10, TimeUnit.SECONDS)).isTrue();
            backend.pass(held); // completed at t0; its listener is queued behind the first task
            CountDownLatch release2 = new CountDownLatch(1);
            CountDownLatch started2 = hold(loops, release2); // queued behind the listener
            now.addAndGet(3_000_000L);
            release1.countDown();
            // The second task runs after the listener: the completion was taken at t0 + 3 ms, the reply written then.
            assertThat(started2.await(10, TimeUnit.SECONDS)).isTrue();
            now.addAndGet(5_000_000L);
            release2.countDown();
            assertThat(client.simpleReply(4096).error()).isZero();

            Await.until("the read's loop trace", () -> count(server, "wait") == 1, () -> text(server));
            String text = text(server);
            assertThat(sum(text, "wait")).isEqualTo(8_000_000L / 1e9);
            assertThat(text)
                    .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"0.005\"} 0")
                    .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"0.01\"} 1");
        }
    }

    @Test
    void replyFlushedLater_waitedTheGap_andARequestAnsweredAtOnceHasNoCompletionWait() throws Exception {
        // An embedded connection: the backend completes within the dispatch, so the completion is taken at once; the
        // flush is a task, run when the test drains the channel, 2 ms (then 7 ms) after the reply was written.
        AtomicLong now = new AtomicLong(1_000_000_000L);
        IoMetrics metrics = new IoMetrics(now::get, false);
        try (Embedded server =
                new Embedded(new MemoryBackend(1 << 20), Limits.DEFAULTS, RequestDispatcher.DIRECT, metrics)) {
            server.feed(new Wire().handshake("disk", false)).skipHandshake();
            // A read through the backend.
            server.channel
                    .pipeline()
                    .fireChannelRead(new Wire()
                            .request(0, NbdProtocol.CMD_READ, 1, 0, 4096)
                            .toBuf());
            now.addAndGet(2_000_000L);
            server.drain();
            assertThat(server.simpleReplyCookie(4096)).isEqualTo(1);
            // A zero-length read, answered at once (no backend, no completion).
            server.channel
                    .pipeline()
                    .fireChannelRead(
                            new Wire().request(0, NbdProtocol.CMD_READ, 2, 0, 0).toBuf());
            now.addAndGet(7_000_000L);
            server.drain();
            assertThat(server.simpleReplyCookie(0)).isEqualTo(2);
        }
        String text = render(metrics);
        assertThat(sum(text, "wait")).isCloseTo(0.009, within(1e-12));
        assertThat(text)
                .contains("tailor_nbd_request_loop_wait_seconds_count{export=\"disk\"} 2")
                .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"0.001\"} 0")
                .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"0.0025\"} 1")
                .contains("tailor_nbd_request_loop_wait_seconds_bucket{export=\"disk\",le=\"0.01\"} 2")
                // No unrelated work on an embedded loop: all of it is behind other work (here: the test's).
                .contains("tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export=\"disk\",le=\"1.0E-6\"} 2");
    }

    /** Runs a task on every loop that waits for {@code release}; the returned latch opens when all have started. */
    private static CountDownLatch hold(List<IoPriorityEventLoop> loops, CountDownLatch release) {
        CountDownLatch started = new CountDownLatch(loops.size());
        for (IoPriorityEventLoop loop : loops) {
            loop.execute(() -> {
                started.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        return started;
    }

    private static String text(NbdServer server) {
        return render(server.ioMetrics());
    }

    private static String render(IoMetrics metrics) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            ExpositionFormats.init().getPrometheusTextFormatWriter().write(out, metrics.scrape());
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
