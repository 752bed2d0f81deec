package dev.tailor.heart;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A validated snapshot, indexed for planning: nodes by index, a full delay matrix with the
 * unmeasured pairs filled in, and each component's routing groups.
 */
final class Cluster {

    private final List<Node> nodes;
    private final Map<String, Integer> nodeIndex = new HashMap<>();
    private final double[][] delayMillis;
    private final boolean[][] delayAssumed;
    /** component → its groups with a ready replica, sorted by id. */
    private final Map<String, List<Group>> groups = new TreeMap<>();
    /** component → group ids of every replica present, ready or not (state is kept for those). */
    private final Map<String, Set<String>> presentGroupIds = new HashMap<>();

    private final List<String> notes = new ArrayList<>();

    Cluster(Snapshot snapshot, HeartConfig config) {
        HeartConfig.Grouping grouping = config.grouping();
        nodes = List.copyOf(snapshot.nodes());
        for (int i = 0; i < nodes.size(); i++) {
            nodeIndex.put(nodes.get(i).name(), i);
        }
        int n = nodes.size();
        delayMillis = new double[n][n];
        delayAssumed = new boolean[n][n];
        fillDelays(snapshot.delays(), config.unmeasuredLinkPenaltyMillis());

        Map<String, Map<String, List<Replica>>> byComponent = new TreeMap<>();
        for (Replica replica : snapshot.replicas()) {
            String id = grouping == HeartConfig.Grouping.NODE ? replica.node() : replica.pod();
            presentGroupIds
                    .computeIfAbsent(replica.component(), c -> new LinkedHashSet<>())
                    .add(id);
            if (replica.isReady()) {
                byComponent
                        .computeIfAbsent(replica.component(), c -> new TreeMap<>())
                        .computeIfAbsent(id, g -> new ArrayList<>())
                        .add(replica);
            }
        }
        byComponent.forEach((component, byId) -> {
            List<Group> list = new ArrayList<>(byId.size());
            byId.forEach((id, replicas) -> {
                replicas.sort(Comparator.comparing(Replica::pod));
                String node = replicas.get(0).node();
                list.add(new Group(id, node, nodeIndex.get(node), List.copyOf(replicas)));
            });
            groups.put(component, List.copyOf(list));
        });
    }

    /**
     * Fills the pairs without a measurement: the reverse direction if measured; a node to itself,
     * the smallest measured same-node delay (0 if none); any other pair, the largest measured delay
     * plus {@code penaltyMillis}, so it is used only when nothing measured is feasible.
     */
    private void fillDelays(List<LinkDelay> measured, double penaltyMillis) {
        int n = nodes.size();
        double[][] d = delayMillis;
        boolean[][] known = new boolean[n][n];
        double max = 0;
        double minSameNode = Double.POSITIVE_INFINITY;
        for (LinkDelay link : measured) {
            int from = nodeIndex.get(link.from());
            int to = nodeIndex.get(link.to());
            d[from][to] = link.millis();
            known[from][to] = true;
            max = Math.max(max, link.millis());
            if (from == to) {
                minSameNode = Math.min(minSameNode, link.millis());
            }
        }
        double sameNode = Double.isInfinite(minSameNode) ? 0 : minSameNode;
        double unmeasured = max + penaltyMillis;
        int reverse = 0;
        int self = 0;
        int pessimistic = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (known[i][j]) {
                    continue;
                }
                delayAssumed[i][j] = true;
                if (known[j][i]) {
                    d[i][j] = d[j][i];
                    reverse++;
                } else if (i == j) {
                    d[i][j] = sameNode;
                    self++;
                } else {
                    d[i][j] = unmeasured;
                    pessimistic++;
                }
            }
        }
        if (reverse > 0) {
            notes.add(reverse + " node pair(s) without a measured delay took the delay of the reverse direction");
        }
        if (self > 0) {
            notes.add(self + " node(s) without a measured same-node delay were taken at " + Link.format(sameNode)
                    + " ms" + (Double.isInfinite(minSameNode) ? "" : ", the smallest measured same-node delay"));
        }
        if (pessimistic > 0) {
            notes.add(pessimistic + " node pair(s) without any measured delay were taken at " + Link.format(unmeasured)
                    + " ms ("
                    + (measured.isEmpty()
                            ? "no delay was measured at all"
                            : "the largest measured delay, " + Link.format(max) + " ms,")
                    + " plus the " + Link.format(penaltyMillis) + " ms penalty for unmeasured links), so they are"
                    + " used only when nothing measured is feasible");
        }
    }

    List<Node> nodes() {
        return nodes;
    }

    int indexOf(String node) {
        Integer i = nodeIndex.get(node);
        if (i == null) {
            throw new IllegalArgumentException("node : " + node + " (expected: a node of the snapshot)");
        }
        return i;
    }

    double delayMillis(int from, int to) {
        return delayMillis[from][to];
    }

    boolean delayAssumed(int from, int to) {
        return delayAssumed[from][to];
    }

    /** Components that have at least one ready replica, sorted. */
    Set<String> components() {
        return groups.keySet();
    }

    List<Group> groups(String component) {
        return groups.getOrDefault(component, List.of());
    }

    boolean hasReplicas(String component) {
        return presentGroupIds.containsKey(component);
    }

    Set<String> presentGroupIds(String component) {
        return presentGroupIds.getOrDefault(component, Set.of());
    }

    List<String> notes() {
        return notes;
    }

    @Override
    public String toString() {
        return "Cluster" + Arrays.toString(nodes.stream().map(Node::name).toArray());
    }
}
