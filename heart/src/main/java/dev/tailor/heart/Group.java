package dev.tailor.heart;

import java.util.List;

/**
 * A routing target: ready replicas of one component on one node (or one replica alone under
 * per-replica grouping).
 *
 * @param id        node name, or pod name under per-replica grouping
 * @param node      node name
 * @param nodeIndex index of the node in {@link Cluster#nodes()}
 * @param replicas  ready replicas, sorted by pod name
 */
record Group(String id, String node, int nodeIndex, List<Replica> replicas) {}
