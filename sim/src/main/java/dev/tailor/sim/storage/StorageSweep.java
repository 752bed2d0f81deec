package dev.tailor.sim.storage;

import dev.tailor.sim.ParallelRuns;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Runs many independent storage simulations on a few threads and returns their results in the order
 * asked. Each run is deterministic, so the results do not depend on the number of threads. Setups
 * are shared read-only between runs.
 */
public final class StorageSweep {

    /** One run to make: a setup (scenario variant) and a policy. */
    public record Run(StorageSetup setup, String policy) {}

    /** Told after each finished run; called from worker threads, one call at a time. */
    @FunctionalInterface
    public interface Progress {
        void finished(int done, int total, Run run, StorageRunResult result);
    }

    private StorageSweep() {}

    /**
     * Runs every run of {@code runs}.
     *
     * @param threads   worker threads, ≥ 1
     * @param wallClock for the reported wall-clock times only, may be {@code null}
     * @param progress  may be {@code null}
     * @throws IllegalArgumentException when {@code threads} is below 1 or a policy is unknown
     */
    public static List<StorageRunResult> run(List<Run> runs, int threads, LongSupplier wallClock, Progress progress) {
        return ParallelRuns.run(
                runs,
                threads,
                null,
                "tailor-storage-sim",
                run -> StorageSimulation.run(run.setup(), run.policy(), wallClock),
                progress == null ? null : progress::finished);
    }
}
