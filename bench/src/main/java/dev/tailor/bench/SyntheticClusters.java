package dev.tailor.bench;

import dev.tailor.heart.Call;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Seeded, deterministic generator of valid HEART {@link Snapshot}s of a given {@link Shape}: the same
 * (shape, seed) always gives an equal snapshot, on any JVM and JDK version. Every snapshot passes
 * {@code SnapshotValidator.validate} and has every replica ready, with both metrics.
 *
 * <p>What every shape has in common:
 * <ul>
 *   <li>nodes with a speed factor (1.0 = the fastest machine) and a locality
 *       {@code region-1/<zone>/<node>}, so every node is its own Istio subzone;</li>
 *   <li>components {@code svc-0 .. svc-(m-1)} in a call DAG: every component but the last calls between
 *       {@code minCallees} and {@code maxCallees} later ones (drawn uniformly per component, capped by
 *       how many later ones exist), and every component after the first is called by at least one
 *       earlier one, so all of them carry traffic;</li>
 *   <li>one entry point {@code ingress} → {@code svc-0} whose {@code byCallerNode} spreads its rate over
 *       <em>all</em> nodes (weights uniform in [0.5, 1.5]);</li>
 *   <li>rates: a call edge A → B carries λ_A × u, u uniform in [0.2, 1.0], and λ_B is the sum of
 *       B's incoming edges; a component's rate is split over its replicas with weights uniform in
 *       [0.75, 1.25];</li>
 *   <li>CPU: {@code cpuCores = requestsPerSecond × baseCostCpuSecondsPerRequest(component) ÷ speed(node)
 *       × v}, with v log-normal of σ = 0.12 and mean 1 (exp(σZ − σ²/2)). Relative base costs are
 *       log-uniform in [1, 10]; they are then scaled so that the expected total CPU is 50 % of the
 *       cluster's cores;</li>
 *   <li>delays: one entry for every ordered node pair, same-node links included; the two directions of a
 *       pair get the same value. Same node 0.05 ms; a link touching a node behind a slow link (and not a
 *       same-node link) 20–60 ms; else by zone (see the shapes). All ranges are uniform.</li>
 * </ul>
 *
 * <p>Not a model of any measured cluster: the shapes size the planner's input the way the paper
 * [HEART, IEEE CLOUD 2025] and our planning targets (docs/results.md) describe it, nothing more.
 * Planning cost depends on the counts (nodes, groups, call edges, links) and on how many slow links
 * the filter meets, not on the absolute rates.
 */
/*
 * Maintainer note. Draws come from three independent java.util.Random streams (topology, delays,
 * metrics) seeded with SplitMix64 mixes of (seed, stream number), so changing how delays are drawn
 * does not move the replicas, and vice versa. java.util.Random, not SplittableRandom: its algorithm,
 * nextInt(bound), nextDouble and nextGaussian are specified in its Javadoc (nextGaussian with
 * StrictMath), and so is StrictMath, which is used for every exp and log here; SplittableRandom's
 * algorithm and Math's last bit are not promised across JDKs, and a published figure must be
 * reproducible on a later JDK. SyntheticClustersTest pins a digest of the default-seed output.
 * Never iterate a HashMap/HashSet while drawing: the output would depend on hashing.
 *
 * The DAG is built in two passes: first a random in-tree (component j picks a caller among the
 * earlier components that still have room in their drawn out-degree; j-1 always has room, since it
 * has no callee yet), then every component is topped up to its drawn out-degree with uniformly chosen
 * later components. The out-degrees are therefore exactly as drawn.
 */
public final class SyntheticClusters {

    /** The seed the benchmark and the README's figures use. */
    public static final long DEFAULT_SEED = 20_250_701L;

    /** Name of the entry point that calls the first component. */
    public static final String INGRESS = "ingress";

    /** Same-node link delay, ms, in every shape. */
    static final double SAME_NODE_DELAY_MILLIS = 0.05;

    static final double SLOW_LINK_MIN_MILLIS = 20;
    static final double SLOW_LINK_MAX_MILLIS = 60;
    /** σ of the per-replica log-normal CPU variation. */
    static final double CPU_VARIATION_SIGMA = 0.12;
    /** Expected total CPU used ÷ Σ node cores. */
    static final double TARGET_UTILISATION = 0.5;

    static final double WINDOW_SECONDS = 30;

    /** The five worker speeds of the paper's testbed, fastest first. */
    static final double[] PAPER_SPEEDS = {1.0, 0.9, 0.7, 0.5, 0.4};

    private SyntheticClusters() {}

    /**
     * The cluster shapes of the planning benchmark.
     *
     * <p><b>{@code paper-N}</b> (N = 100, 400, 1,000): the paper's setting. 5 workers {@code worker-1 ..
     * worker-5} with speeds 1.0, 0.9, 0.7, 0.5, 0.4 and 4 cores each, one zone; 10 components, each
     * calling 1–3 later ones (≈ 17 call edges on average, 18 for the default seed, plus the entry);
     * N ÷ 10 replicas per component, placed round-robin over the workers in global replica order (so
     * every component has N ÷ 50 replicas on every worker); entry rate 400 requests/s (the paper's DAG
     * app load). Delays: same node 0.05 ms, other pairs 0.1–0.9 ms, except that {@code worker-2} (speed
     * 0.9) and {@code worker-4} (speed 0.5) sit behind 20–60 ms links: the paper's scenario B has two
     * workers behind slow links; which two is our choice, one fast and one slow.
     *
     * <p><b>{@code large-10000}</b>: 500 nodes {@code node-000 .. node-499} in 10 zones of 50 consecutive
     * nodes, speeds drawn uniformly from the paper's five, 16 cores each; 100 components with 100
     * replicas each, on 100 distinct nodes drawn uniformly per component (so per-replica and per-node
     * groups coincide); each component calls 1–2 later ones (≈ 1.5 on average: ≈ 148 call edges, 150 for
     * the default seed, plus the entry); entry rate 20,000 requests/s. Delays: same node 0.05 ms, same
     * zone 0.1–0.5 ms, across zones 1–3 ms, and 5 % of the nodes (25, drawn uniformly) behind 20–60 ms
     * links.
     */
    public enum Shape {
        PAPER_100("paper-100", 5, 10, 10),
        PAPER_400("paper-400", 5, 10, 40),
        PAPER_1000("paper-1000", 5, 10, 100),
        LARGE_10000("large-10000", 500, 100, 100);

        private final String id;
        private final int nodes;
        private final int components;
        private final int replicasPerComponent;

        Shape(String id, int nodes, int components, int replicasPerComponent) {
            this.id = id;
            this.nodes = nodes;
            this.components = components;
            this.replicasPerComponent = replicasPerComponent;
        }

        /** The name used in benchmark parameters and tables, e.g. {@code paper-400}. */
        public String id() {
            return id;
        }

        /** Number of nodes. */
        public int nodes() {
            return nodes;
        }

        /** Number of components (entry point excluded). */
        public int components() {
            return components;
        }

        /** Total number of replicas, all ready. */
        public int replicas() {
            return components * replicasPerComponent;
        }

        /**
         * The shape named {@code id}.
         *
         * @throws IllegalArgumentException naming the known ids when there is no such shape
         */
        public static Shape of(String id) {
            for (Shape shape : values()) {
                if (shape.id.equals(id)) {
                    return shape;
                }
            }
            throw new IllegalArgumentException("shape : " + id + " (expected one of "
                    + Arrays.stream(values()).map(Shape::id).toList() + ")");
        }
    }

    /**
     * A generated cluster: the snapshot and the ground truth it was drawn from.
     *
     * @param shape                          the shape
     * @param seed                           the seed
     * @param snapshot                       the planner's input
     * @param speedByNode                    node → speed factor (1.0 = fastest), in node order
     * @param baseCostCpuSecondsPerRequest   component → CPU-seconds per request on a speed-1.0 node, in
     *                                       component order
     * @param slowLinkNodes                  nodes behind 20–60 ms links, sorted
     */
    public record SyntheticCluster(
            Shape shape,
            long seed,
            Snapshot snapshot,
            Map<String, Double> speedByNode,
            Map<String, Double> baseCostCpuSecondsPerRequest,
            List<String> slowLinkNodes) {

        public SyntheticCluster {
            speedByNode = Collections.unmodifiableMap(new LinkedHashMap<>(speedByNode));
            baseCostCpuSecondsPerRequest =
                    Collections.unmodifiableMap(new LinkedHashMap<>(baseCostCpuSecondsPerRequest));
            slowLinkNodes = List.copyOf(slowLinkNodes);
        }

        /** Number of nodes. */
        public int nodeCount() {
            return snapshot.nodes().size();
        }

        /** Number of replicas. */
        public int replicaCount() {
            return snapshot.replicas().size();
        }

        /** Number of call edges, the entry edge included. */
        public int callEdgeCount() {
            return snapshot.calls().size();
        }
    }

    /** Shorthand for {@code generate(shape, seed).snapshot()}. */
    public static Snapshot snapshot(Shape shape, long seed) {
        return generate(shape, seed).snapshot();
    }

    /**
     * Generates the cluster of {@code shape} for {@code seed}; equal arguments give equal results.
     *
     * @throws IllegalArgumentException when {@code shape} is null
     */
    public static SyntheticCluster generate(Shape shape, long seed) {
        if (shape == null) {
            throw new IllegalArgumentException("shape : null (expected one of "
                    + Arrays.stream(Shape.values()).map(Shape::id).toList() + ")");
        }
        Random topology = new Random(streamSeed(seed, 1));
        Random delays = new Random(streamSeed(seed, 2));
        Random metrics = new Random(streamSeed(seed, 3));
        Layout layout = shape.id.startsWith("paper-") ? paperLayout(shape) : largeLayout(shape, topology);
        return build(shape, seed, layout, topology, delays, metrics);
    }

    /** Nodes, zones, speeds, slow-link nodes and the DAG's and placement's parameters of one shape. */
    private record Layout(
            String[] nodeNames,
            String[] zoneOfNode,
            double[] speed,
            double coresPerNode,
            boolean[] slow,
            double intraZoneMinMillis,
            double intraZoneMaxMillis,
            double crossZoneMinMillis,
            double crossZoneMaxMillis,
            int minCallees,
            int maxCallees,
            boolean roundRobin,
            double ingressRequestsPerSecond) {}

    private static Layout paperLayout(Shape shape) {
        int n = shape.nodes;
        String[] names = new String[n];
        String[] zones = new String[n];
        boolean[] slow = new boolean[n];
        for (int i = 0; i < n; i++) {
            names[i] = "worker-" + (i + 1);
            zones[i] = "zone-1";
        }
        slow[1] = true; // worker-2, speed 0.9
        slow[3] = true; // worker-4, speed 0.5
        return new Layout(names, zones, PAPER_SPEEDS.clone(), 4, slow, 0.1, 0.9, 0.1, 0.9, 1, 3, true, 400);
    }

    private static Layout largeLayout(Shape shape, Random topology) {
        int n = shape.nodes;
        int zoneCount = 10;
        String[] names = new String[n];
        String[] zones = new String[n];
        double[] speed = new double[n];
        for (int i = 0; i < n; i++) {
            names[i] = String.format(Locale.ROOT, "node-%03d", i);
            zones[i] = String.format(Locale.ROOT, "zone-%02d", i / (n / zoneCount));
            speed[i] = PAPER_SPEEDS[topology.nextInt(PAPER_SPEEDS.length)];
        }
        boolean[] slow = new boolean[n];
        for (int i : sample(n, n / 20, topology)) {
            slow[i] = true;
        }
        return new Layout(names, zones, speed, 16, slow, 0.1, 0.5, 1, 3, 1, 2, false, 20_000);
    }

    private static SyntheticCluster build(
            Shape shape, long seed, Layout layout, Random topology, Random delayRandom, Random metrics) {
        int n = shape.nodes;
        int m = shape.components;
        int perComponent = shape.replicasPerComponent;
        String[] componentNames = new String[m];
        int digits = Integer.toString(m - 1).length();
        for (int c = 0; c < m; c++) {
            componentNames[c] = "svc-" + zeroPadded(c, digits);
        }

        // Placement: replica r of component c runs on nodeOf[c][r].
        int[][] nodeOf = new int[m][perComponent];
        for (int c = 0, global = 0; c < m; c++) {
            int[] chosen = layout.roundRobin ? null : sample(n, perComponent, topology);
            for (int r = 0; r < perComponent; r++, global++) {
                nodeOf[c][r] = layout.roundRobin ? global % n : chosen[r];
            }
        }

        // Call DAG and rates.
        boolean[][] calls = dag(m, layout.minCallees, layout.maxCallees, topology);
        double[] componentRate = new double[m];
        componentRate[0] = layout.ingressRequestsPerSecond;
        double[][] edgeRate = new double[m][m];
        for (int a = 0; a < m; a++) {
            for (int b = a + 1; b < m; b++) {
                if (calls[a][b]) {
                    edgeRate[a][b] = componentRate[a] * uniform(metrics, 0.2, 1.0);
                    componentRate[b] += edgeRate[a][b];
                }
            }
        }

        // Requests per replica, then base costs scaled to the target utilisation.
        double[][] replicaRate = new double[m][perComponent];
        for (int c = 0; c < m; c++) {
            double[] weight = new double[perComponent];
            double sum = 0;
            for (int r = 0; r < perComponent; r++) {
                weight[r] = uniform(metrics, 0.75, 1.25);
                sum += weight[r];
            }
            for (int r = 0; r < perComponent; r++) {
                replicaRate[c][r] = componentRate[c] * weight[r] / sum;
            }
        }
        double[] relativeCost = new double[m];
        double expectedCpu = 0;
        for (int c = 0; c < m; c++) {
            relativeCost[c] = StrictMath.exp(uniform(metrics, 0, StrictMath.log(10)));
            for (int r = 0; r < perComponent; r++) {
                expectedCpu += replicaRate[c][r] * relativeCost[c] / layout.speed[nodeOf[c][r]];
            }
        }
        double scale = TARGET_UTILISATION * n * layout.coresPerNode / expectedCpu;

        List<Node> nodes = new ArrayList<>(n);
        Map<String, Double> speedByNode = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String name = layout.nodeNames[i];
            nodes.add(new Node(name, "region-1/" + layout.zoneOfNode[i] + "/" + name, layout.coresPerNode));
            speedByNode.put(name, layout.speed[i]);
        }
        List<Replica> replicas = new ArrayList<>(m * perComponent);
        Map<String, Double> baseCost = new LinkedHashMap<>();
        int podDigits = Integer.toString(perComponent - 1).length();
        for (int c = 0; c < m; c++) {
            double cost = relativeCost[c] * scale;
            baseCost.put(componentNames[c], cost);
            for (int r = 0; r < perComponent; r++) {
                int node = nodeOf[c][r];
                double variation = StrictMath.exp(
                        CPU_VARIATION_SIGMA * metrics.nextGaussian() - CPU_VARIATION_SIGMA * CPU_VARIATION_SIGMA / 2);
                double cpuCores = replicaRate[c][r] * cost / layout.speed[node] * variation;
                replicas.add(new Replica(
                        componentNames[c] + "-" + zeroPadded(r, podDigits),
                        componentNames[c],
                        layout.nodeNames[node],
                        true,
                        cpuCores,
                        null,
                        replicaRate[c][r]));
            }
        }

        List<Call> callList = new ArrayList<>();
        Map<String, Double> ingressByNode = new LinkedHashMap<>();
        double[] ingressWeight = new double[n];
        double ingressWeightSum = 0;
        for (int i = 0; i < n; i++) {
            ingressWeight[i] = uniform(metrics, 0.5, 1.5);
            ingressWeightSum += ingressWeight[i];
        }
        for (int i = 0; i < n; i++) {
            double rate = layout.ingressRequestsPerSecond * ingressWeight[i] / ingressWeightSum;
            ingressByNode.put(layout.nodeNames[i], rate);
        }
        callList.add(new Call(INGRESS, componentNames[0], layout.ingressRequestsPerSecond, ingressByNode));
        for (int a = 0; a < m; a++) {
            for (int b = a + 1; b < m; b++) {
                if (calls[a][b]) {
                    callList.add(new Call(componentNames[a], componentNames[b], edgeRate[a][b], null));
                }
            }
        }

        List<LinkDelay> delayList = delays(layout, delayRandom);
        List<String> slowNodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (layout.slow[i]) {
                slowNodes.add(layout.nodeNames[i]);
            }
        }
        Snapshot snapshot = new Snapshot(WINDOW_SECONDS, nodes, replicas, callList, delayList);
        return new SyntheticCluster(shape, seed, snapshot, speedByNode, baseCost, slowNodes);
    }

    /**
     * A random DAG on components {@code 0..m-1} with edges only from lower to higher index: component
     * i calls exactly min(m-1-i, k_i) later ones, k_i uniform in [minCallees, maxCallees]; every
     * component j &gt; 0 has at least one caller.
     */
    static boolean[][] dag(int m, int minCallees, int maxCallees, Random random) {
        int[] target = new int[m];
        for (int i = 0; i < m - 1; i++) {
            target[i] = Math.min(m - 1 - i, minCallees + random.nextInt(maxCallees - minCallees + 1));
        }
        boolean[][] calls = new boolean[m][m];
        int[] out = new int[m];
        int[] candidates = new int[m];
        for (int j = 1; j < m; j++) {
            int count = 0;
            for (int i = 0; i < j; i++) {
                if (out[i] < target[i]) {
                    candidates[count++] = i;
                }
            }
            int caller = candidates[random.nextInt(count)];
            calls[caller][j] = true;
            out[caller]++;
        }
        for (int i = 0; i < m - 1; i++) {
            while (out[i] < target[i]) {
                int count = 0;
                for (int j = i + 1; j < m; j++) {
                    if (!calls[i][j]) {
                        candidates[count++] = j;
                    }
                }
                calls[i][candidates[random.nextInt(count)]] = true;
                out[i]++;
            }
        }
        return calls;
    }

    private static List<LinkDelay> delays(Layout layout, Random random) {
        int n = layout.nodeNames.length;
        double[][] millis = new double[n][n];
        for (int i = 0; i < n; i++) {
            millis[i][i] = SAME_NODE_DELAY_MILLIS;
            for (int j = i + 1; j < n; j++) {
                double d;
                if (layout.slow[i] || layout.slow[j]) {
                    d = uniform(random, SLOW_LINK_MIN_MILLIS, SLOW_LINK_MAX_MILLIS);
                } else if (layout.zoneOfNode[i].equals(layout.zoneOfNode[j])) {
                    d = uniform(random, layout.intraZoneMinMillis, layout.intraZoneMaxMillis);
                } else {
                    d = uniform(random, layout.crossZoneMinMillis, layout.crossZoneMaxMillis);
                }
                millis[i][j] = d;
                millis[j][i] = d;
            }
        }
        List<LinkDelay> delays = new ArrayList<>(n * n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                delays.add(new LinkDelay(layout.nodeNames[i], layout.nodeNames[j], millis[i][j]));
            }
        }
        return delays;
    }

    /** {@code k} distinct indices of {@code 0..n-1}, uniformly, in the order drawn (partial Fisher–Yates). */
    private static int[] sample(int n, int k, Random random) {
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        for (int i = 0; i < k; i++) {
            int j = i + random.nextInt(n - i);
            int t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        return Arrays.copyOf(all, k);
    }

    /** Seed of stream {@code stream} for {@code seed}: the SplitMix64 finaliser of a Weyl step. */
    static long streamSeed(long seed, int stream) {
        long z = seed + stream * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static double uniform(Random random, double min, double max) {
        return min + (max - min) * random.nextDouble();
    }

    private static String zeroPadded(int value, int digits) {
        String s = Integer.toString(value);
        return "0".repeat(Math.max(0, digits - s.length())) + s;
    }
}
