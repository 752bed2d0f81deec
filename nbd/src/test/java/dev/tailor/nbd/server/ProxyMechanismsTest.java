package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.admission.AdmissionStats;
import dev.tailor.eventloop.EventLoopMetrics;
import dev.tailor.eventloop.LoopMode;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.LoopSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Both mechanisms of the storage paper inside the real server, with real clients: segment admission
 * in front of the backends (a budget small enough that requests wait) and the event loops in either
 * mode, with the proxy's background work running on them. Data must come back byte-identical
 * whatever admission and the loop do, the background work must progress, and the metrics export must
 * write what it promises.
 */
class ProxyMechanismsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    /** The value of {@code series} (name and labels as the text format writes them) in a metrics text; NaN if absent. */
    private static double sample(String text, String series) {
        return text.lines()
                .filter(l -> l.startsWith(series + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
                .findFirst()
                .orElse(Double.NaN);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "admission {0}, loop {1}")
    @CsvSource({"true, priority", "true, fifo", "false, priority", "false, fifo"})
    void nbdcopyRoundTrip_throughAdmissionAndEitherLoop_isByteIdentical(boolean admission, String loop)
            throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        Path metrics = dir.resolve("tailor.prom");
        // 5·10⁷ cost units/s: C = 5·10⁵ per 10 ms, about two 256 KiB requests per interval, while nbdcopy
        // keeps dozens in flight, so a copy of 16 MiB has requests wait for admission even on a machine too
        // loaded to send faster than 2·10⁸ units/s (at that budget it once had none wait). The copy's export is
        // provisioned 17 IOPS (4 % of the budget), so that its baseline, which admits at once what it covers,
        // covers a few of its 128 requests a second, not all of them (a fair share would, once the copy
        // takes more than half a second).
        NbdConfig config = NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(2)
                .fileIoThreads(2)
                .exports(
                        ExportConfig.file("copy", "acme", 16L << 20, false, dir.resolve("copy.img")).toBuilder()
                                .baseline(new ExportConfig.Baseline(17.0, null))
                                .build(),
                        ExportConfig.file("other", "globex", 16L << 20, false, dir.resolve("other.img")))
                .admission(AdmissionSettings.builder()
                        .enabled(admission)
                        .capacityCostUnitsPerSecond(5e7)
                        .segmentSize(new ByteSize(4L << 20))
                        .blockSize(new ByteSize(1L << 20))
                        .queueCapacityPerSegment(4096)
                        .build())
                .loop(LoopSettings.builder()
                        .mode(loop)
                        .metricsPeriodMillis(100)
                        .metricsFile(metrics)
                        .healthCheckPeriodMillis(20)
                        .maintenancePeriodMicros(1_000)
                        .maintenanceBusyMicros(20)
                        .maintenanceTasks(2)
                        .build())
                .build();
        byte[] data = new byte[16 << 20];
        new Random(7).nextBytes(data);
        Path source = Files.write(dir.resolve("source.img"), data);
        Path back = dir.resolve("back.img");
        try (NbdServer server = NbdServer.start(config)) {
            assertThat(server.loopMode()).isEqualTo("fifo".equals(loop) ? LoopMode.FIFO : LoopMode.PRIORITY);
            assertThat(server.admission() != null).isEqualTo(admission);
            String uri = "nbd://127.0.0.1:" + server.localAddress().getPort() + "/copy";
            Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri).ok();
            Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
            assertThat(Files.mismatch(source, back)).isEqualTo(-1L);

            if (admission) {
                AdmissionStats stats = server.admission().stats();
                assertThat(stats.queuedRequests())
                        .as("requests that waited for admission")
                        .isPositive();
                assertThat(stats.refusedRequests()).isZero();
                assertThat(stats.completedSuccess()).isEqualTo(stats.admittedRequests());
                assertThat(server.admission().waitingRequests()).isZero();
            }
            // The background work progresses on every loop, in both modes: health checks every 20 ms,
            // the maintenance tasks, the metrics file.
            Await.until(
                    "health checks and maintenance",
                    () -> server.backgroundWork().healthChecks() >= 4
                            && server.backgroundWork().maintenanceRuns() >= 4);
            for (EventLoopMetrics m : server.eventLoops().metrics()) {
                assertThat(m.mode()).isEqualTo(server.loopMode());
                assertThat(m.tasks().unrelated()).isPositive();
            }
            Await.until("the metrics file", () -> Files.exists(metrics));
            String text = Files.readString(metrics);
            assertThat(text)
                    .contains("# TYPE tailor_nbd_loop_health_check_age_seconds gauge")
                    .contains("tailor_nbd_loop_health_check_age_seconds{loop=\"0\"}")
                    .contains("tailor_nbd_loop_oldest_unrelated_task_age_seconds{loop=\"1\"}")
                    .contains("tailor_nbd_loop_io_dispatch_delay_max_seconds");
            // Health checks every 20 ms: the longest gap between two in a metrics period is at least that.
            Await.until("a health-check window maximum", () -> {
                java.util.regex.Matcher gap = java.util.regex.Pattern.compile(
                                "tailor_nbd_loop_health_check_window_max_age_seconds\\{loop=\"1\"} (\\S+)")
                        .matcher(read(metrics));
                return gap.find() && Double.parseDouble(gap.group(1)) >= 0.019;
            });
            assertThat(text.contains("tailor_nbd_admission_queued_total")).isEqualTo(admission);
            if (admission) {
                // The same counters per export, with the labels the text format wants.
                Await.until(
                        "the per-export counters",
                        () -> read(metrics)
                                .matches("(?s).*tailor_nbd_admission_export_queued_total\\{export=\"copy\"} [1-9].*"));
                assertThat(Files.readString(metrics))
                        .contains("tailor_nbd_admission_export_requests_total{export=\"other\"} 0")
                        .contains("tailor_nbd_admission_export_queue_wait_max_seconds{export=\"copy\"}")
                        .contains("# TYPE tailor_nbd_admission_export_waiting gauge")
                        .contains("tailor_nbd_admission_export_waiting{export=\"other\"} 0")
                        .contains("# TYPE tailor_nbd_admission_drawn_reserve_cost_units_total counter")
                        .contains("tailor_nbd_admission_admitted_steady_total ");
                // Every READ and WRITE of the copy was sent on and is in the wait histogram (once a file written
                // after the copy says so); those that queued waited for a tick, above its bucket 0.
                String[] after = new String[1];
                Await.until("the wait histogram of every request of the copy", () -> {
                    after[0] = read(metrics);
                    return sample(after[0], "tailor_nbd_admission_wait_seconds_count{export=\"copy\"}")
                            == sample(after[0], "tailor_nbd_admission_export_requests_total{export=\"copy\"}");
                });
                double requests = sample(after[0], "tailor_nbd_admission_export_requests_total{export=\"copy\"}");
                double queued = sample(after[0], "tailor_nbd_admission_export_queued_total{export=\"copy\"}");
                assertThat(queued).isPositive();
                assertThat(sample(after[0], "tailor_nbd_admission_wait_seconds_bucket{export=\"copy\",le=\"0.0\"}"))
                        .as("admitted at once")
                        .isGreaterThanOrEqualTo(requests - queued)
                        .isLessThan(requests);
                assertThat(sample(after[0], "tailor_nbd_admission_wait_seconds_sum{export=\"copy\"}"))
                        .isPositive();
            }
        }
    }

    @Test
    void aMetricsFileThatCannotBeWritten_isWarnedOfOncePerCause_andItsRecoveryTold() throws Exception {
        Path folder = dir.resolve("gone");
        Path metrics = folder.resolve("tailor.prom");
        NbdConfig config = NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(1)
                .fileIoThreads(1)
                .exports(ExportConfig.file("d", "acme", 1L << 20, false, dir.resolve("d.img")))
                .loop(LoopSettings.builder()
                        .metricsPeriodMillis(5)
                        .metricsFile(metrics)
                        .build())
                .build();
        Logger logger = Logger.getLogger(ProxyBackgroundWork.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.addHandler(handler);
        try (NbdServer server = NbdServer.start(config)) {
            Await.until(
                    "five metrics exports without the folder",
                    () -> server.backgroundWork().metricsFileExports() >= 5);
            assertThat(records)
                    .filteredOn(r -> r.getLevel() == Level.WARNING)
                    .extracting(LogRecord::getMessage)
                    .containsExactly("cannot write metrics to " + metrics + " (no such file or directory); said again"
                            + " when the reason changes, and once it writes again");
            Files.createDirectory(folder);
            Await.until("the metrics file", () -> Files.exists(metrics));
            Await.until(
                    "its recovery told",
                    () -> records.stream()
                            .anyMatch(r -> r.getLevel() == Level.INFO
                                    && r.getMessage().equals("writes metrics to " + metrics + " again")));
            assertThat(records).filteredOn(r -> r.getLevel() == Level.WARNING).hasSize(1);
        } finally {
            logger.removeHandler(handler);
        }
    }
}
