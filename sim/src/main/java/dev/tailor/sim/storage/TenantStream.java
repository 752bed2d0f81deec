package dev.tailor.sim.storage;

import dev.tailor.common.Numbers;
import dev.tailor.datasets.BlockTrace;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * One tenant's I/O arrivals on its virtual disk: a real trace excerpt replayed in a loop, its clock
 * stretched so that the mean rate is the tenant's, started at a random point of the excerpt, and
 * optionally with recurring bursts during which the excerpt plays {@code burstMultiplier} times
 * faster. Offsets are folded into the disk (modulo its size, aligned down to 4 KiB); sizes and
 * read/write come from the excerpt unchanged.
 *
 * <p>Our reading of "each trace excerpt is a tenant's virtual disk": replaying keeps the
 * excerpt's own burstiness at millisecond scale (the MSN excerpt's 10 ms bins have P99/mean ≈ 8),
 * which is what segment admission is about; stretching only changes the mean.
 *
 * <p>Deterministic for a given random stream. Not thread-safe.
 */
public final class TenantStream {

    /**
     * One arrival.
     *
     * @param arrivalNanos simulated time, ns
     * @param offsetBytes  offset on the tenant's virtual disk
     * @param lengthBytes  size, bytes
     * @param write        true for a write
     * @param burst        true when it arrived during a burst
     */
    public record Arrival(long arrivalNanos, long offsetBytes, int lengthBytes, boolean write, boolean burst) {}

    /**
     * Recurring bursts: gaps between burst starts are exponential with mean {@code meanGapSeconds};
     * a burst lasts U(minMillis, maxMillis); during it the excerpt plays {@code multiplier} times
     * faster.
     */
    public record Bursts(double meanGapSeconds, double minMillis, double maxMillis, double multiplier) {

        public Bursts {
            if (!(meanGapSeconds > 0)
                    || !(minMillis > 0)
                    || !(maxMillis >= minMillis)
                    || !(multiplier >= 1)
                    || !Double.isFinite(meanGapSeconds + maxMillis + multiplier)) {
                throw new IllegalArgumentException("bursts: meanGapSeconds " + Numbers.written(meanGapSeconds)
                        + ", minMillis " + Numbers.written(minMillis) + ", maxMillis " + Numbers.written(maxMillis)
                        + ", multiplier " + Numbers.written(multiplier)
                        + " (expected: gap > 0, 0 < min <= max, multiplier >= 1, all finite)");
            }
        }
    }

    private static final long ALIGN_BYTES = 4096;

    private final Excerpt.Cursor cursor;
    private final int size;
    private final long loopNanos;
    private final double stretch;
    private final long diskBytes;
    private final Bursts bursts;
    private final UniformRandomProvider random;
    private int index;
    /** The request at {@code index}, the next to play. */
    private BlockTrace.Request pending;

    private long loopStartTraceNanos;
    /** Simulated time at which trace time {@code traceAnchorNanos} was played. */
    private double simAnchorNanos;

    private double traceAnchorNanos;
    private double burstStartNanos;
    private double burstEndNanos;
    /** Simulated time past which no arrival is wanted (the run's end); +∞ unless {@link #until} set it. */
    private double horizonNanos = Double.POSITIVE_INFINITY;

    /**
     * A stream replaying a trace read into memory: {@code new TenantStream(Excerpt.of(trace), ...)}.
     *
     * @see #TenantStream(Excerpt, double, long, Bursts, UniformRandomProvider)
     */
    public TenantStream(
            BlockTrace trace, double requestsPerSecond, long diskBytes, Bursts bursts, UniformRandomProvider random) {
        this(Excerpt.of(trace), requestsPerSecond, diskBytes, bursts, random);
    }

    /**
     * @param trace             the excerpt to replay (at least two requests over a positive duration)
     * @param requestsPerSecond the tenant's mean rate outside bursts, &gt; 0
     * @param diskBytes         the virtual disk's size, &gt;= 4 KiB
     * @param bursts            recurring bursts, or {@code null} for none
     * @param random            the tenant's own stream (start point, bursts)
     */
    public TenantStream(
            Excerpt trace, double requestsPerSecond, long diskBytes, Bursts bursts, UniformRandomProvider random) {
        if (trace.size() < 2 || trace.durationNanos() <= 0) {
            throw new IllegalArgumentException(
                    trace.name() + ": a replayed excerpt needs two or more requests over" + " a positive time");
        }
        if (!(requestsPerSecond > 0) || !Double.isFinite(requestsPerSecond)) {
            throw new IllegalArgumentException(
                    "requestsPerSecond: " + Numbers.written(requestsPerSecond) + " (expected: > 0)");
        }
        if (diskBytes < ALIGN_BYTES) {
            throw new IllegalArgumentException("diskBytes: " + diskBytes + " (expected: >= 4096)");
        }
        this.size = trace.size();
        // One loop plays the excerpt plus one mean gap, so the wrap adds no burst of its own.
        double meanGapNanos = trace.durationNanos() / (double) (size - 1);
        this.loopNanos = trace.durationNanos() + Math.round(meanGapNanos);
        this.stretch = trace.requestsPerSecond() / requestsPerSecond;
        this.diskBytes = diskBytes / ALIGN_BYTES * ALIGN_BYTES;
        this.bursts = bursts;
        this.random = random;
        this.index = random.nextInt(size);
        this.cursor = trace.cursor(index);
        this.pending = cursor.next();
        this.loopStartTraceNanos = 0;
        this.traceAnchorNanos = pending.arrivalNanos();
        this.simAnchorNanos = 0;
        this.burstStartNanos = bursts == null ? Double.POSITIVE_INFINITY : nextGap();
        this.burstEndNanos = Double.NEGATIVE_INFINITY;
    }

    private double nextGap() {
        return -Math.log(1 - random.nextDouble()) * bursts.meanGapSeconds() * 1e9;
    }

    /**
     * Arrivals at or after {@code horizonNanos} (simulated time) are not wanted: past it the stream no
     * longer steps through burst boundaries, so a tenant whose next request lies far beyond the run (a
     * very low rate with frequent bursts) costs no more than the bursts within the run. Arrivals before
     * it are unchanged.
     *
     * @return this stream
     */
    public TenantStream until(double horizonNanos) {
        this.horizonNanos = horizonNanos;
        return this;
    }

    /** The next arrival; the stream never ends. */
    public Arrival next() {
        BlockTrace.Request request = pending;
        pending = cursor.next();
        double traceNanos = loopStartTraceNanos + request.arrivalNanos();
        double simNanos = toSim(traceNanos);
        boolean inBurst = simNanos >= burstStartNanos && simNanos < burstEndNanos;
        index++;
        if (index == size) {
            index = 0;
            loopStartTraceNanos += loopNanos;
        }
        long offset = Math.floorMod(request.offsetBytes(), diskBytes) / ALIGN_BYTES * ALIGN_BYTES;
        int length = (int) Math.min(request.lengthBytes(), diskBytes - offset);
        return new Arrival(Math.round(simNanos), offset, length, request.write(), inBurst);
    }

    /**
     * Simulated time of a trace instant, moving the anchors forward through burst boundaries: the
     * trace plays at 1/stretch outside bursts and multiplier/stretch inside.
     */
    private double toSim(double traceNanos) {
        while (true) {
            boolean inBurst = simAnchorNanos >= burstStartNanos && simAnchorNanos < burstEndNanos;
            double speed = inBurst ? bursts.multiplier() : 1.0; // trace ns per (stretch × sim ns)
            double boundary = inBurst ? burstEndNanos : burstStartNanos;
            double simAt = simAnchorNanos + (traceNanos - traceAnchorNanos) * stretch / speed;
            if (simAt < boundary || simAnchorNanos >= horizonNanos) {
                return simAt;
            }
            // Cross the boundary: advance the anchors to it.
            traceAnchorNanos += (boundary - simAnchorNanos) * speed / stretch;
            simAnchorNanos = boundary;
            if (inBurst) {
                burstStartNanos = boundary + nextGap();
            } else {
                double lengthNanos =
                        (bursts.minMillis() + random.nextDouble() * (bursts.maxMillis() - bursts.minMillis())) * 1e6;
                burstEndNanos = boundary + lengthNanos;
            }
        }
    }
}
