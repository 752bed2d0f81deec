package dev.tailor.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A nanosecond clock that moves only when a test tells it to, and a scheduled executor on it: the
 * one virtual-time fixture of the tests. Code under test reads the clock as a {@link LongSupplier}
 * (its ticker) and schedules on {@link #scheduler()}; a task runs when the test moves the clock past
 * its deadline, on the test's thread, in deadline order (ties in the order they were scheduled),
 * with the clock standing at that deadline while it runs. Nothing runs by itself.
 *
 * <p>Thread-safe: any thread may read the clock and schedule (an I/O thread handing a result
 * back, say); only the thread that moves the clock runs tasks, threads that move it take turns, and
 * moving it from inside a task is refused. Tasks handed in from other threads run at the next {@link #advance} or
 * {@link #runDueTasks()}, which a test combines with {@link Await} to wait for a real thread:
 * {@code Await.until("the answer", () -> clock.runDueTasks() > 0)}.
 *
 * <p>Our reading of gRPC-java's {@code FakeClock} (a fake ticker backing a scheduled executor,
 * whose forward returns how many tasks ran) and Netty's {@code EmbeddedChannel} time control.
 */
public final class VirtualClock implements LongSupplier {

    private final AtomicLong nanos;
    private final Object lock = new Object();
    private final PriorityQueue<Task<?>> tasks = new PriorityQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private final Scheduler scheduler = new Scheduler();
    private final Object moving = new Object();
    /** The thread running tasks now, or null. */
    private volatile Thread running;

    /** A clock at {@code startNanos} (any value: monotonic clocks may be negative). */
    public VirtualClock(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    /** The current instant, ns. */
    public long nanos() {
        return nanos.get();
    }

    /** The current instant in whole ms (rounded down, as {@code TimeUnit.NANOSECONDS.toMillis}). */
    public long millis() {
        return TimeUnit.NANOSECONDS.toMillis(nanos.get());
    }

    @Override
    public long getAsLong() {
        return nanos.get();
    }

    /**
     * Moves forward by {@code deltaNanos} (&gt;= 0), running every task due on the way.
     *
     * @return how many tasks ran
     * @throws IllegalArgumentException when {@code deltaNanos} is negative
     */
    public int advance(long deltaNanos) {
        if (deltaNanos < 0) {
            throw new IllegalArgumentException("deltaNanos: " + deltaNanos + " (expected: >= 0)");
        }
        return move(now -> now + deltaNanos);
    }

    /** Moves forward by {@code delta} (not negative), running every task due on the way; returns how many ran. */
    public int advance(Duration delta) {
        return advance(delta.toNanos());
    }

    /**
     * Moves forward to {@code atNanos}, which must not be in the past, running every task due at or
     * before it (also those the tasks schedule on the way); returns how many ran.
     *
     * @throws IllegalArgumentException when {@code atNanos} is before now
     * @throws IllegalStateException    when called from inside a task
     */
    public int advanceTo(long atNanos) {
        return move(now -> {
            if (atNanos - now < 0) {
                throw new IllegalArgumentException("atNanos: " + atNanos + " (expected: >= now, " + now + ")");
            }
            return atNanos;
        });
    }

    /** Threads that move the clock take turns; a task moving it is refused. */
    private int move(java.util.function.LongUnaryOperator target) {
        if (running == Thread.currentThread()) {
            throw new IllegalStateException("a task on the virtual clock may not move it");
        }
        synchronized (moving) {
            long atNanos = target.applyAsLong(nanos.get());
            running = Thread.currentThread();
            try {
                int ran = 0;
                while (true) {
                    Task<?> next;
                    synchronized (lock) {
                        next = tasks.peek();
                        if (next == null || next.deadlineNanos - atNanos > 0) {
                            break;
                        }
                        tasks.poll();
                    }
                    if (next.deadlineNanos - nanos.get() > 0) {
                        nanos.set(next.deadlineNanos);
                    }
                    next.runOnce();
                    ran++;
                }
                nanos.set(atNanos);
                return ran;
            } finally {
                running = null;
            }
        }
    }

    /** Runs the tasks due now (those handed in from other threads, say) without moving; returns how many ran. */
    public int runDueTasks() {
        return advance(0);
    }

    /** Tasks waiting to run (periodic ones count once). */
    public int pendingTasks() {
        synchronized (lock) {
            return (int) tasks.stream().filter(t -> !t.isCancelled()).count();
        }
    }

    /** Nanoseconds until the next task is due (0 when one is due now), or -1 when none waits. */
    public long nanosToNextTask() {
        synchronized (lock) {
            tasks.removeIf(Task::isCancelled);
            Task<?> next = tasks.peek();
            return next == null ? -1 : Math.max(0, next.deadlineNanos - nanos.get());
        }
    }

    /**
     * The scheduled executor on this clock. {@code execute} and {@code submit} run at the next
     * {@link #advance}; {@code shutdown} refuses new tasks and drops the waiting ones (there is
     * nothing to wait for: nothing runs by itself).
     */
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    private <V> Task<V> add(Task<V> task) {
        synchronized (lock) {
            if (scheduler.shutdown) {
                throw new RejectedExecutionException("the virtual clock's scheduler is shut down");
            }
            tasks.add(task);
        }
        return task;
    }

    /** A task due at {@code deadlineNanos}; periodic when {@code periodNanos != 0} (&gt; 0 rate, &lt; 0 delay). */
    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
        private volatile long deadlineNanos;
        private final long periodNanos;
        private final long seq = sequence.getAndIncrement();
        /** A task whose result nobody reads (execute, a scheduled Runnable): its failure fails the advance. */
        private final boolean surfaceFailure;

        Task(Callable<V> callable, long deadlineNanos, boolean surfaceFailure) {
            super(callable);
            this.deadlineNanos = deadlineNanos;
            this.periodNanos = 0;
            this.surfaceFailure = surfaceFailure;
        }

        Task(Runnable runnable, long deadlineNanos, long periodNanos) {
            super(runnable, null);
            this.deadlineNanos = deadlineNanos;
            this.periodNanos = periodNanos;
            this.surfaceFailure = true;
        }

        void runOnce() {
            if (periodNanos == 0) {
                run();
                if (surfaceFailure && !isCancelled()) {
                    try {
                        get();
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new AssertionError("a task on the virtual clock failed", e.getCause());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            } else if (!runAndReset()) {
                if (!isCancelled()) {
                    try {
                        get();
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new AssertionError("a periodic task on the virtual clock failed", e.getCause());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            } else {
                deadlineNanos = periodNanos > 0 ? deadlineNanos + periodNanos : nanos.get() - periodNanos;
                synchronized (lock) {
                    if (!scheduler.shutdown) {
                        tasks.add(this);
                    }
                }
            }
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadlineNanos - nanos.get(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task<?> that = (Task<?>) other;
            int byDeadline = Long.signum(deadlineNanos - that.deadlineNanos);
            return byDeadline != 0 ? byDeadline : Long.compare(seq, that.seq);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(false);
            if (cancelled) {
                synchronized (lock) {
                    tasks.remove(this);
                }
            }
            return cancelled;
        }
    }

    private final class Scheduler extends AbstractExecutorService implements ScheduledExecutorService {
        private volatile boolean shutdown;

        private long deadline(long delay, TimeUnit unit) {
            return nanos.get() + Math.max(0, unit.toNanos(delay));
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return add(new Task<>(Executors.callable(command, null), deadline(delay, unit), true));
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return add(new Task<>(callable, deadline(delay, unit), false));
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            if (period <= 0) {
                throw new IllegalArgumentException("period: " + period + " (expected: > 0)");
            }
            return add(new Task<>(command, deadline(initialDelay, unit), unit.toNanos(period)));
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(
                Runnable command, long initialDelay, long delay, TimeUnit unit) {
            if (delay <= 0) {
                throw new IllegalArgumentException("delay: " + delay + " (expected: > 0)");
            }
            return add(new Task<>(command, deadline(initialDelay, unit), -unit.toNanos(delay)));
        }

        @Override
        public void execute(Runnable command) {
            schedule(command, 0, TimeUnit.NANOSECONDS);
        }

        @Override
        public <T> java.util.concurrent.Future<T> submit(Callable<T> task) {
            return schedule(task, 0, TimeUnit.NANOSECONDS);
        }

        @Override
        public java.util.concurrent.Future<?> submit(Runnable task) {
            return schedule(Executors.callable(task), 0, TimeUnit.NANOSECONDS);
        }

        @Override
        public void shutdown() {
            shutdown = true;
            List<Task<?>> dropped;
            synchronized (lock) {
                dropped = new ArrayList<>(tasks);
                tasks.clear();
            }
            dropped.forEach(t -> t.cancel(false));
        }

        @Override
        public List<Runnable> shutdownNow() {
            List<Runnable> waiting;
            synchronized (lock) {
                waiting = new ArrayList<>(tasks);
            }
            shutdown();
            return waiting;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return shutdown;
        }

        @Override
        public <T> List<java.util.concurrent.Future<T>> invokeAll(Collection<? extends Callable<T>> calls) {
            throw new UnsupportedOperationException(
                    "invokeAll would wait for tasks that run only when the test" + " moves the clock");
        }
    }
}
