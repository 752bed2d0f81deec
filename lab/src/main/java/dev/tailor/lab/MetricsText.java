package dev.tailor.lab;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * One scrape of a Prometheus text exposition (format 0.0.4, as {@code /metrics} and {@code loop.metricsFile} serve
 * it), every sample with all its labels: what {@code tailor nbd top} and the experiments' reports read. Comments,
 * blank lines and lines that are not samples are skipped; a value that does not parse is skipped too. An absent
 * sample reads as NaN (no data), never 0. Immutable.
 */
public final class MetricsText {

    /** One sample: its name (with {@code _total}, {@code _bucket}, ... as written), labels and value. */
    record Sample(String name, Map<String, String> labels, double value) {

        /** The label's value, or "" when the sample has no such label. */
        String label(String label) {
            return labels.getOrDefault(label, "");
        }
    }

    static final MetricsText EMPTY = new MetricsText(Map.of());

    private final Map<String, List<Sample>> byName;

    private MetricsText(Map<String, List<Sample>> byName) {
        this.byName = byName;
    }

    /** The samples of {@code text}. */
    public static MetricsText parse(String text) {
        Map<String, List<Sample>> byName = new HashMap<>();
        for (String raw : text.split("\n")) {
            Sample sample = parseLine(raw.strip());
            if (sample != null) {
                byName.computeIfAbsent(sample.name(), n -> new ArrayList<>()).add(sample);
            }
        }
        byName.replaceAll((name, samples) -> List.copyOf(samples));
        return new MetricsText(Map.copyOf(byName));
    }

    /** {@code name{a="x",b="y"} value [timestamp]}, or null when the line is not a sample. */
    static Sample parseLine(String line) {
        if (line.isEmpty() || line.startsWith("#")) {
            return null;
        }
        int i = 0;
        while (i < line.length() && isNameChar(line.charAt(i), i == 0)) {
            i++;
        }
        if (i == 0) {
            return null;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                    i++;
                }
                if (i >= line.length()) {
                    return null;
                }
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int start = i;
                while (i < line.length() && isNameChar(line.charAt(i), i == start)) {
                    i++;
                }
                if (i == start || i + 1 >= line.length() || line.charAt(i) != '=' || line.charAt(i + 1) != '"') {
                    return null;
                }
                String label = line.substring(start, i);
                i += 2;
                StringBuilder value = new StringBuilder();
                while (i < line.length() && line.charAt(i) != '"') {
                    char c = line.charAt(i);
                    if (c == '\\' && i + 1 < line.length()) {
                        char next = line.charAt(++i);
                        value.append(next == 'n' ? '\n' : next);
                    } else {
                        value.append(c);
                    }
                    i++;
                }
                if (i >= line.length()) {
                    return null;
                }
                i++;
                labels.put(label, value.toString());
            }
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        if (rest.length == 0 || rest[0].isEmpty()) {
            return null;
        }
        double value;
        try {
            value = switch (rest[0]) {
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(rest[0]);
            };
        } catch (NumberFormatException e) {
            return null;
        }
        return new Sample(name, Map.copyOf(labels), value);
    }

    private static boolean isNameChar(char c, boolean first) {
        return c == '_'
                || c == ':'
                || (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (!first && c >= '0' && c <= '9');
    }

    /** Whether there is no sample at all. */
    boolean isEmpty() {
        return byName.isEmpty();
    }

    /** Every sample named {@code name}, in the order read. */
    List<Sample> samples(String name) {
        return byName.getOrDefault(name, List.of());
    }

    /**
     * The sum of the samples named {@code name} whose labels include every pair of {@code labelPairs}
     * ({@code "export", "disk", ...}); NaN when none matches.
     */
    double sum(String name, String... labelPairs) {
        double sum = 0;
        boolean any = false;
        for (Sample s : samples(name)) {
            if (matches(s, labelPairs)) {
                sum += s.value();
                any = true;
            }
        }
        return any ? sum : Double.NaN;
    }

    private static boolean matches(Sample s, String... labelPairs) {
        for (int k = 0; k + 1 < labelPairs.length; k += 2) {
            if (!labelPairs[k + 1].equals(s.labels().get(labelPairs[k]))) {
                return false;
            }
        }
        return true;
    }

    /** The values of {@code label} among the samples named {@code name}, in the order first seen. */
    List<String> labelValues(String name, String label) {
        List<String> values = new ArrayList<>();
        for (Sample s : samples(name)) {
            String v = s.labels().get(label);
            if (v != null && !values.contains(v)) {
                values.add(v);
            }
        }
        return values;
    }

    /**
     * The classic histogram {@code base} ({@code base_bucket}, {@code _count}, {@code _sum}) summed over the label sets
     * that include {@code labelPairs}: empty (count NaN) when there is none.
     */
    Histogram histogram(String base, String... labelPairs) {
        TreeMap<Double, Double> buckets = new TreeMap<>();
        Predicate<Sample> match = s -> matches(s, labelPairs);
        for (Sample s : samples(base + "_bucket")) {
            if (match.test(s)) {
                String le = s.labels().get("le");
                if (le == null) {
                    continue;
                }
                double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                buckets.merge(bound, s.value(), Double::sum);
            }
        }
        return new Histogram(buckets, sum(base + "_count", labelPairs), sum(base + "_sum", labelPairs));
    }

    /**
     * A classic histogram: cumulative counts by upper bound, the count and the sum (seconds, for our histograms).
     * NaN count: no data.
     */
    record Histogram(TreeMap<Double, Double> cumulative, double count, double sum) {

        /**
         * This minus {@code earlier} (the observations between two scrapes); this when earlier has no data, or more
         * observations than this (the server restarted in between: counted from 0, as a counter is).
         */
        Histogram minus(Histogram earlier) {
            if (Double.isNaN(earlier.count()) || Double.isNaN(count) || count < earlier.count()) {
                return this;
            }
            TreeMap<Double, Double> delta = new TreeMap<>();
            cumulative.forEach((le, c) -> delta.put(le, c - earlier.cumulative().getOrDefault(le, 0.0)));
            return new Histogram(delta, count - earlier.count(), sum - earlier.sum());
        }

        /** No data. */
        static final Histogram NONE = new Histogram(new TreeMap<>(), Double.NaN, Double.NaN);

        /** This plus {@code other} (two runs pooled); the one with data when the other has none. */
        Histogram plus(Histogram other) {
            if (Double.isNaN(other.count())) {
                return this;
            }
            if (Double.isNaN(count)) {
                return other;
            }
            TreeMap<Double, Double> both = new TreeMap<>(cumulative);
            other.cumulative().forEach((le, c) -> both.merge(le, c, Double::sum));
            return new Histogram(both, count + other.count(), sum + other.sum());
        }

        /** The mean; NaN when empty. */
        double mean() {
            return count > 0 ? sum / count : Double.NaN;
        }

        /**
         * The {@code q} quantile (0..1) as Prometheus's {@code histogram_quantile} estimates it: linear within the
         * bucket it falls in, from 0 for the first; the highest finite bound when it falls in {@code +Inf}. NaN
         * when empty.
         */
        double quantile(double q) {
            if (!(count > 0) || cumulative.isEmpty()) {
                return Double.NaN;
            }
            double total = cumulative.lastEntry().getValue();
            if (!(total > 0)) {
                return Double.NaN;
            }
            double rank = q * total;
            double lowerBound = 0;
            double lowerCount = 0;
            for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
                if (e.getValue() >= rank) {
                    if (Double.isInfinite(e.getKey())) {
                        return lowerBound;
                    }
                    double inBucket = e.getValue() - lowerCount;
                    return inBucket <= 0
                            ? e.getKey()
                            : lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
                }
                lowerBound = e.getKey();
                lowerCount = e.getValue();
            }
            return lowerBound;
        }

        /** The share (0..1) of observations above {@code bound} (a bucket bound); NaN when empty. */
        double shareAbove(double bound) {
            Double atOrBelow = cumulative.get(bound);
            if (!(count > 0) || atOrBelow == null) {
                return Double.NaN;
            }
            return 1 - atOrBelow / count;
        }
    }
}
