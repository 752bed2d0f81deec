package dev.tailor.sim.cluster;

/**
 * Peak-EWMA power of two choices, the load balancer of Linkerd's proxy (a P2C pool of endpoints whose
 * load is tower's {@code PeakEwma}): each calling proxy keeps, per endpoint of the callee, a
 * latency estimate that jumps to any slower round trip and otherwise decays towards the observed
 * ones, and sends each call to the cheaper of two distinct random endpoints, where
 * cost = estimate × (the proxy's requests pending there + 1).
 *
 * <p>Rules and sources:
 * <ul>
 *   <li>Cost = RTT estimate × (pending + 1); the estimate is a "peak EWMA": a round trip above it
 *       replaces it at once; one below it moves it by {@code 1 − e^(−Δt/τ)} of the way, Δt being the
 *       time since the estimate was last touched — which a cost query also does, decaying it towards 0
 *       [tower {@code load/peak_ewma.rs}, derived from Finagle's {@code PeakEwma.scala}].</li>
 *   <li>Round trip = from the request leaving the proxy to the response reaching it, errors included
 *       (tower's handle records on drop) [tower].</li>
 *   <li>An endpoint starts with the default RTT, 30 ms, as its estimate (it then decays like any
 *       other); decay τ = 10 s [linkerd2-proxy {@code app/outbound/src/http/concrete.rs}:
 *       {@code EwmaConfig { default_rtt: 30 ms, decay: 10 s }}].</li>
 *   <li>Two <em>distinct</em> endpoints drawn uniformly; the first wins ties [linkerd2-proxy
 *       {@code proxy/balance/src/pool/p2c.rs}, {@code gen_pair}].</li>
 *   <li>An endpoint that leaves the endpoints and comes back is a new endpoint with the default
 *       estimate (Linkerd builds a new service for it).</li>
 * </ul>
 * Why Linkerd's constants and not Finagle's (decay 5 s, a penalty instead of a default RTT for an
 * endpoint without samples but with requests pending): Linkerd's proxy is a sidecar in Kubernetes,
 * the position our proxies are in; Finagle balances inside the client library.
 *
 * <p>Maintainer note: per proxy, three arrays indexed by replica id (estimate, last touch, whether the
 * replica is among the endpoints this proxy knows); O(1) per call. Pending requests are the proxy's
 * own counts ({@link Proxy#active}), as tower counts the handles still alive.
 */
final class PeakEwmaPolicy implements RoutingPolicy {

    /** A proxy's view of the endpoints it balances over. */
    static final class State {
        /** Peak-EWMA RTT estimate per replica id, ns. */
        final double[] rttNanos;
        /** When the estimate was last touched, per replica id, simulated ns. */
        final long[] touchedNanos;
        /** Whether the replica is among this proxy's endpoints. */
        final boolean[] known;
        /** Per callee component, the endpoints version {@link #known} reflects. */
        final int[] versions;

        State(int replicas, int components) {
            rttNanos = new double[replicas];
            touchedNanos = new long[replicas];
            known = new boolean[replicas];
            versions = new int[components];
            java.util.Arrays.fill(versions, -1);
        }
    }

    private final double decayNanos;
    private final double defaultRttNanos;
    private ClusterModel model;

    PeakEwmaPolicy(PeakEwmaConfig config) {
        this.decayNanos = config.decaySeconds() * 1e9;
        this.defaultRttNanos = config.defaultRttMillis() * 1e6;
    }

    @Override
    public void start(ClusterModel model) {
        this.model = model;
        for (Proxy proxy : model.proxies) {
            State state = new State(model.replicas.length, model.components.length);
            for (SimComponent component : model.components) {
                refresh(state, component, 0); // the endpoints are discovered when the proxy starts
            }
            proxy.policyState = state;
        }
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        State state = (State) from.policyState;
        SimReplica[] endpoints = callee.endpoints;
        if (state.versions[callee.index] != callee.endpointsVersion) {
            refresh(state, callee, nowNanos);
        }
        if (endpoints.length == 1) {
            return endpoints[0];
        }
        int a = model.routingRng.nextInt(endpoints.length);
        int b = model.routingRng.nextInt(endpoints.length - 1);
        if (b >= a) {
            b++;
        }
        double costA = cost(state, from, endpoints[a], nowNanos);
        double costB = cost(state, from, endpoints[b], nowNanos);
        return costA <= costB ? endpoints[a] : endpoints[b];
    }

    /** Endpoints that joined since the proxy last looked start fresh, with the default estimate. */
    private void refresh(State state, SimComponent callee, long nowNanos) {
        boolean all = callee.endpoints.length == callee.replicas.length;
        for (SimReplica replica : callee.replicas) {
            boolean member = all || replica.ready;
            if (member && !state.known[replica.id]) {
                state.rttNanos[replica.id] = defaultRttNanos;
                state.touchedNanos[replica.id] = nowNanos;
            }
            state.known[replica.id] = member;
        }
        state.versions[callee.index] = callee.endpointsVersion;
    }

    /** The endpoint's cost now; decays its estimate to now, as tower's {@code load()} does. */
    double cost(State state, Proxy from, SimReplica replica, long nowNanos) {
        return observe(state, replica.id, 0, nowNanos) * (from.active[replica.id] + 1);
    }

    @Override
    public void onResponse(Proxy from, SimReplica replica, long sentNanos, long nowNanos) {
        State state = (State) from.policyState;
        if (state.known[replica.id]) {
            observe(state, replica.id, nowNanos - sentNanos, nowNanos);
        }
    }

    /**
     * Folds one round trip of {@code rttNanos} (0 for a pure decay) into the estimate at
     * {@code nowNanos}; returns the new estimate.
     */
    private double observe(State state, int replica, double rttNanos, long nowNanos) {
        double estimate = state.rttNanos[replica];
        if (estimate < rttNanos) {
            estimate = rttNanos;
        } else {
            double elapsed = Math.max(0, nowNanos - state.touchedNanos[replica]);
            double decay = Math.exp(-elapsed / decayNanos);
            estimate = estimate * decay + rttNanos * (1 - decay);
        }
        state.rttNanos[replica] = estimate;
        state.touchedNanos[replica] = nowNanos;
        return estimate;
    }
}
