package dev.tailor.sim.des;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.commons.rng.UniformRandomProvider;
import org.junit.jupiter.api.Test;

class RandomStreamsTest {

    @Test
    void stream_sameSeedAndName_sameSequence() {
        assertThat(draw(new RandomStreams(42).stream("arrivals")))
                .isEqualTo(draw(new RandomStreams(42).stream("arrivals")));
    }

    @Test
    void stream_otherNameOrSeed_otherSequence() {
        // Streams must be independent, or adding a consumer would shift another's numbers.
        long[] base = draw(new RandomStreams(42).stream("arrivals"));
        assertThat(draw(new RandomStreams(42).stream("costs"))).isNotEqualTo(base);
        assertThat(draw(new RandomStreams(43).stream("arrivals"))).isNotEqualTo(base);
    }

    private static long[] draw(UniformRandomProvider rng) {
        long[] values = new long[8];
        for (int i = 0; i < values.length; i++) {
            values[i] = rng.nextLong();
        }
        return values;
    }
}
