package dev.tailor.sim.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Traffic localisation in the style of OptTraffic (our reading): every round, each call edge's
 * measured traffic stays on the caller's node as far as the local replicas' fair share allows, and
 * the rest goes to the nearest nodes with room. "Fair share" assumes every replica can take the
 * same load — the homogeneous-capacity view that HEART's paper criticises: a slow node's replica is
 * given as much as a fast one's. Inside a node, least-request picks the replica; before the first
 * round, least-request over all replicas.
 *
 * <p>Maintainer note: the assignment is greedy — local first, then node pairs by increasing delay —
 * which is the min-cost assignment when capacities are equal and delays are a metric, up to ties.
 */
final class LocalityFirstPolicy implements RoutingPolicy {

    private ClusterModel model;
    private RouteTable table;
    private List<int[]> edges;

    @Override
    public void start(ClusterModel model) {
        this.model = model;
        this.edges = MetricsSnapshot.edges(model);
    }

    @Override
    public long tickIntervalNanos() {
        return HeartPolicy.ROUND_NANOS;
    }

    @Override
    public long firstTickNanos() {
        return HeartPolicy.ROUND_NANOS + 1_000_000;
    }

    @Override
    public void tick(long nowNanos) {
        ScrapedMetrics.Sample end = model.metrics.latest(nowNanos);
        ScrapedMetrics.Sample start = end == null ? null : model.metrics.windowStart(end, HeartPolicy.ROUND_NANOS);
        if (start == null) {
            return;
        }
        int nodes = model.nodes.length;
        RouteTable next = new RouteTable(model.components.length, nodes);
        List<int[]> pairs = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            for (int j = 0; j < nodes; j++) {
                if (i != j) {
                    pairs.add(new int[] {i, j});
                }
            }
        }
        pairs.sort(Comparator.comparingDouble(p -> model.delayMeanNanos[p[0]][p[1]]));
        for (int[] edge : edges) {
            SimComponent callee = model.components[edge[1]];
            double[] supply = new double[nodes];
            for (Proxy proxy : model.proxies) {
                if (RouteTable.slot(proxy) == edge[0]) {
                    supply[proxy.node.index] +=
                            end.callsByProxy()[proxy.id][callee.index] - start.callsByProxy()[proxy.id][callee.index];
                }
            }
            double total = 0;
            for (double s : supply) {
                total += s;
            }
            if (total <= 0) {
                continue;
            }
            double[] room = new double[nodes];
            for (int n = 0; n < nodes; n++) {
                room[n] = total * callee.replicasByNode[n].length / callee.replicas.length;
            }
            double[][] flow = new double[nodes][nodes];
            for (int n = 0; n < nodes; n++) {
                double local = Math.min(supply[n], room[n]);
                flow[n][n] = local;
                supply[n] -= local;
                room[n] -= local;
            }
            for (int[] pair : pairs) {
                double moved = Math.min(supply[pair[0]], room[pair[1]]);
                if (moved > 0) {
                    flow[pair[0]][pair[1]] += moved;
                    supply[pair[0]] -= moved;
                    room[pair[1]] -= moved;
                }
            }
            for (int n = 0; n < nodes; n++) {
                next.set(edge[0], edge[1], n, flow[n]);
                if (!next.has(edge[0], edge[1], n)) {
                    // No traffic measured from this node: keep it local when it can be, else by room.
                    double[] fallback = new double[nodes];
                    if (callee.replicasByNode[n].length > 0) {
                        fallback[n] = 1;
                    } else {
                        for (int m = 0; m < nodes; m++) {
                            fallback[m] = callee.replicasByNode[m].length;
                        }
                    }
                    next.set(edge[0], edge[1], n, fallback);
                }
            }
        }
        table = next;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        RouteTable current = table;
        SimReplica chosen = current == null ? null : current.pick(from, callee, model.routingRng);
        return chosen != null ? chosen : LeastRequestPolicy.powerOfTwo(from, callee.endpoints, model.routingRng);
    }
}
