package dev.tailor.heart;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the calls of one caller node go, for one call edge.
 *
 * @param fromNode                 the caller's node
 * @param supplyRequestsPerSecond  calls per second leaving this node on this edge
 * @param toNodes                  callee node → fraction of this node's calls; fractions sum to 1;
 *                                 sorted by node
 * @param toReplicas               callee pod → fraction; a group's flow split equally among its
 *                                 replicas; fractions sum to 1
 */
public record NodeRoute(
        String fromNode, double supplyRequestsPerSecond, Map<String, Double> toNodes, Map<String, Double> toReplicas) {

    public NodeRoute {
        toNodes = Collections.unmodifiableMap(new TreeMap<>(toNodes));
        toReplicas = Collections.unmodifiableMap(new TreeMap<>(toReplicas));
    }
}
