package dev.tailor.lab;

import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;

/** Storage results for the output tests: every class with the same latency and request count. */
final class StorageResults {

    private StorageResults() {}

    /**
     * A robustness-mild result of {@code policy} on {@code seed}: {@code requests} measured in every
     * class (P99.999 only from the 100,000 it needs), {@code refused} refused.
     */
    static StorageRunResult result(String policy, long seed, long requests, long refused) {
        return result(policy, seed, requests, refused, 0, 0, 0);
    }

    /** As {@link #result(String, long, long, long)} with no request on a hot segment (bursts within the threshold). */
    static StorageRunResult noHotSegments(String policy, long requests) {
        StorageRunResult r = result(policy, 1, requests, 0);
        return new StorageRunResult(
                r.scenario(),
                r.burstMultiplier(),
                r.policy(),
                r.seed(),
                r.measuredSeconds(),
                r.offeredRequests(),
                r.steady(),
                r.hot(),
                r.steadySegments(),
                new LatencySummary(0, null, null, null, null, null, null, null),
                r.steadyWithinBaseline(),
                r.allWithinBaseline(),
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                null,
                null,
                0,
                0,
                0,
                null,
                null,
                null);
    }

    /**
     * As {@link #result(String, long, long, long)}, with {@code unfinished} of the 100,000 measured requests
     * unfinished at the end, the backend {@code utilizationPercent} busy and {@code unusedPercent} of it idle
     * while requests waited at a proxy.
     */
    static StorageRunResult result(
            String policy,
            long seed,
            long requests,
            long refused,
            long unfinished,
            double utilizationPercent,
            double unusedPercent) {
        LatencySummary latency = requests >= 100_000
                ? new LatencySummary(requests, 1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 5.0)
                : new LatencySummary(requests, 1.0, 2.0, 3.0, 4.0, null, 1.0, 5.0);
        return new StorageRunResult(
                "robustness-mild",
                null,
                policy,
                seed,
                20,
                100_000,
                latency,
                latency,
                latency,
                latency,
                latency,
                latency,
                0,
                0,
                utilizationPercent,
                unusedPercent,
                0,
                refused,
                unfinished,
                null,
                null,
                0,
                0,
                0,
                null,
                null,
                null);
    }
}
