package dev.tailor.sim.cluster;

import dev.tailor.sim.des.EventCalendar;
import java.util.Arrays;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * Prequal (Wydrowski, Kleinberg, Rumble, Archer: "Load is not what you should balance: Introducing
 * Prequal", NSDI 2024) in each calling proxy: with every call it sends asynchronous probes to random
 * endpoints of the callee; each answer — the replica's requests in flight (RIF) and its estimate of a
 * request's latency at that RIF — goes into the proxy's probe pool for the callee, where it may serve
 * several later calls. A call goes to the pooled replica chosen by the hot-cold lexicographic rule:
 * among the probes whose RIF is at most the Q_RIF quantile of the RIF distribution ("cold"), the
 * lowest latency; if every probe is hot, the lowest RIF.
 *
 * <p>Rules, with the paper's section where we could read it (the PDF is not in our reference store;
 * its sentences were read as quoted by two public reproductions, sathwick-p/prequal's
 * {@code benchmark/paper-divergences.md} and the replication report of giacbusc/loadbalancer):
 * <ol>
 *   <li>Probes are asynchronous: issued when a call is made, off its path; answers serve later calls
 *       (§4). A probe travels the link both ways and is answered by the replica on arrival.</li>
 *   <li>{@code probesPerQuery} = 3, "our baseline probe rate" (§5); targets drawn uniformly at random
 *       without replacement from the endpoints (§4). A fractional rate is rounded at random.</li>
 *   <li>A probe answer carries the RIF and the replica's latency estimate: the median of recent
 *       latencies of requests that arrived at (or near) the current RIF (§4). Our reading: the last 16
 *       server-side latencies per RIF value, the nearest RIF with samples when the current one has
 *       none, 0 for a replica without any (a new process).</li>
 *   <li>Pool of at most m = 16 probes, "16 suffices" (§4). Our reading: one probe per replica (a new
 *       answer replaces the replica's older one), which Eq. 1's factor (1 − m/n) implies; a full pool
 *       drops its oldest probe.</li>
 *   <li>A probe is usable for at most b_reuse calls, b_reuse = max(1, (1 + δ) ÷ ((1 − m/n)·r_probe −
 *       r_remove)) (§4, Eq. 1), rounded at random. Our reading: δ = 1 (as prequal-rs), m/n taken as
 *       min(m, n)/n, and no limit when the denominator is not positive (the formula's limit as it falls
 *       to 0: probes cannot outpace removals, so reuse is what keeps the pool alive) — which is every
 *       bundled scenario: n = 5 endpoints per component.</li>
 *   <li>Probes older than 1 s are dropped (§4's ageing; 1 s as sathwick-p/prequal and prequal-rs read it).</li>
 *   <li>With each call r_remove = 1 probe is removed, alternately the worst and the oldest (§4; the value 1
 *       as the reproductions read it).
 *       Our reading: the worst is the hot probe with the highest RIF, or, if none is hot, the cold one
 *       with the highest latency — the end of the rule's own order.</li>
 *   <li>Hot-cold lexicographic selection with Q_RIF = 2^−0.25 ≈ 0.84 (§5: "Unless otherwise specified,
 *       we set Q_RIF = 2^(−0.25)"; §5.2 finds [0.6, 0.9] good). A probe is hot when its RIF exceeds the
 *       quantile. Our reading: the RIF distribution is estimated from the last 16 probe answers of the
 *       pool, linearly interpolated.</li>
 *   <li>An empty pool falls back to a uniformly random endpoint (as quoted from the paper).</li>
 *   <li>Our reading: a probe used for a call has its RIF raised by one (the call now in flight there),
 *       as prequal-rs does, so one cold probe does not draw every call of a burst.</li>
 *   <li>Our reading: probes cost the replica no CPU, and a crashed replica answers none.</li>
 * </ol>
 *
 * <p>Maintainer note: one {@link Pool} per (calling proxy, callee), arrays of at most 16 entries
 * scanned linearly (cheaper than any structure at this size); probe messages are reused events from a
 * free list. A call costs r_probe probes of two calendar events each, about twice the events of the
 * call itself.
 */
final class PrequalPolicy implements RoutingPolicy {

    /** Probe answers per RIF value a replica keeps for its latency estimate (our reading). */
    static final int LATENCIES_PER_RIF = 16;
    /** RIF values with their own latency record; higher RIFs share the last one. */
    static final int RIF_BUCKETS = 128;

    private final PrequalConfig config;
    private final long maxAgeNanos;
    private ClusterModel model;
    private UniformRandomProvider rng;
    private UniformRandomProvider probeJitter;
    private Probe free;

    PrequalPolicy(PrequalConfig config) {
        this.config = config;
        this.maxAgeNanos = Math.round(config.maxAgeMillis() * 1e6);
    }

    @Override
    public void start(ClusterModel model) {
        this.model = model;
        this.rng = model.routingRng;
        this.probeJitter = model.streams.stream("probe-jitter");
        for (SimReplica replica : model.replicas) {
            replica.serverLatency = new ServerLatency();
        }
        for (Proxy proxy : model.proxies) {
            proxy.policyState = new Pool[model.components.length];
        }
    }

    /** The pool of {@code from} for {@code callee}, created on first use. */
    Pool pool(Proxy from, SimComponent callee) {
        Pool[] pools = (Pool[]) from.policyState;
        Pool pool = pools[callee.index];
        if (pool == null) {
            pool = pools[callee.index] = new Pool(config.poolSize());
        }
        if (pool.endpointsVersion != callee.endpointsVersion) {
            pool.endpointsChanged(callee, config);
        }
        return pool;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        Pool pool = pool(from, callee);
        pool.expire(nowNanos - maxAgeNanos);
        SimReplica chosen;
        if (pool.size == 0) {
            chosen = callee.endpoints[rng.nextInt(callee.endpoints.length)];
        } else {
            int i = pool.select(config.qRif());
            chosen = model.replicas[pool.replica[i]];
            pool.use(i);
        }
        for (int r = randomRound(config.removesPerQuery()); r > 0 && pool.size > 0; r--) {
            pool.removeOne(config.qRif());
        }
        probe(from, callee, pool, nowNanos);
        return chosen;
    }

    /** Sends this call's probes: r_probe distinct endpoints, uniformly at random. */
    private void probe(Proxy from, SimComponent callee, Pool pool, long nowNanos) {
        SimReplica[] endpoints = callee.endpoints;
        int count = Math.min(randomRound(config.probesPerQuery()), endpoints.length);
        int[] order = pool.scratch(endpoints.length);
        for (int k = 0; k < count; k++) {
            int j = k + rng.nextInt(endpoints.length - k);
            int swap = order[k];
            order[k] = order[j];
            order[j] = swap;
            SimReplica target = endpoints[order[k]];
            Probe probe = free == null ? new Probe() : free;
            free = probe.nextFree;
            probe.nextFree = null;
            probe.pool = pool;
            probe.from = from;
            probe.target = target;
            probe.answered = false;
            model.calendar.schedule(probe, nowNanos + delayNanos(from.node, target.node));
        }
    }

    private int randomRound(double rate) {
        int whole = (int) rate;
        double fraction = rate - whole;
        return fraction > 0 && rng.nextDouble() < fraction ? whole + 1 : whole;
    }

    private long delayNanos(SimNode from, SimNode to) {
        double mean = model.delayMeanNanos[from.index][to.index];
        double jitter = model.scenario.linkJitter();
        return Math.round(mean * (jitter == 0 ? 1 : 1 + jitter * (2 * probeJitter.nextDouble() - 1)));
    }

    /** A probe message: to the replica, then back with its answer. */
    private final class Probe extends EventCalendar.Event {
        Pool pool;
        Proxy from;
        SimReplica target;
        boolean answered;
        int rif;
        double latencyNanos;
        Probe nextFree;

        @Override
        protected void fire(long nowNanos) {
            if (!answered) {
                if (target.down) {
                    release(); // a crashed replica answers nothing
                    return;
                }
                answered = true;
                rif = target.inFlight;
                latencyNanos = target.serverLatency.estimate(rif);
                model.calendar.schedule(this, nowNanos + delayNanos(target.node, from.node));
                return;
            }
            if (target.ready || pool.allEndpoints) {
                pool.insert(target.id, rif, latencyNanos, nowNanos, reuseBudget(pool));
            }
            release();
        }

        private void release() {
            pool = null;
            from = null;
            target = null;
            nextFree = free;
            free = this;
        }
    }

    /** Eq. 1's b_reuse for the pool, rounded at random; {@link Integer#MAX_VALUE} for no limit. */
    private int reuseBudget(Pool pool) {
        double budget = pool.reuseBudget;
        if (Double.isInfinite(budget)) {
            return Integer.MAX_VALUE;
        }
        int whole = (int) budget;
        return whole + (rng.nextDouble() < budget - whole ? 1 : 0);
    }

    /**
     * b_reuse of Eq. 1 for {@code endpoints} replicas: max(1, (1 + δ) ÷ ((1 − m/n)·r_probe − r_remove)),
     * with m/n at most 1; infinite (no limit) when the denominator is not positive.
     */
    static double reuseBudget(PrequalConfig config, int endpoints) {
        double fill = Math.min(config.poolSize(), endpoints) / (double) endpoints;
        double denominator = (1 - fill) * config.probesPerQuery() - config.removesPerQuery();
        return denominator <= 0 ? Double.POSITIVE_INFINITY : Math.max(1, (1 + config.reuseDelta()) / denominator);
    }

    /**
     * One proxy's probe pool for one callee: at most m probes, one per replica, and the RIFs of the
     * last m answers, from which the hot threshold comes.
     */
    static final class Pool {
        final int[] replica;
        final int[] rif;
        final double[] latencyNanos;
        final long[] receivedNanos;
        final int[] usesLeft;
        int size;
        /** RIFs of the last answers (a ring), for the quantile. */
        private final int[] history;

        private int historyCount;
        private int historyNext;
        private final int[] sorted;
        private double threshold;
        private boolean thresholdStale = true;
        private boolean removeWorstNext = true;
        int endpointsVersion = -1;
        boolean allEndpoints;
        double reuseBudget;
        private int[] scratch = new int[0];

        Pool(int capacity) {
            replica = new int[capacity];
            rif = new int[capacity];
            latencyNanos = new double[capacity];
            receivedNanos = new long[capacity];
            usesLeft = new int[capacity];
            history = new int[capacity];
            sorted = new int[capacity];
        }

        void endpointsChanged(SimComponent callee, PrequalConfig config) {
            endpointsVersion = callee.endpointsVersion;
            allEndpoints = callee.endpoints.length == callee.replicas.length;
            reuseBudget = PrequalPolicy.reuseBudget(config, callee.endpoints.length);
            for (int i = size - 1; i >= 0; i--) {
                boolean member = allEndpoints;
                for (SimReplica endpoint : callee.endpoints) {
                    member |= endpoint.id == replica[i];
                }
                if (!member) {
                    remove(i);
                }
            }
        }

        /** 0, 1, ..., n − 1 in a reusable array, for sampling without replacement. */
        int[] scratch(int n) {
            if (scratch.length != n) {
                scratch = new int[n];
            }
            for (int i = 0; i < n; i++) {
                scratch[i] = i;
            }
            return scratch;
        }

        /** Adds an answer: replaces the replica's older probe, or the oldest probe of a full pool. */
        void insert(int replicaId, int answerRif, double answerLatencyNanos, long nowNanos, int uses) {
            history[historyNext] = answerRif;
            historyNext = (historyNext + 1) % history.length;
            historyCount = Math.min(historyCount + 1, history.length);
            thresholdStale = true;
            int slot = -1;
            for (int i = 0; i < size; i++) {
                if (replica[i] == replicaId) {
                    slot = i;
                }
            }
            if (slot < 0) {
                if (size == replica.length) {
                    remove(oldest());
                }
                slot = size++;
            }
            replica[slot] = replicaId;
            rif[slot] = answerRif;
            latencyNanos[slot] = answerLatencyNanos;
            receivedNanos[slot] = nowNanos;
            usesLeft[slot] = Math.max(1, uses);
        }

        /** Drops the probes received before {@code oldestNanos}. */
        void expire(long oldestNanos) {
            for (int i = size - 1; i >= 0; i--) {
                if (receivedNanos[i] < oldestNanos) {
                    remove(i);
                }
            }
        }

        /** The Q_RIF quantile of the recent answers' RIFs, linearly interpolated. */
        double threshold(double qRif) {
            if (thresholdStale) {
                System.arraycopy(history, 0, sorted, 0, historyCount);
                Arrays.sort(sorted, 0, historyCount);
                double position = qRif * (historyCount - 1);
                int low = (int) Math.floor(position);
                int high = Math.min(historyCount - 1, low + 1);
                threshold = historyCount == 0
                        ? Double.POSITIVE_INFINITY
                        : sorted[low] + (position - low) * (sorted[high] - sorted[low]);
                thresholdStale = false;
            }
            return threshold;
        }

        /** The hot-cold lexicographic choice among a non-empty pool: an index. */
        int select(double qRif) {
            double hot = threshold(qRif);
            int best = -1;
            for (int i = 0; i < size; i++) {
                if (rif[i] <= hot
                        && (best < 0
                                || latencyNanos[i] < latencyNanos[best]
                                || (latencyNanos[i] == latencyNanos[best] && rif[i] < rif[best]))) {
                    best = i;
                }
            }
            if (best >= 0) {
                return best;
            }
            for (int i = 0; i < size; i++) {
                if (best < 0 || rif[i] < rif[best] || (rif[i] == rif[best] && latencyNanos[i] < latencyNanos[best])) {
                    best = i;
                }
            }
            return best;
        }

        /** The probe at {@code i} routes a call: its RIF counts the call, and it has one use fewer. */
        void use(int i) {
            rif[i]++;
            if (usesLeft[i] != Integer.MAX_VALUE && --usesLeft[i] <= 0) {
                remove(i);
            }
        }

        /** Removes one probe, the worst and the oldest in turn. */
        void removeOne(double qRif) {
            remove(removeWorstNext ? worst(qRif) : oldest());
            removeWorstNext = !removeWorstNext;
        }

        /** The hot probe with the highest RIF, else the one with the highest latency. */
        int worst(double qRif) {
            double hot = threshold(qRif);
            int worst = -1;
            for (int i = 0; i < size; i++) {
                if (rif[i] > hot
                        && (worst < 0
                                || rif[i] > rif[worst]
                                || (rif[i] == rif[worst] && latencyNanos[i] > latencyNanos[worst]))) {
                    worst = i;
                }
            }
            if (worst >= 0) {
                return worst;
            }
            for (int i = 0; i < size; i++) {
                if (worst < 0
                        || latencyNanos[i] > latencyNanos[worst]
                        || (latencyNanos[i] == latencyNanos[worst] && rif[i] > rif[worst])) {
                    worst = i;
                }
            }
            return worst;
        }

        int oldest() {
            int oldest = 0;
            for (int i = 1; i < size; i++) {
                if (receivedNanos[i] < receivedNanos[oldest]) {
                    oldest = i;
                }
            }
            return oldest;
        }

        private void remove(int i) {
            int last = --size;
            replica[i] = replica[last];
            rif[i] = rif[last];
            latencyNanos[i] = latencyNanos[last];
            receivedNanos[i] = receivedNanos[last];
            usesLeft[i] = usesLeft[last];
        }
    }

    /**
     * A replica's record of its recent server-side latencies by the RIF each request found when it
     * arrived, and the estimate a probe gets: the median of the last {@value #LATENCIES_PER_RIF} at the
     * current RIF, or at the nearest RIF with samples; 0 when there are none.
     */
    static final class ServerLatency {
        private final double[][] samples = new double[RIF_BUCKETS][];
        private final int[] count = new int[RIF_BUCKETS];
        private final int[] next = new int[RIF_BUCKETS];
        private final double[] median = new double[RIF_BUCKETS];
        private final boolean[] medianStale = new boolean[RIF_BUCKETS];
        private final double[] scratch = new double[LATENCIES_PER_RIF];
        private int nonEmpty;

        /** A request that arrived at RIF {@code rif} took {@code latencyNanos} at the replica. */
        void record(int rif, double latencyNanos) {
            int b = Math.min(rif, RIF_BUCKETS - 1);
            if (samples[b] == null) {
                samples[b] = new double[LATENCIES_PER_RIF];
            }
            if (count[b] == 0) {
                nonEmpty++;
            }
            samples[b][next[b]] = latencyNanos;
            next[b] = (next[b] + 1) % LATENCIES_PER_RIF;
            count[b] = Math.min(count[b] + 1, LATENCIES_PER_RIF);
            medianStale[b] = true;
        }

        /** The latency estimate a probe answers at RIF {@code rif}, ns. */
        double estimate(int rif) {
            if (nonEmpty == 0) {
                return 0;
            }
            int b = Math.min(rif, RIF_BUCKETS - 1);
            for (int d = 0; d < RIF_BUCKETS; d++) {
                if (b - d >= 0 && count[b - d] > 0) {
                    return medianOf(b - d);
                }
                if (b + d < RIF_BUCKETS && count[b + d] > 0) {
                    return medianOf(b + d);
                }
            }
            return 0;
        }

        /** Forgets everything (a new process after a restart). */
        void reset() {
            Arrays.fill(count, 0);
            Arrays.fill(next, 0);
            nonEmpty = 0;
        }

        private double medianOf(int b) {
            if (medianStale[b]) {
                int n = count[b];
                System.arraycopy(samples[b], 0, scratch, 0, n);
                Arrays.sort(scratch, 0, n);
                median[b] = n % 2 == 1 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
                medianStale[b] = false;
            }
            return median[b];
        }
    }
}
