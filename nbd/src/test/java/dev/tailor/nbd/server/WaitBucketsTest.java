package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import org.junit.jupiter.api.Test;

/**
 * The buckets of the wait histograms ({@link IoMetrics#WAIT_BUCKETS_SECONDS}) against the quantiles read from them
 * as Prometheus' {@code histogram_quantile} and {@code tailor nbd top} read them: linearly interpolated within the
 * bucket the rank falls in.
 */
class WaitBucketsTest {

    /**
     * The {@code q} quantile of a classic histogram's data point, as {@code histogram_quantile} computes it: the
     * bucket holding rank q × count, linear between its lower and upper bound (0 below the first bound above 0).
     */
    private static double quantile(double q, HistogramSnapshot.HistogramDataPointSnapshot point) {
        ClassicHistogramBuckets buckets = point.getClassicBuckets();
        double rank = q * point.getCount();
        long below = 0;
        for (int i = 0; i < buckets.size(); i++) {
            long count = buckets.getCount(i);
            if (below + count >= rank && count > 0) {
                double upper = buckets.getUpperBound(i);
                double lower = i == 0 ? 0 : buckets.getUpperBound(i - 1);
                if (i == 0 && upper <= 0) {
                    return upper;
                }
                return lower + (upper - lower) * (rank - below) / count;
            }
            below += count;
        }
        return Double.NaN;
    }

    /** A wait histogram with {@code waits} observed, each {@code times} times. */
    private static HistogramSnapshot.HistogramDataPointSnapshot observed(int times, double... waits) {
        Histogram histogram = IoMetrics.waitHistogram("tailor_nbd_test_wait_seconds", "test", "export");
        for (double wait : waits) {
            for (int i = 0; i < times; i++) {
                histogram.labelValues("disk").observe(wait);
            }
        }
        return histogram.collect().getDataPoints().getFirst();
    }

    @Test
    void waitsOf32ms_readAP99Of32ms_notTheTopOfA25To50msBucket() {
        // Nearly every held request waited 31 to 32.5 ms (admission at its bound, 64 requests ahead at 2,000 IOPS):
        // the P99 is read at most a bucket's step above them. Between the bounds 0.025 and 0.05 it read 49.75 ms.
        HistogramSnapshot.HistogramDataPointSnapshot point = observed(250, 0.031, 0.0315, 0.032, 0.0325);
        assertThat(quantile(0.99, point)).isCloseTo(0.0329, within(0.0002)).isLessThan(0.033);
        assertThat(quantile(0.5, point)).isBetween(0.022, 0.033);
    }

    @Test
    void from1msTo1s_aQuantileIsAtMostABucketsStepOff_ofAtMost1point5() {
        double[] bounds = IoMetrics.WAIT_BUCKETS_SECONDS;
        assertThat(bounds)
                .as("a classic histogram's cost: a scan of its bounds")
                .hasSizeLessThanOrEqualTo(25);
        assertThat(bounds).startsWith(0.0).contains(0.001, 0.1, 1.0);
        // Every wait from 1 ms to 1 s, 40 per decade: all the observations at it, the P99 read from the buckets is
        // within 1.5 times of it either way.
        for (int i = 0; i <= 120; i++) {
            double wait = 0.001 * Math.pow(10, i / 40.0);
            double p99 = quantile(0.99, observed(1, wait));
            assertThat(p99 / wait)
                    .as("P99 of waits of %.5f s, read %.5f", wait, p99)
                    .isBetween(1 / 1.5, 1.5);
        }
        for (int i = 1; i < bounds.length; i++) {
            if (bounds[i - 1] >= 0.001 && bounds[i] <= 1) {
                assertThat(bounds[i] / bounds[i - 1])
                        .as("%s to %s", bounds[i - 1], bounds[i])
                        .isLessThanOrEqualTo(1.5 + 1e-9);
            }
        }
    }
}
