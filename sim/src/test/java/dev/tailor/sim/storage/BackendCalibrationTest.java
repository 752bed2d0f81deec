package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Percentage.withPercentage;

import dev.tailor.datasets.BlockTrace;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.simple.RandomSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackendCalibrationTest {

    @TempDir
    Path dir;

    @Test
    void replay_oneServer_isTheFcfsQueueByHand() {
        BackendModel model = new BackendModel(1, 100, 0, 10, 0, 0);
        // Reads of 100 µs at 0, 50 and 300 µs: the second waits 50 µs; a write of 10 µs at 300 µs waits for the third.
        long[] latency = model.replay(
                new long[] {0, 50_000, 300_000, 300_000},
                new int[] {4096, 4096, 4096, 4096},
                new boolean[] {false, false, false, true},
                RandomSource.SPLIT_MIX_64.create(1));
        assertThat(latency).containsExactly(100_000, 150_000, 100_000, 110_000);
    }

    @Test
    void fit_recoversAKnownBackend() throws IOException {
        // A device with 4 channels, reads 120 µs + 10 µs/KiB, writes 30 µs + 1 µs/KiB, σ 0.2, hit by
        // 1 s batches like the Tencent replay; its "recorded" latencies come from that model.
        BackendModel truth = new BackendModel(4, 120, 10, 30, 1, 0.2);
        UniformRandomProvider random = RandomSource.SPLIT_MIX_64.create(7);
        int n = 20_000;
        long[] submit = new long[n];
        int[] size = new int[n];
        boolean[] write = new boolean[n];
        for (int i = 0; i < n; i++) {
            // Batches every second; within a batch, submissions 150 µs apart: about half of what the
            // device can take, so queues come and go.
            submit[i] = (i / 2_000) * 1_000_000_000L + (i % 2_000) * 150_000L;
            size[i] = new int[] {4096, 4096, 4096, 8192, 16384, 65536}[random.nextInt(6)];
            write[i] = random.nextInt(5) == 0;
        }
        long[] latency = truth.replay(submit, size, write, random);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < n; i++) {
            text.append(String.format(
                    Locale.ROOT,
                    "%.3f,%.3f,%d,%d,0,%.6f,%d%n",
                    (submit[i] / 1_000_000_000L) * 1e3,
                    latency[i] / 1e3,
                    write[i] ? 0 : 1,
                    size[i],
                    submit[i] / 1e6,
                    size[i]));
        }
        Path file = Files.writeString(dir.resolve("replay.csv"), text);

        BackendCalibration.Result fit = BackendCalibration.fit(BlockTrace.read(file, BlockTrace.Format.TENCENT_REPLAY));

        assertThat(fit.model().parallelism()).as(fit.summary()).isBetween(3, 5);
        assertThat(fit.model().readBaseMicros()).as(fit.summary()).isCloseTo(120, withPercentage(30));
        assertThat(fit.model().readMicrosPerKiB()).as(fit.summary()).isCloseTo(10, withPercentage(30));
        assertThat(fit.replayedMicros()[0]).as(fit.summary()).isCloseTo(fit.observedMicros()[0], withPercentage(15));
        assertThat(fit.replayedMicros()[1]).as(fit.summary()).isCloseTo(fit.observedMicros()[1], withPercentage(15));
    }

    @Test
    void fit_tencentReplay_reproducesTheRecordedLatencies() throws IOException {
        BlockTrace trace = BlockTrace.read(
                SharedData.require(
                        "block_io/tencent_cbs_replayed_excerpts/tencent.cut.per_50k.most_rand_iops.537.trace"),
                BlockTrace.Format.TENCENT_REPLAY);

        BackendCalibration.Result fit = BackendCalibration.fit(trace);
        System.out.println("Tencent replay backend: " + fit.summary());

        assertThat(fit.ios()).isEqualTo(50_000);
        // P95 is fitted; P50 is not reachable by an open queue (see BackendCalibration's note).
        assertThat(fit.replayedMicros()[1]).as(fit.summary()).isCloseTo(fit.observedMicros()[1], withPercentage(15));
        assertThat(fit.replayedMicros()[0])
                .as(fit.summary())
                .isBetween(fit.observedMicros()[0] / 3, fit.observedMicros()[0] * 3);
        // Capacity for 4 KiB reads near the replay's peak: 1,807 I/Os in about 37 ms = 49k/s.
        double readsPerSecond = fit.model().parallelism() / (fit.model().meanServiceNanos(4096, false) / 1e9);
        assertThat(readsPerSecond).as(fit.summary()).isBetween(35_000.0, 90_000.0);
        // 4 KiB reads are the bulk; their unloaded service time is a fraction of a millisecond.
        assertThat(fit.model().medianServiceNanos(4096, false)).isBetween(50_000.0, 500_000.0);
    }

    @Test
    void fit_traceWithoutLatency_isAClearError() throws IOException {
        Path file = Files.writeString(dir.resolve("msr.trace"), "0 0 0 4096 1\n1 0 4096 4096 1\n");
        BlockTrace trace = BlockTrace.read(file, BlockTrace.Format.MSR_BYTES);
        assertThatThrownBy(() -> BackendCalibration.fit(trace))
                .hasMessageContaining("no I/O with a recorded device" + " latency")
                .hasMessageContaining("TENCENT_REPLAY");
    }

    @Test
    void model_badValues_areNamed() {
        assertThatThrownBy(() -> new BackendModel(0, -1, Double.NaN, 1, 1, 3))
                .hasMessageContaining("parallelism: 0")
                .hasMessageContaining("readBaseMicros: -1 (expected: a number in [0, 10000000])")
                .hasMessageContaining("readMicrosPerKiB: NaN")
                .hasMessageContaining("serviceSigma: 3 (expected: a number in [0, 2])");
    }
}
