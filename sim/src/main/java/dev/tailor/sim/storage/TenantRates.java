package dev.tailor.sim.storage;

import dev.tailor.common.Numbers;
import dev.tailor.datasets.CloudPhysicsVolumes;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * Mean request rates of the tenants of a multi-tenant workload, with the spread of real virtual
 * disks and a skew set to the paper's observation that a few large clients carry most traffic
 * (top 3 ≈ 63 %, docs/design.md#the-papers-numbers-and-ours).
 *
 * <p>Our reading (the paper gives no procedure): draw {@code tenants} volumes at random from the
 * CloudPhysics per-VM rates (PROVENANCE.md 1.1, volumes with requests), sort their mean rates r
 * descending, and raise them to the power γ ≥ 0 for which the largest {@code largeClients} carry
 * {@code largeShare} of Σ r^γ — γ = 0 is every tenant equal, γ = 1 the drawn rates as they are, and
 * the share grows with γ, so bisection finds it. Then scale to {@code totalRequestsPerSecond}.
 */
public final class TenantRates {

    private TenantRates() {}

    /**
     * The rates, largest first; they sum to {@code totalRequestsPerSecond}.
     *
     * @throws IllegalArgumentException when {@code largeShare} cannot be reached (at most
     *                                  largeClients / tenants with γ = 0, or not below 1), or a count is out of range
     */
    public static double[] draw(
            CloudPhysicsVolumes volumes,
            int tenants,
            double totalRequestsPerSecond,
            int largeClients,
            double largeShare,
            UniformRandomProvider random) {
        List<CloudPhysicsVolumes.Volume> pool = new ArrayList<>(volumes.byRateDescending());
        if (tenants < 1 || tenants > pool.size()) {
            throw new IllegalArgumentException("tenants: " + tenants + " (expected: 1 .. " + pool.size()
                    + ", the volumes with requests in " + volumes.file() + ")");
        }
        if (largeClients < 1 || largeClients >= tenants) {
            throw new IllegalArgumentException(
                    "largeClients: " + largeClients + " (expected: 1 .. " + (tenants - 1) + ")");
        }
        double equalShare = largeClients / (double) tenants;
        if (!(largeShare >= equalShare && largeShare < 1)) {
            throw new IllegalArgumentException("largeShare: " + Numbers.written(largeShare)
                    + " (expected: a number in [" + Numbers.written(equalShare) + ", 1),"
                    + " from all tenants equal to all traffic on the large ones)");
        }
        if (!(totalRequestsPerSecond > 0) || !Double.isFinite(totalRequestsPerSecond)) {
            throw new IllegalArgumentException(
                    "totalRequestsPerSecond: " + Numbers.written(totalRequestsPerSecond) + " (expected: > 0)");
        }
        double[] rates = new double[tenants];
        for (int i = 0; i < tenants; i++) { // partial Fisher–Yates: a draw without replacement
            int j = i + random.nextInt(pool.size() - i);
            CloudPhysicsVolumes.Volume picked = pool.get(j);
            pool.set(j, pool.get(i));
            pool.set(i, picked);
            rates[i] = picked.meanRequestsPerSecond();
        }
        java.util.Arrays.sort(rates);
        for (int i = 0; i < tenants / 2; i++) {
            double t = rates[i];
            rates[i] = rates[tenants - 1 - i];
            rates[tenants - 1 - i] = t;
        }
        double low = 0;
        double high = 1;
        while (share(rates, high, largeClients) < largeShare && high < 1e3) {
            high *= 2;
        }
        for (int step = 0; step < 100; step++) {
            double mid = (low + high) / 2;
            if (share(rates, mid, largeClients) < largeShare) {
                low = mid;
            } else {
                high = mid;
            }
        }
        double gamma = high;
        double sum = 0;
        double[] skewed = new double[tenants];
        for (int i = 0; i < tenants; i++) {
            skewed[i] = Math.pow(rates[i] / rates[0], gamma);
            sum += skewed[i];
        }
        for (int i = 0; i < tenants; i++) {
            skewed[i] = skewed[i] / sum * totalRequestsPerSecond;
        }
        return skewed;
    }

    /** Share of the first {@code large} of {@code sorted} (descending) after raising to {@code gamma}. */
    private static double share(double[] sorted, double gamma, int large) {
        double top = 0;
        double all = 0;
        for (int i = 0; i < sorted.length; i++) {
            double v = Math.pow(sorted[i] / sorted[0], gamma);
            all += v;
            if (i < large) {
                top += v;
            }
        }
        return top / all;
    }
}
