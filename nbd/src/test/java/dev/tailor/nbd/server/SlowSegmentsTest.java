package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Wire;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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

    @Test
    void configuredThresholdAndWindow_areExposed_andAPairQuietForAWindowLeavesTheExposition() throws Exception {
        // A 5 ms threshold and a 10 s window, on a virtual clock: a 6 ms read is slow, a 5 ms one is not; once its
        // segment has had no slow request for a window, its series are gone (bounded cardinality over time too).
        AtomicLong now = new AtomicLong(3_000_000_000L);
        IoMetrics metrics = new IoMetrics(now::get, false, 5_000_000L, 10_000_000_000L, SEGMENT_BYTES);
        IoMetrics.ForExport disk = metrics.forExport("disk");
        answer(now, disk, 7 * SEGMENT_BYTES, 6_000_000L);
        answer(now, disk, 8 * SEGMENT_BYTES, 5_000_000L);
        assertThat(metrics.slowSegments())
                .extracting(SlowSegments.Entry::segment, SlowSegments.Entry::requests)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(7L, 1L));
        assertThat(text(metrics))
                .contains("tailor_nbd_slow_request_threshold_seconds 0.005\n")
                .contains("tailor_nbd_slow_segment_window_seconds 10.0\n")
                .contains("tailor_nbd_slow_requests_total{export=\"disk\",operation=\"read\"} 1")
                .contains("tailor_nbd_slow_segment_requests{export=\"disk\",segment=\"7\"} 1");
        now.addAndGet(10_000_000_000L);
        assertThat(metrics.slowSegments()).isEmpty();
        assertThat(text(metrics))
                .doesNotContain("segment=\"7\"")
                .contains("tailor_nbd_slow_requests_total{export=\"disk\",operation=\"read\"} 1");
        assertThatThrownBy(() -> new IoMetrics(now::get, false, 0, 10, 1)).hasMessageContaining("slowRequestNanos: 0");
    }

    @Test
    void oneScrape_readsTheTopOnce_soItsFamiliesAgree() throws Exception {
        // A clock that moves an epoch (half the 10 s window) on at every reading while scraping: if each family read
        // the top on its own, the third reading would find the pair gone and the families would disagree.
        AtomicLong now = new AtomicLong(3_000_000_000L);
        java.util.concurrent.atomic.AtomicBoolean scraping = new java.util.concurrent.atomic.AtomicBoolean();
        IoMetrics metrics = new IoMetrics(
                () -> scraping.get() ? now.getAndAdd(5_000_000_000L) : now.get(),
                false,
                5_000_000L,
                10_000_000_000L,
                SEGMENT_BYTES);
        IoMetrics.ForExport disk = metrics.forExport("disk");
        answer(now, disk, 7 * SEGMENT_BYTES, 6_000_000L);
        scraping.set(true);
        String text = text(metrics);
        scraping.set(false);
        assertThat(text)
                .contains("tailor_nbd_slow_segment_requests{export=\"disk\",segment=\"7\"} 1.0\n")
                .contains("tailor_nbd_slow_segment_overcount{export=\"disk\",segment=\"7\"} 0.0\n")
                .contains("tailor_nbd_slow_segment_seen_requests{export=\"disk\",segment=\"7\"} 1.0\n")
                .contains("tailor_nbd_slow_segment_admission_wait_seconds{export=\"disk\",segment=\"7\"} 0.0\n")
                .contains("tailor_nbd_slow_segment_backend_seconds{export=\"disk\",segment=\"7\"} 0.0\n")
                .contains(
                        "tailor_nbd_slow_segment_admitted_requests{class=\"none\",export=\"disk\",segment=\"7\"} 1.0\n")
                .contains(
                        "tailor_nbd_slow_segment_admitted_requests{class=\"steady\",export=\"disk\",segment=\"7\"} 0.0\n");
        assertThat(text.lines().filter(l -> l.startsWith("# TYPE tailor_nbd_slow_segment_")))
                .containsExactlyInAnyOrder(
                        "# TYPE tailor_nbd_slow_segment_window_seconds gauge",
                        "# TYPE tailor_nbd_slow_segment_requests gauge",
                        "# TYPE tailor_nbd_slow_segment_overcount gauge",
                        "# TYPE tailor_nbd_slow_segment_seen_requests gauge",
                        "# TYPE tailor_nbd_slow_segment_admission_wait_seconds gauge",
                        "# TYPE tailor_nbd_slow_segment_backend_seconds gauge",
                        "# TYPE tailor_nbd_slow_segment_admitted_requests gauge");
    }

    private static String text(IoMetrics metrics) throws java.io.IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ExpositionFormats.init().getPrometheusTextFormatWriter().write(out, metrics.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void answer(AtomicLong now, IoMetrics.ForExport export, long offset, long durationNanos) {
        long start = now.get();
        now.addAndGet(durationNanos);
        export.answered(NbdProtocol.CMD_READ, start, offset, 4096, 0);
    }

    /** The window of the property tests, ns: epochs of 500. */
    private static final long WINDOW = 1_000;

    /** Gaps between slow requests in the property tests, ns: most in the same epoch, some across one or several. */
    private static final long[] GAPS = {0, 0, 3, 10, 40, 120, 499, 1_300};

    @Test
    void windowedSpaceSaving_countsBoundTheTrueCountsInTheSpan_andEveryFrequentPairIsKept() {
        // The guarantees over the span reported (start of the previous epoch to now), checked after every request
        // against exact counts on skewed streams whose time jumps within an epoch, to the next and past several.
        qt().withFixedSeed(19)
                .withExamples(200)
                .forAll(
                        lists().of(integers().between(0, 40 * GAPS.length - 1)).ofSizeBetween(0, 250),
                        integers().between(1, 12))
                .checkAssert((stream, capacity) -> {
                    SlowSegments slow = new SlowSegments(capacity, 100, WINDOW);
                    List<long[]> recorded = new ArrayList<>(); // {time, segment}
                    long now = 5_000;
                    for (int value : stream) {
                        now += GAPS[value / 40];
                        int v = value % 40;
                        long segment = v < 20 ? v % 4 : v; // half of the stream in 4 segments
                        slow.record(now, "disk", segment * 100 + 7);
                        recorded.add(new long[] {now, segment});
                        assertGuarantees(slow.top(now), recorded, now, capacity);
                    }
                    // Later, with no slow request: a window on, nothing is reported.
                    assertGuarantees(slow.top(now + WINDOW / 2), recorded, now + WINDOW / 2, capacity);
                    assertThat(slow.top(now + WINDOW)).isEmpty();
                });
    }

    /** What {@link SlowSegments#top} promises at {@code now}, against the exact counts of {@code recorded}. */
    private static void assertGuarantees(List<SlowSegments.Entry> top, List<long[]> recorded, long now, int capacity) {
        long epoch = WINDOW / 2;
        long spanStart = (Math.floorDiv(now, epoch) - 1) * epoch;
        Map<Long, Long> exact = new HashMap<>();
        long total = 0;
        for (long[] r : recorded) {
            if (r[0] >= spanStart) {
                exact.merge(r[1], 1L, Long::sum);
                total++;
            }
        }
        assertThat(top).hasSizeLessThanOrEqualTo(capacity);
        assertThat(now - spanStart).isBetween(WINDOW / 2, WINDOW);
        for (SlowSegments.Entry entry : top) {
            long truth = exact.getOrDefault(entry.segment(), 0L);
            assertThat(truth).as("a reported pair was slow in the span").isPositive();
            assertThat(entry.requests()).isGreaterThanOrEqualTo(truth);
            assertThat(entry.seen()).isBetween(0L, truth);
        }
        long all = total;
        exact.forEach((segment, count) -> {
            if (count * capacity > all) {
                assertThat(top).extracting(SlowSegments.Entry::segment).contains(segment);
            }
        });
    }

    @Test
    void aHotSegment_leavesTheTopOnceItIsQuietForAWindow_andTheNewHotOneTakesItsPlace() {
        // "Which segments are slow now": segment 1 was slow for 10 minutes, segment 2 is slow since a moment ago.
        long second = 1_000_000_000L;
        SlowSegments slow = new SlowSegments(3, 1, 60 * second);
        for (long t = 0; t < 600; t++) {
            for (int i = 0; i < 10; i++) {
                slow.record(t * second, "disk", 1);
            }
        }
        for (long t = 600; t < 660; t++) {
            slow.record(t * second, "disk", 2);
        }
        List<SlowSegments.Entry> top = slow.top(660 * second);
        assertThat(top).extracting(SlowSegments.Entry::segment).containsExactly(2L);
        // The span is the epoch before the current one and this one: 30 s to 60 s back.
        assertThat(top.get(0).requests()).isEqualTo(30);
        assertThat(top.get(0).overcount()).isZero();
        assertThat(slow.top(720 * second)).isEmpty();
    }

    @Test
    void aClockReadingFromJustBeforeTheCurrentEpoch_countsInIt() {
        // Threads read the clock before taking the lock, so a reading may be a little older than the last one.
        SlowSegments slow = new SlowSegments(2, 1, 100);
        slow.record(250, "disk", 0);
        slow.record(249, "disk", 1);
        assertThat(slow.top(250)).extracting(SlowSegments.Entry::requests).containsExactly(1L, 1L);
        assertThat(slow.top(349)).extracting(SlowSegments.Entry::segment).containsExactly(0L, 1L);
        assertThat(slow.top(350)).isEmpty();
    }

    @Test
    void badSizes_areNamed() {
        assertThatThrownBy(() -> new SlowSegments(0, 1, 2)).hasMessageContaining("capacity: 0");
        assertThatThrownBy(() -> new SlowSegments(1, 0, 2)).hasMessageContaining("segmentSizeBytes: 0");
        assertThatThrownBy(() -> new SlowSegments(1, 1, 1)).hasMessageContaining("windowNanos: 1");
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
        try (Embedded server = new Embedded(backend, Limits.DEFAULTS, admission, metrics)) {
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
                .contains("tailor_nbd_slow_segment_seen_requests{export=\"disk\",segment=\"2\"} 1")
                .contains("tailor_nbd_slow_segment_admission_wait_seconds{export=\"disk\",segment=\"2\"} 0.03")
                .contains("tailor_nbd_slow_segment_backend_seconds{export=\"disk\",segment=\"2\"} 0.04")
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
        SlowSegments slow = new SlowSegments(1, 100, 1_000);
        slow.record(10, "a", 0, 5, 7, SlowSegments.HOT);
        slow.record(20, "b", 0, 1, 2, SlowSegments.NOT_ADMITTED);
        assertThat(slow.top(30)).containsExactly(new SlowSegments.Entry("b", 0, 2, 1, 1, 2, 0, 0));
        assertThat(slow.top(30).get(0).seen()).isEqualTo(1);
        // In the next epoch "a" has the one counter, exact (1); the previous epoch's full table says it may have had
        // up to its smallest counter there (2), all of it overcount. "b", without a counter now, may have had up to 1
        // now: 3 each, tied, and the tie goes by export. The sums are those of the requests seen, "a"'s new one.
        slow.record(600, "a", 0, 3, 4, SlowSegments.STEADY);
        assertThat(slow.top(600)).containsExactly(new SlowSegments.Entry("a", 0, 3, 2, 3, 4, 1, 0));
    }
}
