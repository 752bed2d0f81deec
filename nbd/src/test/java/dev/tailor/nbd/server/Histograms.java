package dev.tailor.nbd.server;

import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reading a classic histogram's data point in tests. */
final class Histograms {

    private Histograms() {}

    /** The data point of {@code histogram} with exactly {@code labels} (name, value, ...). */
    static HistogramSnapshot.HistogramDataPointSnapshot point(HistogramSnapshot histogram, String... labels) {
        Labels wanted = Labels.of(labels);
        return histogram.getDataPoints().stream()
                .filter(p -> p.getLabels().equals(wanted))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no data point " + wanted + " in "
                        + histogram.getMetadata().getName()));
    }

    /** Per bucket with observations, its upper bound and how many observations fell in it (not cumulative). */
    static Map<Double, Long> filledBuckets(HistogramSnapshot.HistogramDataPointSnapshot point) {
        Map<Double, Long> out = new LinkedHashMap<>();
        ClassicHistogramBuckets buckets = point.getClassicBuckets();
        for (int i = 0; i < buckets.size(); i++) {
            if (buckets.getCount(i) > 0) {
                out.put(buckets.getUpperBound(i), buckets.getCount(i));
            }
        }
        return out;
    }
}
