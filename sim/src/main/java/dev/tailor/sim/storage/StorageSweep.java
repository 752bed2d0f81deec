package dev.tailor.sim.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

/**
 * Runs many independent storage simulations on a few threads and returns their results in the order
 * asked. Each run is deterministic, so the results do not depend on the number of threads. Setups
 * are shared read-only between runs.
 */
public final class StorageSweep {

    /** One run to make: a setup (scenario variant) and a policy. */
    public record Run(StorageSetup setup, String policy) {
    }

    /** Told after each finished run; called from worker threads, one call at a time. */
    @FunctionalInterface
    public interface Progress {
        void finished(int done, int total, Run run, StorageRunResult result);
    }

    private StorageSweep() {
    }

    /**
     * Runs every run of {@code runs}.
     *
     * @param threads   worker threads, ≥ 1
     * @param wallClock for the reported wall-clock times only, may be {@code null}
     * @param progress  may be {@code null}
     * @throws IllegalArgumentException when {@code threads} is below 1 or a policy is unknown
     */
    public static List<StorageRunResult> run(List<Run> runs, int threads, LongSupplier wallClock, Progress progress) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads : " + threads + " (expected: >= 1)");
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, "tailor-storage-sim");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<StorageRunResult>> futures = new ArrayList<>();
            int[] done = {0};
            for (Run run : runs) {
                futures.add(pool.submit(() -> {
                    StorageRunResult result = StorageSimulation.run(run.setup(), run.policy(), wallClock);
                    if (progress != null) {
                        synchronized (done) {
                            progress.finished(++done[0], runs.size(), run, result);
                        }
                    }
                    return result;
                }));
            }
            List<StorageRunResult> results = new ArrayList<>();
            for (Future<StorageRunResult> future : futures) {
                results.add(future.get());
            }
            return results;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            pool.shutdownNow();
        }
    }
}
