package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * {@link WriteOrdering} against its definition, on random sequences of writes finished in random
 * order, some while still held (dropped): a write goes at once exactly when no older pending write
 * overlaps it, and is released exactly once, exactly when the last older overlapping write finishes;
 * two overlapping writes are never both running. The ranges are in units of 256 KiB over 250 MiB, so
 * that many overlap, many cross the ordering's 1 MiB chunks (several stripes), chunks 64 apart share a
 * stripe without overlapping, and a few writes are long enough to take every stripe. Then the same
 * from two threads at once.
 */
class WriteOrderingPropertiesTest {

    /** One write of the model: its range and what happened to it. */
    private static final class Write {
        final int id;
        final long offset;
        final long end;
        WriteOrdering.Entry entry;
        boolean running;
        int releases;

        Write(int id, long offset, long length) {
            this.id = id;
            this.offset = offset;
            this.end = offset + length;
        }

        boolean overlaps(Write other) {
            return offset < other.end && other.offset < end;
        }
    }

    private static final long UNIT = 256 << 10;

    /**
     * Ops: {0, offset, length} registers a write of {@code length} units (or a few bytes less, for
     * odd ends) at {@code offset} units; {1, index} finishes the index-th unfinished one.
     */
    private static Gen<List<int[]>> operations() {
        return in -> {
            int n = integers().between(1, 200).generate(in);
            List<int[]> ops = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (integers().between(0, 9).generate(in) < 5) {
                    int length = integers().between(0, 19).generate(in) == 0
                            ? integers().between(1, 600).generate(in)
                            : integers().between(1, 8).generate(in);
                    ops.add(new int[] {0, integers().between(0, 1_000).generate(in), length});
                } else {
                    ops.add(new int[] {1, integers().between(0, 1_000).generate(in)});
                }
            }
            return ops;
        };
    }

    @Test
    void randomWrites_goAtOnceOrAreReleasedExactlyWhenTheirOlderOverlappingWritesHaveFinished() {
        qt().withFixedSeed(20261201L)
                .withExamples(500)
                .forAll(operations())
                .checkAssert(WriteOrderingPropertiesTest::run);
    }

    private static void run(List<int[]> ops) {
        WriteOrdering ordering = new WriteOrdering();
        List<Write> all = new ArrayList<>();
        List<Write> unfinished = new ArrayList<>();
        for (int[] op : ops) {
            if (op[0] == 0) {
                long length = op[2] * UNIT - (op[1] % 3) * 512;
                Write w = new Write(all.size(), op[1] * UNIT, length);
                boolean blocked = unfinished.stream().anyMatch(older -> older.overlaps(w));
                w.entry = ordering.register(w.offset, length, () -> {
                    w.releases++;
                    w.running = true;
                });
                assertThat(w.entry.immediate)
                        .as("write %d goes at once exactly when nothing older overlaps", w.id)
                        .isEqualTo(!blocked);
                w.running = w.entry.immediate;
                all.add(w);
                unfinished.add(w);
            } else if (!unfinished.isEmpty()) {
                // Finish one: a running write completes, a held one is dropped.
                Write w = unfinished.remove(op[1] % unfinished.size());
                w.running = false;
                ordering.finish(w.entry);
            }
            for (Write w : unfinished) {
                boolean olderPending = unfinished.stream().anyMatch(o -> o.id < w.id && o.overlaps(w));
                assertThat(w.running)
                        .as("write %d runs exactly when no older overlapping write is pending", w.id)
                        .isEqualTo(!olderPending);
                assertThat(w.releases)
                        .as("write %d released at most once, only if it was held", w.id)
                        .isEqualTo(w.entry.immediate || !w.running ? 0 : 1);
                for (Write other : unfinished) {
                    if (other != w && other.running && w.running) {
                        assertThat(other.overlaps(w))
                                .as("writes %d and %d both running", w.id, other.id)
                                .isFalse();
                    }
                }
            }
            assertThat(ordering.pendingWrites()).isEqualTo(unfinished.size());
            assertThat(ordering.heldWrites())
                    .isEqualTo((int) unfinished.stream().filter(w -> !w.running).count());
        }
        for (Write w : all) {
            assertThat(w.releases).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void twoThreads_overlappingWritesNeverRunTogether_andEveryOneRuns() throws Exception {
        // Each thread registers writes and keeps up to four of its own pending (running or held): when it
        // has more it finishes one of its running writes, at random, or waits for one to be released.
        // The running set is checked under its own lock every time a write starts. A thread's own
        // running writes hold its newer overlapping ones, so writes are held however the two threads
        // are scheduled (on a busy machine one may run all its writes before the other starts); when
        // both run at once, each also holds the other's.
        WriteOrdering ordering = new WriteOrdering();
        // An identity set: arrays have no value equality, and each range is its own write.
        Set<long[]> running = Collections.newSetFromMap(new IdentityHashMap<>());
        int perThread = 20_000;
        ExecutorService threads = Executors.newFixedThreadPool(2);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Writer>> done = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Writer writer = new Writer(ordering, running, new Random(11 + t));
                done.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        writer.register();
                        writer.finishDownTo(4);
                    }
                    writer.finishDownTo(0);
                    return writer;
                }));
            }
            start.countDown();
            for (Future<Writer> f : done) {
                Writer writer = f.get(60, TimeUnit.SECONDS);
                assertThat(writer.finished).isEqualTo(perThread);
                assertThat(writer.held)
                        .as("writes of one thread that had to wait")
                        .isPositive();
            }
            assertThat(ordering.pendingWrites()).isZero();
        } finally {
            threads.shutdownNow();
        }
    }

    /** One thread's writes: registered, started when released, finished at random. */
    private static final class Writer {
        private final WriteOrdering ordering;
        private final Set<long[]> running;
        private final Random random;
        private final LinkedBlockingQueue<Object[]> released = new LinkedBlockingQueue<>();
        private final List<Object[]> started = new ArrayList<>();
        int registered;
        int finished;
        int held;

        Writer(WriteOrdering ordering, Set<long[]> running, Random random) {
            this.ordering = ordering;
            this.running = running;
            this.random = random;
        }

        /** 256 KiB steps over 4 MiB: 4 chunks, writes crossing them, now and then one over 70 MiB (every stripe). */
        void register() {
            long offset = UNIT * random.nextInt(16);
            long length = random.nextInt(200) == 0 ? 70L << 20 : UNIT * (1 + random.nextInt(3));
            Object[] write = {new long[] {offset, offset + length}, null};
            WriteOrdering.Entry entry = ordering.register(offset, length, () -> released.add(write));
            write[1] = entry;
            registered++;
            if (entry.immediate) {
                released.add(write);
            } else {
                held++;
            }
        }

        /**
         * Starts what was released, and finishes running writes (or waits for held ones to be released,
         * by either thread) until at most {@code pending} of this thread's writes are pending.
         */
        void finishDownTo(int pending) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                Object[] next;
                while ((next = released.poll()) != null) {
                    begin(running, (long[]) next[0]);
                    started.add(next);
                }
                if (registered - finished <= pending) {
                    return;
                }
                if (started.isEmpty()) {
                    next = released.poll(100, TimeUnit.MILLISECONDS);
                    assertThat(System.nanoTime()).as("writes still held").isLessThan(deadline);
                    if (next != null) {
                        released.add(next);
                    }
                    continue;
                }
                Object[] done = started.remove(random.nextInt(started.size()));
                end(running, (long[]) done[0]);
                ordering.finish((WriteOrdering.Entry) done[1]);
                finished++;
            }
        }
    }

    private static void begin(Set<long[]> running, long[] range) {
        synchronized (running) {
            for (long[] other : running) {
                assertThat(other[0] < range[1] && range[0] < other[1])
                        .as("overlapping writes running together")
                        .isFalse();
            }
            running.add(range);
        }
    }

    private static void end(Set<long[]> running, long[] range) {
        synchronized (running) {
            running.remove(range);
        }
    }
}
