package dev.tailor.sim.cluster;

import dev.tailor.heart.Call;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds HEART's {@link Snapshot} from the simulated Prometheus, as the controller builds it from
 * the real one: rates are the increase of each counter between the scrape closest to
 * {@code now − window} and the latest scrape, divided by the time between them (a {@code rate()}
 * without extrapolation). Link delays are the links' mean one-way delays, what kubenurse's probes
 * average to.
 */
final class MetricsSnapshot {

    private MetricsSnapshot() {}

    /** The snapshot over the last {@code windowNanos}, or {@code null} before there are two scrapes. */
    static Snapshot build(ClusterModel model, long nowNanos, long windowNanos) {
        ScrapedMetrics.Sample end = model.metrics.latest(nowNanos);
        ScrapedMetrics.Sample start = end == null ? null : model.metrics.windowStart(end, windowNanos);
        if (start == null) {
            return null;
        }
        double seconds = (end.timeNanos() - start.timeNanos()) / 1e9;
        List<Node> nodes = new ArrayList<>();
        for (SimNode node : model.nodes) {
            nodes.add(new Node(node.name, node.locality, node.cores));
        }
        List<Replica> replicas = new ArrayList<>();
        for (SimReplica replica : model.replicas) {
            double cpu = (end.cpuCoreSeconds()[replica.id] - start.cpuCoreSeconds()[replica.id]) / seconds;
            double rps = (end.served()[replica.id] - start.served()[replica.id]) / seconds;
            replicas.add(new Replica(
                    replica.pod,
                    replica.component.name,
                    replica.node.name,
                    replica.ready,
                    cpu,
                    replica.limitCores,
                    rps));
        }
        List<Call> calls = new ArrayList<>();
        for (int[] edge : edges(model)) {
            int callerSlot = edge[0];
            SimComponent callee = model.components[edge[1]];
            double total = 0;
            TreeMap<String, Double> byNode = new TreeMap<>();
            for (Proxy proxy : model.proxies) {
                if (RouteTable.slot(proxy) != callerSlot) {
                    continue;
                }
                double rate =
                        (end.callsByProxy()[proxy.id][callee.index] - start.callsByProxy()[proxy.id][callee.index])
                                / seconds;
                total += rate;
                byNode.merge(proxy.node.name, rate, Double::sum);
            }
            String caller = callerSlot == 0 ? ClusterModel.INGRESS : model.components[callerSlot - 1].name;
            calls.add(new Call(caller, callee.name, total, callerSlot == 0 ? byNode : null));
        }
        List<LinkDelay> delays = new ArrayList<>();
        for (SimNode from : model.nodes) {
            for (SimNode to : model.nodes) {
                delays.add(new LinkDelay(from.name, to.name, model.delayMeanNanos[from.index][to.index] / 1e6));
            }
        }
        return new Snapshot(seconds, nodes, replicas, calls, delays);
    }

    /** Call edges {callerSlot, callee}: the ingress → entry, then every component's callees. */
    static List<int[]> edges(ClusterModel model) {
        Set<List<Integer>> seen = new LinkedHashSet<>();
        seen.add(List.of(0, model.entry.index));
        for (SimComponent component : model.components) {
            for (int[] stage : component.calleesByStage) {
                for (int callee : stage) {
                    seen.add(List.of(component.index + 1, callee));
                }
            }
        }
        List<int[]> edges = new ArrayList<>();
        for (List<Integer> edge : seen) {
            edges.add(new int[] {edge.get(0), edge.get(1)});
        }
        return edges;
    }
}
