package dev.tailor.sim.storage;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.HdrHistogram.AbstractHistogram;

/**
 * Latency percentiles of one class of requests in one run, arrival at the proxy to completion at the
 * backend, in milliseconds. A percentile needs enough requests to mean something: P(q) is reported
 * only when at least {@code ceil(1 ÷ (1 − q))} requests were measured (100 for P99, 100,000 for
 * P99.999) — so that at least one request lies at or beyond it — and is {@code null} ("not
 * resolvable") otherwise. At exactly that count it is the slowest request; the docs' runs measure
 * several times more.
 *
 * @param requests     requests measured (completed, or unfinished at the end and counted at their age)
 * @param p50Millis    median
 * @param p99Millis    99th percentile
 * @param p999Millis   99.9th
 * @param p9999Millis  99.99th
 * @param p99999Millis 99.999th
 * @param meanMillis   mean
 * @param maxMillis    slowest
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record LatencySummary(
        long requests,
        Double p50Millis,
        Double p99Millis,
        Double p999Millis,
        Double p9999Millis,
        Double p99999Millis,
        Double meanMillis,
        Double maxMillis) {

    /** The percentile levels reported, in %. */
    static final double[] LEVELS = {50, 99, 99.9, 99.99, 99.999};
    /** Requests needed for each level: ceil(1 / (1 − q)). */
    static final long[] NEEDED = {2, 100, 1_000, 10_000, 100_000};

    /** Requests needed before the percentile {@code levelPercent} (one of 50 .. 99.999) is resolvable. */
    public static long needed(double levelPercent) {
        for (int i = 0; i < LEVELS.length; i++) {
            if (LEVELS[i] == levelPercent) {
                return NEEDED[i];
            }
        }
        return (long) Math.ceil(1 / (1 - levelPercent / 100) - 1e-9);
    }

    /** The summary of a histogram of ns. */
    static LatencySummary of(AbstractHistogram nanos) {
        long n = nanos.getTotalCount();
        Double[] p = new Double[LEVELS.length];
        for (int i = 0; i < LEVELS.length; i++) {
            p[i] = n >= NEEDED[i] ? nanos.getValueAtPercentile(LEVELS[i]) / 1e6 : null;
        }
        return new LatencySummary(
                n,
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                n == 0 ? null : nanos.getMean() / 1e6,
                n == 0 ? null : nanos.getMaxValue() / 1e6);
    }
}
