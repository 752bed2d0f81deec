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
 * Missing data [DESIGN.md]: a known group without a measurement keeps its previous estimate; a new
 * group without one takes the mean estimate of the component's groups that have one (it is not
 * remembered, so its first real measurement starts its EWMA); when no group has an estimate, traffic
 * is split equally per replica. State is dropped for groups that have no replica at all any more.
 *
 * Capacity = Σ CPU limit in cores (when every replica of the group has one) or the replica count,
 * divided by L: the requests per second the group can serve. Share = capacity ÷ Σ capacity.
 *
 * [1] D. W. Trigg, A. G. Leach, "Exponential smoothing with an adaptive response rate",
 *     Operational Research Quarterly 18(1), 1967.
 * [2] E. S. Gardner, "Exponential smoothing: the state of the art", Journal of Forecasting 4(1),
 *     1985, on the instability of same-period adaptive weights.
 */
final class Atpm {

    /**
     * Loads below this, CPU-seconds per request (1 ns of CPU per request), are not measurements but
     * rounding or unit mistakes; they count as no data, like a load of 0 (our bound). It keeps every
     * capacity finite: at most {@link SnapshotValidator#MAX_CORES} ÷ this.
     */
    static final double MIN_LOAD_CPU_SECONDS_PER_REQUEST = 1e-9;

    private Atpm() {
    }

    /** ATPM's output for one component: shares, and the estimates to remember. */
    record Result(ComponentShares shares, Map<String, GroupEstimate> nextEstimates) {
    }

    static Result compute(
            String component,
            List<Group> groups,
            Map<String, GroupEstimate> previous,
            Set<String> presentGroupIds,
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
            observed[i] = measure(group);
            GroupEstimate before = previous.get(group.id());
            if (observed[i] != null) {
                GroupEstimate after = before == null
                        ? new GroupEstimate(observed[i], 0, 0, nextAlpha(0, 0, config), 1)
                        : update(before, observed[i], config);
                next.put(group.id(), after);
                load[i] = after.loadCpuSecondsPerRequest();
                alphas[i] = before == null ? null : Math.min(config.alphaMax(), Math.max(config.alphaMin(),
                        before.alpha()));
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
        } else {
            for (Group group : groups) {
                replicaSum += group.replicas().size();
            }
        }

        List<GroupShare> shares = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Group group = groups.get(i);
            List<String> pods = group.replicas().stream().map(Replica::pod).toList();
            if (validCount > 0) {
                shares.add(new GroupShare(group.id(), group.node(), pods, observed[i], load[i], alphas[i],
                        capacity[i], capacity[i] / capacitySum, basis[i]));
            } else {
                shares.add(new GroupShare(group.id(), group.node(), pods, null, null, null, null,
                        (double) group.replicas().size() / replicaSum, GroupShare.Basis.EQUAL_SPLIT));
            }
        }
        return new Result(new ComponentShares(component, shares), next);
    }

    /** Σ cpu ÷ Σ requests over replicas that served requests with both metrics; null = no data. */
    static Double measure(Group group) {
        double cpu = 0;
        double requests = 0;
        for (Replica replica : group.replicas()) {
            Double c = replica.cpuCores();
            Double r = replica.requestsPerSecond();
            if (c == null || r == null || !Double.isFinite(c) || !Double.isFinite(r) || r <= 0 || c < 0) {
                continue;
            }
            cpu += c;
            requests += r;
        }
        if (requests <= 0 || cpu <= 0) {
            return null;
        }
        double load = cpu / requests;
        return load >= MIN_LOAD_CPU_SECONDS_PER_REQUEST ? load : null;
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
        return new GroupEstimate(load, smoothedError, smoothedAbsolute,
                nextAlpha(smoothedError, smoothedAbsolute, config), before.measuredRounds() + 1);
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
