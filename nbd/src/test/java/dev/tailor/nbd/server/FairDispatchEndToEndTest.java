package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.FairDispatchSettings;
import dev.tailor.nbd.config.LoopSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fair dispatch door inside the real server with a real client, alone and behind segment admission: a
 * 16 MiB nbdcopy round trip through a door of depth 1 (nbdcopy keeps dozens of requests in flight, so they
 * wait at the door) comes back byte-identical, the door is empty afterwards, and its counters reach the
 * metrics file.
 */
class FairDispatchEndToEndTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "admission {0}")
    @ValueSource(booleans = {false, true})
    void nbdcopyRoundTrip_throughTheDoor_isByteIdentical_andTheDoorEmptiesAfter(boolean admission) throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        Path metrics = dir.resolve("tailor.prom");
        NbdConfig config = NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(2)
                .fileIoThreads(2)
                .exports(
                        ExportConfig.file("copy", "acme", 16L << 20, false, dir.resolve("copy.img")).toBuilder()
                                .baseline(new ExportConfig.Baseline(100.0, null))
                                .build(),
                        ExportConfig.file("other", "globex", 16L << 20, false, dir.resolve("other.img")))
                .admission(AdmissionSettings.builder()
                        .enabled(admission)
                        .iops(1000.0)
                        .segmentSize(new ByteSize(4L << 20))
                        .queueCapacityPerSegment(4096)
                        .build())
                .fairDispatch(new FairDispatchSettings(true, 1))
                .loop(LoopSettings.builder()
                        .metricsPeriodMillis(100)
                        .metricsFile(metrics)
                        .build())
                .build();
        byte[] data = new byte[16 << 20];
        new Random(11).nextBytes(data);
        Path source = Files.write(dir.resolve("source.img"), data);
        Path back = dir.resolve("back.img");
        try (NbdServer server = NbdServer.start(config)) {
            FairDispatchDoor door = server.fairDispatch();
            assertThat(door).isNotNull();
            assertThat(server.admission() != null).isEqualTo(admission);
            assertThat(door.doors())
                    .as("both files on one file system: one door")
                    .isEqualTo(1);
            assertThat(door.depth(door.backends().get(0))).isEqualTo(1);
            String backend = door.exportCounters().get(0).backend();
            assertThat(backend).matches("device:\\d+:\\d+");
            assertThat(door.weightsCostUnitsPerSecond())
                    .as("100 of 1000 IOPS provisioned, the other export takes the rest")
                    .containsExactly(1e8, 9e8);
            String uri = "nbd://127.0.0.1:" + server.localAddress().getPort() + "/copy";
            // nbdcopy keeps many requests in flight, so at depth 1 some wait at the door; on a page cache
            // fast enough a whole copy can still see each request done before the next: a few more.
            for (int round = 0;
                    round < 5 && (round == 0 || door.exportCounters().get(0).waited() == 0);
                    round++) {
                Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri)
                        .ok();
                Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
                assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
            }

            FairDispatchDoor.ExportCounters copy = door.exportCounters().get(0);
            assertThat(copy.requests()).as("READs and WRITEs through the door").isPositive();
            assertThat(copy.waited()).as("depth 1 under nbdcopy's queue").isPositive();
            assertThat(door.exportCounters().get(1).requests()).isZero();
            assertThat(door.outstandingRequests()).isZero();
            assertThat(door.waitingRequests()).isZero();
            if (admission) {
                assertThat(server.admission().stats().completedSuccess())
                        .isEqualTo(server.admission().stats().admittedRequests());
            }
            Await.until(
                    "the door's counters in the metrics file",
                    () -> Files.exists(metrics)
                            && read(metrics)
                                    .matches("(?s).*tailor_nbd_fair_dispatch_export_waited_total\\{backend=\""
                                            + backend + "\",export=\"copy\"} "
                                            + "[1-9].*"));
            assertThat(read(metrics))
                    .contains("tailor_nbd_fair_dispatch_depth{backend=\"" + backend + "\"} 1.0")
                    .contains("tailor_nbd_fair_dispatch_export_requests_total{backend=\"" + backend
                            + "\",export=\"other\"} 0")
                    .contains("tailor_nbd_fair_dispatch_export_wait_seconds_total{backend=\"" + backend
                            + "\",export=\"copy\"}")
                    .contains("tailor_nbd_fair_dispatch_export_wait_max_seconds{backend=\"" + backend
                            + "\",export=\"copy\"}")
                    .contains("tailor_nbd_fair_dispatch_waiting{backend=\"" + backend + "\"} ")
                    .contains("tailor_nbd_fair_dispatch_outstanding{backend=\"" + backend + "\"} ");
        }
    }
}
