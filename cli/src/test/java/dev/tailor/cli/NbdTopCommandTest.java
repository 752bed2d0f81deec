package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.lab.ExperimentRig;
import dev.tailor.lab.MetricsText;
import dev.tailor.lab.NbdTop;
import dev.tailor.nbd.config.NbdConfigFiles;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tailor nbd top}: a frame computed from two readings (rates, percentiles, admission, loop tracing, slow
 * segments), bad options named, and one frame read from a real running server whose slow export proxies an nbdkit
 * that holds every read 1 s, driven by qemu-io (far slower than a file read on a loaded machine).
 */
class NbdTopCommandTest {

    @TempDir
    Path dir;

    private static final String BEFORE = """
            # HELP tailor_nbd_requests_total NBD requests answered
            # TYPE tailor_nbd_requests_total counter
            tailor_nbd_requests_total{export="disk",operation="read"} 100
            tailor_nbd_requests_total{export="disk",operation="write"} 10
            tailor_nbd_request_bytes_total{export="disk",operation="read"} 409600
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="0.001"} 100
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="0.1"} 100
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="+Inf"} 100
            tailor_nbd_request_duration_seconds_count{export="disk",operation="read"} 100
            tailor_nbd_request_duration_seconds_sum{export="disk",operation="read"} 0.05
            tailor_nbd_export_connections{export="disk"} 1
            tailor_nbd_requests_dropped_total{export="disk",operation="read"} 4
            """;

    private static final String NOW = """
            tailor_nbd_requests_total{export="disk",operation="read"} 300
            tailor_nbd_requests_total{export="disk",operation="write"} 10
            tailor_nbd_requests_total{export="disk",operation="flush"} 2
            tailor_nbd_request_bytes_total{export="disk",operation="read"} 1228800
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="0.001"} 200
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="0.1"} 300
            tailor_nbd_request_duration_seconds_bucket{export="disk",operation="read",le="+Inf"} 300
            tailor_nbd_request_duration_seconds_count{export="disk",operation="read"} 300
            tailor_nbd_request_duration_seconds_sum{export="disk",operation="read"} 5.0
            tailor_nbd_export_connections{export="disk"} 2
            tailor_nbd_request_errors_total{error="eio",export="disk",operation="read"} 2
            tailor_nbd_requests_dropped_total{export="disk",operation="read"} 10
            tailor_nbd_slow_requests_total{export="disk",operation="read"} 4
            tailor_nbd_slow_request_threshold_seconds 0.02
            tailor_nbd_slow_segment_window_seconds 300.0
            tailor_nbd_slow_segment_requests{export="disk",segment="3"} 4
            tailor_nbd_slow_segment_overcount{export="disk",segment="3"} 0
            tailor_nbd_slow_segment_seen_requests{export="disk",segment="3"} 4
            tailor_nbd_slow_segment_admission_wait_seconds{export="disk",segment="3"} 0.2
            tailor_nbd_slow_segment_backend_seconds{export="disk",segment="3"} 0.04
            tailor_nbd_slow_segment_admitted_requests{class="hot",export="disk",segment="3"} 3
            tailor_nbd_slow_segment_admitted_requests{class="steady",export="disk",segment="3"} 1
            tailor_nbd_slow_segment_admitted_requests{class="none",export="disk",segment="3"} 0
            tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export="disk",le="1.0E-6"} 150
            tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export="disk",le="0.001"} 200
            tailor_nbd_request_loop_unrelated_wait_seconds_bucket{export="disk",le="+Inf"} 200
            tailor_nbd_request_loop_unrelated_wait_seconds_count{export="disk"} 200
            tailor_nbd_request_loop_unrelated_wait_seconds_sum{export="disk"} 0.01
            tailor_nbd_request_loop_wait_seconds_bucket{export="disk",le="1.0E-5"} 100
            tailor_nbd_request_loop_wait_seconds_bucket{export="disk",le="0.001"} 200
            tailor_nbd_request_loop_wait_seconds_bucket{export="disk",le="+Inf"} 200
            tailor_nbd_request_loop_wait_seconds_count{export="disk"} 200
            tailor_nbd_request_loop_wait_seconds_sum{export="disk"} 0.05
            tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total{export="disk"} 0.002
            tailor_nbd_loop_health_check_age_seconds{loop="0"} 0.05
            """;

    @Test
    void frame_ratesAndPercentilesOverTheInterval_slowSegmentsOverTheServersWindowAndThreshold() {
        // 2 s apart: 200 reads and 2 flushes in between (100 and 1 per second), 800 KiB read; of the 200 reads, 100
        // took at most 1 ms and 100 up to 100 ms, so the median is 1 ms and P99 about 98 ms (linear in the bucket).
        // Of them, 2 error replies (the counter appeared since the first reading: 1 a second) and 6 dropped, their
        // client gone (3 a second), shown apart beside the errors.
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(BEFORE),
                MetricsText.parse(NOW),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        String text = String.join("\n", lines);
        assertThat(text).contains("2026-12-02 04:00:00 UTC").contains("rates over the last 2.0 s");
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+disk\\s+2\\s+100\\.0\\s+0\\.0\\s+1\\.0\\s+0\\.39\\s+–\\s+1\\.00"
                        + "\\s+98\\.02\\s+1\\.0\\s+3\\.0\\s+2\\.0\\s+312"));
        assertThat(lines)
                .anyMatch(l -> l.matches(
                        "\\s+export\\s+conn\\s+.*\\s+P99 ms\\s+errors/s\\s+dropped/s\\s+slow/s" + "\\s+requests"));
        assertThat(text).contains("; errors: error replies; dropped: no reply, the client went away):");
        // Aligned: the column's values start under its heading, as the others'.
        String heading =
                lines.stream().filter(l -> l.contains("dropped/s")).findFirst().orElseThrow();
        String row = lines.get(lines.indexOf(heading) + 1);
        assertThat(row.substring(heading.indexOf("dropped/s"))).startsWith("3.0 ");
        assertThat(row.substring(heading.indexOf("errors/s"))).startsWith("1.0 ");
        // The slow segment: 4 requests, mean 50 ms in admission and 10 ms on the backend, 3 admitted hot.
        assertThat(lines).anyMatch(l -> l.matches("\\s+disk\\s+3\\s+4\\s+0\\s+50\\.0\\s+10\\.0\\s+3\\s+1\\s+0"));
        assertThat(text).contains("Slow segments over the last 150 to 300 s (slow: over 20 ms;");
        // The wait is admission's queue and the fair dispatch door's together (the door may be on alone): the
        // column says neither alone, and the title says what it is.
        assertThat(text)
                .contains("; queued wait: in admission or at the fair dispatch door;")
                .doesNotContain("admission wait");
        // The classes are those admission gave (a request on a hot segment within its baseline is admitted steady),
        // not the segment's state at arrival, which admission's section shows: the headings say which is which.
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+export\\s+segment\\s+slow\\s+overcount\\s+queued wait\\s+backend"
                        + "\\s+admitted hot\\s+admitted steady\\s+not via admission"));
        assertThat(text)
                .contains("; admitted: the class admission gave them, steady within the baseline even on a hot"
                        + " segment):");
        // A server without the threshold and window gauges counted from its start, over 50 ms.
        assertThat(NbdTop.slowTitle(MetricsText.parse(BEFORE)))
                .startsWith("Slow segments since the start (slow: over 50 ms;");
        // Loop tracing: the histogram appeared since the first reading, so all of it counts; 25 % waited. No own-work
        // histogram (–). The loop wait: 250 µs on average, P99 980 µs; 0.05 - (0.01 - 0.002) s behind other work over
        // 200 requests, 210 µs on average.
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+disk\\s+200\\s+25\\.0 %\\s+50\\.0\\s+\\S+\\s+\\S+\\s+–\\s+–"
                        + "\\s+250\\.0\\s+980\\s+210\\.0"));
        assertThat(text).contains("Event loops").doesNotContain("Admission (").doesNotContain("Fair dispatch (");
    }

    @Test
    void frame_perExportItsDoorAndItsWaitThere_perDoorWhatWaitsAndWhatIsOut() {
        String before = """
                tailor_nbd_fair_dispatch_export_requests_total{backend="device:259:1",export="fast"} 1000
                tailor_nbd_fair_dispatch_export_waited_total{backend="device:259:1",export="fast"} 100
                tailor_nbd_fair_dispatch_export_wait_seconds_total{backend="device:259:1",export="fast"} 0.1
                tailor_nbd_fair_dispatch_export_requests_total{backend="upstream:10.0.0.5:10809",export="slow"} 300
                tailor_nbd_fair_dispatch_export_waited_total{backend="upstream:10.0.0.5:10809",export="slow"} 50
                tailor_nbd_fair_dispatch_export_wait_seconds_total{backend="upstream:10.0.0.5:10809",export="slow"} 1.0
                tailor_nbd_fair_dispatch_export_wait_max_seconds{backend="device:259:1",export="fast"} 0.0125
                tailor_nbd_fair_dispatch_export_wait_max_seconds{backend="upstream:10.0.0.5:10809",export="slow"} 30.0
                """
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        "backend=\"device:259:1\",export=\"fast\"",
                        0.1,
                        900,
                        990,
                        1000,
                        1000,
                        1000,
                        1000,
                        1000,
                        1000,
                        1000,
                        1000)
                // One wait of 30 s, long before the interval.
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        "backend=\"upstream:10.0.0.5:10809\",export=\"slow\"",
                        1.0,
                        250,
                        250,
                        250,
                        250,
                        250,
                        250,
                        290,
                        295,
                        299,
                        300);
        String now = """
                tailor_nbd_fair_dispatch_export_requests_total{backend="device:259:1",export="fast"} 1400
                tailor_nbd_fair_dispatch_export_waited_total{backend="device:259:1",export="fast"} 200
                tailor_nbd_fair_dispatch_export_wait_seconds_total{backend="device:259:1",export="fast"} 0.3
                tailor_nbd_fair_dispatch_export_wait_max_seconds{backend="device:259:1",export="fast"} 0.0125
                tailor_nbd_fair_dispatch_export_requests_total{backend="upstream:10.0.0.5:10809",export="slow"} 500
                tailor_nbd_fair_dispatch_export_waited_total{backend="upstream:10.0.0.5:10809",export="slow"} 150
                tailor_nbd_fair_dispatch_export_wait_seconds_total{backend="upstream:10.0.0.5:10809",export="slow"} 3.0
                tailor_nbd_fair_dispatch_export_wait_max_seconds{backend="upstream:10.0.0.5:10809",export="slow"} 0.0452
                tailor_nbd_fair_dispatch_waiting{backend="device:259:1"} 0
                tailor_nbd_fair_dispatch_outstanding{backend="device:259:1"} 3
                tailor_nbd_fair_dispatch_depth{backend="device:259:1"} 8
                tailor_nbd_fair_dispatch_waiting{backend="upstream:10.0.0.5:10809"} 5
                tailor_nbd_fair_dispatch_outstanding{backend="upstream:10.0.0.5:10809"} 8
                tailor_nbd_fair_dispatch_depth{backend="upstream:10.0.0.5:10809"} 8
                """
                // In the interval, fast: 300 at once, 92 within 1 ms, 8 within 1 to 2.2 ms; slow: 100 at once, 96
                // within 33 to 100 ms, 4 within 100 to 220 ms.
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        "backend=\"device:259:1\",export=\"fast\"",
                        0.3,
                        1200,
                        1382,
                        1400,
                        1400,
                        1400,
                        1400,
                        1400,
                        1400,
                        1400,
                        1400)
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        "backend=\"upstream:10.0.0.5:10809\",export=\"slow\"",
                        3.0,
                        350,
                        350,
                        350,
                        350,
                        350,
                        350,
                        486,
                        495,
                        499,
                        500);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines)
                .contains("Fair dispatch (per door, waiting now / out now of its depth: device:259:1 0 / 3 of 8;"
                        + " upstream:10.0.0.5:10809 5 / 8 of 8):");
        // fast: 400 in 2 s, 100 of them waited, 0.2 s in all: 2 ms each; slow: 200, 100 waited, 2 s: 20 ms each.
        // The P99 of the interval's waits, interpolated in its bucket as histogram_quantile does: fast's 396th of
        // 400 is the middle of the 8 between 1 and 2.2 ms, 1.6 ms; slow's 198th of 200 the middle of the 4 between
        // 100 and 220 ms, 160 ms. Not the longest since the start (slow's 30 s), nor the quantile since the start.
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+export\\s+door\\s+requests/s\\s+waited\\s+mean wait ms\\s+P99 wait ms"));
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+fast\\s+device:259:1\\s+200\\.0\\s+25\\.0 %\\s+2\\.00\\s+1\\.60"));
        assertThat(lines)
                .anyMatch(l -> l.matches(
                        "\\s+slow\\s+upstream:10\\.0\\.0\\.5:10809\\s+100\\.0\\s+50\\.0 %\\s+20\\.00\\s+160\\.00"));
        assertThat(String.join("\n", lines)).doesNotContain("(life)").doesNotContain("30,000");
    }

    @Test
    void frame_doorsWaitsWhenNothingWaited_meanAndP99BothDash_whenSomethingWaited_bothNumbers() {
        // Was: "–" for the mean beside "0.00" for the P99 when requests passed the door and none waited there.
        // In 2 s: idle, 200 through, none waited (all in the 0 bucket); rare, 400 through, 1 waited 1.5 ms (the
        // P99 falls among those let through at once: 0, but something waited, so numbers).
        String labelsIdle = "backend=\"device:259:1\",export=\"idle\"";
        String labelsRare = "backend=\"device:259:1\",export=\"rare\"";
        String before = """
                tailor_nbd_fair_dispatch_export_requests_total{%1$s} 100
                tailor_nbd_fair_dispatch_export_waited_total{%1$s} 0
                tailor_nbd_fair_dispatch_export_wait_seconds_total{%1$s} 0.0
                tailor_nbd_fair_dispatch_export_requests_total{%2$s} 100
                tailor_nbd_fair_dispatch_export_waited_total{%2$s} 0
                tailor_nbd_fair_dispatch_export_wait_seconds_total{%2$s} 0.0
                tailor_nbd_fair_dispatch_waiting{backend="device:259:1"} 0
                tailor_nbd_fair_dispatch_outstanding{backend="device:259:1"} 0
                tailor_nbd_fair_dispatch_depth{backend="device:259:1"} 8
                """.formatted(labelsIdle, labelsRare)
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        labelsIdle,
                        0,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100)
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        labelsRare,
                        0,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100,
                        100);
        String now = """
                tailor_nbd_fair_dispatch_export_requests_total{%1$s} 300
                tailor_nbd_fair_dispatch_export_waited_total{%1$s} 0
                tailor_nbd_fair_dispatch_export_wait_seconds_total{%1$s} 0.0
                tailor_nbd_fair_dispatch_export_requests_total{%2$s} 500
                tailor_nbd_fair_dispatch_export_waited_total{%2$s} 1
                tailor_nbd_fair_dispatch_export_wait_seconds_total{%2$s} 0.0015
                tailor_nbd_fair_dispatch_waiting{backend="device:259:1"} 0
                tailor_nbd_fair_dispatch_outstanding{backend="device:259:1"} 0
                tailor_nbd_fair_dispatch_depth{backend="device:259:1"} 8
                """.formatted(labelsIdle, labelsRare)
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        labelsIdle,
                        0,
                        300,
                        300,
                        300,
                        300,
                        300,
                        300,
                        300,
                        300,
                        300,
                        300)
                + waitHistogram(
                        "tailor_nbd_fair_dispatch_wait_seconds",
                        labelsRare,
                        0.0015,
                        499,
                        499,
                        500,
                        500,
                        500,
                        500,
                        500,
                        500,
                        500,
                        500);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines).anyMatch(l -> l.matches("\\s+idle\\s+device:259:1\\s+100\\.0\\s+0\\.0 %\\s+–\\s+–"));
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+rare\\s+device:259:1\\s+200\\.0\\s+0\\.3 %\\s+1\\.50\\s+0\\.00"));
    }

    /** Admission's counters and wait histogram for the exports disk and copy, {@code disk} its wait's buckets. */
    private static String admission(
            long requests, long hot, long queued, double waitSeconds, double waitSum, long... disk) {
        return admissionWithCopy(50, requests, hot, queued, waitSeconds, waitSum, disk);
    }

    /** As {@link #admission}, with {@code copy} requests to copy since the start, every one admitted at once. */
    private static String admissionWithCopy(
            long copy, long requests, long hot, long queued, double waitSeconds, double waitSum, long... disk) {
        return """
                tailor_nbd_requests_total{export="disk",operation="read"} %d
                tailor_nbd_requests_total{export="copy",operation="read"} %d
                tailor_nbd_admission_admitted_total %d
                tailor_nbd_admission_waiting 0
                tailor_nbd_admission_export_requests_total{export="disk"} %d
                tailor_nbd_admission_export_arrived_hot_total{export="disk"} %d
                tailor_nbd_admission_export_queued_total{export="disk"} %d
                tailor_nbd_admission_export_queue_wait_seconds_total{export="disk"} %s
                tailor_nbd_admission_export_queue_wait_max_seconds{export="disk"} 30.0
                tailor_nbd_admission_export_requests_total{export="copy"} %d
                tailor_nbd_admission_export_queued_total{export="copy"} 0
                tailor_nbd_admission_export_queue_wait_seconds_total{export="copy"} 0.0
                """.formatted(requests, copy, requests + copy, requests, hot, queued, waitSeconds, copy)
                + waitHistogram("tailor_nbd_admission_wait_seconds", "export=\"disk\"", waitSum, disk)
                + waitHistogram(
                        "tailor_nbd_admission_wait_seconds",
                        "export=\"copy\"",
                        0,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy,
                        copy);
    }

    @Test
    void frame_admissionsWaitsWhenNoneQueued_meanAndP99BothDash() {
        // Was: "–" for the mean beside "0.00" for the P99 when requests came and none queued. In 2 s, 100 more to
        // copy, all admitted at once: both "–"; disk's 200, 10 of them queued: both numbers.
        String before =
                admissionWithCopy(50, 1000, 100, 100, 31.0, 31.0, 900, 900, 950, 990, 990, 990, 995, 995, 999, 1000);
        String now = admissionWithCopy(
                150, 1200, 110, 110, 31.03, 31.03, 1090, 1090, 1146, 1190, 1190, 1190, 1195, 1195, 1199, 1200);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines).anyMatch(l -> l.matches("\\s+copy\\s+50\\.0\\s+–\\s+0\\.0 %\\s+–\\s+–\\s+0\\.0"));
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+disk\\s+100\\.0\\s+5\\.0 %\\s+5\\.0 %\\s+3\\.00\\s+3\\.45\\s+0\\.0"));
    }

    @Test
    void frame_admissionsWaitIsTheP99OverTheInterval_notTheLongestSinceTheStart() {
        // Before: 1,000 requests since the start, one of them held 30 s (in +Inf), five over 100 ms. In the 2 s
        // between the readings, 200 more to disk: 190 admitted at once, 6 held 1 to 2.2 ms, 4 held 2.2 to 4.7 ms
        // (10 queued, 0.03 s in all); none to copy.
        String before = admission(1000, 100, 100, 31.0, 31.0, 900, 900, 950, 990, 990, 990, 995, 995, 999, 1000);
        String now =
                admission(1200, 110, 110, 31.03, 31.03, 1090, 1090, 1146, 1190, 1190, 1190, 1195, 1195, 1199, 1200);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+export\\s+requests/s\\s+on hot segment\\s+queued\\s+mean wait ms"
                        + "\\s+P99 wait ms\\s+refused/s"));
        assertThat(lines)
                .anyMatch(l -> l.startsWith("Admission (waiting now: 0; bursts borrowing/s: ")
                        && l.endsWith("; on hot segment: arrived while its segment was hot, whatever class admitted"
                                + " it):"));
        // The 198th of the interval's 200 is the middle of the 4 between 2.2 and 4.7 ms: 3.45 ms. Since the start it
        // would be 4.59 ms, and the longest 30 s.
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+disk\\s+100\\.0\\s+5\\.0 %\\s+5\\.0 %\\s+3\\.00\\s+3\\.45\\s+0\\.0"));
        // No request in the interval: no wait to show.
        assertThat(lines).anyMatch(l -> l.matches("\\s+copy\\s+0\\.0\\s+–\\s+–\\s+–\\s+–\\s+0\\.0"));
        assertThat(String.join("\n", lines)).doesNotContain("(life)").doesNotContain("30,000");

        // The server restarted between the readings: its 10 requests since count from 0 (as the counters do), one
        // of them held 100 to 220 ms: the P99 is 90 % into that bucket, 208 ms.
        String restarted = admission(10, 1, 1, 0.2, 0.2, 9, 9, 9, 9, 9, 9, 9, 10, 10, 10);
        List<String> afterRestart = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(now),
                MetricsText.parse(restarted),
                2.0,
                Instant.parse("2026-12-02T04:00:02Z"),
                10);
        assertThat(afterRestart)
                .anyMatch(l -> l.matches("\\s+disk\\s+5\\.0\\s+10\\.0 %\\s+10\\.0 %\\s+200\\.00\\s+208\\.00\\s+0\\.0"));
    }

    @Test
    void frame_admissionsP99_ofWaitsOf32ms_reads32ms() {
        // In the 2 s between the readings, 1,000 requests to disk, every one held 31 to 33 ms (32 s in all): the
        // 990th is 99 % into the bucket from 22 to 33 ms, 32.89 ms. Between the server's bounds before, 25 and 50 ms,
        // it read 49.75 ms.
        String before = admission(1000, 0, 0, 0.0, 0.0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000);
        String now = admission(2000, 0, 1000, 32.0, 32.0, 1000, 1000, 1000, 1000, 1000, 2000, 2000, 2000, 2000, 2000);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines)
                .anyMatch(l -> l.matches("\\s+disk\\s+500\\.0\\s+0\\.0 %\\s+100\\.0 %\\s+32\\.00\\s+32\\.89\\s+0\\.0"));
    }

    /**
     * A wait histogram as the server writes it, with some of its buckets: {@code cumulative} the counts at 0, 1 ms,
     * 2.2 ms, 4.7 ms, 22 ms, 33 ms, 100 ms, 220 ms, 10 s and +Inf; the count is the last.
     */
    private static String waitHistogram(String name, String labels, double sum, long... cumulative) {
        List<String> bounds =
                List.of("0.0", "0.001", "0.0022", "0.0047", "0.022", "0.033", "0.1", "0.22", "10.0", "+Inf");
        assertThat(cumulative).hasSize(bounds.size());
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < bounds.size(); i++) {
            text.append(name + "_bucket{" + labels + ",le=\"" + bounds.get(i) + "\"} " + cumulative[i] + "\n");
        }
        text.append(name + "_count{" + labels + "} " + cumulative[bounds.size() - 1] + "\n");
        text.append(name + "_sum{" + labels + "} " + sum + "\n");
        return text.toString();
    }

    @Test
    void help_saysTheWaitsAreOverTheInterval() {
        PlanCommandTest.Result help = tailor("nbd", "top", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out().replaceAll("\\s+", " "))
                .contains("admission's waits and those at the fair dispatch doors (mean and P99)")
                .contains("the event loops' dispatch delay (P99)")
                .contains("Rates, percentiles, waits and the dispatch delay cover the last interval");
    }

    /**
     * A loop's gauges and its dispatch-delay histogram as the server writes them, with some of its buckets: {@code
     * cumulative} the counts at 10 µs, 100 µs, 1 ms, 100 ms, 1 s and +Inf; the count is the last.
     */
    private static String loop(String loop, double maxSeconds, long... cumulative) {
        List<String> bounds = List.of("1.0E-5", "1.0E-4", "0.001", "0.1", "1.0", "+Inf");
        assertThat(cumulative).hasSize(bounds.size());
        String name = "tailor_nbd_loop_io_dispatch_delay_seconds";
        StringBuilder text = new StringBuilder();
        text.append("tailor_nbd_loop_health_check_age_seconds{loop=\"" + loop + "\"} 0.05\n");
        text.append("tailor_nbd_loop_io_dispatch_delay_max_seconds{loop=\"" + loop + "\"} " + maxSeconds + "\n");
        for (int i = 0; i < bounds.size(); i++) {
            text.append(name + "_bucket{loop=\"" + loop + "\",le=\"" + bounds.get(i) + "\"} " + cumulative[i] + "\n");
        }
        text.append(name + "_count{loop=\"" + loop + "\"} " + cumulative[bounds.size() - 1] + "\n");
        text.append(name + "_sum{loop=\"" + loop + "\"} 1.0\n");
        return text.toString();
    }

    @Test
    void frame_loopsDispatchDelayIsTheP99OverTheInterval_notTheLargestSinceTheStart() {
        // Loop 0: before, 1,000 polls since the start, one of them 0.9 s (a stall long ago, the largest since). In
        // the 2 s between the readings, 1,000 more: 900 within 10 µs, 100 in 10 to 100 µs; the 990th of them is
        // 90 % into that bucket, 91 µs. Loop 1 dispatched nothing in the interval: no delay to show.
        String before = loop("0", 0.9, 900, 999, 999, 999, 1000, 1000) + loop("1", 0.0, 0, 0, 0, 0, 0, 0);
        String now = loop("0", 0.9, 1800, 1999, 1999, 1999, 2000, 2000) + loop("1", 0.0, 0, 0, 0, 0, 0, 0);
        List<String> lines = NbdTop.frame(
                "http://x/metrics",
                MetricsText.parse(before),
                MetricsText.parse(now),
                2.0,
                Instant.parse("2026-12-02T04:00:00Z"),
                10);
        assertThat(lines)
                .contains("Event loops (ms; dispatch delay: the P99 over the interval of the bound on readable to"
                        + " handled, per poll that dispatched I/O):")
                .anyMatch(l -> l.matches("\\s+loop\\s+health-check age\\s+.*\\s+dispatch delay P99"));
        assertThat(lines).anyMatch(l -> l.matches("\\s+0\\s+50\\.0\\s+.*\\s+0\\.09"));
        assertThat(lines).anyMatch(l -> l.matches("\\s+1\\s+50\\.0\\s+.*\\s+–"));
        assertThat(String.join("\n", lines)).doesNotContain("(life)").doesNotContain("900.00");
    }

    @Test
    void metrics_hostPortAndPathWithoutScheme_isHttp() {
        // Was: exit 2, "expected: http://HOST:PORT/metrics or HOST:PORT", for what curl and a browser take.
        assertThat(dev.tailor.lab.NbdTop.uri("127.0.0.1:9100/metrics")).hasToString("http://127.0.0.1:9100/metrics");
        assertThat(dev.tailor.lab.NbdTop.uri("[::1]:9100/metrics")).hasToString("http://[::1]:9100/metrics");
        assertThat(dev.tailor.lab.NbdTop.uri("127.0.0.1:9100")).hasToString("http://127.0.0.1:9100/metrics");
        PlanCommandTest.Result down = tailor("nbd", "top", "--metrics", "127.0.0.1:9/metrics", "--once");
        assertThat(down.exitCode()).isEqualTo(1);
        assertThat(down.err()).contains("--metrics: cannot read http://127.0.0.1:9/metrics (connection refused;");
    }

    @Test
    void metrics_colonPort_isTheLoopbackAddressAsServeTakesIt() throws Exception {
        // Was: exit 2 for ":19470", the value tailor nbd serve --metrics-listen takes (and binds on 127.0.0.1).
        assertThat(NbdTop.uri(":19470")).hasToString("http://127.0.0.1:19470/metrics");
        assertThat(NbdTop.uri(":19470/metrics")).hasToString("http://127.0.0.1:19470/metrics");
        PlanCommandTest.Result zero = tailor("nbd", "top", "--metrics", ":0", "--once");
        assertThat(zero.exitCode()).isEqualTo(2);
        assertThat(zero.err()).contains("--metrics: \":0\": port 0 (expected: a port in [1, 65535]");
        PlanCommandTest.Result bad = tailor("nbd", "top", "--metrics", ":x");
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains("--metrics: \":x\" (expected: ").contains(":PORT for 127.0.0.1:PORT");
        assertThat(tailor("nbd", "top", "--help").out().replaceAll("\\s+", " "))
                .contains(":PORT is 127.0.0.1:PORT, as tailor nbd serve --metrics-listen takes it");
        // A server given ":0" (:PORT, port 0 a free one) is read with ":" and the port it got.
        String yaml = """
                address: 127.0.0.1
                port: 0
                loop:
                  metricsListen: ":0"
                exports:
                  - name: disk
                    file: disk.img
                    size: 1MiB
                """;
        try (NbdServer server = NbdServer.start(NbdConfigFiles.parse(yaml, "test.yaml", dir))) {
            PlanCommandTest.Result top = tailor(
                    "nbd", "top", "--metrics", ":" + server.metricsAddress().getPort(), "--once", "--interval", "0.1");
            assertThat(top.exitCode()).as(top.err()).isZero();
            assertThat(top.out())
                    .startsWith("tailor nbd top · http://127.0.0.1:"
                            + server.metricsAddress().getPort() + "/metrics")
                    .containsPattern("\\n\\s+disk\\s+0\\s+");
        }
    }

    @Test
    void metrics_schemeInUpperCase_isTakenAsCurlTakesIt() {
        // Was: exit 2 for HTTP://..., a scheme curl and browsers read case-insensitively.
        assertThat(NbdTop.uri("HTTP://127.0.0.1:9100/metrics")).hasToString("http://127.0.0.1:9100/metrics");
        assertThat(NbdTop.uri("Https://[::1]:9100/metrics")).hasToString("https://[::1]:9100/metrics");
        PlanCommandTest.Result down = tailor("nbd", "top", "--metrics", "HTTP://127.0.0.1:9/metrics", "--once");
        assertThat(down.exitCode()).isEqualTo(1);
        assertThat(down.err()).contains("--metrics: cannot read http://127.0.0.1:9/metrics (connection refused;");
        PlanCommandTest.Result ftp = tailor("nbd", "top", "--metrics", "FTP://127.0.0.1:9/metrics");
        assertThat(ftp.exitCode()).isEqualTo(2);
        assertThat(ftp.err()).contains("--metrics: \"FTP://127.0.0.1:9/metrics\" (expected:");
    }

    @Test
    void metrics_httpsAgainstAPlainHttpEndpoint_saysItAnswersPlainHttp() throws Exception {
        // Was: "connection timed out after 5 s": a plain-HTTP server waits for the end of a request line the TLS
        // hello never gives, so the handshake gets no answer.
        com.sun.net.httpserver.HttpServer server =
                com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", exchange -> {
            byte[] body = "up 1\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            String authority = "127.0.0.1:" + server.getAddress().getPort();
            java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
                    .connectTimeout(java.time.Duration.ofSeconds(1))
                    .build();
            NbdTop.Reading reading = NbdTop.read(client, NbdTop.uri("https://" + authority + "/metrics"), false);
            assertThat(reading.error())
                    .isEqualTo("no TLS answer from " + authority + ": it answers plain HTTP (expected: http://"
                            + authority + "/metrics)");
            assertThat(NbdTop.read(client, NbdTop.uri(authority), false).error())
                    .isNull();
        } finally {
            server.stop(0);
        }
    }

    @Test
    void badOptions_areNamed() {
        PlanCommandTest.Result bad = tailor("nbd", "top", "--metrics", "not a url");
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err())
                .contains("--metrics: \"not a url\" (expected: http://HOST:PORT/metrics or HOST:PORT")
                .contains("HOST:PORT/PATH for http://HOST:PORT/PATH");
        // A port no server has is bad input, not the HTTP client's internal error.
        PlanCommandTest.Result port = tailor("nbd", "top", "--metrics", "127.0.0.1:99999", "--once");
        assertThat(port.exitCode()).isEqualTo(2);
        assertThat(port.err())
                .contains("--metrics: \"127.0.0.1:99999\": port 99999 (expected: a port in [1, 65535]")
                .doesNotContain("Exception");
        PlanCommandTest.Result zero = tailor("nbd", "top", "--metrics", "http://127.0.0.1:0/metrics", "--once");
        assertThat(zero.exitCode()).isEqualTo(2);
        assertThat(zero.err()).contains("--metrics: \"http://127.0.0.1:0/metrics\": port 0 (expected:");
        PlanCommandTest.Result interval = tailor("nbd", "top", "--metrics", "127.0.0.1:9", "--interval", "0");
        assertThat(interval.exitCode()).isEqualTo(2);
        assertThat(interval.err()).contains("--interval: 0 (expected: seconds, a number in [0.1, 3600])");
        PlanCommandTest.Result nan = tailor("nbd", "top", "--metrics", "127.0.0.1:9", "--interval", "NaN");
        assertThat(nan.exitCode()).isEqualTo(2);
        assertThat(nan.err()).contains("--interval: NaN (expected: seconds, a number in [0.1, 3600])");
        PlanCommandTest.Result top = tailor("nbd", "top", "--metrics", "127.0.0.1:9", "--top", "0");
        assertThat(top.exitCode()).isEqualTo(2);
        assertThat(top.err()).contains("--top: 0 (expected: segments, a whole number in [1, 100])");
        PlanCommandTest.Result down = tailor("nbd", "top", "--metrics", "127.0.0.1:9", "--once");
        assertThat(down.exitCode()).isEqualTo(1);
        assertThat(down.err())
                .contains("--metrics: cannot read http://127.0.0.1:9/metrics (connection refused; expected:")
                .doesNotContain("Exception");
    }

    @Test
    void once_againstARunningServer_namesTheSlowSegmentsAndTheirBackendTime() throws Exception {
        Tools.require("nbdkit", "nbdkit");
        Path qemuIo = Tools.require("qemu-io", "qemu-utils");
        int upstreamPort = ExperimentRig.freePort();
        Process nbdkit = new ProcessBuilder(
                        "nbdkit",
                        "-f",
                        "--exit-with-parent",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        Integer.toString(upstreamPort),
                        "--filter=delay",
                        "memory",
                        "64M",
                        "rdelay=1000ms")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nbdkit.log").toFile())
                .start();
        try {
            awaitPort(upstreamPort);
            String yaml = """
                    address: 127.0.0.1
                    port: 0
                    admission:
                      segmentSize: 16MiB
                    fairDispatch:
                      enabled: true
                    loop:
                      metricsListen: 127.0.0.1:0
                      slowRequestThresholdMillis: 500
                    exports:
                      - name: slow
                        upstream: {host: 127.0.0.1, port: %d, connections: 1}
                      - name: fast
                        file: fast.img
                        size: 64MiB
                    """.formatted(upstreamPort);
            try (NbdServer server = NbdServer.start(NbdConfigFiles.parse(yaml, "test.yaml", dir))) {
                String uri = "nbd://127.0.0.1:" + server.localAddress().getPort();
                // Two slow reads in segment 2 (32 MiB), one in segment 0; three fast reads of the file export.
                run(List.of(
                        qemuIo.toString(),
                        "-f",
                        "raw",
                        "-c",
                        "read 32M 4k",
                        "-c",
                        "read 33M 4k",
                        "-c",
                        "read 0 4k",
                        uri + "/slow"));
                run(List.of(
                        qemuIo.toString(),
                        "-f",
                        "raw",
                        "-c",
                        "read 0 4k",
                        "-c",
                        "read 4k 4k",
                        "-c",
                        "read 8k 4k",
                        uri + "/fast"));

                PlanCommandTest.Result top = tailor(
                        "nbd",
                        "top",
                        "--metrics",
                        "127.0.0.1:" + server.metricsAddress().getPort(),
                        "--once",
                        "--interval",
                        "0.2");
                assertThat(top.exitCode()).as(top.err()).isZero();
                List<String> lines = top.out().lines().toList();
                assertThat(lines)
                        .anyMatch(
                                l -> l.matches("\\s+slow\\s+2\\s+2\\s+0\\s+0\\.0\\s+[\\d,]+\\.\\d\\s+0\\s+0" + "\\s+2")
                                        && backendMillis(l) >= 1000);
                assertThat(lines).anyMatch(l -> l.matches("\\s+slow\\s+0\\s+1\\s+0\\s+.*"));
                assertThat(lines).noneMatch(l -> l.matches("\\s+fast\\s+\\d+\\s+\\d+\\s+0\\s+.*"));
                // The exports' table: every read counted (qemu-io may add reads of its own to probe the disk).
                assertThat(lines).anyMatch(l -> l.matches("\\s+fast\\s+0\\s+.*\\s+([3-9]|\\d\\d+)$"));
                // A door each: the upstream's address, the file's device.
                assertThat(lines)
                        .anyMatch(l -> l.matches("\\s+slow\\s+upstream:127\\.0\\.0\\.1:" + upstreamPort + "\\s+.*"));
                assertThat(lines).anyMatch(l -> l.matches("\\s+fast\\s+device:\\d+:\\d+\\s+.*"));
                assertThat(top.out())
                        .contains("Fair dispatch (per door, waiting now / out now of its depth: ")
                        .contains("Loop tracing per request")
                        .contains("Event loops")
                        .contains("Slow segments over the last 30 to 60 s (slow: over 500 ms;");
            }
        } finally {
            nbdkit.destroy();
            assertThat(nbdkit.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** The backend column (ms) of a slow-segment row. */
    private static double backendMillis(String line) {
        return Double.parseDouble(line.strip().split("\\s+")[5].replace(",", ""));
    }

    private void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("client.log").toFile())
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        assertThat(p.exitValue())
                .as("%s: %s", command, java.nio.file.Files.readString(dir.resolve("client.log")))
                .isZero();
    }

    private static void awaitPort(int port) {
        Await.until("nbdkit listening on " + port, () -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }
}
