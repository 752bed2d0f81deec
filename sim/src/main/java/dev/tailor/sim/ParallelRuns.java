package dev.tailor.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Runs independent simulation runs on a few daemon threads and returns their results in the order
 * of the runs, whatever order they were started and finished in. Shared by the cluster and storage
 * sweeps.
 */
public final class ParallelRuns {

    /** Told after each finished run; called from worker threads, one call at a time. */
    @FunctionalInterface
    public interface Progress<R, T> {
        void finished(int done, int total, R run, T result);
    }

    private ParallelRuns() {}

    /**
     * Runs {@code body} on every run.
     *
     * @param startOrder indices into {@code runs} in the order to start them (e.g. longest first), or
     *                   {@code null} for their own order
     * @param threadName name of the worker threads
     * @param progress   may be {@code null}
     * @throws IllegalArgumentException when {@code threads} is below 1
     * @throws RuntimeException         the first run's failure, as thrown by {@code body}
     * @throws Error                    the first run's error, as thrown by {@code body} (an {@link OutOfMemoryError})
     */
    public static <R, T> List<T> run(
            List<R> runs,
            int threads,
            List<Integer> startOrder,
            String threadName,
            Function<R, T> body,
            Progress<R, T> progress) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads : " + threads + " (expected: >= 1)");
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, threadName);
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < runs.size(); i++) {
                futures.add(null);
            }
            int[] done = {0};
            for (int i = 0; i < runs.size(); i++) {
                R run = runs.get(startOrder == null ? i : startOrder.get(i));
                futures.set(startOrder == null ? i : startOrder.get(i), pool.submit(() -> {
                    T result = body.apply(run);
                    if (progress != null) {
                        synchronized (done) {
                            progress.finished(++done[0], runs.size(), run, result);
                        }
                    }
                    return result;
                }));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get());
            }
            return results;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (e.getCause() instanceof Error error) {
                throw error; // an OutOfMemoryError stays one, for the command to say so
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
