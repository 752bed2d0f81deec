package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.datasets.BlockTrace;
import dev.tailor.sim.des.RandomStreams;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.rng.UniformRandomProvider;
import org.junit.jupiter.api.Test;

class SyntheticExcerptTest {

    private static final List<Long> SIZES = List.of(4096L, 8192L, 65536L);
    private static final long DISK_BYTES = 1L << 30;
    private static final RandomStreams STREAMS = new RandomStreams(20261204);

    private static SyntheticExcerpt excerpt() {
        return new SyntheticExcerpt(
                "t", 0.7, SIZES, DISK_BYTES, () -> STREAMS.stream("synthetic-t"), r -> r.lengthBytes() / 4096.0);
    }

    /** The whole pass drawn at once from the same stream, four draws a request in order. */
    private static List<BlockTrace.Request> drawnAtOnce() {
        UniformRandomProvider random = STREAMS.stream("synthetic-t");
        List<BlockTrace.Request> requests = new ArrayList<>();
        long time = 0;
        for (int i = 0; i < SyntheticExcerpt.REQUESTS; i++) {
            if (i > 0) {
                time += Math.max(1, Math.round(-Math.log(1 - random.nextDouble()) * 1e6));
            }
            long size = SIZES.get(random.nextInt(SIZES.size()));
            long offset = (random.nextLong() & Long.MAX_VALUE) % (DISK_BYTES / 4096) * 4096;
            boolean write = random.nextDouble() >= 0.7;
            requests.add(new BlockTrace.Request(time, offset, (int) size, write));
        }
        return requests;
    }

    @Test
    void cursor_fromAnyIndex_givesTheRequestsDrawnAtOnce_andLoopsBackToTheFirst() {
        List<BlockTrace.Request> expected = drawnAtOnce();
        SyntheticExcerpt excerpt = excerpt();
        assertThat(excerpt.durationNanos())
                .isEqualTo(expected.get(expected.size() - 1).arrivalNanos());
        // About 1,000 per second, the generator's rate.
        assertThat(excerpt.requestsPerSecond()).isBetween(990.0, 1010.0);
        int n = SyntheticExcerpt.REQUESTS;
        int every = SyntheticExcerpt.CHECKPOINT_EVERY;
        for (int start : new int[] {0, 1, every - 1, every, every + 1, 5 * every + 17, n - every, n - 2, n - 1}) {
            Excerpt.Cursor cursor = excerpt.cursor(start);
            // Through the end, around the loop and past the first saved state again.
            for (int k = 0; k < every + 3; k++) {
                assertThat(cursor.next())
                        .as("request %d read from %d", (start + k) % n, start)
                        .isEqualTo(expected.get((start + k) % n));
            }
        }
    }

    @Test
    void meanCost_isTheMeanOverOnePass_andCursorsAreIndependent() {
        List<BlockTrace.Request> expected = drawnAtOnce();
        double sum = 0;
        for (BlockTrace.Request r : expected) {
            sum += r.lengthBytes() / 4096.0;
        }
        SyntheticExcerpt excerpt = excerpt();
        assertThat(excerpt.meanCostUnits()).isEqualTo(sum / expected.size());
        Excerpt.Cursor a = excerpt.cursor(3);
        Excerpt.Cursor b = excerpt.cursor(3);
        a.next();
        a.next();
        assertThat(b.next()).isEqualTo(expected.get(3));
        assertThat(a.next()).isEqualTo(expected.get(5));
    }

    @Test
    void cursor_outsideThePass_isRefused() {
        assertThatThrownBy(() -> excerpt().cursor(SyntheticExcerpt.REQUESTS))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> excerpt().cursor(-1)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
