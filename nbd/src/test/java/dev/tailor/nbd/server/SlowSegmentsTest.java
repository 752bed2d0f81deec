package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Wire;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Slow-request attribution: requests above the slow threshold are counted per export and operation and
 * attributed to their (export, segment), of which only the top pairs are kept and exported
 * ({@link SlowSegments}, space-saving). On a virtual clock: a bursty export whose slow requests gather
 * in two segments is named as the hot one, beside a steady export whose few slow requests are spread.
 */
class SlowSegmentsTest {

    private static final long SEGMENT_BYTES = 1L << 30;
    private static final long THRESHOLD_NANOS = 50_000_000L;

    @Test
    void slowRequests_ofABurstInTwoSegments_nameThoseSegmentsFirst_andFastOnesAreNotAttributed() throws Exception {
        AtomicLong now = new AtomicLong();
        IoMetrics metrics = new IoMetrics(now::get, false, THRESHOLD_NANOS, SEGMENT_BYTES);
        IoMetrics.ForExport steady = metrics.forExport("steady");
        IoMetrics.ForExport bursty = metrics.forExport("bursty");
        Random random = new Random(11);
        for (int i = 0; i < 2_000; i++) {
            // Steady: fast reads everywhere; one in 100 slow (an unlucky wait), at a random segment of 64.
            long offset = (random.nextInt(64) * SEGMENT_BYTES) + 4096L * random.nextInt(1000);
            answer(now, steady, offset, i % 100 == 0 ? 80_000_000L : 2_000_000L);
            // Bursty: every tenth request waits behind its own burst, in segments 2 and 3.
            long burstOffset = (2 + (i / 10) % 2) * SEGMENT_BYTES + 4096L * random.nextInt(1000);
            answer(now, bursty, burstOffset, i % 10 == 0 ? 200_000_000L : 1_000_000L);
        }
        // A request exactly at the threshold is not slow.
        answer(now, steady, 0, THRESHOLD_NANOS);

        List<SlowSegments.Entry> top = metrics.slowSegments();
        assertThat(top).hasSizeLessThanOrEqualTo(IoMetrics.SLOW_SEGMENTS_KEPT);
        assertThat(top.subList(0, 2))
                .extracting(SlowSegments.Entry::export, SlowSegments.Entry::segment)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("bursty", 2L),
                        org.assertj.core.groups.Tuple.tuple("bursty", 3L));
        assertThat(top.get(0).requests()).isEqualTo(100);
        assertThat(top.get(0).overcount()).isZero();

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ExpositionFormats.init().getPrometheusTextFormatWriter().write(out, metrics.scrape());
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text)
                .contains("tailor_nbd_slow_requests_total{export=\"bursty\",operation=\"read\"} 200")
                .contains("tailor_nbd_slow_requests_total{export=\"steady\",operation=\"read\"} 20")
                .contains("tailor_nbd_slow_segment_requests{export=\"bursty\",segment=\"2\"} 100")
                .contains("tailor_nbd_slow_segment_requests{export=\"bursty\",segment=\"3\"} 100")
                .contains("tailor_nbd_slow_segment_overcount{export=\"bursty\",segment=\"2\"} 0");
        // Bounded cardinality: never more series than pairs kept, however many segments were slow.
        assertThat(text.lines().filter(l -> l.startsWith("tailor_nbd_slow_segment_requests{")))
                .hasSize(IoMetrics.SLOW_SEGMENTS_KEPT);
    }

    private static void answer(AtomicLong now, IoMetrics.ForExport export, long offset, long durationNanos) {
        long start = now.get();
        now.addAndGet(durationNanos);
        export.answered(NbdProtocol.CMD_READ, start, offset, 4096, 0);
    }

    @Test
    void spaceSaving_countsBoundTheTrueCounts_andEveryFrequentPairIsKept() {
        // The algorithm's guarantees (Metwally et al. 2005), checked against exact counts on skewed streams.
        qt().withFixedSeed(19)
                .withExamples(300)
                .forAll(
                        lists().of(integers().between(0, 40)).ofSizeBetween(0, 500),
                        integers().between(1, 12))
                .checkAssert((stream, capacity) -> {
                    SlowSegments slow = new SlowSegments(capacity, 100);
                    Map<Long, Long> exact = new HashMap<>();
                    for (int value : stream) {
                        long segment = value < 20 ? value % 4 : value; // half of the stream in 4 segments
                        slow.record("disk", segment * 100 + 7);
                        exact.merge(segment, 1L, Long::sum);
                    }
                    List<SlowSegments.Entry> top = slow.top();
                    assertThat(top).hasSizeLessThanOrEqualTo(capacity);
                    for (SlowSegments.Entry entry : top) {
                        long truth = exact.getOrDefault(entry.segment(), 0L);
                        assertThat(entry.requests()).isGreaterThanOrEqualTo(truth);
                        assertThat(entry.requests() - entry.overcount()).isLessThanOrEqualTo(truth);
                    }
                    exact.forEach((segment, count) -> {
                        if (count > stream.size() / capacity) {
                            assertThat(top)
                                    .extracting(SlowSegments.Entry::segment)
                                    .contains(segment);
                        }
                    });
                });
    }

    @Test
    void badSizes_areNamed() {
        assertThatThrownBy(() -> new SlowSegments(0, 1)).hasMessageContaining("capacity: 0");
        assertThatThrownBy(() -> new SlowSegments(1, 0)).hasMessageContaining("segmentSizeBytes: 0");
    }

    @Test
    void slowRequest_throughAConnection_isSplitIntoAdmissionWaitAndBackendTime_withItsClass() throws Exception {
        // The connection's own bookkeeping, on a virtual clock: a read waits 30 ms in (a stand-in for) admission,
        // admitted hot, then 40 ms on the backend. It is slow (70 ms), and its segment's entry says where the time
        // went; a fast read in another segment is not attributed. Every answered request is traced once, at its flush.
        AtomicLong now = new AtomicLong(1_000_000_000L);
        IoMetrics metrics = new IoMetrics(now::get, false, THRESHOLD_NANOS, 1L << 20);
        GatedBackend backend = new GatedBackend(4 << 20);
        RequestDispatcher admission = (export, request, completion) -> {
            if (request.offsetBytes() >= 2 << 20) {
                now.addAndGet(30_000_000L);
                request.admitted(30_000_000L, true);
            }
            export.backend().submit(request, completion);
        };
        try (Embedded server = new Embedded(backend, NbdConfig.Limits.DEFAULTS, admission, metrics)) {
            server.feed(new Wire().handshake("disk", false)).skipHandshake();
            server.feed(new Wire().request(0, NbdProtocol.CMD_READ, 1, (2 << 20) + 4096, 4096));
            GatedBackend.Held slow = backend.next();
            now.addAndGet(40_000_000L);
            backend.pass(slow);
            server.drain();
            assertThat(server.simpleReplyCookie(4096)).isEqualTo(1);
            server.feed(new Wire().request(0, NbdProtocol.CMD_READ, 2, 0, 4096));
            now.addAndGet(1_000_000L);
            backend.pass(backend.next());
            server.drain();
            assertThat(server.simpleReplyCookie(4096)).isEqualTo(2);
        }

        assertThat(metrics.slowSegments())
                .containsExactly(new SlowSegments.Entry("disk", 2, 1, 0, 30_000_000L, 40_000_000L, 0, 1));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ExpositionFormats.init().getPrometheusTextFormatWriter().write(out, metrics.scrape());
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text)
                .contains("tailor_nbd_slow_segment_admission_wait_seconds_count{export=\"disk\",segment=\"2\"} 1")
                .contains("tailor_nbd_slow_segment_admission_wait_seconds_sum{export=\"disk\",segment=\"2\"} 0.03")
                .contains("tailor_nbd_slow_segment_backend_seconds_sum{export=\"disk\",segment=\"2\"} 0.04")
                .contains("tailor_nbd_slow_segment_admitted_requests{class=\"hot\",export=\"disk\",segment=\"2\"} 1")
                .contains("tailor_nbd_slow_segment_admitted_requests{class=\"steady\",export=\"disk\",segment=\"2\"} 0")
                .contains("tailor_nbd_slow_segment_admitted_requests{class=\"none\",export=\"disk\",segment=\"2\"} 0")
                // Traced at the flush: both requests, no unrelated wait on this (embedded) loop.
                .contains("tailor_nbd_request_loop_unrelated_wait_seconds_count{export=\"disk\"} 2")
                .contains("tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export=\"disk\",le=\"1.0E-6\"} 2")
                .contains("tailor_nbd_request_loop_work_seconds_count{export=\"disk\"} 2");
    }

    @Test
    void evictedPair_restartsItsSplit_soTheSumsCoverTheSeenRequestsOnly() {
        // Capacity 1: a second pair evicts the first and inherits its count as overcount, but not its times; the
        // summaries' count is the requests seen since the pair took its place.
        SlowSegments slow = new SlowSegments(1, 100);
        slow.record("a", 0, 5, 7, SlowSegments.HOT);
        slow.record("b", 0, 1, 2, SlowSegments.NOT_ADMITTED);
        assertThat(slow.top()).containsExactly(new SlowSegments.Entry("b", 0, 2, 1, 1, 2, 0, 0));
        assertThat(slow.top().get(0).seen()).isEqualTo(1);
    }
}
