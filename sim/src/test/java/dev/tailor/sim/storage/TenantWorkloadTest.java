package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;
import static org.assertj.core.data.Percentage.withPercentage;

import dev.tailor.datasets.BlockTrace;
import dev.tailor.datasets.CloudPhysicsVolumes;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.commons.rng.simple.RandomSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class TenantWorkloadTest {

    @TempDir
    Path dir;

    /** A trace of 1,000 requests 1 ms apart (1,000 per second), offsets walking 8 KiB per request. */
    private BlockTrace evenTrace() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 1_000; i++) {
            text.append(i)
                    .append(" 0 ")
                    .append(i * 8192L)
                    .append(" 8192 ")
                    .append(i % 4 == 0 ? 0 : 1)
                    .append('\n');
        }
        return BlockTrace.read(Files.writeString(dir.resolve("even.trace"), text), BlockTrace.Format.MSR_BYTES);
    }

    @Test
    void stream_stretchesToTheTenantsRate_andFoldsOffsetsIntoTheDisk() throws IOException {
        TenantStream stream = new TenantStream(evenTrace(), 250, 1 << 20, null, RandomSource.SPLIT_MIX_64.create(3));
        TenantStream.Arrival first = stream.next();
        TenantStream.Arrival last = first;
        for (int i = 1; i < 5_000; i++) {
            TenantStream.Arrival a = stream.next();
            assertThat(a.arrivalNanos()).isGreaterThanOrEqualTo(last.arrivalNanos());
            assertThat(a.offsetBytes()).isBetween(0L, (1L << 20) - 4096).matches(o -> o % 4096 == 0);
            assertThat(a.offsetBytes() + a.lengthBytes()).isLessThanOrEqualTo(1L << 20);
            assertThat(a.burst()).isFalse();
            last = a;
        }
        assertThat(first.arrivalNanos()).isZero();
        // 250/s: 4 ms apart, across loop wraps too.
        assertThat(last.arrivalNanos() / 4_999.0).isCloseTo(4e6, withPercentage(0.1));
    }

    @Test
    void stream_bursts_playFasterForTheirShareOfTime() throws IOException {
        TenantStream.Bursts bursts = new TenantStream.Bursts(1.0, 20, 100, 8);
        TenantStream stream =
                new TenantStream(evenTrace(), 1_000, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(5));
        long inBurst = 0;
        long total = 0;
        long endNanos = 600_000_000_000L; // 10 simulated minutes
        for (TenantStream.Arrival a = stream.next(); a.arrivalNanos() < endNanos; a = stream.next()) {
            total++;
            inBurst += a.burst() ? 1 : 0;
        }
        // Bursts take 60 ms of every ~1.06 s and run 8x faster: 1000/s outside, 8000/s inside.
        double burstTime = 0.060 / 1.060;
        double expectedTotal = 600 * (1_000 * (1 - burstTime) + 8_000 * burstTime);
        assertThat((double) total).isCloseTo(expectedTotal, withPercentage(6));
        assertThat(inBurst / (double) total).isCloseTo(8 * burstTime / (1 - burstTime + 8 * burstTime), offset(0.04));
    }

    @Test
    @Timeout(120) // a guard against the hang this test is about, not a timing target
    void stream_aVeryLowRateWithFrequentBursts_stopsSteppingThroughBurstsAtTheHorizon() throws IOException {
        // One request every 10^12 s, bursts every 0.5 s: the next arrival lies about 10^21 ns away. Up to the
        // horizon (10 s) the stream walks the bursts; past it, it does not walk ~10^12 more of them.
        TenantStream.Bursts bursts = new TenantStream.Bursts(0.5, 10, 50, 4);
        TenantStream stream =
                new TenantStream(evenTrace(), 1e-12, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(4)).until(10e9);
        TenantStream.Arrival first = stream.next();
        TenantStream.Arrival second = stream.next();
        assertThat(second.arrivalNanos()).isGreaterThan((long) 10e9).isGreaterThan(first.arrivalNanos());
        // Arrivals before the horizon are those of a stream without one.
        TenantStream a = new TenantStream(evenTrace(), 300, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(9));
        TenantStream b =
                new TenantStream(evenTrace(), 300, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(9)).until(5e9);
        for (TenantStream.Arrival x = a.next(); x.arrivalNanos() < 5e9; x = a.next()) {
            assertThat(b.next()).isEqualTo(x);
        }
    }

    @Test
    void stream_sameSeedSameArrivals() throws IOException {
        BlockTrace trace = evenTrace();
        TenantStream.Bursts bursts = new TenantStream.Bursts(0.5, 10, 50, 4);
        TenantStream a = new TenantStream(trace, 300, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(9));
        TenantStream b = new TenantStream(trace, 300, 1L << 30, bursts, RandomSource.SPLIT_MIX_64.create(9));
        for (int i = 0; i < 2_000; i++) {
            assertThat(a.next()).isEqualTo(b.next());
        }
    }

    @Test
    void stream_badArguments() throws IOException {
        BlockTrace trace = evenTrace();
        assertThatThrownBy(() -> new TenantStream(trace, 0, 1 << 20, null, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("requestsPerSecond: 0 (expected: > 0)");
        assertThatThrownBy(() -> new TenantStream(trace, 10, 100, null, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("diskBytes: 100");
        assertThatThrownBy(() -> new TenantStream.Bursts(1, 50, 20, 2))
                .hasMessageContaining("minMillis 50, maxMillis 20, multiplier 2 (expected");
        BlockTrace single = BlockTrace.read(
                Files.writeString(dir.resolve("one.trace"), "0 0 0 4096 1\n"), BlockTrace.Format.MSR_BYTES);
        assertThatThrownBy(() -> new TenantStream(single, 10, 1 << 20, null, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("two or more requests");
    }

    @Test
    void rates_cloudPhysicsSpread_top3Carry63Percent() throws IOException {
        CloudPhysicsVolumes volumes = CloudPhysicsVolumes.read(
                SharedData.require("block_io/cloudphysics_106vm_features/per_vm_30min_timeseries.csv"));

        double[] rates = TenantRates.draw(volumes, 12, 20_000, 3, 0.63, RandomSource.SPLIT_MIX_64.create(11));

        assertThat(Arrays.stream(rates).sum()).isCloseTo(20_000, offset(1e-6));
        assertThat((rates[0] + rates[1] + rates[2]) / 20_000).isCloseTo(0.63, offset(1e-6));
        for (int i = 1; i < rates.length; i++) {
            assertThat(rates[i]).isLessThanOrEqualTo(rates[i - 1]).isPositive();
        }
        assertThatThrownBy(() -> TenantRates.draw(volumes, 12, 20_000, 3, 0.2, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("largeShare: 0.2 (expected: a number in [0.25, 1)");
        assertThatThrownBy(
                        () -> TenantRates.draw(volumes, 12, Double.NaN, 3, 0.63, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("totalRequestsPerSecond: NaN (expected: > 0)");
        assertThatThrownBy(() -> TenantRates.draw(volumes, 500, 1, 3, 0.6, RandomSource.SPLIT_MIX_64.create(1)))
                .hasMessageContaining("tenants: 500");
    }
}
