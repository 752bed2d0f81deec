package dev.tailor.sim.cluster;

import dev.tailor.heart.HeartConfig;
import dev.tailor.sim.ParallelRuns;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Runs many independent simulations on a few threads and returns their results in the order asked.
 * Each run is deterministic, so the results do not depend on the number of threads.
 */
public final class ClusterSweep {

    /** One run to make: a scenario (with its network and CPU model set), a policy, a rate. */
    public record Run(ClusterScenario scenario, String policy, double rps) {}

    /** Told after each finished run; called from worker threads, one call at a time. */
    @FunctionalInterface
    public interface Progress {
        void finished(int done, int total, Run run, RunResult result);
    }

    private ClusterSweep() {}

    /**
     * Runs every run of {@code runs}.
     *
     * @param threads   worker threads, ≥ 1
     * @param wallClock for the reported wall-clock times only, may be {@code null}
     * @param progress  may be {@code null}
     * @throws IllegalArgumentException from {@link ClusterSimulation#run} for a bad run
     */
    public static List<RunResult> run(
            List<Run> runs, HeartConfig heartConfig, int threads, LongSupplier wallClock, Progress progress) {
        return run(runs, ClusterSimulation.PolicyConfigs.DEFAULTS.withHeart(heartConfig), threads, wallClock, progress);
    }

    /** As {@link #run(List, HeartConfig, int, LongSupplier, Progress)}, with every policy's settings. */
    public static List<RunResult> run(
            List<Run> runs,
            ClusterSimulation.PolicyConfigs configs,
            int threads,
            LongSupplier wallClock,
            Progress progress) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads : " + threads + " (expected: >= 1)");
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            order.add(i);
        }
        // Longest runs first, so the last thread to finish is not stuck with a long one.
        order.sort(Comparator.comparingDouble((Integer i) -> -cost(runs.get(i))));
        return ParallelRuns.run(
                runs,
                threads,
                order,
                "tailor-sim",
                run -> ClusterSimulation.run(run.scenario(), run.policy(), run.rps(), configs, wallClock),
                progress == null ? null : progress::finished);
    }

    /** Relative cost of a run: simulated calls, roughly. */
    static double cost(Run run) {
        ClusterScenario s = run.scenario();
        return run.rps()
                * (s.warmupSeconds() + s.durationSeconds())
                * s.components().size();
    }
}
