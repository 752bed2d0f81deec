package dev.tailor.sim.cluster;

import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.datasets.DataFileException;
import dev.tailor.datasets.OnlineBoutiqueMetrics;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import dev.tailor.heart.Call;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code online-boutique} scenario, built from public data: the real OnlineBoutique call graph,
 * CPU cost per request and call mix ({@link OnlineBoutiqueSnapshot}: TraStrainer per-pod metrics and
 * a Jaeger trace), on the HEART paper's five heterogeneous workers, with link delays measured
 * between AWS EC2 nodes. {@link #build(OnlineBoutiqueSnapshot.Options, String)} builds the same
 * scenario from any dataset folder in that layout (docs/datasets.md), under another name.
 *
 * <h2>Mapping (our reading)</h2>
 * <ul>
 *   <li><b>Cost.</b> A component's CPU per call on a speed-1.0 core = its replica's measured CPU ×
 *       the speed of the node the snapshot placed it on ÷ its measured request rate. Components
 *       without both metrics at that minute are left out, with the calls into them (noted).</li>
 *   <li><b>Calls.</b> A call edge's mean count per visit of its caller = the edge's rate ÷ the
 *       caller's rate; each callee is its own stage, in name order (OnlineBoutique's handlers call
 *       one service after another; for another application an assumption, noted); {@code k.x}
 *       calls are k, or k + 1 with probability 0.x, in parallel.</li>
 *   <li><b>Load.</b> The dataset ran at about 10 user requests/s, far below what the cluster can
 *       serve; the sweep's rates load the busiest component (CPU per user request, visits included)
 *       to {@link #LOAD_FRACTIONS} of its replicas' capacity (1 core limit × Σ node speeds).</li>
 *   <li><b>Networks.</b> {@code A}: every node in AWS EU (the delays of five EU nodes); {@code B}:
 *       EU, EU, EU, US, US — w4 and w5 across the Atlantic. One-way delay = median RTT ÷ 2.</li>
 *   <li>Everything else as {@code paper-dag}: 4 cores per node, one replica of every component per
 *       node, 1-core limit, the same variability, warm-up, duration, timeout and seed.</li>
 * </ul>
 */
public final class OnlineBoutiqueScenario {

    /** Fractions of the busiest component's capacity that the RPS sweep loads it to. */
    public static final List<Double> LOAD_FRACTIONS = List.of(0.25, 0.5, 0.7);
    /** The scenario's name. */
    public static final String NAME = "online-boutique";

    private OnlineBoutiqueScenario() {}

    /** The scenario and every assumption made building it. */
    public record Result(ClusterScenario scenario, List<String> notes) {}

    /**
     * Builds the {@value #NAME} scenario.
     *
     * @param options where the data is (metrics, trace, pings) and the nodes; replicas and regions
     *                are set here
     * @throws IOException if a data file cannot be read
     * @throws IllegalArgumentException naming the problem if the data give no usable scenario
     */
    public static Result build(OnlineBoutiqueSnapshot.Options options) throws IOException {
        return build(options, NAME);
    }

    /**
     * Builds the scenario from the dataset folder of {@code options}, named {@code name}.
     *
     * @param options where the data is (metrics, trace, pings), the entry component and the nodes;
     *                replicas and regions are set here
     * @param name    the scenario's name: letters, digits, '-' or '_'
     * @throws IOException if a data file cannot be read
     * @throws IllegalArgumentException naming the problem if the data give no usable scenario
     */
    public static Result build(OnlineBoutiqueSnapshot.Options options, String name) throws IOException {
        OnlineBoutiqueSnapshot.Options base =
                options.toBuilder().replicasPerComponent(1).nodes(5).build();
        OnlineBoutiqueSnapshot.Result eu = OnlineBoutiqueSnapshot.build(
                base.toBuilder().regions(List.of("EU")).build());
        // The second build reads the same files: give it the entry the first one found.
        OnlineBoutiqueSnapshot.Result geo = OnlineBoutiqueSnapshot.build(base.toBuilder()
                .entryComponent(eu.entryComponent())
                .regions(List.of("EU", "EU", "EU", "US", "US"))
                .build());
        List<String> notes = new ArrayList<>(eu.notes());
        Snapshot snapshot = eu.snapshot();

        Map<String, Integer> nodeIndex = new HashMap<>();
        for (int i = 0; i < snapshot.nodes().size(); i++) {
            nodeIndex.put(snapshot.nodes().get(i).name(), i);
        }
        Map<String, Double> costMillis = new TreeMap<>();
        Map<String, Double> rate = new HashMap<>();
        for (Replica replica : snapshot.replicas()) {
            Double cpu = replica.cpuCores();
            Double rps = replica.requestsPerSecond();
            if (cpu == null || rps == null || !(rps > 0) || !(cpu > 0)) {
                notes.add(name + ": " + replica.component() + " left out: no CPU per request at that minute (CPU "
                        + measured(cpu, "cores") + ", " + measured(rps, "requests/s") + ")");
                continue;
            }
            double speed = base.speedOf(nodeIndex.get(replica.node()));
            costMillis.put(replica.component(), 1_000 * cpu * speed / rps);
            rate.put(replica.component(), rps);
        }
        String entry = eu.entryComponent();
        if (!costMillis.containsKey(entry)) {
            // A snapshot takes a replica without data as it is (the planner splits its traffic
            // equally); a simulated component needs a CPU cost per request to serve anything.
            Replica first = snapshot.replicas().stream()
                    .filter(r -> r.component().equals(entry))
                    .findFirst()
                    .orElse(null);
            throw new IllegalArgumentException(name + ": the entry component " + entry
                    + " has no CPU per request at the chosen minute (CPU "
                    + measured(first == null ? null : first.cpuCores(), "cores") + ", "
                    + measured(first == null ? null : first.requestsPerSecond(), "requests/s")
                    + "; expected: both metrics, as"
                    + " the simulator serves every user request with the entry's CPU cost per request; a snapshot"
                    + " takes replicas without data and splits their traffic equally, a simulation cannot; try"
                    + " --minute for a sample with both)");
        }

        Map<String, Map<String, Double>> counts = new TreeMap<>();
        for (Call call : snapshot.calls()) {
            if (OnlineBoutiqueSnapshot.INGRESS.equals(call.caller()) || call.rate() <= 0) {
                continue;
            }
            if (!costMillis.containsKey(call.caller()) || !costMillis.containsKey(call.callee())) {
                notes.add(name + ": call " + call.caller() + " -> " + call.callee() + " left out with its"
                        + " component");
                continue;
            }
            double count = call.rate() / rate.get(call.caller());
            counts.computeIfAbsent(call.caller(), c -> new TreeMap<>()).put(call.callee(), round(count));
        }

        List<ClusterScenario.ComponentSpec> components = new ArrayList<>();
        costMillis.forEach((component, cost) -> {
            List<List<String>> stages = new ArrayList<>();
            counts.getOrDefault(component, Map.of())
                    .forEach((callee, count) -> stages.add(List.of(callee + "*" + count)));
            components.add(new ClusterScenario.ComponentSpec(component, round(cost), stages.isEmpty() ? null : stages));
        });

        // Visits per user request, then CPU per user request, then the rates of the sweep.
        Map<String, Double> visits = new HashMap<>();
        visit(
                options.metricsDir().resolve(OnlineBoutiqueMetrics.DEPENDENCY_FILE),
                entry,
                1.0,
                counts,
                visits,
                new ArrayList<>());
        double busiestMillis = 0;
        String busiest = entry;
        for (Map.Entry<String, Double> v : visits.entrySet()) {
            double millis = v.getValue() * costMillis.get(v.getKey());
            if (millis > busiestMillis) {
                busiestMillis = millis;
                busiest = v.getKey();
            }
        }
        double speedSum = 0;
        for (int i = 0; i < 5; i++) {
            speedSum += base.speedOf(i);
        }
        double limitCores = 1.0;
        List<Double> rps = new ArrayList<>();
        for (double fraction : LOAD_FRACTIONS) {
            rps.add(Math.round(fraction * limitCores * speedSum * 1_000 / busiestMillis * 10) / 10.0);
        }
        notes.add(String.format(
                Locale.ROOT,
                "%s: busiest component %s needs %.3f ms of a speed-1.0 core"
                        + " per user request (%.2f visits); the sweep %s RPS loads it to %s of its replicas' %.1f cores",
                name,
                busiest,
                busiestMillis,
                visits.get(busiest),
                written(rps),
                written(LOAD_FRACTIONS),
                speedSum * limitCores));
        notes.add(name + ": a component calls its callees one after another, in name order (as OnlineBoutique's"
                + " handlers do; the data do not say which calls run in parallel)");

        List<ClusterScenario.NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < snapshot.nodes().size(); i++) {
            Node node = snapshot.nodes().get(i);
            nodes.add(new ClusterScenario.NodeSpec(node.name(), node.cpuCores(), base.speedOf(i), node.locality()));
        }
        Map<String, ClusterScenario.NetworkSpec> networks = new LinkedHashMap<>();
        networks.put("A", network(snapshot, base.sameNodeDelayMillis()));
        networks.put("B", network(geo.snapshot(), base.sameNodeDelayMillis()));
        String description = NAME.equals(name)
                ? "OnlineBoutique (TraStrainer data, Jaeger call mix, AWS ping delays) on 5 heterogeneous workers"
                : name + " (metrics of " + options.metricsDir() + ", entry " + entry + ", Jaeger call mix, AWS ping"
                        + " delays) on 5 heterogeneous workers";
        // The run's constants are the scenario defaults (120 s warm-up, 600 s, fluid CPU model, ...).
        ClusterScenario scenario = ClusterScenario.builder()
                .name(name)
                .description(description)
                .seed(20250701L)
                .rps(rps)
                .nodes(nodes)
                .components(components)
                .entry(entry)
                .cpuLimitCores(limitCores)
                .networks(networks)
                .network("A")
                .build();
        List<Problem> problems = scenario.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(name + ": the data give an invalid scenario: " + Problem.join(problems));
        }
        return new Result(scenario, notes);
    }

    /**
     * Adds the visits of {@code component} and its callees; a cycle (none in OnlineBoutique) is bad input, a
     * problem of {@code dependency}, the file whose edges the calls are.
     */
    private static void visit(
            Path dependency,
            String component,
            double times,
            Map<String, Map<String, Double>> counts,
            Map<String, Double> visits,
            List<String> path) {
        if (path.contains(component)) {
            List<String> cycle = new ArrayList<>(path.subList(path.indexOf(component), path.size()));
            cycle.add(component);
            throw DataFileException.badFile(
                    dependency,
                    "the calls form a cycle " + String.join(" -> ", cycle),
                    "a call graph without cycles, as the simulator needs");
        }
        visits.merge(component, times, Double::sum);
        path.add(component);
        counts.getOrDefault(component, Map.of())
                .forEach((callee, count) -> visit(dependency, callee, times * count, counts, visits, path));
        path.remove(path.size() - 1);
    }

    private static ClusterScenario.NetworkSpec network(Snapshot snapshot, double sameNodeMillis) {
        Map<String, Map<String, Double>> delays = new TreeMap<>();
        for (LinkDelay delay : snapshot.delays()) {
            if (!delay.from().equals(delay.to())) {
                delays.computeIfAbsent(delay.from(), k -> new TreeMap<>()).put(delay.to(), delay.millis());
            }
        }
        return ClusterScenario.NetworkSpec.measured(sameNodeMillis, delays);
    }

    private static double round(double value) {
        return Math.round(value * 10_000) / 10_000.0;
    }

    /** A measured value and its unit, or {@code no data} for none: {@code 0.12 cores}. */
    private static String measured(Double value, String unit) {
        return value == null ? "no data" : Numbers.format(value) + " " + unit;
    }

    /** Numbers as a user writes them, as a list: {@code [120, 240.5]}, not {@code [120.0, 240.5]}. */
    private static String written(List<Double> values) {
        return values.stream().map(Numbers::written).collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }
}
