package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Prequal's rules on hand-computed pools, its probes on virtual time, and its choice statistics. */
class PrequalPolicyTest {

    private static final long MS = 1_000_000;
    private static final int NO_LIMIT = Integer.MAX_VALUE;

    private final PrequalPolicy policy = new PrequalPolicy(PrequalConfig.DEFAULTS);
    private final ClusterModel model =
            new ClusterModel(Scenarios.load("paper-pairwise"), "test", policy, 100, () -> 0L);
    private final SimComponent b = model.components[1];
    private final Proxy from = model.proxies[0];

    PrequalPolicyTest() {
        policy.start(model);
    }

    private int id(int replica) {
        return b.replicas[replica].id;
    }

    @Test
    void select_coldProbes_lowestLatencyWins_evenOverAFasterHotOne() {
        // RIFs 0, 1, 2, 9: the 2^−0.25 = 0.8409 quantile sits at position 0.8409 · 3 = 2.5227 and
        // interpolates 2 + 0.5227 · (9 − 2) = 5.659, so only the RIF-9 probe is hot. Among the cold ones
        // the lowest latency (2 ms) wins, not the hot one's 1 ms.
        PrequalPolicy.Pool pool = new PrequalPolicy.Pool(16);
        pool.insert(id(0), 0, 10 * MS, 0, NO_LIMIT);
        pool.insert(id(1), 1, 5 * MS, 0, NO_LIMIT);
        pool.insert(id(2), 2, 2 * MS, 0, NO_LIMIT);
        pool.insert(id(3), 9, 1 * MS, 0, NO_LIMIT);
        assertThat(pool.threshold(PrequalConfig.DEFAULTS.qRif())).isCloseTo(5.659, within(0.001));
        assertThat(pool.replica[pool.select(PrequalConfig.DEFAULTS.qRif())]).isEqualTo(id(2));
    }

    @Test
    void select_allProbesHot_lowestRifWins_whateverItsLatency() {
        // Recent answers had RIF 0, 0, 0 and then 5, 6, 7 for the same replicas: the median (Q_RIF 0.5)
        // of the six answers is 2.5, every pooled probe is hot, and the lowest RIF wins although its
        // latency is the worst.
        PrequalPolicy.Pool pool = new PrequalPolicy.Pool(16);
        for (int r = 0; r < 3; r++) {
            pool.insert(id(r), 0, 1 * MS, 0, NO_LIMIT);
        }
        pool.insert(id(0), 5, 90 * MS, 1, NO_LIMIT);
        pool.insert(id(1), 6, 10 * MS, 1, NO_LIMIT);
        pool.insert(id(2), 7, 1 * MS, 1, NO_LIMIT);
        assertThat(pool.size).isEqualTo(3); // one probe per replica: the newer answers replaced the older
        assertThat(pool.threshold(0.5)).isCloseTo(2.5, within(1e-9));
        assertThat(pool.replica[pool.select(0.5)]).isEqualTo(id(0));
    }

    @Test
    void use_raisesTheProbesRif_andEndsItsReuseBudget() {
        // A used probe counts the call it sent (RIF + 1); with a budget of 2 it serves two calls.
        PrequalPolicy.Pool pool = new PrequalPolicy.Pool(16);
        pool.insert(id(0), 3, 1 * MS, 0, 2);
        pool.use(0);
        assertThat(pool.rif[0]).isEqualTo(4);
        assertThat(pool.size).isEqualTo(1);
        pool.use(0);
        assertThat(pool.size).isZero();
    }

    @Test
    void removeOne_alternatesTheWorstAndTheOldest() {
        // RIFs 0, 1, 2, 9 (9 is hot): the first removal takes the hottest probe, the second the oldest.
        PrequalPolicy.Pool pool = new PrequalPolicy.Pool(16);
        pool.insert(id(0), 0, 10 * MS, 5, NO_LIMIT);
        pool.insert(id(1), 1, 5 * MS, 1, NO_LIMIT);
        pool.insert(id(2), 2, 2 * MS, 7, NO_LIMIT);
        pool.insert(id(3), 9, 1 * MS, 9, NO_LIMIT);
        double q = PrequalConfig.DEFAULTS.qRif();
        pool.removeOne(q);
        assertThat(replicas(pool)).containsExactlyInAnyOrder(id(0), id(1), id(2));
        pool.removeOne(q);
        assertThat(replicas(pool)).containsExactlyInAnyOrder(id(0), id(2));
        // No probe is hot now (the threshold still comes from the four answers): the worst is the slowest.
        pool.removeOne(q);
        assertThat(replicas(pool)).containsExactly(id(2));
    }

    @Test
    void insert_fullPool_dropsItsOldestProbe() {
        PrequalPolicy.Pool pool = new PrequalPolicy.Pool(2);
        pool.insert(id(0), 0, MS, 10, NO_LIMIT);
        pool.insert(id(1), 0, MS, 5, NO_LIMIT);
        pool.insert(id(2), 0, MS, 20, NO_LIMIT);
        assertThat(replicas(pool)).containsExactlyInAnyOrder(id(0), id(2));
    }

    @Test
    void choose_probesOlderThanOneSecond_areGone_andAnEmptyPoolPicksUniformly() {
        // One probe, received at 0: still used at 1 s, gone 1 ns later; then the pool is empty and the
        // choice is uniformly random over the five endpoints.
        PrequalPolicy.Pool pool = policy.pool(from, b);
        pool.insert(id(4), 0, MS, 0, NO_LIMIT);
        assertThat(policy.choose(from, b, 1_000 * MS)).isSameAs(b.replicas[4]);
        pool.insert(id(4), 0, MS, 0, NO_LIMIT);
        int[] counts = new int[model.replicas.length];
        int picks = 50_000;
        for (int i = 0; i < picks; i++) {
            long now = 1_000 * MS + 1 + i;
            pool.size = 0;
            if (i == 0) {
                pool.insert(id(4), 0, MS, 0, NO_LIMIT);
            }
            counts[policy.choose(from, b, now).id]++;
        }
        for (SimReplica replica : b.replicas) {
            assertThat(counts[replica.id] / (double) picks).isCloseTo(0.2, within(0.01));
        }
    }

    @Test
    void choose_sendsThreeProbesToDistinctEndpoints_answeredAfterTheLinkBothWays() {
        // A call at 0 sends r_probe = 3 probes to three different replicas; each answer comes back after
        // the link's delay twice (a jitter of ±10 % each way) with the replica's RIF at arrival.
        for (SimReplica replica : b.replicas) {
            replica.inFlight = replica.id % 7;
        }
        policy.choose(from, b, 0);
        double minRoundTrip = Double.MAX_VALUE;
        double maxRoundTrip = 0;
        for (SimReplica replica : b.replicas) {
            double oneWay = model.delayMeanNanos[from.node.index][replica.node.index];
            minRoundTrip = Math.min(minRoundTrip, 2 * 0.9 * oneWay);
            maxRoundTrip = Math.max(maxRoundTrip, 2 * 1.1 * oneWay);
        }
        PrequalPolicy.Pool pool = policy.pool(from, b);
        model.calendar.runUntil((long) minRoundTrip - 1);
        assertThat(pool.size).isZero();
        model.calendar.runUntil((long) maxRoundTrip + 1);
        assertThat(pool.size).isEqualTo(3);
        Set<Integer> probed = new HashSet<>();
        for (int i = 0; i < pool.size; i++) {
            probed.add(pool.replica[i]);
            assertThat(pool.rif[i]).isEqualTo(pool.replica[i] % 7);
            assertThat(pool.latencyNanos[i]).isZero(); // no request served yet: no latency to report
        }
        assertThat(probed).hasSize(3);
    }

    @Test
    void probeToACrashedReplica_isNeverAnswered() {
        for (SimReplica replica : b.replicas) {
            replica.down = true;
        }
        for (int i = 0; i < 10; i++) {
            policy.choose(from, b, 0);
        }
        model.calendar.runUntil(1_000 * MS);
        assertThat(policy.pool(from, b).size).isZero();
    }

    @Test
    void serverLatency_medianOfTheLast16_atTheNearestRifWithSamples() {
        PrequalPolicy.ServerLatency latency = new PrequalPolicy.ServerLatency();
        assertThat(latency.estimate(3)).isZero();
        latency.record(2, 5);
        latency.record(2, 1);
        latency.record(2, 3);
        latency.record(6, 10);
        assertThat(latency.estimate(2)).isEqualTo(3);
        assertThat(latency.estimate(5)).isEqualTo(10); // RIF 6 is one away, RIF 2 three
        assertThat(latency.estimate(4)).isEqualTo(3); // 2 and 6 both two away: the lower RIF first
        for (int i = 0; i < 16; i++) {
            latency.record(2, 100 + i); // the 16 newest push the first three out
        }
        assertThat(latency.estimate(2)).isEqualTo(107.5);
        latency.reset();
        assertThat(latency.estimate(2)).isZero();
    }

    @Test
    void reuseBudget_isEquationOne_andUnlimitedWhenProbesCannotOutpaceRemovals() {
        // m = 16, r_probe = 3, r_remove = 1, δ = 1. n = 100: (1 + 1) ÷ (0.84 · 3 − 1) = 2 ÷ 1.52 = 1.316;
        // n = 1000: 2 ÷ (0.984 · 3 − 1) = 1.025; n = 20 or 5: the denominator is ≤ 0, no limit.
        assertThat(PrequalPolicy.reuseBudget(PrequalConfig.DEFAULTS, 100)).isCloseTo(2 / 1.52, within(1e-9));
        assertThat(PrequalPolicy.reuseBudget(PrequalConfig.DEFAULTS, 1_000)).isCloseTo(2 / 1.952, within(1e-9));
        assertThat(PrequalPolicy.reuseBudget(PrequalConfig.DEFAULTS, 20)).isInfinite();
        assertThat(PrequalPolicy.reuseBudget(PrequalConfig.DEFAULTS, 5)).isInfinite();
        // Few removals and many probes: the budget's floor of 1.
        assertThat(PrequalPolicy.reuseBudget(new PrequalConfig(0.84, 16, 16, 1_000, 0, 1), 1_000))
                .isEqualTo(1);
    }

    @Test
    void choose_steersCallsToTheColdFastReplica() {
        // Statistics: five fresh probes at equal RIF (all cold), one of them the fastest: every call
        // goes to that replica, whichever probes the removals took the call before.
        PrequalPolicy.Pool pool = policy.pool(from, b);
        int[] counts = new int[model.replicas.length];
        for (int i = 0; i < 1_000; i++) {
            pool.size = 0;
            for (int r = 0; r < 5; r++) {
                pool.insert(id(r), 1, (r == 3 ? 1 : 5) * MS, i, NO_LIMIT);
            }
            counts[policy.choose(from, b, i).id]++;
        }
        assertThat(counts[id(3)]).isEqualTo(1_000);
    }

    @Test
    void config_defaultsAreThePapers_andBadValuesAreNamed() {
        assertThat(PrequalConfig.DEFAULTS.qRif()).isCloseTo(0.8409, within(1e-4));
        assertThat(PrequalConfig.DEFAULTS.probesPerQuery()).isEqualTo(3);
        assertThat(PrequalConfig.DEFAULTS.poolSize()).isEqualTo(16);
        assertThatThrownBy(() -> PrequalConfig.DEFAULTS.withQRif(1.5)).hasMessageContaining("qRif : 1.5");
        assertThatThrownBy(() -> PrequalConfig.DEFAULTS.withProbesPerQuery(0))
                .hasMessageContaining("probesPerQuery : 0 (expected: a number in (0, 16])");
    }

    private static Set<Integer> replicas(PrequalPolicy.Pool pool) {
        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < pool.size; i++) {
            ids.add(pool.replica[i]);
        }
        return ids;
    }
}
