package dev.tailor.sim.cluster;

import dev.tailor.heart.HeartConfig;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The cluster simulator's entry point: one run = one scenario, one routing policy, one rate of user
 * requests. Runs are independent and deterministic for a seed, so callers may run many in parallel.
 *
 * <pre>{@code
 * ClusterScenario scenario = Scenarios.load("paper-dag");
 * RunResult heart = ClusterSimulation.run(scenario, "heart", 400, HeartConfig.DEFAULTS, System::nanoTime);
 * }</pre>
 */
public final class ClusterSimulation {

    /** The policies of the comparison, in report order. */
    public static final List<String> POLICIES =
            List.of("default", "least-request", "locality-first", "wrr-orca", "mcf-no-filter", "heart");

    /** HEART without the load trend (α = 1) or without the slow-link filter. */
    public static final List<String> ABLATIONS = List.of("heart-no-trend", "heart-no-filter");

    private ClusterSimulation() {
    }

    /** Every policy name {@link #run} accepts. */
    public static List<String> policyNames() {
        return java.util.stream.Stream.concat(POLICIES.stream(), ABLATIONS.stream()).toList();
    }

    /**
     * Runs {@code scenario} once.
     *
     * @param scenario    a valid scenario (see {@link ClusterScenario#problems()})
     * @param policy      one of {@link #policyNames()}
     * @param rps         user requests per second, &gt; 0
     * @param heartConfig HEART's configuration for the HEART policies (their variants change α or
     *                    the filter on top of it)
     * @param wallClock   a nanosecond clock for reporting planning and run times only (e.g.
     *                    {@code System::nanoTime}); the simulation never reads it otherwise.
     *                    {@code null}: times are reported as 0
     * @throws IllegalArgumentException for an invalid scenario, unknown policy or bad rate
     */
    public static RunResult run(ClusterScenario scenario, String policy, double rps, HeartConfig heartConfig,
            LongSupplier wallClock) {
        List<String> problems = scenario.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("scenario " + scenario.name() + ": " + String.join("; ", problems));
        }
        if (!(rps > 0 && rps <= 1e6)) {
            throw new IllegalArgumentException("rps : " + rps + " (expected: in (0, 1e6])");
        }
        LongSupplier clock = wallClock == null ? () -> 0L : wallClock;
        RoutingPolicy routing = policy(policy, heartConfig == null ? HeartConfig.DEFAULTS : heartConfig);
        long started = clock.getAsLong();
        RunResult result = new ClusterModel(scenario, policy, routing, rps, clock).run();
        return result.withWallMillis(ClusterModel.round((clock.getAsLong() - started) / 1e6, 1));
    }

    private static RoutingPolicy policy(String name, HeartConfig heart) {
        return switch (name == null ? "" : name) {
            case "default" -> new DefaultPolicy();
            case "least-request" -> new LeastRequestPolicy();
            case "locality-first" -> new LocalityFirstPolicy();
            case "wrr-orca" -> new WrrOrcaPolicy();
            case "heart" -> new HeartPolicy(heart);
            case "mcf-no-filter" -> new HeartPolicy(heart.withAlphaRange(1, 1).withSlowLinkFilter(false));
            case "heart-no-trend" -> new HeartPolicy(heart.withAlphaRange(1, 1));
            case "heart-no-filter" -> new HeartPolicy(heart.withSlowLinkFilter(false));
            default -> throw new IllegalArgumentException("policy : " + (name == null ? "missing" : "\"" + name + "\"")
                    + " (expected: one of " + policyNames() + ")");
        };
    }
}
