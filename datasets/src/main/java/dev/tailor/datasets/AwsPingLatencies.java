package dev.tailor.datasets;

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Measured round-trip times between the nodes of a cluster, read from a gzip CSV in the format of
 * the 52-node AWS EC2 ping data ({@code shared/data/network_latency/aws_ec2_52node_pings/latency.csv.gz},
 * PROVENANCE.md 3.1): columns {@code source,dest,size,time,source_region,dest_region} found by header
 * name; {@code size} is the ping payload in bytes, {@code time} the RTT in milliseconds, regions are
 * the dataset's short names ({@code EU}, {@code US}, {@code AP}).
 *
 * <p>Of the pings of one payload size (default {@value #DEFAULT_PAYLOAD_BYTES} B): the median RTT
 * per ordered measured pair (source → dest), and per ordered region pair the median of those pair
 * medians. A median of an even count is the mean of the middle two. Every node's region comes from
 * all rows, whatever their size. A {@code time} of NaN or empty is a lost ping and is skipped
 * ({@link #lostPings()}), never taken as 0 ms.
 *
 * <p>Errors: a missing or non-gzip file, a missing column, a bad value, a node given two regions, or
 * no ping of the chosen size is a {@link DataFileException} naming file, line, column and value;
 * file-system failures are {@link IOException}s.
 */
public final class AwsPingLatencies {

    /** The payload size of PROVENANCE.md 3.1's table, in bytes. */
    public static final int DEFAULT_PAYLOAD_BYTES = 64;

    private static final Pattern NUMBERED = Pattern.compile("(.*?)(\\d+)");
    /**
     * Node names in numeric order: names ending in a number first, by the text before it, then the
     * number (node-2 before node-10); then the other names by text.
     */
    public static final Comparator<String> NUMERIC_ORDER = AwsPingLatencies::compareNumeric;

    /**
     * An ordered pair of nodes, or of regions.
     *
     * @param from ping source
     * @param to   ping destination
     */
    public record Pair(String from, String to) {}

    private final Path file;
    private final int payloadBytes;
    private final SortedSet<Integer> payloadSizes;
    private final long pings;
    private final long lostPings;
    private final SortedMap<String, String> regionByNode;
    private final Map<Pair, Double> pairMedians;
    private final Map<Pair, Double> regionMedians;

    private AwsPingLatencies(
            Path file,
            int payloadBytes,
            SortedSet<Integer> payloadSizes,
            long pings,
            long lostPings,
            SortedMap<String, String> regionByNode,
            Map<Pair, Double> pairMedians,
            Map<Pair, Double> regionMedians) {
        this.file = file;
        this.payloadBytes = payloadBytes;
        this.payloadSizes = Collections.unmodifiableSortedSet(payloadSizes);
        this.pings = pings;
        this.lostPings = lostPings;
        this.regionByNode = Collections.unmodifiableSortedMap(regionByNode);
        this.pairMedians = Collections.unmodifiableMap(pairMedians);
        this.regionMedians = Collections.unmodifiableMap(regionMedians);
    }

    /** {@link #read(Path, int)} with {@value #DEFAULT_PAYLOAD_BYTES}-byte pings. */
    public static AwsPingLatencies read(Path file) throws IOException {
        return read(file, DEFAULT_PAYLOAD_BYTES);
    }

    /**
     * Reads the gzip CSV and keeps the pings of {@code payloadBytes}.
     *
     * @throws DataFileException naming file, line, column and value of the first problem, or when no
     *                           ping has that payload size (the message lists the sizes present)
     * @throws IOException       when the file system fails
     */
    public static AwsPingLatencies read(Path file, int payloadBytes) throws IOException {
        if (payloadBytes < 0) {
            throw new IllegalArgumentException(
                    "payloadBytes : " + payloadBytes + " (expected: a ping size in bytes >= 0)");
        }
        CsvReader.requireRegularFile(file, "a gzip-compressed CSV of pings");
        Map<String, String> regionByNode = new HashMap<>();
        SortedSet<Integer> sizes = new TreeSet<>();
        Map<Pair, List<Double>> rtts = new LinkedHashMap<>();
        long kept = 0;
        long lost = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                        new GZIPInputStream(Files.newInputStream(file)), StandardCharsets.UTF_8));
                CsvReader csv = CsvReader.of(file, in)) {
            int source = csv.column("source", "the pinging node");
            int dest = csv.column("dest", "the pinged node");
            int size = csv.column("size", "the ping payload in bytes");
            int time = csv.column("time", "the round-trip time in ms");
            int sourceRegion = csv.column("source_region", "the source node's region");
            int destRegion = csv.column("dest_region", "the dest node's region");
            for (CsvReader.Row row = csv.next(); row != null; row = csv.next()) {
                String from = row.nonEmpty(source, "a node name");
                String to = row.nonEmpty(dest, "a node name");
                region(row, regionByNode, from, sourceRegion);
                region(row, regionByNode, to, destRegion);
                long bytes = row.integer(size, "a payload size in bytes, a whole number");
                if (bytes < 0 || bytes > Integer.MAX_VALUE) {
                    throw row.bad(size, "a payload size in bytes >= 0");
                }
                sizes.add((int) bytes);
                Double rtt = row.measurement(time, "a round-trip time in ms");
                if (bytes != payloadBytes) {
                    continue;
                }
                if (rtt == null) {
                    lost++;
                    continue;
                }
                rtts.computeIfAbsent(new Pair(from, to), p -> new ArrayList<>()).add(rtt);
                kept++;
            }
        } catch (ZipException | EOFException e) {
            // An EOFException has no message: the file ended inside the gzip header or a block.
            String why = e.getMessage() != null ? e.getMessage() : Files.size(file) == 0 ? "empty" : "it ends early";
            throw DataFileException.badFile(
                    file, "not a complete gzip stream (" + why + ")", "a gzip-compressed CSV of pings");
        }
        if (kept == 0) {
            throw DataFileException.badFile(
                    file,
                    "no ping with a round-trip time has payload size " + payloadBytes + " B",
                    "one of the sizes present, " + sizes + " B");
        }
        Map<Pair, Double> pairMedians = new TreeMap<>(pairOrder());
        Map<Pair, List<Double>> byRegions = new HashMap<>();
        rtts.forEach((pair, values) -> {
            double median = median(values);
            pairMedians.put(pair, median);
            Pair regions = new Pair(regionByNode.get(pair.from()), regionByNode.get(pair.to()));
            byRegions.computeIfAbsent(regions, r -> new ArrayList<>()).add(median);
        });
        Map<Pair, Double> regionMedians =
                new TreeMap<>(Comparator.comparing(Pair::from).thenComparing(Pair::to));
        byRegions.forEach((regions, medians) -> regionMedians.put(regions, median(medians)));
        SortedMap<String, String> regions = new TreeMap<>(NUMERIC_ORDER);
        regions.putAll(regionByNode);
        return new AwsPingLatencies(file, payloadBytes, sizes, kept, lost, regions, pairMedians, regionMedians);
    }

    /** The file read. */
    public Path file() {
        return file;
    }

    /** The payload size whose pings were kept, in bytes. */
    public int payloadBytes() {
        return payloadBytes;
    }

    /** Every payload size present in the file, in bytes. */
    public SortedSet<Integer> payloadSizes() {
        return payloadSizes;
    }

    /** Pings of the chosen size with a round-trip time. */
    public long pings() {
        return pings;
    }

    /** Pings of the chosen size without a round-trip time (NaN or empty). */
    public long lostPings() {
        return lostPings;
    }

    /** Node → region short name ({@code EU}, {@code US}, {@code AP}), nodes in {@link #NUMERIC_ORDER}. */
    public SortedMap<String, String> regionByNode() {
        return regionByNode;
    }

    /** Region short names present, sorted. */
    public SortedSet<String> regions() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(regionByNode.values()));
    }

    /** The nodes of {@code region} in {@link #NUMERIC_ORDER}; empty for an unknown region. */
    public List<String> nodesIn(String region) {
        return regionByNode.entrySet().stream()
                .filter(e -> e.getValue().equals(region))
                .map(Map.Entry::getKey)
                .toList();
    }

    /** Ordered measured pair → median RTT in ms, sorted by source then dest in {@link #NUMERIC_ORDER}. */
    public Map<Pair, Double> medianRttMillis() {
        return pairMedians;
    }

    /** Median RTT in ms of pings from {@code from} to {@code to}; empty when that direction was never pinged. */
    public OptionalDouble medianRttMillis(String from, String to) {
        Double d = pairMedians.get(new Pair(from, to));
        return d == null ? OptionalDouble.empty() : OptionalDouble.of(d);
    }

    /** Ordered region pair → median over its measured node pairs' median RTTs, in ms. */
    public Map<Pair, Double> regionMedianRttMillis() {
        return regionMedians;
    }

    /** {@link #regionMedianRttMillis()} of one ordered region pair; empty when no pair of it was measured. */
    public OptionalDouble regionMedianRttMillis(String fromRegion, String toRegion) {
        Double d = regionMedians.get(new Pair(fromRegion, toRegion));
        return d == null ? OptionalDouble.empty() : OptionalDouble.of(d);
    }

    /** Median of non-empty {@code values}; the mean of the middle two for an even count. */
    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static void region(CsvReader.Row row, Map<String, String> regionByNode, String node, int column) {
        String region = row.nonEmpty(column, "a region name");
        String before = regionByNode.putIfAbsent(node, region);
        if (before != null && !before.equals(region)) {
            throw row.bad(column, quote(before) + ", the region given for " + node + " on an earlier line");
        }
    }

    private static Comparator<Pair> pairOrder() {
        return Comparator.comparing(Pair::from, NUMERIC_ORDER).thenComparing(Pair::to, NUMERIC_ORDER);
    }

    private static int compareNumeric(String a, String b) {
        Matcher ma = NUMBERED.matcher(a);
        Matcher mb = NUMBERED.matcher(b);
        boolean na = ma.matches();
        boolean nb = mb.matches();
        if (na != nb) {
            return na ? -1 : 1;
        }
        if (na) {
            int byPrefix = ma.group(1).compareTo(mb.group(1));
            if (byPrefix != 0) {
                return byPrefix;
            }
            String da = ma.group(2).replaceFirst("^0+(?=.)", "");
            String db = mb.group(2).replaceFirst("^0+(?=.)", "");
            int byNumber = da.length() != db.length() ? Integer.compare(da.length(), db.length()) : da.compareTo(db);
            if (byNumber != 0) {
                return byNumber;
            }
        }
        return a.compareTo(b);
    }

    private static String quote(String s) {
        return "\"" + s + "\"";
    }
}
