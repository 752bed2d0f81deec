package dev.tailor.datasets.snapshot;

import dev.tailor.common.Numbers;
import dev.tailor.datasets.AwsPingLatencies;
import dev.tailor.datasets.DataFileException;
import dev.tailor.datasets.JaegerSpans;
import dev.tailor.datasets.OnlineBoutiqueMetrics;
import dev.tailor.datasets.OnlineBoutiqueMetrics.ComponentSeries;
import dev.tailor.datasets.OnlineBoutiqueMetrics.Sample;
import dev.tailor.datasets.OnlineBoutiqueMetrics.ServiceEdge;
import dev.tailor.heart.Call;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Builds one HEART {@link Snapshot} from a dataset folder in the TraStrainer layout: the per-sample
 * CPU and request rate of every pod ({@link OnlineBoutiqueMetrics}), the call graph of its
 * {@code dependency.csv}, the call mix of a Jaeger span CSV ({@link JaegerSpans}) and measured AWS
 * EC2 round-trip times ({@link AwsPingLatencies}, PROVENANCE.md 3.1), onto a cluster of
 * heterogeneous nodes of our choosing. The default folder is the public OnlineBoutique dataset
 * (PROVENANCE.md 2.1, 2.2); any application exported in the same layout works (docs/datasets.md).
 * Such data has one pod per component on nodes of unknown speed; everything about the cluster is
 * therefore our reading, and every assumption is returned in {@link Result#notes()}.
 *
 * <h2>Mapping</h2>
 * <ul>
 *   <li><b>Trace.</b> {@link Options#traceFile()} when given; else the one CSV of the folder whose
 *       header has {@link JaegerSpans#REQUIRED_COLUMNS} (several: an error asking to choose); else
 *       {@value #DEFAULT_TRACE} next to the folder (where the bundled dataset keeps its trace); else
 *       none, and every callee's λ is split equally over its callers. Each case is noted.</li>
 *   <li><b>Entry component.</b> {@link Options#entryComponent()} when given; else the component with
 *       metrics that recorded the most root spans (spans without a parent) in the trace, the first
 *       by name on a tie; else, without a trace or root spans in a metered component, the one
 *       metered component no other metered component calls in {@code dependency.csv} (none or
 *       several: an error asking for it). Noted with the counts it was chosen by.</li>
 *   <li><b>Nodes.</b> {@link Options#nodes()} nodes (default 5); node i (0-based) is named
 *       {@code w<i+1>}, has per-core speed factor {@code nodeSpeeds[i mod len]} (default 1.0, 0.9,
 *       0.7, 0.5, 0.4: the HEART paper's workers, cycled) and {@link Options#cpuCoresPerNode()} cores
 *       (default 4). The speed is not a field of {@link Node}; it shows in the replicas' CPU.</li>
 *   <li><b>Minute.</b> One sample of the dataset ({@link Minute}); default the one where
 *       the entry component's {@code PodWorkload(Ops)} is largest, the earliest on a tie. Every other
 *       component takes its sample within half a sampling period of that time; the sampling period is
 *       measured from the files ({@link OnlineBoutiqueMetrics#samplePeriodSeconds()}, 60 s in the
 *       OnlineBoutique dataset) and is {@link Snapshot#windowSeconds()}, the sample's length.</li>
 *   <li><b>Rate and cost.</b> For each component c with metrics: λ_c = {@code PodWorkload(Ops)} in
 *       requests/s; base cost = {@code CpuUsage(m)} ÷ 1000 ÷ λ_c CPU-seconds per request, taken as the
 *       cost on a speed-1.0 node. λ_c = 0: replicas serve 0 requests/s with CPU absent (no data).
 *       λ_c missing (NaN, or no sample at that time): replicas have both metrics absent and every
 *       call into c has rate 0. CPU missing while λ_c &gt; 0: CPU absent. Each case is noted.</li>
 *   <li><b>Replicas.</b> {@link Options#replicasPerComponent()} R (default 3) per component. With
 *       the components sorted by name, replica k (0-based) of the c-th component runs on node
 *       (c + k) mod N, is named {@code <component>-<k+1>}, is ready, serves λ_c ÷ R requests/s (the
 *       uniform split of kube-proxy, which is what ran before HEART) and uses
 *       requests/s × base ÷ speed(node) cores. {@link Options#cpuLimitCores()} is set on every replica
 *       when given (default absent).</li>
 *   <li><b>Calls.</b> The service → service edges of {@code dependency.csv} whose both ends have
 *       metrics. Each callee's λ is split over its callers in proportion to the spans counted for
 *       those edges in the trace file; an edge absent from the trace gets rate 0 (noted). When none
 *       of a callee's edges is in the trace, or there is no trace file, its λ is split equally over
 *       its callers (noted). So Σ of a callee's incoming call rates = its λ. The entry component is
 *       called by the entry point {@value #INGRESS} at λ_entry, spread equally over all nodes in
 *       {@code byCallerNode} (an ingress gateway on every node); edges of {@code dependency.csv} into
 *       the entry component are dropped (noted), as are self-edges. Other calls carry no
 *       {@code byCallerNode}: HEART takes a caller's supply per node from its own shares.</li>
 *   <li><b>Delays.</b> Node i is the k-th AWS node (in numeric order: node-0, node-3, …) of region
 *       {@code regions[i mod len]} (default all {@code EU}), where it is that region's k-th use; too
 *       few AWS nodes in a region is an error. Locality = {@code <aws-region>/<aws-region>a/w<i+1>}
 *       with {@link #AWS_REGION_NAMES} (the region names of {@code topology-dense-52.json},
 *       PROVENANCE.md 3.2). One-way delay(i, j) = median RTT (pings of
 *       {@link Options#pingPayloadBytes()}, default 64 B) of the AWS pair i → j, else j → i, ÷ 2; a
 *       pair never pinged takes its region pair's median ÷ 2 (noted with a count); same node:
 *       {@link Options#sameNodeDelayMillis()} (default 0.05 ms, our choice: loopback through two
 *       sidecars). All N × N delays are emitted.</li>
 * </ul>
 *
 * <p>The snapshot passes {@link SnapshotValidator#validate} with no problems.
 *
 * <p>Errors: bad options are {@link IllegalArgumentException}s naming the option, its value and what
 * is expected; bad or missing data files are {@link DataFileException}s naming file, line, column and
 * value; file-system failures are {@link IOException}s.
 */
public final class OnlineBoutiqueSnapshot {

    /** Name of the entry point that calls the entry component. */
    public static final String INGRESS = "ingress";
    /** The HEART paper's worker speeds, the default per-core speed factors. */
    public static final List<Double> DEFAULT_NODE_SPEEDS = List.of(1.0, 0.9, 0.7, 0.5, 0.4);
    /**
     * AWS region of each region short name of the ping data, as named in
     * {@code topology-dense-52.json} (PROVENANCE.md 3.2).
     */
    public static final SortedMap<String, String> AWS_REGION_NAMES = Collections.unmodifiableSortedMap(
            new TreeMap<>(Map.of("EU", "eu-central-1", "US", "us-east-1", "AP", "ap-southeast-2")));
    /** Default trace file, relative to the metrics directory (PROVENANCE.md 2.2). */
    public static final String DEFAULT_TRACE = "../faulty_2022-08-22/trace_06_20.csv";
    /** Default ping file, relative to the metrics directory, in the layout of {@code shared/data}. */
    public static final String DEFAULT_LATENCY = "../../../network_latency/aws_ec2_52node_pings/latency.csv.gz";

    private OnlineBoutiqueSnapshot() {}

    /**
     * Which sample to use (one a minute in the OnlineBoutique dataset).
     */
    public sealed interface Minute {

        /** The sample where the entry component's request rate is largest (earliest on a tie). */
        Minute BUSIEST = new Busiest();

        /** Numbers below this are indices for {@link #parse}, numbers from it on Unix seconds (2001-09-09). */
        long FIRST_UNIX_SECONDS = 1_000_000_000L;

        /** The entry component's {@code index}-th sample (0-based). */
        static Minute index(int index) {
            return new Index(index);
        }

        /**
         * The entry component's sample within half a sampling period (30 s for one-minute samples) of
         * {@code unixSeconds}.
         */
        static Minute unixSeconds(long unixSeconds) {
            return new UnixSeconds(unixSeconds);
        }

        /**
         * {@code busiest}; or a whole number: an index when below {@link #FIRST_UNIX_SECONDS}, else
         * Unix seconds.
         *
         * @throws IllegalArgumentException naming the text when it is neither
         */
        static Minute parse(String text) {
            String t = text == null ? "" : text.strip();
            if (t.equalsIgnoreCase("busiest")) {
                return BUSIEST;
            }
            long value;
            try {
                value = Long.parseLong(t);
            } catch (NumberFormatException e) {
                value = -1;
            }
            if (value < 0) {
                throw new IllegalArgumentException("minute : \"" + text + "\" (expected: busiest, a sample index >= 0,"
                        + " or Unix seconds >= " + FIRST_UNIX_SECONDS + ")");
            }
            return value < FIRST_UNIX_SECONDS ? new Index((int) value) : new UnixSeconds(value);
        }

        /** See {@link #BUSIEST}. */
        record Busiest() implements Minute {}

        /**
         * See {@link Minute#index(int)}.
         *
         * @param index 0-based sample index, &gt;= 0
         */
        record Index(int index) implements Minute {
            public Index {
                if (index < 0) {
                    throw new IllegalArgumentException("minute : index " + index + " (expected: >= 0)");
                }
            }
        }

        /**
         * See {@link Minute#unixSeconds(long)}.
         *
         * @param unixSeconds a time in Unix seconds
         */
        record UnixSeconds(long unixSeconds) implements Minute {}
    }

    /**
     * What to build. {@code null} for a path, list or object means its default; see the class
     * documentation for the mapping each option controls.
     *
     * @param metricsDir           directory of {@code <pod>_metric.csv} and {@code dependency.csv}; required
     * @param traceFile            Jaeger span CSV for the call mix; default the one span CSV in
     *                             {@code metricsDir}, else {@value #DEFAULT_TRACE} relative to it if it exists,
     *                             else equal split over callers. An explicit file must exist.
     * @param useTrace             false: split every callee's λ equally over its callers, ignore traces
     *                             (default true)
     * @param latencyFile          AWS ping gzip CSV; default {@value #DEFAULT_LATENCY} relative to
     *                             {@code metricsDir}
     * @param replicasPerComponent R, replicas per component, 1..1000 (default 3)
     * @param nodes                N, number of nodes, 1..1000 (default 5; at most the AWS nodes of the regions)
     * @param nodeSpeeds           per-core speed factors, cycled over the nodes, each finite and &gt; 0
     *                             (default {@link #DEFAULT_NODE_SPEEDS})
     * @param cpuCoresPerNode      allocatable cores of every node, finite and &gt; 0 (default 4)
     * @param cpuLimitCores        CPU limit of every replica in cores, finite and &gt; 0, or {@code null} for
     *                             none (default)
     * @param minute               which sample (default {@link Minute#BUSIEST})
     * @param regions              region short names EU, US or AP, cycled over the nodes (default [EU])
     * @param sameNodeDelayMillis  one-way delay of a node to itself in ms, finite and &gt;= 0 (default 0.05)
     * @param pingPayloadBytes     ping payload size whose RTTs are used, bytes (default 64)
     * @param entryComponent       the component that {@value #INGRESS} calls; {@code null} (default): found from
     *                             the trace's root spans, else from the call graph (see the class documentation)
     */
    public record Options(
            Path metricsDir,
            Path traceFile,
            boolean useTrace,
            Path latencyFile,
            int replicasPerComponent,
            int nodes,
            List<Double> nodeSpeeds,
            double cpuCoresPerNode,
            Double cpuLimitCores,
            Minute minute,
            List<String> regions,
            double sameNodeDelayMillis,
            int pingPayloadBytes,
            String entryComponent) {

        /** Default R. */
        public static final int DEFAULT_REPLICAS = 3;
        /** Default N. */
        public static final int DEFAULT_NODES = 5;
        /** Default cores per node. */
        public static final double DEFAULT_CPU_CORES_PER_NODE = 4;
        /** Default same-node delay, ms (our choice). */
        public static final double DEFAULT_SAME_NODE_DELAY_MILLIS = 0.05;

        public Options {
            if (metricsDir == null) {
                throw new IllegalArgumentException(
                        "metricsDir : null (expected: a directory of <pod>_metric.csv files)");
            }
            requireRange("replicasPerComponent", replicasPerComponent, 1, 1000);
            requireRange("nodes", nodes, 1, 1000);
            nodeSpeeds = nodeSpeeds == null ? DEFAULT_NODE_SPEEDS : List.copyOf(nodeSpeeds);
            if (nodeSpeeds.isEmpty()) {
                throw new IllegalArgumentException("nodeSpeeds : [] (expected: at least one speed factor > 0)");
            }
            for (int i = 0; i < nodeSpeeds.size(); i++) {
                Double s = nodeSpeeds.get(i);
                if (s == null || !Double.isFinite(s) || s <= 0) {
                    throw new IllegalArgumentException("nodeSpeeds[" + i + "] : "
                            + (s == null ? "null" : Numbers.written(s)) + " (expected: a finite speed > 0)");
                }
            }
            if (!Double.isFinite(cpuCoresPerNode) || cpuCoresPerNode <= 0) {
                throw new IllegalArgumentException("cpuCoresPerNode : " + Numbers.written(cpuCoresPerNode)
                        + " (expected: a finite number of cores > 0)");
            }
            if (cpuLimitCores != null && (!Double.isFinite(cpuLimitCores) || cpuLimitCores <= 0)) {
                throw new IllegalArgumentException("cpuLimitCores : " + Numbers.written(cpuLimitCores)
                        + " (expected: a finite number of cores > 0, or absent)");
            }
            minute = minute == null ? Minute.BUSIEST : minute;
            if (regions == null) {
                regions = List.of("EU");
            }
            List<String> normal = new ArrayList<>(regions.size());
            for (int i = 0; i < regions.size(); i++) {
                String r =
                        regions.get(i) == null ? null : regions.get(i).strip().toUpperCase(Locale.ROOT);
                if (r == null || !AWS_REGION_NAMES.containsKey(r)) {
                    throw new IllegalArgumentException("regions[" + i + "] : "
                            + (regions.get(i) == null ? "null" : "\"" + regions.get(i) + "\"") + " (expected: one of "
                            + AWS_REGION_NAMES.keySet() + ")");
                }
                normal.add(r);
            }
            if (normal.isEmpty()) {
                throw new IllegalArgumentException(
                        "regions : [] (expected: at least one of " + AWS_REGION_NAMES.keySet() + ")");
            }
            regions = List.copyOf(normal);
            if (!Double.isFinite(sameNodeDelayMillis) || sameNodeDelayMillis < 0) {
                throw new IllegalArgumentException("sameNodeDelayMillis : " + Numbers.written(sameNodeDelayMillis)
                        + " (expected: a finite delay in ms >= 0)");
            }
            if (pingPayloadBytes < 0) {
                throw new IllegalArgumentException("pingPayloadBytes : " + pingPayloadBytes
                        + " (expected: a payload size in bytes >= 0, e.g. 24, 64 or 65515)");
            }
            entryComponent = entryComponent == null ? null : entryComponent.strip();
            if (entryComponent != null && entryComponent.isEmpty()) {
                throw new IllegalArgumentException("entryComponent : \"\" (expected: a component name, e.g. frontend,"
                        + " or absent to find it from the trace)");
            }
        }

        /** Every option at its default, reading {@code metricsDir}. */
        public static Options defaults(Path metricsDir) {
            return builder().metricsDir(metricsDir).build();
        }

        /** The per-core speed factor of node i (0-based). */
        public double speedOf(int node) {
            return nodeSpeeds.get(node % nodeSpeeds.size());
        }

        private static void requireRange(String name, int value, int min, int max) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(name + " : " + value + " (expected: " + min + " .. " + max + ")");
            }
        }

        /** A builder starting from {@link #DEFAULTS}. */
        public static Builder builder() {
            return new Builder();
        }

        /** A builder starting from this configuration's values. */
        public Builder toBuilder() {
            return new Builder(this);
        }

        /**
         * Builds {@link Options}: named setters over the defaults (the one place they are set; a list, path or
         * object left {@code null} takes its default in the constructor), checked together in {@link #build}.
         * {@code metricsDir} has no default.
         */
        public static final class Builder {
            private Path metricsDir;
            private Path traceFile;
            private boolean useTrace = true;
            private Path latencyFile;
            private int replicasPerComponent = DEFAULT_REPLICAS;
            private int nodes = DEFAULT_NODES;
            private List<Double> nodeSpeeds;
            private double cpuCoresPerNode = DEFAULT_CPU_CORES_PER_NODE;
            private Double cpuLimitCores;
            private Minute minute;
            private List<String> regions;
            private double sameNodeDelayMillis = DEFAULT_SAME_NODE_DELAY_MILLIS;
            private int pingPayloadBytes = AwsPingLatencies.DEFAULT_PAYLOAD_BYTES;
            private String entryComponent;

            private Builder() {}

            private Builder(Options from) {
                metricsDir = from.metricsDir;
                traceFile = from.traceFile;
                useTrace = from.useTrace;
                latencyFile = from.latencyFile;
                replicasPerComponent = from.replicasPerComponent;
                nodes = from.nodes;
                nodeSpeeds = from.nodeSpeeds;
                cpuCoresPerNode = from.cpuCoresPerNode;
                cpuLimitCores = from.cpuLimitCores;
                minute = from.minute;
                regions = from.regions;
                sameNodeDelayMillis = from.sameNodeDelayMillis;
                pingPayloadBytes = from.pingPayloadBytes;
                entryComponent = from.entryComponent;
            }

            /** {@link Options#metricsDir}. */
            public Builder metricsDir(Path value) {
                metricsDir = value;
                return this;
            }

            /** {@link Options#traceFile}. */
            public Builder traceFile(Path value) {
                traceFile = value;
                return this;
            }

            /** {@link Options#useTrace}. */
            public Builder useTrace(boolean value) {
                useTrace = value;
                return this;
            }

            /** {@link Options#latencyFile}. */
            public Builder latencyFile(Path value) {
                latencyFile = value;
                return this;
            }

            /** {@link Options#replicasPerComponent}. */
            public Builder replicasPerComponent(int value) {
                replicasPerComponent = value;
                return this;
            }

            /** {@link Options#nodes}. */
            public Builder nodes(int value) {
                nodes = value;
                return this;
            }

            /** {@link Options#nodeSpeeds}. */
            public Builder nodeSpeeds(List<Double> value) {
                nodeSpeeds = value;
                return this;
            }

            /** {@link Options#cpuCoresPerNode}. */
            public Builder cpuCoresPerNode(double value) {
                cpuCoresPerNode = value;
                return this;
            }

            /** {@link Options#cpuLimitCores}. */
            public Builder cpuLimitCores(Double value) {
                cpuLimitCores = value;
                return this;
            }

            /** {@link Options#minute}. */
            public Builder minute(Minute value) {
                minute = value;
                return this;
            }

            /** {@link Options#regions}. */
            public Builder regions(List<String> value) {
                regions = value;
                return this;
            }

            /** {@link Options#sameNodeDelayMillis}. */
            public Builder sameNodeDelayMillis(double value) {
                sameNodeDelayMillis = value;
                return this;
            }

            /** {@link Options#pingPayloadBytes}. */
            public Builder pingPayloadBytes(int value) {
                pingPayloadBytes = value;
                return this;
            }

            /** {@link Options#entryComponent}. */
            public Builder entryComponent(String value) {
                entryComponent = value;
                return this;
            }

            /**
             * The options, checked as the constructor checks them.
             *
             * @throws IllegalArgumentException naming the field, its value and what is expected when one is out of
             *                                  range, or {@code metricsDir} is not set
             */
            public Options build() {
                return new Options(
                        metricsDir,
                        traceFile,
                        useTrace,
                        latencyFile,
                        replicasPerComponent,
                        nodes,
                        nodeSpeeds,
                        cpuCoresPerNode,
                        cpuLimitCores,
                        minute,
                        regions,
                        sameNodeDelayMillis,
                        pingPayloadBytes,
                        entryComponent);
            }
        }
    }

    /**
     * What was built.
     *
     * @param snapshot       the snapshot, valid for {@link SnapshotValidator#validate}
     * @param entryComponent the component {@value #INGRESS} calls, given or found
     * @param notes          every assumption made, one sentence each, for the CLI to print
     */
    public record Result(Snapshot snapshot, String entryComponent, List<String> notes) {

        public Result {
            notes = List.copyOf(notes);
        }
    }

    /**
     * Reads the data files of {@code options} and builds the snapshot.
     *
     * @throws IllegalArgumentException naming the option when the data cannot satisfy it (unknown
     *                                  entry component or none to be found, several span CSVs in the
     *                                  folder and no trace file, minute out of range, a region out of
     *                                  AWS nodes)
     * @throws DataFileException        naming file, line, column and value of bad or missing data
     * @throws IOException              when the file system fails
     */
    public static Result build(Options options) throws IOException {
        if (options == null) {
            throw new IllegalArgumentException("options : null (expected: Options.defaults(metricsDir) or a variant)");
        }
        List<String> notes = new ArrayList<>();
        OnlineBoutiqueMetrics metrics = OnlineBoutiqueMetrics.read(options.metricsDir());
        notePods(metrics, notes);
        JaegerSpans spans = readTrace(options, notes);
        Path latencyFile = options.latencyFile() != null
                ? options.latencyFile()
                : options.metricsDir().resolve(DEFAULT_LATENCY).normalize();
        AwsPingLatencies pings = AwsPingLatencies.read(latencyFile, options.pingPayloadBytes());

        String entry = resolveEntry(options.entryComponent(), metrics, spans, notes);
        ComponentSeries entrySeries = metrics.series(entry);
        int index = resolveMinute(options.minute(), entrySeries, options.entryComponent() != null, metrics, notes);
        long at = entrySeries.samples().get(index).unixSeconds();

        // Rate and cost per component at that minute.
        List<String> components = List.copyOf(metrics.components());
        Map<String, Double> lambda = new HashMap<>();
        Map<String, Double> baseCost = new HashMap<>();
        List<String> idle = new ArrayList<>();
        List<String> noRate = new ArrayList<>();
        List<String> noCpu = new ArrayList<>();
        for (String c : components) {
            Optional<Sample> sample = metrics.series(c).sampleNear(at);
            Double rate = sample.map(Sample::requestsPerSecond).orElse(null);
            if (rate == null) {
                noRate.add(c
                        + (sample.isEmpty()
                                ? " (no sample within " + halfPeriod(metrics) + " s)"
                                : " (PodWorkload(Ops) NaN)"));
                continue;
            }
            lambda.put(c, rate);
            if (rate == 0) {
                idle.add(c);
                continue;
            }
            Double cpu = sample.get().cpuMillicores();
            if (cpu == null) {
                noCpu.add(c);
            } else {
                baseCost.put(c, cpu / 1000 / rate);
            }
        }
        notes.add(String.format(
                Locale.ROOT,
                "%d components with metrics %s; per component, λ = PodWorkload(Ops) at"
                        + " that minute and base CPU cost per request = CpuUsage(m) / 1000 / λ, taken as the cost on a"
                        + " speed-1.0 node (the dataset's node speeds are unknown; our reading)",
                components.size(),
                components));
        if (!idle.isEmpty()) {
            notes.add("served no requests at that minute (λ = 0): " + idle + "; their replicas report 0 requests/s"
                    + " and no CPU data, so HEART has no load measurement for them");
        }
        if (!noRate.isEmpty()) {
            notes.add("no request rate at that minute: " + noRate + "; their replicas report no data (neither"
                    + " requests nor CPU) and every call into them has rate 0");
        }
        if (!noCpu.isEmpty()) {
            notes.add("no CPU data at that minute: " + noCpu + "; their replicas report requests but no CPU");
        }

        // Nodes.
        int n = options.nodes();
        List<String> awsNode = mapToAws(options, pings, latencyFile);
        List<Node> nodes = new ArrayList<>(n);
        List<String> speedText = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String region = AWS_REGION_NAMES.get(
                    options.regions().get(i % options.regions().size()));
            String name = nodeName(i);
            nodes.add(new Node(name, region + "/" + region + "a/" + name, options.cpuCoresPerNode()));
            speedText.add(name + "=" + fmt(options.speedOf(i)));
        }
        notes.add(String.format(
                Locale.ROOT,
                "%d nodes, %s cores each; per-core speed factors %s (the HEART paper's"
                        + " workers, cycled), shown only through the replicas' CPU",
                n,
                fmt(options.cpuCoresPerNode()),
                speedText));

        // Replicas.
        int r = options.replicasPerComponent();
        List<Replica> replicas = new ArrayList<>(components.size() * r);
        for (int c = 0; c < components.size(); c++) {
            String component = components.get(c);
            Double rate = lambda.get(component);
            Double base = baseCost.get(component);
            for (int k = 0; k < r; k++) {
                int node = (c + k) % n;
                Double perReplica = rate == null ? null : rate / r;
                Double cpu = perReplica == null || base == null ? null : perReplica * base / options.speedOf(node);
                replicas.add(new Replica(
                        component + "-" + (k + 1),
                        component,
                        nodeName(node),
                        true,
                        cpu,
                        options.cpuLimitCores(),
                        perReplica));
            }
        }
        notes.add(String.format(
                Locale.ROOT,
                "%d replica%s per component; replica k of the c-th component (by name)"
                        + " runs on node (c + k) mod %d and serves λ / %d (kube-proxy's uniform split, which ran before HEART),"
                        + " using requests/s × base cost / node speed cores%s",
                r,
                r == 1 ? "" : "s",
                n,
                r,
                options.cpuLimitCores() == null
                        ? "; no CPU limits"
                        : "; CPU limit " + fmt(options.cpuLimitCores()) + " cores each"));

        List<Call> calls = calls(metrics, spans, lambda, entry, nodes, notes);
        List<LinkDelay> delays = delays(options, pings, awsNode, nodes, latencyFile, notes);

        Snapshot snapshot = new Snapshot((double) metrics.samplePeriodSeconds(), nodes, replicas, calls, delays);
        List<String> problems = SnapshotValidator.validate(snapshot);
        if (!problems.isEmpty()) {
            throw new IllegalStateException("built an invalid snapshot (a bug of this builder): " + problems);
        }
        return new Result(snapshot, entry, notes);
    }

    /** Notes how pods became components, and the sampling period. */
    private static void notePods(OnlineBoutiqueMetrics metrics, List<String> notes) {
        int pods = 0;
        List<String> shared = new ArrayList<>();
        for (Map.Entry<String, List<OnlineBoutiqueMetrics.PodSeries>> e :
                metrics.podsByComponent().entrySet()) {
            pods += e.getValue().size();
            if (e.getValue().size() > 1) {
                shared.add(e.getKey() + " (" + e.getValue().size() + " pods)");
            }
        }
        notes.add(String.format(
                Locale.ROOT,
                "%d <pod>_metric.csv files in %s; a pod's component is its name minus"
                        + " the last two dash-separated parts (a Deployment's ReplicaSet and pod hashes)%s",
                pods,
                metrics.dir(),
                shared.isEmpty()
                        ? ", one pod per component"
                        : "; components of several pods take the sum of their pods' samples: " + shared));
        notes.add(
                metrics.samplePeriodMeasured()
                        ? String.format(
                                Locale.ROOT,
                                "sampling period %d s, the median step between a pod's samples;"
                                        + " samples within %s s of each other count as the same time",
                                metrics.samplePeriodSeconds(),
                                halfPeriod(metrics))
                        : String.format(
                                Locale.ROOT,
                                "no pod has two samples: sampling period taken as %d s (the"
                                        + " OnlineBoutique dataset's)",
                                metrics.samplePeriodSeconds()));
    }

    /** Half the sampling period, seconds, as text (30, 7.5). */
    private static String halfPeriod(OnlineBoutiqueMetrics metrics) {
        return fmt(metrics.samplePeriodSeconds() / 2.0);
    }

    /**
     * The given entry component, checked; else the metered component with the most root spans in
     * the trace; else the one metered component no other metered component calls.
     */
    private static String resolveEntry(
            String given, OnlineBoutiqueMetrics metrics, JaegerSpans spans, List<String> notes) {
        if (given != null) {
            if (!metrics.series().containsKey(given)) {
                throw new IllegalArgumentException("entryComponent : \"" + given + "\" has no metric file in "
                        + metrics.dir() + " (expected one of " + metrics.components() + ")");
            }
            notes.add("entry component " + given + ", as given");
            return given;
        }
        String why = "no trace";
        if (spans != null) {
            String best = null;
            long bestCount = 0;
            SortedMap<String, Long> unmetered = new TreeMap<>();
            for (Map.Entry<String, Long> e : spans.rootSpansByComponent().entrySet()) {
                if (!metrics.series().containsKey(e.getKey())) {
                    unmetered.put(e.getKey(), e.getValue());
                } else if (e.getValue() > bestCount) {
                    best = e.getKey();
                    bestCount = e.getValue();
                }
            }
            if (best != null) {
                notes.add(String.format(
                        Locale.ROOT,
                        "entry component %s, found from the trace: it recorded %d of its"
                                + " %d root spans (requests entering the application; all root spans by component: %s)%s",
                        best,
                        bestCount,
                        spans.rootSpans(),
                        spans.rootSpansByComponent(),
                        unmetered.isEmpty()
                                ? ""
                                : "; components without metrics are not candidates: " + unmetered.keySet()));
                return best;
            }
            why = spans.rootSpans() == 0
                    ? "the trace has no root spans"
                    : "no root span of the trace is in a component with metrics " + spans.rootSpansByComponent();
        }
        TreeSet<String> metered = new TreeSet<>(metrics.components());
        TreeSet<String> called = new TreeSet<>();
        for (ServiceEdge e : metrics.serviceEdges()) {
            if (metered.contains(e.source())
                    && metered.contains(e.target())
                    && !e.source().equals(e.target())) {
                called.add(e.target());
            }
        }
        TreeSet<String> uncalled = new TreeSet<>(metered);
        uncalled.removeAll(called);
        if (uncalled.size() != 1) {
            throw new IllegalArgumentException("entryComponent : not given, and " + why + "; dependency.csv leaves "
                    + (uncalled.isEmpty() ? "no component" : uncalled.size() + " components " + uncalled)
                    + " uncalled by the others (expected: the entry component named, one of " + metered + ")");
        }
        String entry = uncalled.first();
        notes.add("entry component " + entry + ", found from dependency.csv (" + why + "): the only component with"
                + " metrics that no other one calls");
        return entry;
    }

    private static JaegerSpans readTrace(Options options, List<String> notes) throws IOException {
        if (!options.useTrace()) {
            notes.add("no trace used (by option): every callee's λ is split equally over its callers");
            return null;
        }
        Path file = options.traceFile();
        String how = "as given";
        if (file == null) {
            List<Path> inFolder = JaegerSpans.findIn(options.metricsDir());
            Path fallback = options.metricsDir().resolve(DEFAULT_TRACE).normalize();
            if (inFolder.size() > 1) {
                throw new IllegalArgumentException("traceFile : not given, and " + options.metricsDir() + " has "
                        + inFolder.size() + " span CSVs "
                        + inFolder.stream().map(p -> p.getFileName().toString()).toList()
                        + " (expected: the one to use named)");
            } else if (inFolder.size() == 1) {
                file = inFolder.get(0);
                how = "the folder's only CSV with the span columns " + JaegerSpans.REQUIRED_COLUMNS;
            } else if (Files.isRegularFile(fallback)) {
                file = fallback;
                how = "no span CSV in the folder; " + DEFAULT_TRACE + " next to it, where the bundled dataset"
                        + " keeps its trace";
            } else {
                notes.add("no trace file (no CSV with the span columns " + JaegerSpans.REQUIRED_COLUMNS + " in "
                        + options.metricsDir() + ", and " + fallback + " not found): every callee's λ is split"
                        + " equally over its callers");
                return null;
            }
        }
        JaegerSpans spans = JaegerSpans.read(file);
        notes.add(String.format(
                Locale.ROOT,
                "call mix from %s (%s; %d spans, %d traces, %d root requests); it may"
                        + " come from another day or deployment than the metrics: its proportions are assumed to hold at"
                        + " the chosen minute (our reading)",
                file,
                how,
                spans.spans(),
                spans.traces(),
                spans.rootSpans()));
        return spans;
    }

    private static int resolveMinute(
            Minute minute,
            ComponentSeries entry,
            boolean entryGiven,
            OnlineBoutiqueMetrics metrics,
            List<String> notes) {
        Path dir = metrics.dir();
        List<Sample> samples = entry.samples();
        if (samples.isEmpty()) {
            // Blamed on --entry only when the user named it; else on the data, which made it the entry.
            throw new IllegalArgumentException((entryGiven ? "entryComponent : " : "--dataset: entry component ")
                    + "\"" + entry.component() + "\" has no samples in " + dir
                    + " (expected: at least one row in its metric file)");
        }
        String range = "0.." + (samples.size() - 1) + " or Unix seconds "
                + samples.get(0).unixSeconds() + ".."
                + samples.get(samples.size() - 1).unixSeconds() + ", the samples of " + entry.component()
                + " in " + dir;
        int index;
        String why;
        switch (minute) {
            case Minute.Busiest b -> {
                index = -1;
                for (int i = 0; i < samples.size(); i++) {
                    Double rate = samples.get(i).requestsPerSecond();
                    if (rate != null && (index < 0 || rate > samples.get(index).requestsPerSecond())) {
                        index = i;
                    }
                }
                if (index < 0) {
                    throw new IllegalArgumentException("minute : busiest (the default), but " + entry.component()
                            + " has no PodWorkload(Ops) data in " + dir + " (expected: a sample index or time)");
                }
                why = "the busiest for " + entry.component();
            }
            case Minute.Index i -> {
                if (i.index() >= samples.size()) {
                    throw new IllegalArgumentException("minute : index " + i.index() + " (expected: " + range + ")");
                }
                index = i.index();
                why = "chosen by index";
            }
            case Minute.UnixSeconds u -> {
                index = entry.indexNear(u.unixSeconds())
                        .orElseThrow(() -> new IllegalArgumentException(
                                "minute : " + u.unixSeconds() + " Unix seconds is not within "
                                        + halfPeriod(metrics) + " s of a sample (expected: " + range
                                        + ")"));
                why = "the sample nearest " + u.unixSeconds();
            }
        }
        Sample s = samples.get(index);
        notes.add(String.format(
                Locale.ROOT,
                "minute: sample %d of %d of %s, at %d (%s), %s (λ = %s requests/s);"
                        + " other components take their sample within %s s of it; window %d s (the sampling period,"
                        + " not HEART's 30 s round)",
                index,
                samples.size(),
                entry.component(),
                s.unixSeconds(),
                Instant.ofEpochSecond(s.unixSeconds()),
                why,
                s.requestsPerSecond() == null ? "no data" : fmt(s.requestsPerSecond()),
                halfPeriod(metrics),
                metrics.samplePeriodSeconds()));
        return index;
    }

    private static List<Call> calls(
            OnlineBoutiqueMetrics metrics,
            JaegerSpans spans,
            Map<String, Double> lambda,
            String entry,
            List<Node> nodes,
            List<String> notes) {
        TreeSet<String> metered = new TreeSet<>(metrics.components());
        // callee -> its callers, from dependency.csv
        SortedMap<String, List<String>> callers = new TreeMap<>();
        List<String> unmetered = new ArrayList<>();
        List<String> intoEntry = new ArrayList<>();
        List<String> self = new ArrayList<>();
        for (ServiceEdge e : metrics.serviceEdges()) {
            String edge = e.source() + " -> " + e.target();
            if (!metered.contains(e.source()) || !metered.contains(e.target())) {
                unmetered.add(edge);
            } else if (e.source().equals(e.target())) {
                self.add(edge);
            } else if (e.target().equals(entry)) {
                intoEntry.add(edge);
            } else {
                callers.computeIfAbsent(e.target(), t -> new ArrayList<>()).add(e.source());
            }
        }
        if (!unmetered.isEmpty()) {
            notes.add("dependency.csv edges with an end that has no metrics, left out: " + unmetered);
        }
        if (!self.isEmpty()) {
            notes.add("dependency.csv self-edges, left out: " + self);
        }
        if (!intoEntry.isEmpty()) {
            notes.add("dependency.csv edges into the entry component, left out (" + INGRESS + " carries all of its λ): "
                    + intoEntry);
        }

        List<Call> calls = new ArrayList<>();
        double entryRate = lambda.getOrDefault(entry, 0.0);
        Map<String, Double> byNode = new LinkedHashMap<>();
        for (Node node : nodes) {
            byNode.put(node.name(), entryRate / nodes.size());
        }
        calls.add(new Call(INGRESS, entry, entryRate, byNode));
        notes.add(String.format(
                Locale.ROOT,
                "entry point %s calls %s at its λ, %s requests/s, %s (an ingress gateway on every node; what"
                        + " sends the requests is not modelled)",
                INGRESS,
                entry,
                fmt(entryRate),
                nodes.size() == 1 ? "all on its one node" : "spread equally over all " + nodes.size() + " nodes"));

        List<String> notInTrace = new ArrayList<>();
        List<String> equalSplit = new ArrayList<>();
        List<Call> edges = new ArrayList<>();
        callers.forEach((callee, from) -> {
            double rate = lambda.getOrDefault(callee, 0.0);
            long total = 0;
            if (spans != null) {
                for (String caller : from) {
                    total += spans.calls(caller, callee);
                }
            }
            if (spans != null && total == 0) {
                equalSplit.add(callee);
            }
            for (String caller : from) {
                double share;
                if (total > 0) {
                    long count = spans.calls(caller, callee);
                    share = (double) count / total;
                    if (count == 0) {
                        notInTrace.add(caller + " -> " + callee);
                    }
                } else {
                    share = 1.0 / from.size();
                }
                edges.add(new Call(caller, callee, rate * share, null));
            }
        });
        edges.sort(Comparator.comparing(Call::caller).thenComparing(Call::callee));
        calls.addAll(edges);
        if (spans != null) {
            notes.add("each callee's λ is split over its callers in proportion to the trace's span counts of those"
                    + " edges, so its incoming call rates sum to its λ");
        }
        if (!notInTrace.isEmpty()) {
            notes.add("dependency.csv edges not in the trace, rate 0: " + notInTrace);
        }
        if (!equalSplit.isEmpty()) {
            notes.add(
                    "callees none of whose edges are in the trace, λ split equally over their callers: " + equalSplit);
        }
        if (spans != null) {
            List<String> extra = new ArrayList<>();
            spans.calls().forEach((edge, count) -> {
                boolean known = callers.getOrDefault(edge.callee(), List.of()).contains(edge.caller());
                if (!known && !intoEntry.contains(edge.caller() + " -> " + edge.callee())) {
                    extra.add(edge.caller() + " -> " + edge.callee() + " (" + count + ")");
                }
            });
            if (!extra.isEmpty()) {
                notes.add("trace edges not among the calls of dependency.csv, left out: " + extra);
            }
        }
        return calls;
    }

    private static List<String> mapToAws(Options options, AwsPingLatencies pings, Path latencyFile) {
        Map<String, Integer> used = new HashMap<>();
        List<String> aws = new ArrayList<>(options.nodes());
        for (int i = 0; i < options.nodes(); i++) {
            String region = options.regions().get(i % options.regions().size());
            List<String> available = pings.nodesIn(region);
            int k = used.merge(region, 1, Integer::sum) - 1;
            if (k >= available.size()) {
                throw new IllegalArgumentException("regions : region " + region + " has " + available.size()
                        + " AWS node(s) in " + latencyFile + ", and node " + nodeName(i) + " would be its "
                        + ordinal(k + 1) + " (expected: at most " + available.size() + " node(s) in " + region
                        + "; use fewer nodes or more regions)");
            }
            aws.add(available.get(k));
        }
        return aws;
    }

    /** {@code n} as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, ... */
    static String ordinal(int n) {
        int tens = n % 100;
        String suffix = switch (tens >= 11 && tens <= 13 ? 0 : n % 10) {
            case 1 -> "st";
            case 2 -> "nd";
            case 3 -> "rd";
            default -> "th";
        };
        return n + suffix;
    }

    private static List<LinkDelay> delays(
            Options options,
            AwsPingLatencies pings,
            List<String> aws,
            List<Node> nodes,
            Path latencyFile,
            List<String> notes) {
        int n = nodes.size();
        List<LinkDelay> delays = new ArrayList<>(n * n);
        int measured = 0;
        int byRegion = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double millis;
                if (i == j) {
                    millis = options.sameNodeDelayMillis();
                } else {
                    OptionalDouble rtt = pings.medianRttMillis(aws.get(i), aws.get(j));
                    if (rtt.isEmpty()) {
                        rtt = pings.medianRttMillis(aws.get(j), aws.get(i));
                    }
                    if (rtt.isPresent()) {
                        measured++;
                    } else {
                        String from = pings.regionByNode().get(aws.get(i));
                        String to = pings.regionByNode().get(aws.get(j));
                        rtt = pings.regionMedianRttMillis(from, to);
                        if (rtt.isEmpty()) {
                            rtt = pings.regionMedianRttMillis(to, from);
                        }
                        if (rtt.isEmpty()) {
                            throw DataFileException.badFile(
                                    latencyFile,
                                    "no measured pair between regions " + from + " and " + to,
                                    "pings between every pair of the regions used, " + options.regions());
                        }
                        byRegion++;
                    }
                    millis = rtt.getAsDouble() / 2;
                }
                delays.add(new LinkDelay(nodes.get(i).name(), nodes.get(j).name(), millis));
            }
        }
        List<String> mapping = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            mapping.add(nodes.get(i).name() + "=" + aws.get(i) + " ("
                    + pings.regionByNode().get(aws.get(i)) + ")");
        }
        notes.add(String.format(
                Locale.ROOT,
                "nodes mapped to AWS EC2 nodes of %s: %s; regions named as in" + " topology-dense-52.json %s",
                latencyFile,
                mapping,
                AWS_REGION_NAMES));
        notes.add(String.format(
                Locale.ROOT,
                "one-way delay = median RTT of %d B pings / 2; %d of %d ordered node pairs"
                        + " were pinged (either direction), %d were not and take their region pair's median RTT / 2;"
                        + " same node %s ms (our choice)",
                pings.payloadBytes(),
                measured,
                n * (n - 1),
                byRegion,
                fmt(options.sameNodeDelayMillis())));
        return delays;
    }

    private static String nodeName(int i) {
        return "w" + (i + 1);
    }

    /** At most 4 significant digits, no trailing zeros: 10.2, 0.9, 4, 0.05. */
    private static String fmt(double value) {
        return BigDecimal.valueOf(value)
                .round(new MathContext(4))
                .stripTrailingZeros()
                .toPlainString();
    }
}
