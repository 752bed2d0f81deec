package dev.tailor.sim.cluster;

import dev.tailor.common.Checks;
import java.util.Locale;

/**
 * Peak-EWMA's settings ({@code peak-ewma} in the cluster simulator); {@link #DEFAULTS} are Linkerd's
 * proxy's. See {@code PeakEwmaPolicy} for the rules.
 *
 * @param decaySeconds     τ of the decay, seconds, &gt; 0 (Linkerd: 10)
 * @param defaultRttMillis an endpoint's estimate before its first response, ms, &gt; 0 (Linkerd: 30)
 */
public record PeakEwmaConfig(double decaySeconds, double defaultRttMillis) {

    /** Linkerd's proxy: decay 10 s, default RTT 30 ms. */
    public static final PeakEwmaConfig DEFAULTS = new PeakEwmaConfig(10, 30);

    /** @throws IllegalArgumentException naming the field, its value and what was expected */
    public PeakEwmaConfig {
        Checks.requireAboveAtMost("decaySeconds", decaySeconds, 0, 3_600);
        Checks.requireAboveAtMost("defaultRttMillis", defaultRttMillis, 0, 60_000);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "decay %.3g s, default RTT %.3g ms", decaySeconds, defaultRttMillis);
    }
}
