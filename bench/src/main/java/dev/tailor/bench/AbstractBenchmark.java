package dev.tailor.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What every Tailor benchmark shares: one fork with a fixed, pre-sized heap (so that heap growth is
 * never measured and runs compare across machines with enough memory), milliseconds, and warm-up and
 * measurement iterations long enough for operations of up to a second. Subclasses add their own
 * {@code @State}, {@code @Param} and {@code @BenchmarkMode}; command-line options ({@code -f}, {@code
 * -wi}, {@code -i}, {@code -r}, {@code -jvmArgsAppend}) override these defaults.
 *
 * <p>The heap (4 GiB) holds the largest synthetic cluster (10,000 replicas, 250,000 link delays) and
 * the flow networks of its planning with room to spare; it is a fixed size, not a tuned one.
 *
 * <p>Warm-up is 20 s because it has to be: on a 2-core machine, planning {@code paper-400} runs
 * about ten times slower for the first 10–12 s of continuous planning, until C2 has compiled heart.
 * Shorter warm-ups measure the compilers, not the code.
 */
@Fork(
        value = 1,
        jvmArgs = {"-Xms4g", "-Xmx4g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 10, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public abstract class AbstractBenchmark {}
