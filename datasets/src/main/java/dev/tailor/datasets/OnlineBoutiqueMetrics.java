package dev.tailor.datasets;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Per-minute CPU and request rate of every pod of a microservice application, with its call graph
 * and placement, read from a directory in the format of the TraStrainer OnlineBoutique dataset
 * ({@code shared/data/microservices/trastrainer_onlineboutique/normal_2022-08-14}, PROVENANCE.md 2.1).
 * Any directory of the same format works.
 *
 * <p>Files read:
 * <ul>
 *   <li>every {@code <pod>_metric.csv}: columns found by header name — {@code TimeStamp} (Unix
 *       seconds, whole), {@code PodName} (must equal the file's pod), {@code CpuUsage(m)}
 *       (millicores) and {@code PodWorkload(Ops)} (requests/s served); other columns are ignored.
 *       One row per sample (one a minute in the dataset), timestamps strictly increasing.
 *       NaN, ±Inf or an empty cell is "no data" for that sample ({@code null}), never zero.</li>
 *   <li>{@code dependency.csv} ({@code Source,Target,Weight}): rows whose {@code Target} is an IPv4
 *       address give placement (service → node IP; inferred meaning, PROVENANCE.md 2.1), the others
 *       are service → service call edges. Repeated rows count once.</li>
 * </ul>
 *
 * <p>A pod's component is its name minus its last two dash-separated parts, the ReplicaSet and pod
 * hashes of a Deployment: {@code frontend-579b9bff58-svcgr} → {@code frontend}. The sampling period
 * is not assumed: it is the median step between a pod's consecutive samples
 * ({@link #samplePeriodSeconds()}), so exports at 15 s, 30 s or 1 min steps all read alike.
 *
 * <p>Errors: a missing directory, file or column, or a bad value, is a {@link DataFileException}
 * naming the file, line, column and value; file-system failures are {@link IOException}s.
 */
public final class OnlineBoutiqueMetrics {

    /** File name suffix of a pod's metrics. */
    public static final String METRIC_SUFFIX = "_metric.csv";
    /** Name of the call-graph and placement file. */
    public static final String DEPENDENCY_FILE = "dependency.csv";
    /**
     * Sampling period (seconds) taken when no pod has two samples to measure it from: the
     * OnlineBoutique dataset's one minute (PROVENANCE.md 2.1).
     */
    public static final long DEFAULT_SAMPLE_PERIOD_SECONDS = 60;

    static final String TIMESTAMP = "TimeStamp";
    static final String POD_NAME = "PodName";
    static final String CPU = "CpuUsage(m)";
    static final String WORKLOAD = "PodWorkload(Ops)";

    private static final Pattern IPV4 =
            Pattern.compile("((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");

    /**
     * One sample of one pod, or of one component (the sum over its pods).
     *
     * @param unixSeconds       sample time, Unix seconds ({@code TimeStamp})
     * @param cpuMillicores     CPU used, millicores ({@code CpuUsage(m)}); {@code null} = no data
     * @param requestsPerSecond requests served per second ({@code PodWorkload(Ops)}); {@code null} = no data
     */
    public record Sample(long unixSeconds, Double cpuMillicores, Double requestsPerSecond) {}

    /**
     * One pod's time series, from one {@code <pod>_metric.csv}.
     *
     * @param pod       the pod name
     * @param component the pod's component
     * @param file      the file it was read from
     * @param samples   in time order
     */
    public record PodSeries(String pod, String component, Path file, List<Sample> samples) {

        public PodSeries {
            samples = List.copyOf(samples);
        }
    }

    /**
     * One component's time series: its pod's samples, or, when it has several pods, the sum over
     * its pods of the samples within half a sampling period of each sample of the pod with the most
     * samples; a value is {@code null} (no data) when any pod lacks it at that time (our reading: a
     * partial sum is not the component's total).
     *
     * @param component           the component name
     * @param pods                its pods, sorted
     * @param samples             in time order
     * @param samplePeriodSeconds the folder's sampling period, seconds, &gt; 0 ({@link #samplePeriodSeconds()})
     */
    public record ComponentSeries(String component, List<String> pods, List<Sample> samples, long samplePeriodSeconds) {

        public ComponentSeries {
            pods = List.copyOf(pods);
            samples = List.copyOf(samples);
            if (samplePeriodSeconds <= 0) {
                throw new IllegalArgumentException(
                        "samplePeriodSeconds : " + samplePeriodSeconds + " (expected: seconds > 0)");
            }
        }

        /**
         * Index of the sample nearest to {@code unixSeconds} if it lies within half a sampling
         * period of it, else empty. Ties take the earlier sample.
         */
        public Optional<Integer> indexNear(long unixSeconds) {
            int i = nearestIndex(samples, unixSeconds);
            if (i < 0 || !withinHalfPeriod(samples.get(i).unixSeconds(), unixSeconds, samplePeriodSeconds)) {
                return Optional.empty();
            }
            return Optional.of(i);
        }

        /** The sample of {@link #indexNear}, if any. */
        public Optional<Sample> sampleNear(long unixSeconds) {
            return indexNear(unixSeconds).map(samples::get);
        }
    }

    /**
     * A service → service row of {@code dependency.csv}.
     *
     * @param source calling service
     * @param target called service
     * @param weight the row's {@code Weight} (1 throughout the dataset; meaning not documented)
     */
    public record ServiceEdge(String source, String target, double weight) {}

    private final Path dir;
    private final SortedMap<String, List<PodSeries>> podsByComponent;
    private final long samplePeriodSeconds;
    private final boolean samplePeriodMeasured;
    private final SortedMap<String, ComponentSeries> components;
    private final List<ServiceEdge> serviceEdges;
    private final SortedMap<String, SortedSet<String>> placement;

    private OnlineBoutiqueMetrics(
            Path dir,
            SortedMap<String, List<PodSeries>> podsByComponent,
            List<ServiceEdge> serviceEdges,
            SortedMap<String, SortedSet<String>> placement) {
        this.dir = dir;
        this.podsByComponent = Collections.unmodifiableSortedMap(podsByComponent);
        long measured = medianStepSeconds(podsByComponent);
        this.samplePeriodMeasured = measured > 0;
        this.samplePeriodSeconds = measured > 0 ? measured : DEFAULT_SAMPLE_PERIOD_SECONDS;
        SortedMap<String, ComponentSeries> series = new TreeMap<>();
        podsByComponent.forEach(
                (component, pods) -> series.put(component, merge(component, pods, samplePeriodSeconds)));
        this.components = Collections.unmodifiableSortedMap(series);
        this.serviceEdges = List.copyOf(serviceEdges);
        this.placement = Collections.unmodifiableSortedMap(placement);
    }

    /** The names of {@code dir}'s sub-folders (one level) that hold a {@code <pod>_metric.csv}, sorted. */
    private static List<String> subFoldersWithMetrics(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path sub : listing) {
                try (DirectoryStream<Path> inner = Files.newDirectoryStream(sub, "*" + METRIC_SUFFIX)) {
                    if (inner.iterator().hasNext()) {
                        names.add(sub.getFileName().toString());
                    }
                } catch (java.nio.file.AccessDeniedException e) {
                    // a folder we cannot read is not one to point at
                }
            }
        }
        names.sort(null);
        return names;
    }

    /**
     * Reads every {@code <pod>_metric.csv} and the {@code dependency.csv} of {@code dir}.
     *
     * @throws DataFileException naming the file, line, column and value of the first problem; also
     *                           when the directory, its metric files or {@code dependency.csv} are missing
     * @throws IOException       when the file system fails
     */
    public static OnlineBoutiqueMetrics read(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw DataFileException.badFile(
                    dir,
                    Files.exists(dir) ? "not a directory" : "no such directory",
                    "a directory of <pod>" + METRIC_SUFFIX + " files and a " + DEPENDENCY_FILE);
        }
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(dir, "*" + METRIC_SUFFIX)) {
            listing.forEach(files::add);
        }
        files.removeIf(f -> !Files.isRegularFile(f));
        if (files.isEmpty()) {
            List<String> below = subFoldersWithMetrics(dir);
            throw DataFileException.badFile(
                    dir,
                    "no <pod>" + METRIC_SUFFIX + " files"
                            + (below.isEmpty()
                                    ? ""
                                    : "; its sub-folder" + (below.size() == 1 ? " " : "s ") + String.join(", ", below)
                                            + (below.size() == 1 ? " has" : " have") + " them"),
                    "one <pod>" + METRIC_SUFFIX + " per pod, the layout of docs/datasets.md");
        }
        files.sort(Comparator.comparing(f -> f.getFileName().toString()));
        SortedMap<String, List<PodSeries>> byComponent = new TreeMap<>();
        for (Path file : files) {
            PodSeries pod = readPod(file);
            byComponent.computeIfAbsent(pod.component(), c -> new ArrayList<>()).add(pod);
        }
        Path dependency = dir.resolve(DEPENDENCY_FILE);
        CsvReader.requireRegularFile(dependency, "the call graph and placement, Source,Target,Weight");
        List<ServiceEdge> edges = new ArrayList<>();
        SortedMap<String, SortedSet<String>> placement = new TreeMap<>();
        readDependency(dependency, edges, placement);
        return new OnlineBoutiqueMetrics(dir, byComponent, edges, placement);
    }

    /**
     * The component of a pod: the name minus its last two dash-separated parts.
     *
     * @throws IllegalArgumentException when the name has fewer than three non-empty parts
     */
    public static String componentOf(String pod) {
        String component = componentOrNull(pod);
        if (component == null) {
            throw new IllegalArgumentException("pod : " + quote(pod)
                    + " (expected: <component>-<replicaset hash>-<pod hash>, e.g. frontend-579b9bff58-svcgr)");
        }
        return component;
    }

    /** Whether {@code target} is written as an IPv4 address (a placement row of {@code dependency.csv}). */
    public static boolean isIpv4(String target) {
        return IPV4.matcher(target).matches();
    }

    /** The directory read. */
    public Path dir() {
        return dir;
    }

    /**
     * The sampling period, seconds: the median step between consecutive samples over every pod's
     * file (one minute in the OnlineBoutique dataset), or {@link #DEFAULT_SAMPLE_PERIOD_SECONDS} when
     * no pod has two samples ({@link #samplePeriodMeasured()} false). Samples of different pods
     * within half of it count as the same time.
     */
    public long samplePeriodSeconds() {
        return samplePeriodSeconds;
    }

    /** Whether {@link #samplePeriodSeconds()} was measured from the files rather than the default. */
    public boolean samplePeriodMeasured() {
        return samplePeriodMeasured;
    }

    /** Components that have at least one metric file, sorted. */
    public SortedSet<String> components() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(components.keySet()));
    }

    /** Component → its series, sorted by component. */
    public SortedMap<String, ComponentSeries> series() {
        return components;
    }

    /**
     * The series of one component.
     *
     * @throws IllegalArgumentException when {@code component} has no metric file here
     */
    public ComponentSeries series(String component) {
        ComponentSeries s = components.get(component);
        if (s == null) {
            throw new IllegalArgumentException("component : " + quote(component) + " has no metric file in " + dir
                    + " (expected one of " + components.keySet() + ")");
        }
        return s;
    }

    /** Component → its pods' series (sorted by pod), sorted by component. */
    public SortedMap<String, List<PodSeries>> podsByComponent() {
        return podsByComponent;
    }

    /** Service → service edges of {@code dependency.csv}, distinct, in file order (all services, metered or not). */
    public List<ServiceEdge> serviceEdges() {
        return serviceEdges;
    }

    /** Service → the node IPs it runs on, from the IPv4 rows of {@code dependency.csv}; both sorted. */
    public SortedMap<String, SortedSet<String>> placement() {
        return placement;
    }

    private static PodSeries readPod(Path file) throws IOException {
        String fileName = file.getFileName().toString();
        String pod = fileName.substring(0, fileName.length() - METRIC_SUFFIX.length());
        String component = componentOrNull(pod);
        if (component == null) {
            throw DataFileException.badFile(
                    file,
                    "pod name " + quote(pod) + " in the file name has no component",
                    "<component>-<replicaset hash>-<pod hash>" + METRIC_SUFFIX);
        }
        List<Sample> samples = new ArrayList<>();
        try (CsvReader csv = CsvReader.open(file)) {
            int time = csv.column(TIMESTAMP, "sample time in Unix seconds");
            int podName = csv.column(POD_NAME, "the pod's name");
            int cpu = csv.column(CPU, "CPU used in millicores");
            int workload = csv.column(WORKLOAD, "requests served per second");
            long previous = Long.MIN_VALUE;
            for (CsvReader.Row row = csv.next(); row != null; row = csv.next()) {
                long t = row.integer(time, "Unix seconds, a whole number");
                if (t <= previous) {
                    throw row.bad(time, "a time after the previous row's " + previous + " (rows in time order)");
                }
                previous = t;
                if (!row.text(podName).equals(pod)) {
                    throw row.bad(podName, quote(pod) + ", the pod this file is named after");
                }
                samples.add(new Sample(
                        t,
                        row.measurement(cpu, "a number of millicores"),
                        row.measurement(workload, "a number of requests per second")));
            }
        }
        return new PodSeries(pod, component, file, samples);
    }

    private static void readDependency(
            Path file, List<ServiceEdge> edges, SortedMap<String, SortedSet<String>> placement) throws IOException {
        Map<String, ServiceEdge> distinct = new LinkedHashMap<>();
        try (CsvReader csv = CsvReader.open(file)) {
            int source = csv.column("Source", "the calling service");
            int target = csv.column("Target", "the called service, or the IPv4 address of a node");
            int weight = csv.column("Weight", "the edge weight");
            for (CsvReader.Row row = csv.next(); row != null; row = csv.next()) {
                String from = row.nonEmpty(source, "a service name");
                String to = row.nonEmpty(target, "a service name or an IPv4 address");
                double w = row.number(weight, "a number");
                if (isIpv4(to)) {
                    placement.computeIfAbsent(from, s -> new TreeSet<>()).add(to);
                } else {
                    distinct.putIfAbsent(from + "\u0000" + to, new ServiceEdge(from, to, w));
                }
            }
        }
        edges.addAll(distinct.values());
    }

    /** Median of the steps between consecutive samples over all pods, seconds; 0 when there is no step. */
    private static long medianStepSeconds(SortedMap<String, List<PodSeries>> podsByComponent) {
        List<Long> steps = new ArrayList<>();
        for (List<PodSeries> pods : podsByComponent.values()) {
            for (PodSeries pod : pods) {
                for (int i = 1; i < pod.samples().size(); i++) {
                    steps.add(pod.samples().get(i).unixSeconds()
                            - pod.samples().get(i - 1).unixSeconds());
                }
            }
        }
        if (steps.isEmpty()) {
            return 0;
        }
        Collections.sort(steps);
        return steps.get((steps.size() - 1) / 2);
    }

    /** Whether times {@code a} and {@code b} (seconds) are at most half of {@code periodSeconds} apart. */
    static boolean withinHalfPeriod(long a, long b, long periodSeconds) {
        return 2 * Math.abs(a - b) <= periodSeconds;
    }

    private static ComponentSeries merge(String component, List<PodSeries> pods, long periodSeconds) {
        List<String> names = pods.stream().map(PodSeries::pod).sorted().toList();
        if (pods.size() == 1) {
            return new ComponentSeries(component, names, pods.get(0).samples(), periodSeconds);
        }
        PodSeries reference = pods.stream()
                .max(Comparator.<PodSeries>comparingInt(p -> p.samples().size())
                        .thenComparing(PodSeries::pod, Comparator.reverseOrder()))
                .orElseThrow();
        List<Sample> merged = new ArrayList<>(reference.samples().size());
        for (Sample at : reference.samples()) {
            Double cpu = 0.0;
            Double requests = 0.0;
            for (PodSeries pod : pods) {
                int i = nearestIndex(pod.samples(), at.unixSeconds());
                Sample s = i < 0 ? null : pod.samples().get(i);
                if (s == null || !withinHalfPeriod(s.unixSeconds(), at.unixSeconds(), periodSeconds)) {
                    cpu = null;
                    requests = null;
                    break;
                }
                cpu = cpu == null || s.cpuMillicores() == null ? null : cpu + s.cpuMillicores();
                requests = requests == null || s.requestsPerSecond() == null ? null : requests + s.requestsPerSecond();
            }
            merged.add(new Sample(at.unixSeconds(), cpu, requests));
        }
        return new ComponentSeries(component, names, merged, periodSeconds);
    }

    /** Index of the sample nearest to {@code t} (ties: the earlier), or -1 when there are none. */
    static int nearestIndex(List<Sample> samples, long t) {
        int lo = 0;
        int hi = samples.size() - 1;
        if (hi < 0) {
            return -1;
        }
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (samples.get(mid).unixSeconds() < t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // lo = first sample at or after t (or the last one); the one before may be nearer.
        if (lo > 0
                && t - samples.get(lo - 1).unixSeconds()
                        <= Math.abs(samples.get(lo).unixSeconds() - t)) {
            return lo - 1;
        }
        return lo;
    }

    private static String componentOrNull(String pod) {
        if (pod == null) {
            return null;
        }
        String[] parts = pod.split("-", -1);
        if (parts.length < 3 || parts[parts.length - 1].isEmpty() || parts[parts.length - 2].isEmpty()) {
            return null;
        }
        String component = String.join("-", java.util.Arrays.copyOf(parts, parts.length - 2));
        return component.isEmpty() ? null : component;
    }

    private static String quote(String s) {
        return s == null ? "null" : "\"" + s + "\"";
    }
}
