package dev.tailor.sim.cluster;

import dev.tailor.common.Checks;
import dev.tailor.common.Problem;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.ShareMoveCap;
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

    /** The policies of the paper's comparison (and of {@code tailor demo}), in report order. */
    public static final List<String> POLICIES =
            List.of("default", "least-request", "locality-first", "wrr-orca", "mcf-no-filter", "heart");

    /**
     * The strongest published per-request peers: Prequal (NSDI 2024) and peak-EWMA power of two choices
     * (Finagle, Linkerd). With {@link #POLICIES} they make the full comparison.
     */
    public static final List<String> PEERS = List.of("prequal", "peak-ewma");

    /** The full comparison: {@link #POLICIES} then {@link #PEERS}. */
    public static final List<String> COMPARISON =
            java.util.stream.Stream.concat(POLICIES.stream(), PEERS.stream()).toList();

    /**
     * HEART without one part: the paper's load trend (α = 1), or one of our departures from the paper
     * (outlier filter, idle CPU fit, share floor, share-move cap, spread, queue-aware routing, load
     * headroom); and HEART with the paper's slow-link filter, which it has off.
     */
    public static final List<String> ABLATIONS = List.of(
            "heart-no-trend",
            "heart-slow-link-filter",
            "heart-no-outlier-filter",
            "heart-no-idle-fit",
            "heart-no-floor",
            "heart-no-share-cap",
            "heart-no-spread",
            "heart-no-queueing",
            "heart-no-headroom");

    /** HEART as the paper describes it: none of our departures, no share-move cap. */
    public static final String HEART_PAPER = "heart-paper";

    private ClusterSimulation() {}

    /** Every policy name {@link #run} accepts. */
    public static List<String> policyNames() {
        return java.util.stream.Stream.of(
                        POLICIES.stream(), PEERS.stream(), java.util.stream.Stream.of(HEART_PAPER), ABLATIONS.stream())
                .flatMap(s -> s)
                .toList();
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
    public static RunResult run(
            ClusterScenario scenario, String policy, double rps, HeartConfig heartConfig, LongSupplier wallClock) {
        return run(scenario, policy, rps, PolicyConfigs.DEFAULTS.withHeart(heartConfig), wallClock);
    }

    /**
     * The settings of the policies that take any: HEART's, Prequal's and peak-EWMA's.
     *
     * @param heart    HEART's configuration for the HEART policies (their variants change α or the
     *                 filter on top of it)
     * @param prequal  Prequal's
     * @param peakEwma peak-EWMA's
     */
    public record PolicyConfigs(HeartConfig heart, PrequalConfig prequal, PeakEwmaConfig peakEwma) {

        /** Every policy's defaults. */
        public static final PolicyConfigs DEFAULTS =
                new PolicyConfigs(HeartConfig.DEFAULTS, PrequalConfig.DEFAULTS, PeakEwmaConfig.DEFAULTS);

        public PolicyConfigs {
            heart = heart == null ? HeartConfig.DEFAULTS : heart;
            prequal = prequal == null ? PrequalConfig.DEFAULTS : prequal;
            peakEwma = peakEwma == null ? PeakEwmaConfig.DEFAULTS : peakEwma;
        }

        /** A copy with HEART's configuration ({@code null}: the defaults). */
        public PolicyConfigs withHeart(HeartConfig newHeart) {
            return new PolicyConfigs(newHeart, prequal, peakEwma);
        }
    }

    /**
     * Runs {@code scenario} once with the given policy settings.
     *
     * @param scenario  a valid scenario (see {@link ClusterScenario#problems()})
     * @param policy    one of {@link #policyNames()}
     * @param rps       user requests per second, &gt; 0 (the rate profile's factors multiply it)
     * @param configs   the policies' settings, {@code null} for the defaults
     * @param wallClock as in {@link #run(ClusterScenario, String, double, HeartConfig, LongSupplier)}
     * @throws IllegalArgumentException for an invalid scenario, unknown policy or bad rate
     */
    public static RunResult run(
            ClusterScenario scenario, String policy, double rps, PolicyConfigs configs, LongSupplier wallClock) {
        List<Problem> problems = scenario.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("scenario " + scenario.name() + ": " + Problem.join(problems));
        }
        Checks.requireAboveAtMost("rps", rps, 0, 1e6);
        LongSupplier clock = wallClock == null ? () -> 0L : wallClock;
        RoutingPolicy routing = policy(policy, configs == null ? PolicyConfigs.DEFAULTS : configs);
        long started = clock.getAsLong();
        RunResult result = new ClusterModel(scenario, policy, routing, rps, clock).run();
        return result.withWallMillis(ClusterModel.round((clock.getAsLong() - started) / 1e6, 1));
    }

    /** The controller's default share-move cap, which {@code heart} applies as the controller does. */
    private static final double CAP = ShareMoveCap.DEFAULT_MAX_MOVE;

    private static final double NO_CAP = 1;

    private static RoutingPolicy policy(String name, PolicyConfigs configs) {
        HeartConfig heart = configs.heart();
        return switch (name == null ? "" : name) {
            case "default" -> new DefaultPolicy();
            case "prequal" -> new PrequalPolicy(configs.prequal());
            case "peak-ewma" -> new PeakEwmaPolicy(configs.peakEwma());
            case "least-request" -> new LeastRequestPolicy();
            case "locality-first" -> new LocalityFirstPolicy();
            case "wrr-orca" -> new WrrOrcaPolicy();
            case "heart" -> new HeartPolicy(heart, CAP);
            case HEART_PAPER -> new HeartPolicy(heart.paperVariant(), NO_CAP);
            case "mcf-no-filter" ->
                new HeartPolicy(
                        heart.paperVariant().toBuilder()
                                .alphaMin(1)
                                .alphaMax(1)
                                .slowLinkFilter(false)
                                .build(),
                        NO_CAP);
            case "heart-no-trend" ->
                new HeartPolicy(heart.toBuilder().alphaMin(1).alphaMax(1).build(), CAP);
            case "heart-slow-link-filter" ->
                new HeartPolicy(heart.toBuilder().slowLinkFilter(true).build(), CAP);
            case "heart-no-outlier-filter" ->
                new HeartPolicy(heart.toBuilder().outlierFilter(false).build(), CAP);
            case "heart-no-idle-fit" ->
                new HeartPolicy(heart.toBuilder().idleFitRounds(0).build(), CAP);
            case "heart-no-floor" ->
                new HeartPolicy(heart.toBuilder().minShareOfEqualSplit(0).build(), CAP);
            case "heart-no-share-cap" -> new HeartPolicy(heart, NO_CAP);
            case "heart-no-spread" ->
                new HeartPolicy(heart.toBuilder().spreadScale(0).build(), CAP);
            case "heart-no-queueing" ->
                new HeartPolicy(heart.toBuilder().queueAwareRouting(false).build(), CAP);
            case "heart-no-headroom" ->
                new HeartPolicy(heart.toBuilder().loadHeadroom(0).build(), CAP);
            default ->
                throw new IllegalArgumentException("policy : " + (name == null ? "missing" : "\"" + name + "\"")
                        + " (expected: one of " + policyNames() + ")");
        };
    }
}
