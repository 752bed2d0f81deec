package dev.tailor.sim.cluster;

import org.apache.commons.rng.UniformRandomProvider;

/**
 * Istio's {@code LEAST_REQUEST} (Envoy's least-request load balancer with equal weights): pick two
 * endpoints at random (with replacement, as Envoy does) and send to the one with fewer active
 * requests <em>from this proxy</em>; Envoy knows nothing of other proxies' requests.
 */
final class LeastRequestPolicy implements RoutingPolicy {

    private ClusterModel model;

    @Override
    public void start(ClusterModel model) {
        this.model = model;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        return powerOfTwo(from, callee.endpoints, model.routingRng);
    }

    /** Envoy's P2C over {@code candidates} with {@code from}'s own active-request counts; first on a tie. */
    static SimReplica powerOfTwo(Proxy from, SimReplica[] candidates, UniformRandomProvider rng) {
        if (candidates.length == 1) {
            return candidates[0];
        }
        SimReplica a = candidates[rng.nextInt(candidates.length)];
        SimReplica b = candidates[rng.nextInt(candidates.length)];
        return from.active[b.id] < from.active[a.id] ? b : a;
    }
}
