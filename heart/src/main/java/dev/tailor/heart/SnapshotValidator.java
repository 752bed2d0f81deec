package dev.tailor.heart;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks a {@link Snapshot} before planning and names every problem: unknown nodes, duplicate
 * names, negative, NaN or infinite numbers, components with no ready replica, entry points without
 * a per-node split, empty snapshots.
 *
 * <p>Absent metric fields ({@code null}) are valid: they mean "no data" and are handled by ATPM's
 * missing-data rules. A present NaN or ±Inf is an error here, because a snapshot file is written by
 * a tool that should have turned it into "absent" already (our reading; the controller does so).
 */
public final class SnapshotValidator {

    /**
     * Largest plausible CPU figure in cores (a node, a replica's use or limit). Larger values are
     * unit mistakes (millicores as cores) and would only overflow the arithmetic; our bound.
     */
    public static final double MAX_CORES = 1e6;
    /** Largest plausible request rate, requests per second; our bound. */
    public static final double MAX_REQUESTS_PER_SECOND = 1e9;
    /** Largest plausible one-way link delay, milliseconds (one hour); our bound. */
    public static final double MAX_DELAY_MILLIS = 3.6e6;
    /** Longest plausible measurement window, seconds (one day); our bound. */
    public static final double MAX_WINDOW_SECONDS = 86_400;

    private SnapshotValidator() {}

    /** Throws {@link InvalidSnapshotException} listing every problem, or returns normally. */
    public static void requireValid(Snapshot snapshot) {
        List<FieldProblem> problems = check(snapshot);
        if (!problems.isEmpty()) {
            throw new InvalidSnapshotException(problems);
        }
    }

    /** Every problem of {@code snapshot} in words ({@link FieldProblem#message()}), in field order; empty when it can be planned. */
    public static List<String> validate(Snapshot snapshot) {
        return FieldProblem.messages(check(snapshot));
    }

    /**
     * Every problem of {@code snapshot}, in field order, as (path, value, expected); empty when it can be
     * planned. A number out of range is the problem's value as read ({@code -4.0}); a file reader can show it
     * as written.
     */
    public static List<FieldProblem> check(Snapshot snapshot) {
        List<FieldProblem> problems = new ArrayList<>();
        if (snapshot == null) {
            problems.add(new FieldProblem("snapshot", "null", "a JSON object with nodes, replicas, calls, delays"));
            return problems;
        }
        Double window = snapshot.windowSeconds();
        if (window == null) {
            problems.add(new FieldProblem("windowSeconds", "missing", "the measurement window in seconds, > 0"));
        } else if (!(window > 0 && window <= MAX_WINDOW_SECONDS)) {
            problems.add(
                    new FieldProblem("windowSeconds", window, "seconds in (0, " + (long) MAX_WINDOW_SECONDS + "]"));
        }

        Set<String> nodeNames = new HashSet<>();
        if (snapshot.nodes().isEmpty()) {
            problems.add(new FieldProblem("nodes", "empty", "at least one node"));
        }
        for (int i = 0; i < snapshot.nodes().size(); i++) {
            Node node = snapshot.nodes().get(i);
            String at = "nodes[" + i + "]";
            if (node == null) {
                problems.add(new FieldProblem(at, "null", "a node object"));
                continue;
            }
            if (blank(node.name())) {
                problems.add(new FieldProblem(at + ".name", quote(node.name()), "a non-empty node name"));
            } else if (!nodeNames.add(node.name())) {
                problems.add(
                        new FieldProblem(at + ".name", quote(node.name()) + " is a duplicate", "unique node names"));
            }
            if (node.cpuCores() != null && !(node.cpuCores() > 0 && node.cpuCores() <= MAX_CORES)) {
                problems.add(new FieldProblem(at + ".cpuCores", node.cpuCores(), "cores in (0, 1e6], or absent"));
            }
        }

        Set<String> pods = new HashSet<>();
        Map<String, List<String>> podsByComponent = new LinkedHashMap<>();
        Map<String, Integer> firstReplicaOf = new HashMap<>();
        Map<String, Boolean> componentHasReady = new HashMap<>();
        if (snapshot.replicas().isEmpty()) {
            problems.add(new FieldProblem("replicas", "empty", "at least one replica"));
        }
        for (int i = 0; i < snapshot.replicas().size(); i++) {
            Replica replica = snapshot.replicas().get(i);
            String at = "replicas[" + i + "]";
            if (replica == null) {
                problems.add(new FieldProblem(at, "null", "a replica object"));
                continue;
            }
            if (blank(replica.pod())) {
                problems.add(new FieldProblem(at + ".pod", quote(replica.pod()), "a non-empty pod name"));
            } else if (!pods.add(replica.pod())) {
                problems.add(
                        new FieldProblem(at + ".pod", quote(replica.pod()) + " is a duplicate", "unique pod names"));
            }
            if (blank(replica.component())) {
                problems.add(
                        new FieldProblem(at + ".component", quote(replica.component()), "a non-empty component name"));
            } else {
                podsByComponent
                        .computeIfAbsent(replica.component(), c -> new ArrayList<>())
                        .add(replica.pod());
                firstReplicaOf.putIfAbsent(replica.component(), i);
                componentHasReady.merge(replica.component(), replica.isReady(), Boolean::logicalOr);
            }
            if (blank(replica.node())) {
                problems.add(new FieldProblem(at + ".node", quote(replica.node()), "the name of one of the nodes"));
            } else if (!nodeNames.contains(replica.node())) {
                problems.add(new FieldProblem(
                        at + ".node",
                        quote(replica.node()) + " is not a node of this snapshot",
                        "one of " + sorted(nodeNames)));
            }
            checkMetric(problems, at + ".cpuCores", replica.cpuCores(), false, MAX_CORES, "cores");
            checkMetric(problems, at + ".cpuLimitCores", replica.cpuLimitCores(), true, MAX_CORES, "cores");
            checkMetric(
                    problems,
                    at + ".requestsPerSecond",
                    replica.requestsPerSecond(),
                    false,
                    MAX_REQUESTS_PER_SECOND,
                    "requests per second");
        }
        componentHasReady.forEach((component, ready) -> {
            if (!ready) {
                // Told at the component's first replica, so that a file reader can give it a line.
                problems.add(new FieldProblem(
                        "replicas[" + firstReplicaOf.get(component) + "].component",
                        quote(component) + " has no ready replica (pods " + podsByComponent.get(component) + ")",
                        "at least one ready replica per component"));
            }
        });

        // The callees a call may name: components with a ready replica (one without is a problem of its own).
        Set<String> callees = new TreeSet<>();
        componentHasReady.forEach((component, ready) -> {
            if (ready) {
                callees.add(component);
            }
        });
        String callee = callees.isEmpty() ? "a component with a ready replica; none has one" : "one of " + callees;
        Set<String> edges = new HashSet<>();
        for (int i = 0; i < snapshot.calls().size(); i++) {
            Call call = snapshot.calls().get(i);
            String at = "calls[" + i + "]";
            if (call == null) {
                problems.add(new FieldProblem(at, "null", "a call object"));
                continue;
            }
            if (blank(call.caller())) {
                problems.add(new FieldProblem(at + ".caller", quote(call.caller()), "a component or entry-point name"));
            }
            if (blank(call.callee())) {
                problems.add(new FieldProblem(at + ".callee", quote(call.callee()), "a component name"));
            } else if (!podsByComponent.containsKey(call.callee())) {
                problems.add(new FieldProblem(
                        at + ".callee", quote(call.callee()) + " has no replicas in this snapshot", callee));
            }
            if (!blank(call.caller())
                    && !blank(call.callee())
                    && !edges.add(call.caller() + "\u0000" + call.callee())) {
                problems.add(new FieldProblem(
                        at,
                        "a second call " + quote(call.caller()) + " -> " + quote(call.callee()),
                        "one entry per caller and callee"));
            }
            if (call.requestsPerSecond() == null) {
                problems.add(
                        new FieldProblem(at + ".requestsPerSecond", "missing", "the edge's calls per second, >= 0"));
            } else if (!(call.requestsPerSecond() >= 0 && call.requestsPerSecond() <= MAX_REQUESTS_PER_SECOND)) {
                problems.add(new FieldProblem(
                        at + ".requestsPerSecond", call.requestsPerSecond(), "requests per second in [0, 1e9]"));
            }
            boolean entryPoint = !blank(call.caller()) && !podsByComponent.containsKey(call.caller());
            Map<String, Double> byNode = call.byCallerNode();
            if (byNode == null || byNode.isEmpty()) {
                if (entryPoint && call.rate() > 0) {
                    problems.add(new FieldProblem(
                            at + ".byCallerNode",
                            "missing for entry point " + quote(call.caller())
                                    + " (it has no replicas, so where its calls come from must be measured)",
                            "requests per second by caller node"));
                }
                continue;
            }
            double total = 0;
            for (Map.Entry<String, Double> e : byNode.entrySet()) {
                // A key of a mapping is a field of the path, as a JSON reader names it: byCallerNode.w1.
                String key = at + ".byCallerNode." + e.getKey();
                if (!nodeNames.contains(e.getKey())) {
                    problems.add(new FieldProblem(
                            key, quote(e.getKey()) + " is not a node of this snapshot", "one of " + sorted(nodeNames)));
                }
                Double v = e.getValue();
                if (v == null || !(v >= 0 && v <= MAX_REQUESTS_PER_SECOND)) {
                    problems.add(new FieldProblem(key, v, "requests per second in [0, 1e9]"));
                } else {
                    total += v;
                }
            }
            if (entryPoint && call.rate() > 0 && total <= 0) {
                problems.add(new FieldProblem(
                        at + ".byCallerNode",
                        "all zero for entry point " + quote(call.caller()),
                        "a positive rate on at least one node"));
            }
        }

        // Node pairs seen, by index: a 500-node snapshot has 250,000 delays, and string keys for
        // them cost more than the rest of the validation.
        Map<String, Integer> nodeIndex = new HashMap<>();
        for (Node node : snapshot.nodes()) {
            if (node != null && !blank(node.name())) {
                nodeIndex.putIfAbsent(node.name(), nodeIndex.size());
            }
        }
        java.util.BitSet seenPairs = new java.util.BitSet();
        Set<Long> seenPairsLarge = new HashSet<>(); // beyond 46,340 nodes n² overflows a BitSet index
        long n = nodeIndex.size();
        for (int i = 0; i < snapshot.delays().size(); i++) {
            LinkDelay delay = snapshot.delays().get(i);
            String at = "delays[" + i + "]";
            if (delay == null) {
                problems.add(new FieldProblem(at, "null", "a delay object"));
                continue;
            }
            Integer from = delay.from() == null ? null : nodeIndex.get(delay.from());
            Integer to = delay.to() == null ? null : nodeIndex.get(delay.to());
            if (from == null) {
                problems.add(new FieldProblem(
                        at + ".from",
                        quote(delay.from()) + " is not a node of this snapshot",
                        "one of " + sorted(nodeNames)));
            }
            if (to == null) {
                problems.add(new FieldProblem(
                        at + ".to",
                        quote(delay.to()) + " is not a node of this snapshot",
                        "one of " + sorted(nodeNames)));
            }
            Double millis = delay.millis();
            if (millis == null) {
                problems.add(new FieldProblem(at + ".millis", "missing", "the one-way delay in ms, >= 0"));
            } else if (!(millis >= 0 && millis <= MAX_DELAY_MILLIS)) {
                problems.add(new FieldProblem(at + ".millis", millis, "a one-way delay in ms in [0, 3.6e6]"));
            }
            if (from != null && to != null) {
                long pair = from * n + to;
                boolean repeated;
                if (pair <= Integer.MAX_VALUE) {
                    repeated = seenPairs.get((int) pair);
                    seenPairs.set((int) pair);
                } else {
                    repeated = !seenPairsLarge.add(pair);
                }
                if (repeated) {
                    problems.add(new FieldProblem(
                            at,
                            "a second delay for " + quote(delay.from()) + " -> " + quote(delay.to()),
                            "one entry per ordered node pair"));
                }
            }
        }
        return problems;
    }

    private static void checkMetric(
            List<FieldProblem> problems,
            String field,
            Double value,
            boolean strictlyPositive,
            double max,
            String unit) {
        if (value == null) {
            return;
        }
        boolean ok = (strictlyPositive ? value > 0 : value >= 0) && value <= max;
        if (!ok) {
            problems.add(new FieldProblem(
                    field,
                    value,
                    unit + " in " + (strictlyPositive ? "(0, " : "[0, ")
                            + String.format(java.util.Locale.ROOT, "%.0e", max)
                                    .replace("e+0", "e")
                                    .replace("e+", "e")
                            + "], or absent for no data"));
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String quote(String s) {
        return s == null ? "missing" : "\"" + s + "\"";
    }

    private static String sorted(Set<String> names) {
        TreeSet<String> all = new TreeSet<>(names);
        if (all.size() <= 8) {
            return all.toString();
        }
        List<String> first = new ArrayList<>(all).subList(0, 8);
        return first + " and " + (all.size() - 8) + " more";
    }
}
