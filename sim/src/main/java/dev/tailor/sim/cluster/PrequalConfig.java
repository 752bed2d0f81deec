package dev.tailor.sim.cluster;

import dev.tailor.common.Checks;
import java.util.Locale;

/**
 * Prequal's settings ({@code prequal} in the cluster simulator); {@link #DEFAULTS} are the paper's
 * (Wydrowski et al., NSDI 2024, §4–§5; δ is our reading). See {@code PrequalPolicy} for the rules.
 *
 * @param qRif            quantile of the RIF distribution above which a probe is hot, in (0, 1]
 * @param probesPerQuery  probes sent with each call (r_probe), in (0, 16]
 * @param poolSize        most probes in a pool (m), 1 .. 1024
 * @param maxAgeMillis    probes older than this are dropped, ms, &gt; 0
 * @param removesPerQuery probes removed with each call (r_remove), in [0, 16]
 * @param reuseDelta      δ of Eq. 1, &gt; 0
 */
public record PrequalConfig(
        double qRif,
        double probesPerQuery,
        int poolSize,
        double maxAgeMillis,
        double removesPerQuery,
        double reuseDelta) {

    /** The paper's: Q_RIF = 2^−0.25, 3 probes per query, m = 16, 1 s, r_remove = 1; δ = 1 (ours). */
    public static final PrequalConfig DEFAULTS = new PrequalConfig(Math.pow(2, -0.25), 3, 16, 1_000, 1, 1);

    /** @throws IllegalArgumentException naming the field, its value and what was expected */
    public PrequalConfig {
        Checks.requireAboveAtMost("qRif", qRif, 0, 1);
        Checks.requireAboveAtMost("probesPerQuery", probesPerQuery, 0, 16);
        Checks.requireRange("poolSize", poolSize, 1, 1_024);
        Checks.requireAboveAtMost("maxAgeMillis", maxAgeMillis, 0, 3.6e6);
        Checks.requireRange("removesPerQuery", removesPerQuery, 0, 16);
        Checks.requireAboveAtMost("reuseDelta", reuseDelta, 0, 1_000);
    }

    /** A copy with another Q_RIF. */
    public PrequalConfig withQRif(double newQRif) {
        return new PrequalConfig(newQRif, probesPerQuery, poolSize, maxAgeMillis, removesPerQuery, reuseDelta);
    }

    /** A copy with another probe rate. */
    public PrequalConfig withProbesPerQuery(double newProbesPerQuery) {
        return new PrequalConfig(qRif, newProbesPerQuery, poolSize, maxAgeMillis, removesPerQuery, reuseDelta);
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "Q_RIF %.3g, %.3g probes per query, pool %d, max age %.4g ms," + " %.3g removals per query, delta %.3g",
                qRif,
                probesPerQuery,
                poolSize,
                maxAgeMillis,
                removesPerQuery,
                reuseDelta);
    }
}
