package dev.tailor.bench;

import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost, per READ or WRITE, of the NBD proxy's wait histograms ({@code tailor_nbd_admission_wait_seconds},
 * {@code tailor_nbd_fair_dispatch_wait_seconds}): one observation of a data point resolved once per export, built
 * as {@code IoMetrics.waitHistogram} builds it (classic, 25 bounds: 0 and 100 µs to 10 s, no exemplars), next to what
 * the per-export counters beside it pay (a {@code LongAdder} and a {@code LongAccumulator} maximum). The waits
 * observed cycle through four values in different buckets, most of them 0 (admitted at once), so that the bucket
 * scan is not constant-folded.
 *
 * <p>Run with the allocation profiler to see the bytes per observation: {@code java -jar
 * bench/target/benchmarks.jar WaitHistogramBenchmark -prof gc} ({@code gc.alloc.rate.norm}, B/op). Figures:
 * docs/nbd.md, "Metrics".
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgs = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
public class WaitHistogramBenchmark {

    /** As IoMetrics.WAIT_BUCKETS_SECONDS. */
    static final double[] WAIT_BUCKETS_SECONDS = {
        0, 0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.0022, 0.0033, 0.0047, 0.0068, 0.01, 0.015, 0.022, 0.033, 0.047,
        0.068, 0.1, 0.15, 0.22, 0.33, 0.47, 0.68, 1, 2.5, 10
    };

    /** Waits in seconds, in turn: admitted at once (most), 30 µs, 13 ms, 400 ms. */
    private static final double[] WAITS = {0, 0, 0, 0.00003, 0, 0, 0.013, 0.4};

    /** One export's data point and counters, shared by the benchmark's threads. */
    @State(Scope.Benchmark)
    public static class Export {
        DistributionDataPoint waitSeconds;
        final LongAdder waitNanos = new LongAdder();
        final LongAccumulator maxWaitNanos = new LongAccumulator(Math::max, 0);

        @Setup
        public void setUp() {
            waitSeconds = Histogram.builder()
                    .name("tailor_nbd_admission_wait_seconds")
                    .help("bench")
                    .labelNames("export")
                    .classicOnly()
                    .classicUpperBounds(WAIT_BUCKETS_SECONDS)
                    .withoutExemplars()
                    .build()
                    .labelValues("vm1");
        }
    }

    /** Each thread's place in {@link #WAITS}. */
    @State(Scope.Thread)
    public static class Turn {
        int next;

        double nextWait() {
            return WAITS[next++ & (WAITS.length - 1)];
        }
    }

    @Benchmark
    @Threads(1)
    public void observe1Thread(Export export, Turn turn) {
        export.waitSeconds.observe(turn.nextWait());
    }

    @Benchmark
    @Threads(2)
    public void observe2Threads(Export export, Turn turn) {
        export.waitSeconds.observe(turn.nextWait());
    }

    @Benchmark
    @Threads(1)
    public void totalAndMax1Thread(Export export, Turn turn) {
        long nanos = (long) (turn.nextWait() * 1e9);
        export.waitNanos.add(nanos);
        export.maxWaitNanos.accumulate(nanos);
    }
}
