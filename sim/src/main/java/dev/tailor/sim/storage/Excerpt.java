package dev.tailor.sim.storage;

import dev.tailor.datasets.BlockTrace;
import java.util.List;
import java.util.Objects;

/**
 * What a tenant replays: a fixed sequence of requests in arrival order, the first at 0 ns, read from
 * any index onwards in a loop. Either a trace read from a file ({@link #of(BlockTrace)}, held in
 * memory and shared by every tenant replaying it) or a synthetic one ({@link SyntheticExcerpt},
 * regenerated as it is read, so that a tenant costs a few kilobytes however long its excerpt).
 *
 * <p>Implementations are immutable and may be read by several runs at once; each {@link Cursor} is
 * confined to its reader.
 */
public interface Excerpt {

    /** A position in the excerpt that moves on by one request per {@link #next()}, back to 0 after the last. */
    interface Cursor {

        /** The request at the position; then the position moves on. */
        BlockTrace.Request next();
    }

    /** The trace's file name, or {@code synthetic:TENANT}. */
    String name();

    /** Requests in one pass, at least one. */
    int size();

    /** Arrival of the last request, ns since the first. */
    long durationNanos();

    /**
     * A cursor at {@code index}.
     *
     * @throws IndexOutOfBoundsException unless {@code 0 <= index < size()}
     */
    Cursor cursor(int index);

    /** Mean arrival rate over one pass, requests per second (0 for a single instant). */
    default double requestsPerSecond() {
        long nanos = durationNanos();
        return nanos == 0 ? 0 : (size() - 1) / (nanos / 1e9);
    }

    /** The requests of a trace read into memory. */
    static Excerpt of(BlockTrace trace) {
        List<BlockTrace.Request> requests = trace.requests();
        String name = trace.file().toString();
        return new Excerpt() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public int size() {
                return requests.size();
            }

            @Override
            public long durationNanos() {
                return trace.durationNanos();
            }

            @Override
            public double requestsPerSecond() {
                return trace.requestsPerSecond();
            }

            @Override
            public Cursor cursor(int index) {
                Objects.checkIndex(index, requests.size());
                return new Cursor() {
                    private int at = index;

                    @Override
                    public BlockTrace.Request next() {
                        BlockTrace.Request r = requests.get(at);
                        at = at + 1 == requests.size() ? 0 : at + 1;
                        return r;
                    }
                };
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
