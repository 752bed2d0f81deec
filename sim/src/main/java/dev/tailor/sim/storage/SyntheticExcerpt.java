package dev.tailor.sim.storage;

import dev.tailor.datasets.BlockTrace;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.apache.commons.rng.RandomProviderState;
import org.apache.commons.rng.RestorableUniformRandomProvider;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * A synthetic tenant's excerpt: {@value #REQUESTS} requests with Poisson arrivals at 1,000 per second
 * (a replay stretches them to the tenant's rate), uniform 4 KiB-aligned offsets on the disk, sizes
 * drawn from the given list, reads with the given probability.
 *
 * <p>It holds no requests: one pass at construction measures the duration and saves the generator's
 * state every {@value #CHECKPOINT_EVERY} requests, and a {@link Cursor} regenerates the requests from
 * the nearest saved state before its index. The requests are those the same generator would give
 * drawn all at once (four draws each, in order), so a tenant costs about 10 KB instead of some 4 MB,
 * and a scenario of thousands of synthetic tenants fits in memory.
 *
 * <p>Maintainer note: a reader's generator comes from {@code generator}, which must give a generator
 * of the same algorithm every time (its state is then overwritten); changing the draws or their order
 * changes every synthetic scenario's figures.
 */
final class SyntheticExcerpt implements Excerpt {

    /** Requests in one pass (replayed in a loop). */
    static final int REQUESTS = 65_536;

    /** Requests between two saved generator states: a cursor draws at most this many to reach its index. */
    static final int CHECKPOINT_EVERY = 1_024;

    private record Checkpoint(RandomProviderState state, long previousArrivalNanos) {}

    private final String name;
    private final long[] sizeBytes;
    private final double readFraction;
    private final long blocks;
    private final Supplier<? extends RestorableUniformRandomProvider> generator;
    private final Checkpoint[] checkpoints;
    private final long durationNanos;
    private final double meanCostUnits;
    private final double largestCostUnits;

    /**
     * @param name         the tenant's name (the excerpt is {@code synthetic:NAME})
     * @param readFraction probability that a request is a read, in [0, 1]
     * @param sizeBytes    request sizes drawn uniformly, each in (0, 2 GiB)
     * @param diskBytes    the virtual disk's size; offsets are uniform over its 4 KiB blocks
     * @param generator    a new generator at the tenant's stream's start, every call
     * @param costUnits    a request's cost, averaged over the pass in its order ({@link #meanCostUnits()})
     */
    SyntheticExcerpt(
            String name,
            double readFraction,
            List<Long> sizeBytes,
            long diskBytes,
            Supplier<? extends RestorableUniformRandomProvider> generator,
            ToDoubleFunction<BlockTrace.Request> costUnits) {
        this.name = "synthetic:" + name;
        this.sizeBytes = sizeBytes.stream().mapToLong(Long::longValue).toArray();
        this.readFraction = readFraction;
        this.blocks = Math.max(1, diskBytes / 4096);
        this.generator = generator;
        this.checkpoints = new Checkpoint[(REQUESTS + CHECKPOINT_EVERY - 1) / CHECKPOINT_EVERY];
        RestorableUniformRandomProvider random = generator.get();
        long arrival = 0;
        double cost = 0;
        double largest = 0;
        for (int i = 0; i < REQUESTS; i++) {
            if (i % CHECKPOINT_EVERY == 0) {
                checkpoints[i / CHECKPOINT_EVERY] = new Checkpoint(random.saveState(), arrival);
            }
            BlockTrace.Request r = draw(i, arrival, random);
            arrival = r.arrivalNanos();
            double c = costUnits.applyAsDouble(r);
            cost += c;
            largest = Math.max(largest, c);
        }
        this.durationNanos = arrival;
        this.meanCostUnits = cost / REQUESTS;
        this.largestCostUnits = largest;
    }

    /** The largest {@code costUnits} of one request in a pass. */
    double largestCostUnits() {
        return largestCostUnits;
    }

    /** The mean of {@code costUnits} over one pass, summed in the pass's order. */
    double meanCostUnits() {
        return meanCostUnits;
    }

    /** Request {@code i}, the one before it having arrived at {@code previousArrivalNanos}. */
    private BlockTrace.Request draw(int i, long previousArrivalNanos, UniformRandomProvider random) {
        long arrival = previousArrivalNanos;
        if (i > 0) {
            arrival += Math.max(1, Math.round(-Math.log(1 - random.nextDouble()) * 1e6));
        }
        long size = sizeBytes[random.nextInt(sizeBytes.length)];
        long offset = (random.nextLong() & Long.MAX_VALUE) % blocks * 4096;
        boolean write = random.nextDouble() >= readFraction;
        return new BlockTrace.Request(arrival, offset, (int) size, write);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int size() {
        return REQUESTS;
    }

    @Override
    public long durationNanos() {
        return durationNanos;
    }

    @Override
    public Cursor cursor(int index) {
        Objects.checkIndex(index, REQUESTS);
        return new Cursor() {
            private final RestorableUniformRandomProvider random = generator.get();
            private int at;
            private long previousArrivalNanos;

            {
                seek(index / CHECKPOINT_EVERY);
                while (at < index) {
                    next();
                }
            }

            private void seek(int checkpoint) {
                random.restoreState(checkpoints[checkpoint].state());
                at = checkpoint * CHECKPOINT_EVERY;
                previousArrivalNanos = checkpoints[checkpoint].previousArrivalNanos();
            }

            @Override
            public BlockTrace.Request next() {
                BlockTrace.Request r = draw(at, previousArrivalNanos, random);
                previousArrivalNanos = r.arrivalNanos();
                if (++at == REQUESTS) {
                    seek(0);
                }
                return r;
            }
        };
    }

    @Override
    public String toString() {
        return name;
    }
}
