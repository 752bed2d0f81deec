package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Peak-EWMA P2C on hand-computed cases and its choice statistics, on the pairwise cluster (virtual time). */
class PeakEwmaPolicyTest {

    private static final long SECOND = ClusterModel.NANOS_PER_SECOND;
    private static final double MS = 1e6;

    private final PeakEwmaPolicy policy = new PeakEwmaPolicy(PeakEwmaConfig.DEFAULTS);
    private final ClusterModel model =
            new ClusterModel(Scenarios.load("paper-pairwise"), "test", policy, 100, () -> 0L);
    private final SimComponent b = model.components[1];
    private final Proxy from = model.proxies[0];

    PeakEwmaPolicyTest() {
        policy.start(model);
    }

    private PeakEwmaPolicy.State state() {
        return (PeakEwmaPolicy.State) from.policyState;
    }

    @Test
    void cost_beforeAnyResponse_isTheDefaultRttDecayingWithTau() {
        // Linkerd: every endpoint starts at 30 ms; a cost query decays it towards 0 with τ = 10 s, so ten
        // seconds later it is 30 · e^−1 = 11.036 ms.
        SimReplica replica = b.replicas[0];
        assertThat(policy.cost(state(), from, replica, 0) / MS).isCloseTo(30, within(1e-9));
        assertThat(policy.cost(state(), from, replica, 10 * SECOND) / MS).isCloseTo(30 * Math.exp(-1), within(1e-9));
    }

    @Test
    void onResponse_slowerRoundTripReplacesTheEstimate_fasterOneMovesItByTheDecay() {
        // The peak: at 1 s a 100 ms round trip lifts the estimate (30 · e^−0.1 = 27.1 ms) to 100 ms at
        // once. At 2 s a 10 ms round trip moves it 1 − e^−0.1 of the way: 100 · 0.904837 + 10 · 0.095163
        // = 91.435 ms.
        SimReplica replica = b.replicas[2];
        policy.onResponse(from, replica, SECOND - 100_000_000L, SECOND);
        assertThat(state().rttNanos[replica.id] / MS).isCloseTo(100, within(1e-9));
        policy.onResponse(from, replica, 2 * SECOND - 10_000_000L, 2 * SECOND);
        double w = Math.exp(-0.1);
        assertThat(state().rttNanos[replica.id] / MS).isCloseTo(100 * w + 10 * (1 - w), within(1e-9));
        assertThat(policy.cost(state(), from, replica, 2 * SECOND) / MS).isCloseTo(91.4354, within(1e-4));
    }

    @Test
    void cost_isTheEstimateTimesPendingPlusOne() {
        // Two of this proxy's requests pending at the endpoint: a third would wait behind them.
        SimReplica replica = b.replicas[1];
        from.active[replica.id] = 2;
        assertThat(policy.cost(state(), from, replica, 0) / MS).isCloseTo(90, within(1e-9));
    }

    @Test
    void choose_cheapestEndpointWinsEveryPairItIsIn_costliestNeverWins() {
        // Distinct pairs of 5 endpoints: the cheapest is in 4 of the 10 pairs (P = 0.4); the costliest
        // loses every pair it is in (P = 0); the three in between share the rest (0.2 each).
        set(b.replicas[0], 1);
        set(b.replicas[1], 20);
        set(b.replicas[2], 20.5);
        set(b.replicas[3], 21);
        set(b.replicas[4], 900);
        int[] counts = new int[model.replicas.length];
        int picks = 50_000;
        for (int i = 0; i < picks; i++) {
            counts[policy.choose(from, b, 0).id]++;
        }
        assertThat(counts[b.replicas[0].id] / (double) picks).isCloseTo(0.4, within(0.01));
        assertThat(counts[b.replicas[1].id] / (double) picks).isCloseTo(0.3, within(0.01));
        assertThat(counts[b.replicas[2].id] / (double) picks).isCloseTo(0.2, within(0.01));
        assertThat(counts[b.replicas[3].id] / (double) picks).isCloseTo(0.1, within(0.01));
        assertThat(counts[b.replicas[4].id]).isZero();
    }

    @Test
    void choose_twoEndpoints_alwaysTheCheaper() {
        // Linkerd draws two distinct endpoints; with replacement (Envoy's least-request) the dearer one
        // would win a quarter of the draws (both picks on it).
        for (int r = 2; r < 5; r++) {
            b.replicas[r].ready = false;
        }
        b.updateEndpoints();
        set(b.replicas[0], 5);
        set(b.replicas[1], 50);
        for (int i = 0; i < 1_000; i++) {
            assertThat(policy.choose(from, b, 0)).isSameAs(b.replicas[0]);
        }
    }

    @Test
    void choose_endpointBackAfterLeaving_startsAgainFromTheDefault() {
        // A replica that left the endpoints (crash) and came back is a new endpoint to the proxy.
        SimReplica replica = b.replicas[3];
        policy.onResponse(from, replica, 0, 5 * SECOND); // a 5 s round trip: estimate 5 s
        replica.ready = false;
        b.updateEndpoints();
        policy.choose(from, b, 6 * SECOND);
        replica.ready = true;
        b.updateEndpoints();
        policy.choose(from, b, 7 * SECOND);
        assertThat(state().rttNanos[replica.id] / MS).isLessThanOrEqualTo(30);
    }

    @Test
    void config_badValues_areNamed() {
        assertThatThrownBy(() -> new PeakEwmaConfig(0, 30))
                .hasMessageContaining("decaySeconds : 0 (expected: a number in (0, 3600])");
        assertThatThrownBy(() -> new PeakEwmaConfig(10, Double.NaN)).hasMessageContaining("defaultRttMillis : NaN");
    }

    private void set(SimReplica replica, double millis) {
        state().rttNanos[replica.id] = millis * MS;
        state().touchedNanos[replica.id] = 0;
    }
}
