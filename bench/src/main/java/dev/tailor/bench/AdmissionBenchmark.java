package dev.tailor.bench;

import com.google.common.util.concurrent.RateLimiter;
import dev.tailor.admission.Admission;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.AdmissionController;
import dev.tailor.admission.IoKind;
import dev.tailor.admission.VirtualDisk;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * The cost of one admission decision: {@link AdmissionController#acquire} of a
 * 4 KiB read, next to Bucket4j's {@code tryConsume(1)} and Guava's {@code RateLimiter.tryAcquire()}
 * in the same run, each on one thread and on two threads sharing one limiter.
 *
 * <p>All three are set up so that every call succeeds (budgets far above the call rate): what is
 * measured is the decision on the common path, not waiting. The admission controller's intervals
 * are ticked on a virtual clock every {@value #CALLS_PER_INTERVAL} calls (the tick is part of the
 * measured cost, amortised), and each call passes its arrival time on that clock, which refills the
 * disk's baseline bucket as the proxy's calls do; the controller reads no clock. Bucket4j and Guava
 * read the system
 * clock on every call, which is part of theirs. The admission ticket is completed with a latency in
 * {@code acquireAndComplete}, the whole per-request cost a proxy pays.
 *
 * <p>Run: {@code bench/run-admission-jmh.sh} (all of these benchmarks in one JMH run, 3 forks of 5 × 2 s
 * warm-up and 5 × 2 s measured each, about 8 minutes; it waits for {@code /tmp/jmh.lock} so that two
 * JMH runs on one machine do not measure each other), or {@code java -jar bench/target/benchmarks.jar
 * AdmissionBenchmark -f 3}. The two-thread benchmarks need both cores of a 2-core machine: with other
 * work running they vary between runs by more than the differences between limiters, so compare runs
 * made one after the other, several times (docs/admission.md, Cost of a decision).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgs = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
public class AdmissionBenchmark {

    /** Calls between two interval ticks of the admission controller. */
    static final int CALLS_PER_INTERVAL = 1_000;

    private static final long INTERVAL_NANOS = 10_000_000;
    private static final long DISK_BYTES = 64L << 30;

    /** One limiter of each kind, shared by the benchmark's threads. */
    @State(Scope.Benchmark)
    public static class Limiters {
        AdmissionController admission;
        Bucket bucket;
        RateLimiter rateLimiter;
        final AtomicLong calls = new AtomicLong();

        @Setup
        public void setUp() {
            // Capacity far above what even two threads can ask for in an interval.
            admission = new AdmissionController(
                    AdmissionConfig.DEFAULTS.toBuilder()
                            .capacityCostUnitsPerSecond(1e14)
                            .build(),
                    List.of(VirtualDisk.of("bench", DISK_BYTES)),
                    0);
            bucket = Bucket.builder()
                    .addLimit(Bandwidth.builder()
                            .capacity(1_000_000_000L)
                            .refillGreedy(1_000_000_000L, Duration.ofSeconds(1))
                            .build())
                    .build();
            rateLimiter = RateLimiter.create(1e12);
        }

        Admission acquire(long call) {
            // The virtual clock advances with the calls, so every acquire refills the baseline
            // bucket up to its arrival, as in the proxy and the simulator.
            long arrivalNanos = call * (INTERVAL_NANOS / CALLS_PER_INTERVAL);
            if (call % CALLS_PER_INTERVAL == 0) {
                admission.onInterval(arrivalNanos);
            }
            long offset = (call * 4096 * 7919) & (DISK_BYTES - 1) & ~4095L;
            return admission.acquire(0, IoKind.READ, offset, 4096, arrivalNanos);
        }
    }

    @Benchmark
    @Threads(1)
    public Object admission1Thread(Limiters limiters) {
        return limiters.acquire(limiters.calls.incrementAndGet());
    }

    @Benchmark
    @Threads(2)
    public Object admission2Threads(Limiters limiters) {
        return limiters.acquire(limiters.calls.incrementAndGet());
    }

    @Benchmark
    @Threads(1)
    public boolean acquireAndComplete1Thread(Limiters limiters) {
        Admission admission = limiters.acquire(limiters.calls.incrementAndGet());
        if (admission instanceof Admission.Admitted admitted) {
            admitted.ticket().onSuccess(200_000);
            return true;
        }
        return false;
    }

    @Benchmark
    @Threads(1)
    public boolean bucket4j1Thread(Limiters limiters) {
        limiters.calls.incrementAndGet(); // the same shared counter as the admission path
        return limiters.bucket.tryConsume(1);
    }

    @Benchmark
    @Threads(2)
    public boolean bucket4j2Threads(Limiters limiters) {
        limiters.calls.incrementAndGet();
        return limiters.bucket.tryConsume(1);
    }

    @Benchmark
    @Threads(1)
    public boolean guava1Thread(Limiters limiters) {
        limiters.calls.incrementAndGet();
        return limiters.rateLimiter.tryAcquire();
    }

    @Benchmark
    @Threads(2)
    public boolean guava2Threads(Limiters limiters) {
        limiters.calls.incrementAndGet();
        return limiters.rateLimiter.tryAcquire();
    }
}
