package dev.tailor.heart;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builds snapshots in tests without JSON: {@code TestSnapshots.builder().node("w1")...build()}. */
final class TestSnapshots {

    /**
     * The defaults with the paper's routing (no entropic transport, square-root shares or queue-aware
     * routing; the slow-link filter on): hand-computed examples of the paper's capacity shares and
     * min-cost flow, and of the estimate's departures on top of them, use this; EntropicTransportTest
     * covers the routing departures.
     */
    static final HeartConfig PAPER_ROUTING = HeartConfig.DEFAULTS.toBuilder()
            .spreadScale(0)
            .latencyOptimalShares(false)
            .queueAwareRouting(false)
            .slowLinkFilter(true)
            .build();

    private final List<Node> nodes = new ArrayList<>();
    private final List<Replica> replicas = new ArrayList<>();
    private final List<Call> calls = new ArrayList<>();
    private final List<LinkDelay> delays = new ArrayList<>();
    private Double windowSeconds = 30.0;

    static TestSnapshots builder() {
        return new TestSnapshots();
    }

    TestSnapshots window(Double seconds) {
        windowSeconds = seconds;
        return this;
    }

    TestSnapshots nodes(String... names) {
        for (String name : names) {
            nodes.add(new Node(name, "r1/z1/" + name, 4.0));
        }
        return this;
    }

    /** A ready replica with {@code cpuCores} used while serving {@code requestsPerSecond}. */
    TestSnapshots replica(String pod, String component, String node, Double cpuCores, Double requestsPerSecond) {
        replicas.add(new Replica(pod, component, node, true, cpuCores, null, requestsPerSecond));
        return this;
    }

    TestSnapshots replica(Replica replica) {
        replicas.add(replica);
        return this;
    }

    TestSnapshots call(String caller, String callee, double requestsPerSecond) {
        calls.add(new Call(caller, callee, requestsPerSecond, null));
        return this;
    }

    /** An entry-point call with its measured split: node, rate, node, rate, ... */
    TestSnapshots entry(String caller, String callee, double requestsPerSecond, Object... byNode) {
        Map<String, Double> split = new LinkedHashMap<>();
        for (int i = 0; i < byNode.length; i += 2) {
            split.put((String) byNode[i], ((Number) byNode[i + 1]).doubleValue());
        }
        calls.add(new Call(caller, callee, requestsPerSecond, split));
        return this;
    }

    TestSnapshots delay(String from, String to, double millis) {
        delays.add(new LinkDelay(from, to, millis));
        return this;
    }

    /** Every ordered pair of the nodes so far: {@code sameNode} ms on a node, {@code otherNode} between. */
    TestSnapshots uniformDelays(double sameNode, double otherNode) {
        for (Node a : nodes) {
            for (Node b : nodes) {
                delays.add(new LinkDelay(a.name(), b.name(), a.equals(b) ? sameNode : otherNode));
            }
        }
        return this;
    }

    Snapshot build() {
        return new Snapshot(windowSeconds, nodes, replicas, calls, delays);
    }
}
