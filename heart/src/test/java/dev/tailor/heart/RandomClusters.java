package dev.tailor.heart;

import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;

/**
 * QuickTheories generators of small random clusters that are <em>valid</em> HEART input: 2–8 nodes,
 * 1–5 components of 1–4 replicas each (at least one ready), loads with gaps (absent metrics, zero
 * requests, zero CPU, CPU limits on some), delays that are uniform, two-tier (a slow cluster of far
 * nodes) or drawn from a few tied values, with some pairs unmeasured, entry-point calls with a
 * measured split and component-to-component calls, some at zero rate.
 *
 * <p>Every value is drawn from the QuickTheories source, so a failing example shrinks towards fewer
 * nodes, components, replicas and calls.
 */
final class RandomClusters {

    private RandomClusters() {}

    /** Valid snapshots, described compactly when a property fails. */
    static Gen<Snapshot> snapshots() {
        Gen<Snapshot> gen = RandomClusters::snapshot;
        return gen.describedAs(RandomClusters::describe);
    }

    private static Snapshot snapshot(RandomnessSource in) {
        Draw d = new Draw(in);
        int nodeCount = d.intIn(2, 8);
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            nodes.add(new Node("w" + i, null, d.chance(50) ? null : (Double) d.doubleIn(1, 64)));
        }

        int componentCount = d.intIn(1, 5);
        List<Replica> replicas = new ArrayList<>();
        for (int c = 0; c < componentCount; c++) {
            int replicaCount = d.intIn(1, 4);
            for (int r = 0; r < replicaCount; r++) {
                // The first replica is ready, so every component is a valid routing target.
                Boolean ready = r == 0 ? (d.chance(80) ? Boolean.TRUE : null) : readiness(d);
                replicas.add(new Replica(
                        "c" + c + "-" + r,
                        "c" + c,
                        "w" + d.intIn(0, nodeCount - 1),
                        ready,
                        cpuCores(d),
                        d.chance(80) ? null : (Double) d.doubleIn(0.1, 8),
                        requestsPerSecond(d)));
            }
        }

        List<Call> calls = new ArrayList<>();
        int entries = d.intIn(1, 2);
        for (int e = 0; e < entries; e++) {
            double rate = rate(d);
            Map<String, Double> split = rate == 0 && d.chance(50) ? null : split(d, nodeCount);
            calls.add(new Call("ingress" + e, "c" + d.intIn(0, componentCount - 1), rate, split));
        }
        for (int a = 0; a < componentCount; a++) {
            for (int b = 0; b < componentCount; b++) {
                if (d.chance(a == b ? 5 : 35)) {
                    // byCallerNode of a component caller is informational (ignored): sometimes present.
                    calls.add(new Call("c" + a, "c" + b, rate(d), d.chance(20) ? split(d, nodeCount) : null));
                }
            }
        }

        List<LinkDelay> delays = new ArrayList<>();
        int shape = d.intIn(0, 2);
        boolean[] far = new boolean[nodeCount];
        for (int i = 0; i < nodeCount; i++) {
            far[i] = d.chance(30);
        }
        double[] tied = {0.1, 0.5, 5};
        for (int i = 0; i < nodeCount; i++) {
            for (int j = 0; j < nodeCount; j++) {
                if (d.chance(10)) {
                    continue; // unmeasured: the planner fills it in
                }
                double millis = switch (shape) {
                    case 0 -> i == j ? d.doubleIn(0, 0.2) : d.doubleIn(0.1, 50);
                    case 1 -> i == j ? d.doubleIn(0, 0.2) : far[i] || far[j] ? d.doubleIn(20, 120) : d.doubleIn(0.2, 2);
                    default -> tied[d.intIn(0, tied.length - 1)];
                };
                delays.add(new LinkDelay("w" + i, "w" + j, millis));
            }
        }
        return new Snapshot(30.0, nodes, replicas, calls, delays);
    }

    private static Boolean readiness(Draw d) {
        int k = d.intIn(0, 19);
        return k < 15 ? Boolean.TRUE : k < 18 ? Boolean.FALSE : null;
    }

    /** Mostly a measurement; sometimes absent (no data), zero, or tiny. */
    private static Double cpuCores(Draw d) {
        int k = d.intIn(0, 9);
        if (k == 7) {
            return null;
        }
        return k < 7 ? d.doubleIn(0.01, 4) : k == 8 ? 0.0 : d.doubleIn(0, 0.01);
    }

    /** Mostly a measurement; sometimes absent (no data) or zero (an idle replica). */
    private static Double requestsPerSecond(Draw d) {
        int k = d.intIn(0, 19);
        if (k >= 14 && k < 17) {
            return null;
        }
        return k < 14 ? d.doubleIn(0.1, 500) : 0.0;
    }

    /** A call rate: zero one time in five. */
    private static double rate(Draw d) {
        return d.chance(20) ? 0 : d.doubleIn(0.1, 2000);
    }

    /** Calls by caller node over a non-empty subset of the nodes, at least one positive. */
    private static Map<String, Double> split(Draw d, int nodeCount) {
        Map<String, Double> split = new LinkedHashMap<>();
        int first = d.intIn(0, nodeCount - 1);
        split.put("w" + first, d.doubleIn(0.1, 100));
        for (int i = 0; i < nodeCount; i++) {
            if (i != first && d.chance(40)) {
                split.put("w" + i, d.chance(20) ? 0.0 : d.doubleIn(0.1, 100));
            }
        }
        return split;
    }

    /** One line per node, replica, call and delay row: what a person needs to replay a failure. */
    static String describe(Snapshot s) {
        StringBuilder b = new StringBuilder("Snapshot{\n");
        for (Replica r : s.replicas()) {
            b.append(String.format(
                    Locale.ROOT,
                    "  replica %s on %s ready=%s cpu=%s limit=%s rps=%s%n",
                    r.pod(),
                    r.node(),
                    r.ready(),
                    r.cpuCores(),
                    r.cpuLimitCores(),
                    r.requestsPerSecond()));
        }
        for (Call c : s.calls()) {
            b.append(String.format(
                    Locale.ROOT,
                    "  call %s -> %s %s rps byCallerNode=%s%n",
                    c.caller(),
                    c.callee(),
                    c.requestsPerSecond(),
                    c.byCallerNode()));
        }
        Map<String, String> rows = s.delays().stream()
                .collect(Collectors.groupingBy(
                        LinkDelay::from,
                        LinkedHashMap::new,
                        Collectors.mapping(l -> l.to() + "=" + l.millis(), Collectors.joining(" "))));
        for (Node n : s.nodes()) {
            b.append("  delays from ")
                    .append(n.name())
                    .append(": ")
                    .append(rows.getOrDefault(n.name(), "-"))
                    .append('\n');
        }
        return b.append('}').toString();
    }

    /** Draws from a QuickTheories source; each draw is a shrinkable choice. */
    record Draw(RandomnessSource in) {

        int intIn(int min, int max) {
            return integers().between(min, max).generate(in);
        }

        double doubleIn(double min, double max) {
            return doubles().between(min, max).generate(in);
        }

        boolean chance(int percent) {
            return intIn(0, 99) < percent;
        }
    }
}
