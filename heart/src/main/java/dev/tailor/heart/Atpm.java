package dev.tailor.heart;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * ATPM, stage 1 of HEART: each replica group's share of its component's traffic, proportional to
 * the group's capacity under an adaptively smoothed load estimate. Pure: the result depends only on
 * the groups, the previous estimates and the configuration.
 *
 * <p>Contract: shares of a component are non-negative and sum to 1 (up to rounding of doubles); a
 * group whose measured CPU per request rises, all else (and its history) equal, never gains share.
 * With {@link HeartConfig#outlierFilter()} one round's measurement, however far off, moves no
 * estimate whose two previous measurements agree. With a share floor
 * ({@link HeartConfig#minShareOfEqualSplit()}) a group's share is at least
 * min(floor × replicas ÷ the component's replicas, capacity ÷ demand). Whenever the component's demand
 * (Σ of its incoming call rates) is at most the Σ of its groups' capacities, no group's share × demand
 * exceeds its capacity; when it is more, shares are exactly proportional to capacity and the
 * shortfall is reported.
 */
/*
 * Maintainer note.
 *
 * Load. A group's measurement this round is x = Σ cpuCores ÷ Σ requestsPerSecond over its ready
 * replicas that served requests and have both metrics (CPU-seconds per request). Replicas without
 * requests are excluded: their idle CPU says nothing about the cost of a request [HEART §ATPM].
 * x = 0 (no CPU recorded while requests were served), or below 1 ns of CPU per request, is treated
 * as no data, never as free capacity.
 *
 * Trend. The estimate L is an EWMA, L ← α·x + (1 − α)·L, whose weight α adapts every round with the
 * Trigg–Leach tracking signal [1]: with forecast error e = x − L,
 *     E ← β·e + (1 − β)·E,   M ← β·|e| + (1 − β)·M,   α = |E| ÷ M, clamped to [αmin, αmax].
 * A persistent drift keeps e of one sign, so |E| approaches M and α rises towards αmax: the estimate
 * follows the trend. Alternating noise makes E average out while M does not, so α falls towards
 * αmin: the estimate ignores the noise. The paper names the adaptive weight and the clamp [0.2, 0.8]
 * but not the signal; Trigg–Leach is our reading. M = 0 (no error seen yet) gives α = αmin.
 *
 * The weight is lagged: round t's update uses the α the signal chose through round t − 1, and only
 * then does the signal take in round t's error. With the signal of the same round (as in [1]) the
 * estimate is not monotone in the measurement: after a downward drift, a larger jump up cancels
 * more of E, lowers α, and moves the estimate less than a smaller jump does (property tests found
 * it), so a group that needs more CPU could gain traffic. Lagging costs one round of reaction to a
 * sudden change, the usual trade-off of adaptive-response smoothing [2].
 *
 * Missing data [docs/design.md#atpm]: a known group without a measurement keeps its previous estimate; a new
 * group without one takes the mean estimate of the component's groups that have one (it is not
 * remembered, so its first real measurement starts its EWMA); when no group has an estimate, traffic
 * is split equally per replica. State is dropped for groups that have no replica at all any more.
 *
 * Capacity = Σ CPU limit in cores (when every replica of the group has one) or the replica count,
 * divided by L: the requests per second the group can serve. Share = capacity ÷ Σ capacity.
 *
 * Departures from the paper (each a HeartConfig option, off in HeartConfig.PAPER; our reading):
 *
 * Outlier filter. The EWMA is fed the median of the group's last three measurements (missing ones,
 * in a group's first rounds, are its current estimate), a running median of three [3]. One round
 * far off, in either direction, is never the median while the two rounds around it agree; a real
 * step is the median from its second round on, so the filter costs one round of reaction. The
 * median is non-decreasing in each argument, so the contract's monotonicity survives.
 *
 * Idle CPU. CPU = idle + cost × rate: a replica's background work (GC, health checks, timers) is
 * charged to its requests by Σ cpu ÷ Σ requests, and the fewer the requests the larger the error,
 * so a group at low traffic looks slow, gets less, and looks slower still. The fit uses the group's
 * last idleFitRounds measured rounds (same replica count): Theil–Sen [4], the median of the slopes
 * between rounds whose rates differ by at least idleFitMinRateRatio, intercept = median of
 * cpu − slope × rate, idle = max(0, intercept). It is conclusive only when the slope is positive and
 * no single round is part of every pair used, so one outlier round (a 10x dip in requests with the
 * same CPU would give a flat line) can never make a fit by itself. An inconclusive fit keeps the
 * idle found before. Like α, the idle CPU is lagged: round t subtracts what the rounds before it
 * found, so the measurement stays increasing in this round's CPU. At most idleMaxCpuFraction of a
 * round's CPU is subtracted, bounding how much cheaper a wrong fit makes a group look. At steady
 * traffic no pair qualifies and the measurement is the paper's ratio.
 *
 * Floor and capacity. Demand D = Σ of the component's incoming call rates. floor_i =
 * min(minShareOfEqualSplit × replicas_i ÷ replicas, capacity_i ÷ D); share_i = max(floor_i,
 * λ × capacity_i) with λ such that the shares sum to 1 (water-filling: groups below their floor are
 * fixed at it, λ recomputed over the rest until none is added). If a floor binds, floor_i > λ ×
 * capacity_i and floor_i ≤ capacity_i ÷ D give λ < 1 ÷ D, so nobody is planned above capacity while
 * Σ capacity ≥ D; when Σ capacity < D, λ = 1 ÷ Σ capacity exceeds every floor ÷ capacity, so no
 * floor binds and shares are proportional to capacity: every group is overloaded by the same
 * factor, the least bad plan, and D − Σ capacity is the shortfall. A group without a load of its own
 * (the mean of the others') has no floor: its capacity moves with the other groups' loads, and a
 * floor capped by it would let one group's rising load lower that floor and raise the group's own
 * share (a property test found it). Such a group has a measurement to come anyway.
 *
 * [1] D. W. Trigg, A. G. Leach, "Exponential smoothing with an adaptive response rate",
 *     Operational Research Quarterly 18(1), 1967.
 * [2] E. S. Gardner, "Exponential smoothing: the state of the art", Journal of Forecasting 4(1),
 *     1985, on the instability of same-period adaptive weights.
 * [3] J. W. Tukey, "Exploratory Data Analysis", Addison-Wesley, 1977, running medians.
 * [4] P. K. Sen, "Estimates of the regression coefficient based on Kendall's tau", JASA 63(324),
 *     1968 (Theil–Sen slope).
 */
final class Atpm {

    /**
     * Loads below this, CPU-seconds per request (1 ns of CPU per request), are not measurements but
     * rounding or unit mistakes; they count as no data, like a load of 0 (our bound). It keeps every
     * capacity finite: at most {@link SnapshotValidator#MAX_CORES} ÷ this.
     */
    static final double MIN_LOAD_CPU_SECONDS_PER_REQUEST = 1e-9;

    private Atpm() {}

    /** ATPM's output for one component: shares, and the estimates to remember. */
    record Result(ComponentShares shares, Map<String, GroupEstimate> nextEstimates) {}

    /**
     * @param demandRequestsPerSecond Σ of the component's incoming call rates; 0 when it has none
     *                                (then no floor is capped and no shortfall is reported)
     */
    static Result compute(
            String component,
            List<Group> groups,
            Map<String, GroupEstimate> previous,
            Set<String> presentGroupIds,
            double demandRequestsPerSecond,
            HeartConfig config) {
        int n = groups.size();
        Double[] observed = new Double[n];
        double[] load = new double[n];
        Double[] alphas = new Double[n];
        GroupShare.Basis[] basis = new GroupShare.Basis[n];
        Map<String, GroupEstimate> next = new TreeMap<>();

        // Remember groups that still have replicas (ready or not) but are not targets this round.
        previous.forEach((id, estimate) -> {
            if (presentGroupIds.contains(id)) {
                next.put(id, estimate);
            }
        });

        double validSum = 0;
        int validCount = 0;
        for (int i = 0; i < n; i++) {
            Group group = groups.get(i);
            LoadSample sample = measure(group);
            GroupEstimate before = previous.get(group.id());
            if (sample != null) {
                observed[i] = sample.cpuCores() / sample.requestsPerSecond();
                GroupEstimate after = estimate(before, sample, config);
                next.put(group.id(), after);
                load[i] = after.loadCpuSecondsPerRequest();
                alphas[i] = before == null
                        ? null
                        : Math.min(config.alphaMax(), Math.max(config.alphaMin(), before.alpha()));
                basis[i] = before == null ? GroupShare.Basis.FIRST_MEASUREMENT : GroupShare.Basis.MEASURED;
            } else if (before != null) {
                load[i] = before.loadCpuSecondsPerRequest();
                basis[i] = GroupShare.Basis.CARRIED;
            } else {
                load[i] = Double.NaN;
                continue;
            }
            validSum += load[i];
            validCount++;
        }

        double[] capacity = new double[n];
        double capacitySum = 0;
        int replicaSum = 0;
        for (Group group : groups) {
            replicaSum += group.replicas().size();
        }
        double[] share = new double[n];
        if (validCount > 0) {
            double mean = validSum / validCount;
            for (int i = 0; i < n; i++) {
                if (Double.isNaN(load[i])) {
                    load[i] = mean;
                    basis[i] = GroupShare.Basis.MEAN_OF_VALID;
                }
                capacity[i] = capacityCores(groups.get(i)) / load[i];
                capacitySum += capacity[i];
            }
            double[] floor = new double[n];
            for (int i = 0; i < n; i++) {
                if (basis[i] == GroupShare.Basis.MEAN_OF_VALID) {
                    continue; // no load of its own: see the maintainer note, "Floor and capacity"
                }
                floor[i] =
                        config.minShareOfEqualSplit() * groups.get(i).replicas().size() / replicaSum;
                if (demandRequestsPerSecond > 0) {
                    floor[i] = Math.min(floor[i], capacity[i] / demandRequestsPerSecond);
                }
            }
            if (!config.latencyOptimalShares()
                    || !squareRootRule(capacity, servers(groups), floor, demandRequestsPerSecond, share)) {
                waterFill(capacity, floor, share);
            }
        } else {
            for (int i = 0; i < n; i++) {
                share[i] = (double) groups.get(i).replicas().size() / replicaSum;
            }
        }

        List<GroupShare> shares = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Group group = groups.get(i);
            List<String> pods = group.replicas().stream().map(Replica::pod).toList();
            if (validCount > 0) {
                shares.add(new GroupShare(
                        group.id(),
                        group.node(),
                        pods,
                        observed[i],
                        load[i],
                        alphas[i],
                        capacity[i],
                        share[i],
                        basis[i]));
            } else {
                shares.add(new GroupShare(
                        group.id(),
                        group.node(),
                        pods,
                        null,
                        null,
                        null,
                        null,
                        share[i],
                        GroupShare.Basis.EQUAL_SPLIT));
            }
        }
        Double demand = demandRequestsPerSecond > 0 ? demandRequestsPerSecond : null;
        Double totalCapacity = validCount > 0 ? capacitySum : null;
        Double shortfall =
                demand != null && totalCapacity != null && demand > totalCapacity ? demand - totalCapacity : null;
        return new Result(new ComponentShares(component, shares, demand, totalCapacity, shortfall), next);
    }

    /** {@link #servers(Group)} of each group. */
    private static double[] servers(List<Group> groups) {
        double[] k = new double[groups.size()];
        for (int i = 0; i < k.length; i++) {
            k[i] = servers(groups.get(i));
        }
        return k;
    }

    /**
     * How many servers a group is in the queueing models (square-root rule, queue-aware routing):
     * one per replica, or per core of a CPU limit above one core (a replica limited to c cores runs up
     * to c requests at full speed), so that servers ÷ capacity is the service time of one request.
     * Our reading.
     */
    static double servers(Group group) {
        double k = 0;
        for (Replica replica : group.replicas()) {
            if (replica.cpuLimitCores() == null) {
                return group.replicas().size();
            }
            k += Math.max(1, replica.cpuLimitCores());
        }
        return k;
    }

    /**
     * Latency-optimal shares of {@code demand} over groups of k_i replicas, each an M/M/1 server of
     * rate μ_i ÷ k_i (μ_i = the group's capacity): the square-root rule λ_i = μ_i − √(k_i μ_i) · θ,
     * θ = (Σ μ − D) ÷ Σ √(k μ) over the groups that get a positive rate (the others get nothing),
     * with floors as in {@link #waterFill}: a group whose rule share falls below its floor is fixed at
     * the floor and the rule shares the rest. Returns false (share untouched) where the rule does not
     * apply: no demand, or demand at or beyond what the groups left after the floors can serve.
     */
    static boolean squareRootRule(double[] capacity, double[] servers, double[] floor, double demand, double[] share) {
        int n = capacity.length;
        if (!(demand > 0)) {
            return false;
        }
        boolean[] atFloor = new boolean[n];
        double[] rate = new double[n];
        while (true) {
            double fixedShare = 0;
            for (int i = 0; i < n; i++) {
                if (atFloor[i]) {
                    fixedShare += floor[i];
                }
            }
            double rest = demand * (1 - fixedShare);
            boolean[] active = new boolean[n];
            double capacityLeft = 0;
            for (int i = 0; i < n; i++) {
                active[i] = !atFloor[i] && capacity[i] > 0;
                if (active[i]) {
                    capacityLeft += capacity[i];
                }
            }
            if (!(rest < capacityLeft)) {
                return false;
            }
            // Drop groups the rule gives nothing until none is dropped: θ only grows as groups leave.
            double theta = 0;
            for (boolean dropped = true; dropped; ) {
                double mu = 0;
                double roots = 0;
                for (int i = 0; i < n; i++) {
                    if (active[i]) {
                        mu += capacity[i];
                        roots += Math.sqrt(servers[i] * capacity[i]);
                    }
                }
                theta = (mu - rest) / roots;
                dropped = false;
                for (int i = 0; i < n; i++) {
                    if (active[i] && capacity[i] - Math.sqrt(servers[i] * capacity[i]) * theta <= 0) {
                        active[i] = false;
                        dropped = true;
                    }
                }
            }
            boolean added = false;
            for (int i = 0; i < n; i++) {
                rate[i] = active[i] ? capacity[i] - Math.sqrt(servers[i] * capacity[i]) * theta : 0;
                if (!atFloor[i] && rate[i] / demand < floor[i]) {
                    atFloor[i] = true;
                    added = true;
                }
            }
            if (!added) {
                break;
            }
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            share[i] = atFloor[i] ? floor[i] : rate[i] / demand;
            sum += share[i];
        }
        for (int i = 0; i < n; i++) {
            share[i] = Math.min(1, share[i] / sum); // Σ = 1 to the rounding of doubles
        }
        return true;
    }

    /**
     * share_i = max(floor_i, λ × capacity_i) with Σ share = 1 (Σ floor &lt; 1). With every floor 0 this
     * is capacity_i ÷ Σ capacity, bit for bit the paper's share.
     */
    private static void waterFill(double[] capacity, double[] floor, double[] share) {
        int n = capacity.length;
        boolean[] atFloor = new boolean[n];
        boolean added = true;
        double fixed = 0;
        double rest = 0;
        while (added) {
            added = false;
            fixed = 0;
            rest = 0;
            for (int i = 0; i < n; i++) {
                if (atFloor[i]) {
                    fixed += floor[i];
                } else {
                    rest += capacity[i];
                }
            }
            if (!(rest > 0)) {
                break; // cannot happen while Σ floor < 1; kept so a bug cannot divide by zero
            }
            for (int i = 0; i < n; i++) {
                if (!atFloor[i] && capacity[i] * (1 - fixed) / rest < floor[i]) {
                    atFloor[i] = true;
                    added = true;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            share[i] = atFloor[i] ? floor[i] : capacity[i] * (1 - fixed) / rest;
        }
    }

    /**
     * Σ cpu and Σ requests over replicas that served requests with both metrics; null = no data
     * (also when their ratio is below {@link #MIN_LOAD_CPU_SECONDS_PER_REQUEST}).
     */
    static LoadSample measure(Group group) {
        double cpu = 0;
        double requests = 0;
        int replicas = 0;
        for (Replica replica : group.replicas()) {
            Double c = replica.cpuCores();
            Double r = replica.requestsPerSecond();
            if (c == null || r == null || !Double.isFinite(c) || !Double.isFinite(r) || r <= 0 || c < 0) {
                continue;
            }
            cpu += c;
            requests += r;
            replicas++;
        }
        if (requests <= 0 || cpu <= 0) {
            return null;
        }
        return cpu / requests >= MIN_LOAD_CPU_SECONDS_PER_REQUEST ? new LoadSample(requests, cpu, replicas) : null;
    }

    /**
     * The group's estimate after this round's sample: the load with the idle CPU found through the
     * previous round subtracted, through the outlier filter, into the EWMA; then the sample joins
     * the remembered ones and the idle CPU is fitted again for the next round.
     */
    static GroupEstimate estimate(GroupEstimate before, LoadSample sample, HeartConfig config) {
        List<LoadSample> history = before == null ? List.of() : before.samples();
        double idle = before == null || config.idleFitRounds() == 0 ? 0 : before.idleCpuCores();
        if (!history.isEmpty() && history.get(history.size() - 1).replicas() != sample.replicas()) {
            history = List.of(); // another set of replicas: their CPU and rates do not compare
            idle = 0;
        }
        double phi = config.idleMaxCpuFraction();
        double x = Math.max(MIN_LOAD_CPU_SECONDS_PER_REQUEST, sample.loadCpuSecondsPerRequest(idle, phi));
        double filtered = x;
        if (config.outlierFilter() && before != null) {
            int h = history.size();
            double last =
                    h >= 1 ? history.get(h - 1).loadCpuSecondsPerRequest(idle, phi) : before.loadCpuSecondsPerRequest();
            double earlier =
                    h >= 2 ? history.get(h - 2).loadCpuSecondsPerRequest(idle, phi) : before.loadCpuSecondsPerRequest();
            filtered = median(earlier, last, x);
        }
        int keep = Math.max(config.outlierFilter() ? 2 : 0, config.idleFitRounds());
        List<LoadSample> samples = new ArrayList<>();
        if (keep > 0) {
            samples.addAll(history.subList(Math.max(0, history.size() - keep + 1), history.size()));
            samples.add(sample);
        }
        double nextIdle = config.idleFitRounds() > 0 ? fitIdleCores(samples, idle, config) : 0;
        if (before == null) {
            return new GroupEstimate(filtered, 0, 0, nextAlpha(0, 0, config), 1, samples, nextIdle);
        }
        GroupEstimate updated = update(before, filtered, config);
        return new GroupEstimate(
                updated.loadCpuSecondsPerRequest(),
                updated.smoothedError(),
                updated.smoothedAbsoluteError(),
                updated.alpha(),
                updated.measuredRounds(),
                samples,
                nextIdle);
    }

    /**
     * Theil–Sen fit of cpu = idle + cost × rate over {@code samples} (their last
     * {@link HeartConfig#idleFitRounds()}): max(0, intercept) when conclusive, else {@code before}.
     */
    static double fitIdleCores(List<LoadSample> samples, double before, HeartConfig config) {
        int from = Math.max(0, samples.size() - config.idleFitRounds());
        List<LoadSample> window = samples.subList(from, samples.size());
        int m = window.size();
        List<Double> slopes = new ArrayList<>();
        int[] inPairs = new int[m];
        for (int i = 0; i < m; i++) {
            for (int j = i + 1; j < m; j++) {
                double ri = window.get(i).requestsPerSecond();
                double rj = window.get(j).requestsPerSecond();
                if (Math.max(ri, rj) < config.idleFitMinRateRatio() * Math.min(ri, rj)) {
                    continue;
                }
                slopes.add((window.get(j).cpuCores() - window.get(i).cpuCores()) / (rj - ri));
                inPairs[i]++;
                inPairs[j]++;
            }
        }
        if (slopes.isEmpty()) {
            return before;
        }
        for (int count : inPairs) {
            if (count == slopes.size()) {
                return before; // every pair hinges on this one round: it could be an outlier
            }
        }
        double slope = median(slopes);
        if (!(slope > 0)) {
            return before;
        }
        List<Double> intercepts = new ArrayList<>(m);
        for (LoadSample s : window) {
            intercepts.add(s.cpuCores() - slope * s.requestsPerSecond());
        }
        return Math.max(0, median(intercepts));
    }

    private static double median(double a, double b, double c) {
        return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int k = sorted.size();
        return k % 2 == 1 ? sorted.get(k / 2) : (sorted.get(k / 2 - 1) + sorted.get(k / 2)) / 2;
    }

    /**
     * One adaptive EWMA step: the update uses the weight the tracking signal chose through the
     * previous round ({@code before.alpha()}), then the signal takes in this round's error and
     * chooses the weight of the next update.
     */
    static GroupEstimate update(GroupEstimate before, double observed, HeartConfig config) {
        double alpha = Math.min(config.alphaMax(), Math.max(config.alphaMin(), before.alpha()));
        double load = alpha * observed + (1 - alpha) * before.loadCpuSecondsPerRequest();
        double beta = config.trackingSmoothing();
        double error = observed - before.loadCpuSecondsPerRequest();
        double smoothedError = beta * error + (1 - beta) * before.smoothedError();
        double smoothedAbsolute = beta * Math.abs(error) + (1 - beta) * before.smoothedAbsoluteError();
        return new GroupEstimate(
                load,
                smoothedError,
                smoothedAbsolute,
                nextAlpha(smoothedError, smoothedAbsolute, config),
                before.measuredRounds() + 1,
                before.samples(),
                before.idleCpuCores());
    }

    /** |E| ÷ M clamped to [αmin, αmax]; αmin while no error has been seen (M = 0). */
    static double nextAlpha(double smoothedError, double smoothedAbsolute, HeartConfig config) {
        double signal = smoothedAbsolute > 0 ? Math.abs(smoothedError) / smoothedAbsolute : 0;
        return Math.min(config.alphaMax(), Math.max(config.alphaMin(), signal));
    }

    /** Cores the group can use: Σ CPU limit when every replica has one, else one per replica. */
    static double capacityCores(Group group) {
        double limits = 0;
        for (Replica replica : group.replicas()) {
            if (replica.cpuLimitCores() == null) {
                return group.replicas().size();
            }
            limits += replica.cpuLimitCores();
        }
        return limits;
    }
}
