package dev.tailor.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.datasets.BlockTrace.Format;
import dev.tailor.datasets.BlockTrace.Request;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockTraceTest {

    static final String MSN = "block_io/msn_fileserver_excerpt/MSN-FS-30s-ms.txt";
    static final String MSR_RW = "block_io/msr_cambridge_excerpts/msr.cut.per_10k.rw_20_80.105.trace";
    static final String MSR_RAND = "block_io/msr_cambridge_excerpts/msr.cut.per_10k.most_thpt_rand_iops.1006.trace";
    static final String TENCENT = "block_io/tencent_cbs_replayed_excerpts/tencent.cut.per_50k.most_rand_iops.537.trace";

    @TempDir
    Path dir;

    private Path write(String text) throws IOException {
        Path file = dir.resolve("trace.txt");
        Files.writeString(file, text);
        return file;
    }

    // --- the real traces (PROVENANCE.md 1.3-1.5; counts checked against the .stats files) ---

    @Test
    void msn_149999RequestsOver143s_8to64KiB() throws IOException {
        BlockTrace trace = BlockTrace.read(SharedData.require(MSN), Format.MSN_SECTORS);

        assertThat(trace.requests()).hasSize(149_999);
        assertThat(trace.requests().stream().filter(r -> !r.write()).count()).isEqualTo(130_483);
        assertThat(trace.durationNanos()).isEqualTo(143_068_077_000L);
        // Mostly 8 KiB; 64 KiB next (PROVENANCE.md names 8, 16 and 64 KiB; others occur too).
        assertThat(trace.requests().stream()
                        .filter(r -> r.lengthBytes() == 8192)
                        .count())
                .isEqualTo(126_661);
        assertThat(trace.requests().stream()
                        .filter(r -> r.lengthBytes() == 65536)
                        .count())
                .isEqualTo(13_648);
        assertThat(trace.reordered()).isZero();
        // The first line: 0.000 5 174224064 16 1 (sectors).
        assertThat(trace.requests().get(0)).isEqualTo(new Request(0, 174_224_064L * 512, 8192, false));
        assertThat(trace.requestsPerSecond()).isBetween(1_000.0, 1_100.0);
    }

    @Test
    void msr_twoExcerpts_ratiosOfTheirStatsFiles() throws IOException {
        BlockTrace rw = BlockTrace.read(SharedData.require(MSR_RW), Format.MSR_BYTES);
        BlockTrace rand = BlockTrace.read(SharedData.require(MSR_RAND), Format.MSR_BYTES);

        assertThat(rw.requests()).hasSize(10_000);
        assertThat(rw.requests().stream().filter(Request::write).count()).isEqualTo(7_980);
        assertThat(rw.durationNanos()).isEqualTo(242_904_693_000L);
        assertThat(rand.requests().stream().filter(Request::write).count()).isEqualTo(1_684);
        assertThat(rand.durationNanos()).isEqualTo(1_017_077_000L);
        assertThat(rand.requests().get(0)).isEqualTo(new Request(0, 11_562_803_200L, 4096, false));
    }

    @Test
    void tencent_50000RequestsWithDeviceLatency() throws IOException {
        BlockTrace trace = BlockTrace.read(SharedData.require(TENCENT), Format.TENCENT_REPLAY);

        assertThat(trace.requests()).hasSize(50_000);
        assertThat(trace.requests().stream().filter(Request::write).count()).isEqualTo(8_964);
        assertThat(trace.durationNanos()).isEqualTo(54_000_000_000L);
        // The first line: 0.000,134,1,4096,42242048,0.100,4096.
        assertThat(trace.requests().get(0)).isEqualTo(new Request(0, 42_242_048L, 4096, false, 134_000, 100_000));
        assertThat(trace.requests())
                .allSatisfy(r -> assertThat(r.deviceLatencyNanos()).isPositive());
        // Two lines are stamped 12000 ms inside the 13000 ms batch; they move ahead of it.
        assertThat(trace.reordered()).isEqualTo(2);
        assertThat(trace.requests()).isSortedAccordingTo(java.util.Comparator.comparingLong(Request::arrivalNanos));
    }

    // --- any file of the format ---

    @Test
    void linesOutOfOrder_areSortedStably_andCounted() throws IOException {
        BlockTrace trace = BlockTrace.read(
                write("5 0 1 512 1\n5 0 2 512 1\n4 0 3 512 1\n6 0 4 512 1\n4 0 5 512 1\n"), Format.MSR_BYTES);
        assertThat(trace.requests()).extracting(Request::offsetBytes).containsExactly(3L, 5L, 1L, 2L, 4L);
        assertThat(trace.reordered()).isEqualTo(2);
        assertThat(trace.durationNanos()).isEqualTo(2_000_000);
    }

    @Test
    void timesAreRelativeToTheFirstRequest_blankLinesSkipped() throws IOException {
        BlockTrace trace = BlockTrace.read(
                write("10.5 0 0 4096 1\n\n10.5 0 4096 512 0\n12.000 0 8192 4096 1\n"), Format.MSR_BYTES);
        assertThat(trace.requests())
                .containsExactly(
                        new Request(0, 0, 4096, false),
                        new Request(0, 4096, 512, true),
                        new Request(1_500_000, 8192, 4096, false));
    }

    @Test
    void badInput_namesFileLineColumnAndValue() throws IOException {
        assertThatThrownBy(() -> BlockTrace.read(write("0 5 10 16 1\n1 5 -3 16 1\n"), Format.MSN_SECTORS))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("line 2, column offset_sectors: \"-3\" (expected: a whole number >= 0)");
        assertThatThrownBy(() -> BlockTrace.read(write("0 5 10 0 1\n"), Format.MSN_SECTORS))
                .hasMessageContaining("line 1, column size_sectors: \"0\" (expected: a whole number >= 1)");
        assertThatThrownBy(() -> BlockTrace.read(write("0 0 10 4096 2\n"), Format.MSR_BYTES))
                .hasMessageContaining("column rw: \"2\" (expected: 1 for a read or 0 for a write)");
        assertThatThrownBy(() -> BlockTrace.read(write("5 0 10 4096 1\n-4 0 10 4096 1\n"), Format.MSR_BYTES))
                .hasMessageContaining("line 2, column time_ms: \"-4\" (expected: a number >= 0)");
        assertThatThrownBy(() -> BlockTrace.read(write("0 0 10 4096\n"), Format.MSR_BYTES))
                .hasMessageContaining("line 1: 4 fields (expected: 5 fields [time_ms, dev, offset_bytes, size_bytes,"
                        + " rw] (MSR_BYTES))");
        assertThatThrownBy(() -> BlockTrace.read(write("0.0,NaN,1,4096,0,0.1,4096\n"), Format.TENCENT_REPLAY))
                .hasMessageContaining("column latency_us: \"NaN\" (expected: a number >= 0)");
        assertThatThrownBy(() -> BlockTrace.read(write("0 0 10 4294967296 1\n"), Format.MSR_BYTES))
                .hasMessageContaining("a request size below 2 GiB");
        assertThatThrownBy(() -> BlockTrace.read(write("\n\n"), Format.MSR_BYTES))
                .hasMessageContaining("no requests");
        assertThatThrownBy(() -> BlockTrace.read(dir.resolve("absent"), Format.MSR_BYTES))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("no such file");
    }

    @Test
    void cloudPhysics_106VolumesWithTheDocumentedBurstiness() throws IOException {
        CloudPhysicsVolumes volumes = CloudPhysicsVolumes.read(
                SharedData.require("block_io/cloudphysics_106vm_features/per_vm_30min_timeseries.csv"));

        assertThat(volumes.volumes()).hasSize(106);
        assertThat(volumes.volumes().stream()
                        .mapToInt(CloudPhysicsVolumes.Volume::windows)
                        .sum())
                .isEqualTo(34_198);
        // PROVENANCE.md 1.1: peak/mean of 30-min counts about 2.9 (p10), 10.6 (p50), 33.1 (p90).
        double[] peakToMean = volumes.volumes().stream()
                .mapToDouble(CloudPhysicsVolumes.Volume::peakToMean)
                .sorted()
                .toArray();
        assertThat(peakToMean[peakToMean.length / 2]).isBetween(9.5, 11.5);
        List<CloudPhysicsVolumes.Volume> busiest = volumes.byRateDescending();
        assertThat(busiest.get(0).meanRequestsPerSecond())
                .isGreaterThan(busiest.get(busiest.size() - 1).meanRequestsPerSecond() * 100);
    }

    @Test
    void cloudPhysics_badInput() throws IOException {
        String header = "workload,window_index,ts_us,block_req_count,io_request_size_sum\n";
        Path file = dir.resolve("cp.csv");
        Files.writeString(file, header + "w1,0,0,10,100\nw1,0,5,10,100\n");
        assertThatThrownBy(() -> CloudPhysicsVolumes.read(file))
                .hasMessageContaining("line 3, column window_index: \"0\" (expected: window numbers >= 0, increasing");
        Files.writeString(file, header + "w1,0,0,-1,100\n");
        assertThatThrownBy(() -> CloudPhysicsVolumes.read(file)).hasMessageContaining("column block_req_count");
        Files.writeString(file, "workload,window_index\nw1,0\n");
        assertThatThrownBy(() -> CloudPhysicsVolumes.read(file)).hasMessageContaining("column ts_us: missing");
        Files.writeString(file, header + "w1,0,0,10,100\nw1,3,5,30,100\nw2,0,0,0,0\n");
        CloudPhysicsVolumes volumes = CloudPhysicsVolumes.read(file);
        // w1: 40 requests over 4 windows (two idle, missing) of 1,800 s; peak 30 / mean 10.
        assertThat(volumes.volumes().get(0).meanRequestsPerSecond()).isEqualTo(40 / 7_200.0);
        assertThat(volumes.volumes().get(0).peakToMean()).isEqualTo(3.0);
        assertThat(volumes.byRateDescending())
                .extracting(CloudPhysicsVolumes.Volume::workload)
                .containsExactly("w1");
    }
}
