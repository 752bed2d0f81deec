package dev.tailor.sim.storage;

import dev.tailor.common.Numbers;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * The shared block backend of the storage simulator: {@code parallelism} I/Os in service at once,
 * first come first served, each taking a service time of {@code base + perKiB × KiB} (reads and
 * writes apart) times a log-normal factor with median 1 and shape {@code serviceSigma}. Fitted to a
 * real device by {@link BackendCalibration}.
 *
 * <p>Our reading: the design asks for a backend with a service curve calibrated from a real device
 * (docs/design.md#simulators) and says no more; a c-server FCFS queue with a
 * linear size cost is the simplest such curve, and blk-iocost's linear cost model (a + b·bytes) is
 * the same shape.
 *
 * @param parallelism        I/Os the device serves at once, &gt;= 1
 * @param readBaseMicros     service time of a zero-byte read, µs, &gt;= 0
 * @param readMicrosPerKiB   extra service time per KiB read, µs, &gt;= 0
 * @param writeBaseMicros    service time of a zero-byte write, µs, &gt;= 0
 * @param writeMicrosPerKiB  extra service time per KiB written, µs, &gt;= 0
 * @param serviceSigma       σ of the log-normal service-time factor (0 = deterministic), in [0, 2]
 */
public record BackendModel(
        int parallelism,
        double readBaseMicros,
        double readMicrosPerKiB,
        double writeBaseMicros,
        double writeMicrosPerKiB,
        double serviceSigma) {

    public BackendModel {
        List<String> problems = new ArrayList<>();
        if (parallelism < 1) {
            problems.add("parallelism: " + parallelism + " (expected: >= 1)");
        }
        check(problems, "readBaseMicros", readBaseMicros, 1e7);
        check(problems, "readMicrosPerKiB", readMicrosPerKiB, 1e6);
        check(problems, "writeBaseMicros", writeBaseMicros, 1e7);
        check(problems, "writeMicrosPerKiB", writeMicrosPerKiB, 1e6);
        check(problems, "serviceSigma", serviceSigma, 2);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("backend: " + String.join("; ", problems));
        }
    }

    private static void check(List<String> problems, String name, double value, double max) {
        if (!(value >= 0 && value <= max)) {
            problems.add(name + ": " + Numbers.written(value) + " (expected: a number in [0, " + Numbers.written(max)
                    + "])");
        }
    }

    /** Mean service time of one I/O, ns (the log-normal factor has mean exp(σ²/2)). */
    public double meanServiceNanos(int lengthBytes, boolean write) {
        return medianServiceNanos(lengthBytes, write) * Math.exp(serviceSigma * serviceSigma / 2);
    }

    /** Median service time of one I/O, ns. */
    public double medianServiceNanos(int lengthBytes, boolean write) {
        double kib = lengthBytes / 1024.0;
        double micros = write ? writeBaseMicros + writeMicrosPerKiB * kib : readBaseMicros + readMicrosPerKiB * kib;
        return micros * 1_000;
    }

    /** One draw of an I/O's service time, ns, &gt;= 1. */
    public long serviceNanos(int lengthBytes, boolean write, UniformRandomProvider random) {
        double factor = serviceSigma == 0 ? 1 : Math.exp(serviceSigma * gaussian(random));
        return Math.max(1, Math.round(medianServiceNanos(lengthBytes, write) * factor));
    }

    /** Standard normal by Box–Muller (one of the pair), so a stream's draws stay reproducible. */
    private static double gaussian(UniformRandomProvider random) {
        double u = 1 - random.nextDouble(); // (0, 1]
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    /**
     * The latency each I/O would see on this backend alone (FCFS over {@link #parallelism} servers,
     * in arrival order), without the rest of the simulator: for calibration and checks.
     *
     * @param arrivalNanos arrival times, non-decreasing
     * @param lengthBytes  sizes, same length
     * @param write        kinds, same length
     * @return latency per I/O, ns
     */
    public long[] replay(long[] arrivalNanos, int[] lengthBytes, boolean[] write, UniformRandomProvider random) {
        PriorityQueue<Long> busyUntil = new PriorityQueue<>();
        long[] latency = new long[arrivalNanos.length];
        for (int i = 0; i < arrivalNanos.length; i++) {
            long start = arrivalNanos[i];
            if (busyUntil.size() == parallelism) {
                start = Math.max(start, busyUntil.poll());
            }
            long done = start + serviceNanos(lengthBytes[i], write[i], random);
            busyUntil.add(done);
            latency[i] = done - arrivalNanos[i];
        }
        return latency;
    }
}
