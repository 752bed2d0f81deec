package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading fio's json+ output and the percentiles the experiments print from it. */
class FioLatencyTest {

    /** Two jobs as fio 3.33 writes them with --output-format=json+ (trimmed), after a warning line. */
    private static final String FIO = """
            fio: this is a warning fio prints before the JSON
            {
              "fio version" : "fio-3.33",
              "timestamp" : 1796516075,
              "timestamp_ms" : 1796516075299,
              "jobs" : [
                {
                  "jobname" : "steady1",
                  "read" : {
                    "iops" : 99.8,
                    "runtime" : 3001,
                    "lat_ns" : {"min" : 1000, "max" : 5000, "bins" : {"1000" : 90, "2000" : 9, "5000" : 1}}
                  }
                },
                {
                  "jobname" : "bursty",
                  "read" : {
                    "iops" : 300.5,
                    "lat_ns" : {"min" : 0, "max" : 0, "bins" : {}}
                  }
                }
              ]
            }
            """;

    @Test
    void parseJobs_skipsTextBeforeTheJsonAndReadsBinsAndIops() {
        Map<String, FioLatency.Job> jobs = FioLatency.parseJobs(FIO);
        assertThat(jobs).containsOnlyKeys("steady1", "bursty");
        FioLatency steady = jobs.get("steady1").latency();
        assertThat(steady.samples()).isEqualTo(100);
        assertThat(steady.binsNanos())
                .containsExactly(Map.entry(1000L, 90L), Map.entry(2000L, 9L), Map.entry(5000L, 1L));
        assertThat(jobs.get("steady1").iops()).isEqualTo(99.8);
    }

    @Test
    void parseJobs_readsTheMeasuredTimeAndWhenFioWroteItsOutput() {
        Map<String, FioLatency.Job> jobs = FioLatency.parseJobs(FIO);
        assertThat(jobs.get("steady1").runtimeMillis()).isEqualTo(3001);
        assertThat(jobs.get("steady1").endEpochMillis()).isEqualTo(1796516075299.0);
        assertThat(jobs.get("bursty").runtimeMillis()).as("absent").isNaN();
        assertThat(FioLatency.parseJobs("{\"jobs\": []}")).isEmpty();
    }

    @Test
    void percentile_isTheSmallestBinReachingTheShare_inMicros() {
        // As the scripts' python: need = total × p / 100; the first bin whose running count reaches it.
        FioLatency h = FioLatency.parseJobs(FIO).get("steady1").latency();
        assertThat(h.percentileMicros(50)).isEqualTo(1.0);
        assertThat(h.percentileMicros(90))
                .as("90 of 100 at or below 1 µs: exactly reached")
                .isEqualTo(1.0);
        assertThat(h.percentileMicros(99)).isEqualTo(2.0);
        assertThat(h.percentileMicros(99.9)).isEqualTo(5.0);
        assertThat(h.percentileMicros(100)).isEqualTo(5.0);
        assertThat(h.maxMicros()).isEqualTo(5.0);
        assertThatThrownBy(() -> h.percentileMicros(0)).hasMessage("percent : 0 (expected: a number in (0, 100])");
    }

    @Test
    void emptyBins_areNoData_notZero() {
        // A job that completed nothing must not read as a 0 µs tail: that would look like a perfect result.
        FioLatency empty = FioLatency.parseJobs(FIO).get("bursty").latency();
        assertThat(empty.samples()).isZero();
        assertThat(empty.percentileMicros(99.9)).isNaN();
        assertThat(empty.maxMicros()).isNaN();
        assertThat(BurstExperiment.fmt(empty.percentileMicros(99), 0)).isEqualTo("–");
        assertThat(BurstExperiment.LatencySummary.of(empty).p99Micros()).isNull();
        assertThat(BurstExperiment.change(empty.percentileMicros(99), 1000)).isEqualTo("no data");
    }

    @Test
    void figuresThatRoundToZero_printWithoutASign() {
        // A rate from two readings can come out a hair below zero; it reads 0.0, never -0.0.
        assertThat(BurstExperiment.fmt(-0.0, 1)).isEqualTo("0.0");
        assertThat(BurstExperiment.fmt(-0.04, 1)).isEqualTo("0.0");
        assertThat(BurstExperiment.fmt(-0.05, 1)).isEqualTo("-0.1");
        assertThat(BurstExperiment.fmt(-0.4, 0)).isEqualTo("0");
        assertThat(BurstExperiment.fmt(-1234.5, 1)).isEqualTo("-1,234.5");
    }

    @Test
    void pool_addsBinsOverJobsAndRuns() {
        // Pooling is over requests, not an average of percentiles: the 1-request tail of one run and the
        // 100 requests of another give P99 from the combined counts.
        Map<String, FioLatency.Job> run1 = FioLatency.parseJobs(FIO);
        FioLatency run2 = FioLatency.of(Map.of(2000L, 1L, 9000L, 1L));
        FioLatency pooled = FioLatency.pool(List.of(FioLatency.pooled(run1, List.of("steady1", "bursty")), run2));
        assertThat(pooled.samples()).isEqualTo(102);
        assertThat(pooled.binsNanos())
                .containsExactly(
                        Map.entry(1000L, 90L), Map.entry(2000L, 10L), Map.entry(5000L, 1L), Map.entry(9000L, 1L));
        assertThat(pooled.percentileMicros(99)).isEqualTo(5.0); // need 100.98: the 101st request
        assertThat(pooled.maxMicros()).isEqualTo(9.0);
        assertThat(FioLatency.pool(List.of()).percentileMicros(50)).isNaN();
    }

    @Test
    void pooled_missingJob_namesItAndTheJobsThereAre() {
        assertThatThrownBy(() -> FioLatency.pooled(FioLatency.parseJobs(FIO), List.of("steady2")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no fio job steady2")
                .hasMessageContaining("steady1");
    }

    @Test
    void readJobs_notFioOutput_namesTheFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("run-off-1.json"), "fio: engine nbd not loadable\n");
        assertThatThrownBy(() -> FioLatency.readJobs(file))
                .hasMessageContaining(file.toString())
                .hasMessageContaining("no JSON object");
        Files.writeString(file, "{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"lat_ns\": {\"bins\": {\"x\": 1}}}}]}");
        assertThatThrownBy(() -> FioLatency.readJobs(file)).hasMessageContaining("latency bin \"x\"");
    }

    @Test
    void proxyMetrics_absentSampleIsNaN_labelsAreKept() {
        ProxyMetrics m = ProxyMetrics.parse("""
                # HELP tailor_nbd_loop_health_check_max_age_seconds Largest health-check age seen
                tailor_nbd_loop_health_check_max_age_seconds{loop="0"} 0.125000000
                tailor_nbd_admission_refused_total 0
                tailor_nbd_admission_export_requests_total{export="steady1"} 42
                """);
        assertThat(m.get("tailor_nbd_loop_health_check_max_age_seconds", "0")).isEqualTo(0.125);
        assertThat(m.get("tailor_nbd_admission_refused_total")).isZero();
        assertThat(m.get("tailor_nbd_admission_export_requests_total", "steady1"))
                .isEqualTo(42);
        assertThat(m.get("tailor_nbd_admission_export_requests_total", "steady2"))
                .isNaN();
        assertThat(ProxyMetrics.parse("").isEmpty()).isTrue();
    }
}
