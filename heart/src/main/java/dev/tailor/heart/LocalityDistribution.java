package dev.tailor.heart;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns one call edge's {@link Route} into Istio's
 * {@code trafficPolicy.loadBalancer.localityLbSetting.distribute}: one entry per caller locality,
 * with integer weights per callee locality in [1, 100] summing to exactly 100.
 *
 * <p>Node = locality (docs/design.md#actuation): HEART routes between nodes, so each node should have
 * its own locality, normally via its {@code topology.istio.io/subzone} label. Nodes that share a
 * locality are merged: their fractions are averaged, weighted by each node's calls. Weights come
 * from the fractions by largest remainder; a locality whose weight rounds to 0 is left out, because
 * Istio rejects 0 and the remaining weights still sum to 100.
 */
public final class LocalityDistribution {

    private LocalityDistribution() {}

    /**
     * One {@code distribute} entry.
     *
     * @param from caller locality, {@code region/zone/subzone}
     * @param to   callee locality → weight in [1, 100]; weights sum to 100; sorted by locality
     */
    public record Entry(String from, Map<String, Integer> to) {

        public Entry {
            to = java.util.Collections.unmodifiableMap(new TreeMap<>(to));
        }
    }

    /**
     * The {@code distribute} entries of {@code route}, sorted by caller locality.
     *
     * @param localityOfNode node name → locality, for every node the route mentions
     * @throws IllegalArgumentException naming a node without a locality
     */
    public static List<Entry> of(Route route, Map<String, String> localityOfNode) {
        Map<String, Map<String, Double>> callsByLocality = new TreeMap<>();
        Map<String, Map<String, Double>> evenByLocality = new TreeMap<>();
        for (NodeRoute from : route.from()) {
            // Weigh by calls; where a locality sends none (a zero-rate edge, or nodes the plan sends
            // nothing this round) its nodes still have proportions, so weigh them equally then.
            double weight = route.requestsPerSecond() > 0 ? from.supplyRequestsPerSecond() : 1.0;
            String fromLocality = locality(localityOfNode, from.fromNode());
            Map<String, Double> to = callsByLocality.computeIfAbsent(fromLocality, l -> new TreeMap<>());
            Map<String, Double> even = evenByLocality.computeIfAbsent(fromLocality, l -> new TreeMap<>());
            from.toNodes().forEach((node, fraction) -> {
                to.merge(locality(localityOfNode, node), weight * fraction, Double::sum);
                even.merge(locality(localityOfNode, node), fraction, Double::sum);
            });
        }
        callsByLocality.replaceAll((from, to) ->
                to.values().stream().mapToDouble(Double::doubleValue).sum() > 0 ? to : evenByLocality.get(from));
        List<Entry> entries = new ArrayList<>();
        callsByLocality.forEach((from, to) -> {
            List<String> localities = new ArrayList<>(to.keySet());
            double[] amounts = new double[localities.size()];
            for (int i = 0; i < amounts.length; i++) {
                amounts[i] = to.get(localities.get(i));
            }
            if (localities.isEmpty() || java.util.Arrays.stream(amounts).sum() <= 0) {
                return;
            }
            int[] weights = Apportionment.largestRemainder(amounts, 100);
            Map<String, Integer> kept = new LinkedHashMap<>();
            for (int i = 0; i < weights.length; i++) {
                if (weights[i] > 0) {
                    kept.put(localities.get(i), weights[i]);
                }
            }
            entries.add(new Entry(from, kept));
        });
        return entries;
    }

    private static String locality(Map<String, String> localityOfNode, String node) {
        String locality = localityOfNode.get(node);
        if (locality == null || locality.isBlank()) {
            throw new IllegalArgumentException(
                    "locality of node " + node + " : missing (expected: region/zone/subzone)");
        }
        return locality;
    }
}
