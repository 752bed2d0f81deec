package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.TestServers;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Segment admission with the queue depths real clients keep: fio's nbd engine, two connections of 192 requests in
 * flight each on one segment (the whole 64 MiB disk), against a budget far below what they ask, so that nearly all
 * of them wait in the segment's queue. With the proxy's default queue capacity (what the limits let clients have
 * outstanding) none is answered EIO.
 */
class AdmissionQueueDepthTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void fioAtQueueDepth192OnTwoConnections_withAdmissionOn_getsNoEio() throws Exception {
        // Was: admission's own 64 requests a segment while a connection may have 256 in flight: fio at iodepth 128
        // had requests answered EIO within seconds, and a VM would have seen file system errors.
        String fio = Programs.require("fio");
        NbdConfig config = TestServers.config(
                        Limits.DEFAULTS, ExportConfig.file("disk", "acme", 64L << 20, false, dir.resolve("disk.img")))
                .toBuilder()
                .admission(AdmissionSettings.builder().enabled(true).iops(200.0).build())
                .build();
        try (NbdServer server = NbdServer.start(config)) {
            Programs.Result result = Programs.run(
                    TIMEOUT,
                    fio,
                    "--name=deep",
                    "--ioengine=nbd",
                    "--uri=nbd://127.0.0.1:" + server.localAddress().getPort() + "/disk",
                    "--rw=randread",
                    "--bs=4k",
                    "--size=64M",
                    "--io_size=768k",
                    "--numjobs=2",
                    "--iodepth=192",
                    "--group_reporting",
                    "--output-format=json");
            String json = result.stdout().substring(Math.max(0, result.stdout().indexOf('{')));
            assertThat(result.exitCode())
                    .as("fio's exit code; stderr:%n%s", result.stderr())
                    .isZero();
            JsonNode job = JSON.readTree(json).get("jobs").get(0);
            assertThat(job.get("error").asInt()).isZero();
            assertThat(job.get("read").get("io_bytes").asLong()).isEqualTo(2L * (768 << 10));
            assertThat(server.admission().refusedRequests()).isZero();
            assertThat(server.admission().stats().queuedRequests())
                    .as("most requests waited in the segment's queue: the budget is far below what fio asks")
                    .isGreaterThan(256);
            assertThat(server.admission().controller().config().queueCapacityPerSegment())
                    .as("the default: maxInFlightRequestsPerConnection × maxConnections")
                    .isEqualTo(256 * 256);
        }
    }
}
