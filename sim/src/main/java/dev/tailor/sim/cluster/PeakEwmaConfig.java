package dev.tailor.sim.cluster;

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
        if (!(decaySeconds > 0 && decaySeconds <= 3_600)) {
            throw new IllegalArgumentException("decaySeconds : " + decaySeconds + " (expected: in (0, 3600])");
        }
        if (!(defaultRttMillis > 0 && defaultRttMillis <= 60_000)) {
            throw new IllegalArgumentException("defaultRttMillis : " + defaultRttMillis + " (expected: in (0, 60000])");
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "decay %.3g s, default RTT %.3g ms", decaySeconds, defaultRttMillis);
    }
}
