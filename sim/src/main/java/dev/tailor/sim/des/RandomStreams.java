package dev.tailor.sim.des;

import java.nio.charset.StandardCharsets;
import org.apache.commons.rng.RestorableUniformRandomProvider;
import org.apache.commons.rng.simple.RandomSource;

/**
 * Independent, named random streams derived from one seed, so that adding a consumer of
 * randomness (a new policy, a new metric) does not shift the numbers any other part draws: the
 * arrivals of a run are the same whichever routing policy it compares.
 *
 * <p>Each stream is a {@code XO_RO_SHI_RO_128_PP} generator (Apache Commons RNG) seeded by
 * SplitMix64 over (seed, FNV-1a hash of the stream's name). Not thread-safe, like the streams.
 */
public final class RandomStreams {

    private final long seed;

    /** @param seed the run's seed; the same seed gives the same streams. */
    public RandomStreams(long seed) {
        this.seed = seed;
    }

    public long seed() {
        return seed;
    }

    /** A new generator for the stream {@code name}; equal names give equal sequences. */
    public RestorableUniformRandomProvider stream(String name) {
        long h = 0xcbf29ce484222325L;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        long state = seed ^ h;
        long[] words = new long[2];
        for (int i = 0; i < words.length; i++) {
            state += 0x9e3779b97f4a7c15L;
            words[i] = mix(state);
        }
        return RandomSource.XO_RO_SHI_RO_128_PP.create(words);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
