package dev.tailor.lab;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One export of the proxy's metrics ({@code loop.metricsFile}, the Prometheus text format written by
 * the nbd module's {@code ProxyBackgroundWork}): the {@code tailor_*} samples with at most one label,
 * by name and label value. A sample that is absent reads as NaN (no data), never 0. Immutable.
 */
final class ProxyMetrics {

    /** {@code tailor_NAME{LABEL="VALUE"} NUMBER} or {@code tailor_NAME NUMBER}. */
    private static final Pattern SAMPLE = Pattern.compile("^(tailor_\\w+)(?:\\{\\w+=\"([^\"]*)\"})? (\\S+)$");

    static final ProxyMetrics EMPTY = new ProxyMetrics(Map.of());

    private final Map<String, Double> samples;

    private ProxyMetrics(Map<String, Double> samples) {
        this.samples = samples;
    }

    /** The samples of {@code text}; lines that are not {@code tailor_*} samples are ignored. */
    static ProxyMetrics parse(String text) {
        Map<String, Double> samples = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher m = SAMPLE.matcher(line.strip());
            if (m.matches()) {
                double value;
                try {
                    value = Double.parseDouble(m.group(3));
                } catch (NumberFormatException e) {
                    continue;
                }
                samples.put(key(m.group(1), m.group(2) == null ? "" : m.group(2)), value);
            }
        }
        return new ProxyMetrics(Map.copyOf(samples));
    }

    /** Whether there is no sample at all (no export was read). */
    boolean isEmpty() {
        return samples.isEmpty();
    }

    /** The sample without a label; NaN when absent. */
    double get(String name) {
        return get(name, "");
    }

    /** The sample with this label value ({@code loop="0"}, {@code export="steady1"}); NaN when absent. */
    double get(String name, String label) {
        Double value = samples.get(key(name, label));
        return value == null ? Double.NaN : value;
    }

    private static String key(String name, String label) {
        return name + '\u0000' + label;
    }
}
