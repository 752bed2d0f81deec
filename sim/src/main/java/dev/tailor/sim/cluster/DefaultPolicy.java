package dev.tailor.sim.cluster;

/**
 * Kubernetes' default: kube-proxy (iptables mode) sends each connection — here each call — to a
 * uniformly random ready endpoint of the Service.
 */
final class DefaultPolicy implements RoutingPolicy {

    private ClusterModel model;

    @Override
    public void start(ClusterModel model) {
        this.model = model;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        SimReplica[] endpoints = callee.endpoints;
        return endpoints[model.routingRng.nextInt(endpoints.length)];
    }
}
