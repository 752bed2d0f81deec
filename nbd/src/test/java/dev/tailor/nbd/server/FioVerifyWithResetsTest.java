package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * fio's {@code verify=crc32c} (4 jobs, queue depth 32, random 4 KiB writes verified as it goes) on
 * one export while, every 200 ms, another client on the same export sends a burst of large writes
 * and resets its connection, with admission on and off.
 *
 * <p>fio's own connections cannot survive a reset, so the ones killed are raw-socket clients working
 * on a region fio does not touch, the victim region. Each round a <em>killer</em> connects, sends
 * eight 256 KiB writes of a stale pattern over one 1 MiB slot of it, waits until the server has taken
 * them (a read past the end, answered EINVAL at once) and resets; then a long-lived <em>witness</em>
 * connection writes 4 KiB with that round's pattern inside the slot, 128 KiB in, and has it and a
 * FLUSH acknowledged. A killer's write that had not reached the disk when its connection died and
 * reached it later would overwrite the witness's acknowledged data: the class of bug of the dead
 * connection whose queued writes overwrote newer data. The witness's blocks are read back at every
 * round and at the end. With admission on, the segments are small (1 MiB, blocks of 64 KiB), so a
 * killer's write waits at its first segment while the witness's 4 KiB, two blocks on, is another
 * segment's: it does not queue behind the killer's writes, which is how admission let a dead
 * connection's writes overtake newer ones.
 *
 * <p>It passes when fio reports no verify error and exits 0, and every witness block holds its last
 * acknowledged pattern. CI runs 6 s per mode; {@code -Dtailor.fioResetSeconds=20} runs the full
 * version (docs/testing.md has the figures).
 */
class FioVerifyWithResetsTest {

    private static final int MIB = 1 << 20;
    private static final long FIO_REGION_BYTES = 64L * MIB;
    private static final int SLOTS = 16;
    private static final long VICTIM_OFFSET = FIO_REGION_BYTES;
    private static final long EXPORT_BYTES = FIO_REGION_BYTES + (long) SLOTS * MIB;
    private static final int KILLER_WRITES = 8;
    private static final int KILLER_WRITE_BYTES = 256 << 10;
    private static final long WITNESS_OFFSET_IN_SLOT = 128 << 10;
    private static final long ROUND_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static int runtimeSeconds() {
        return Integer.getInteger("tailor.fioResetSeconds", 6);
    }

    private NbdConfig config(boolean admission, String fileIo) {
        // Capacity 10⁹ cost units/s (the default): fio's verified 4 KiB writes and reads use most of it.
        return NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(2)
                .fileIoThreads(8)
                .fileIo(fileIo)
                .exports(ExportConfig.file("disk", "acme", EXPORT_BYTES, false, dir.resolve("disk.img")))
                .admission(AdmissionSettings.builder()
                        .enabled(admission)
                        .capacityCostUnitsPerSecond(1e9)
                        .segmentSize(new ByteSize(MIB))
                        .blockSize(new ByteSize(64 << 10))
                        .queueCapacityPerSegment(64)
                        .build())
                .build();
    }

    private static byte[] filled(int bytes, byte value) {
        byte[] data = new byte[bytes];
        Arrays.fill(data, value);
        return data;
    }

    /** The witness's 4 KiB of round {@code round}: the round number in every 8 bytes. */
    private static byte[] witnessPattern(int round) {
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocate(4096);
        while (data.hasRemaining()) {
            data.putLong(0x5749_544e_0000_0000L | round);
        }
        return data.array();
    }

    /** Admission on and off with the file I/O on io_uring, and off with it on the thread pool. */
    @ParameterizedTest(name = "admission {0}, fileIo {1}")
    @CsvSource({"true, io_uring", "false, io_uring", "false, threads"})
    void fioVerify_whileAClientIsResetEvery200ms_noVerifyErrorAndNoStaleWrite(boolean admission, String fileIo)
            throws Exception {
        String fio = Programs.require("fio");
        int seconds = runtimeSeconds();
        try (NbdServer server = NbdServer.start(config(admission, fileIo));
                RawClient witness = RawClient.connect(server.localAddress()).handshake()) {
            witness.go("disk", false);
            String uri = "nbd://127.0.0.1:" + server.localAddress().getPort() + "/disk";
            Path output = dir.resolve("fio.json");
            Path errors = dir.resolve("fio.err");
            Process process = new ProcessBuilder(
                            fio,
                            "--name=verify",
                            "--ioengine=nbd",
                            "--uri=" + uri,
                            "--rw=randwrite",
                            "--bs=4k",
                            "--iodepth=32",
                            "--numjobs=4",
                            "--size=16M",
                            "--offset_increment=16M",
                            "--time_based=1",
                            "--runtime=" + seconds,
                            "--verify=crc32c",
                            // Small, so that each job verifies within its first few seconds even on a
                            // machine slow enough to write 60 blocks a second (it verifies each batch
                            // as it fills, and a partial batch is never read back in a timed run).
                            "--verify_backlog=16",
                            "--verify_fatal=1",
                            "--verify_state_save=0",
                            "--group_reporting",
                            "--output-format=json")
                    .redirectOutput(output.toFile())
                    .redirectError(errors.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            Map<Long, Integer> expected = new LinkedHashMap<>();
            List<String> stale = new ArrayList<>();
            int resets = 0;
            long cookie = 1;
            long next = System.nanoTime();
            try {
                // A round every 200 ms until fio is done: the wait is fio's, bounded by the round.
                while (!process.waitFor(Math.max(0, next - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    next += ROUND_NANOS;
                    long slot = VICTIM_OFFSET + (long) (resets % SLOTS) * MIB;
                    killer(server, slot, resets);
                    resets++;
                    witness.write(0, cookie++, slot + WITNESS_OFFSET_IN_SLOT, witnessPattern(resets));
                    assertThat(witness.simpleReply(0).error())
                            .as("the witness's write")
                            .isZero();
                    witness.request(0, NbdProtocol.CMD_FLUSH, cookie++, 0, 0);
                    assertThat(witness.simpleReply(0).error())
                            .as("the witness's FLUSH")
                            .isZero();
                    expected.put(slot + WITNESS_OFFSET_IN_SLOT, resets);
                    cookie = check(witness, expected, cookie, stale, "round " + resets);
                    assertThat(System.nanoTime())
                            .as("fio still running long after its runtime")
                            .isLessThan(next + TimeUnit.SECONDS.toNanos(60L + seconds));
                }
            } finally {
                process.destroyForcibly().waitFor();
            }
            // Whatever was still on its way when fio ended has landed or been dropped by now.
            Await.until(
                    "no write pending",
                    () -> server.exports().get(0).writeOrdering().pendingWrites() == 0);
            check(witness, expected, cookie, stale, "the end");

            String text = Files.readString(output);
            String err = Files.readString(errors);
            assertThat(process.exitValue())
                    .as("fio's exit code; stderr:%n%s", err)
                    .isZero();
            JsonNode job =
                    JSON.readTree(text.substring(text.indexOf('{'))).get("jobs").get(0);
            long writes = job.get("write").get("total_ios").asLong();
            long verified = job.get("read").get("total_ios").asLong();
            long dropped = server.exports().get(0).droppedRequests();
            System.out.printf(
                    "fio verify with resets: admission %s, 4 jobs, QD 32, %d s: %d verify errors,"
                            + " %d writes, %d verify reads (%.0f write IOPS), %d resets every 200 ms, %d of the killed"
                            + " clients' requests dropped, %d stale witness reads%n",
                    admission ? "on" : "off",
                    seconds,
                    job.get("error").asInt(),
                    writes,
                    verified,
                    writes / (double) seconds,
                    resets,
                    dropped,
                    stale.size());
            assertThat(job.get("error").asInt())
                    .as("fio's error (a verify failure is EILSEQ)")
                    .isZero();
            assertThat(err).doesNotContain("verify:").doesNotContain("bad magic");
            assertThat(verified).as("blocks fio read back and verified").isPositive();
            assertThat(stale)
                    .as("witness reads that found a killed client's stale data")
                    .isEmpty();
            // A round every 200 ms at best; the witness's FLUSH (fdatasync under fio's writes) can take
            // far longer on a busy disk, so the floor is one killed connection per second.
            assertThat(resets).as("killed connections (one per 200 ms at most)").isGreaterThanOrEqualTo(seconds);
            assertThat(dropped)
                    .as("the killed clients' requests dropped before they reached the disk")
                    .isPositive();
        }
    }

    /**
     * One killer: eight large writes of a stale pattern over the slot, acknowledged or not, then a read
     * past the end, answered EINVAL at once: after it the server has taken all eight (a connection
     * handles its requests in order). Then a reset, with whatever is still queued.
     */
    private static void killer(NbdServer server, long slot, int round) throws IOException {
        RawClient killer = RawClient.connect(server.localAddress()).handshake();
        killer.go("disk", false);
        byte[] stalePattern = filled(KILLER_WRITE_BYTES, (byte) (0xe0 | (round & 0xf)));
        for (int i = 0; i < KILLER_WRITES; i++) {
            killer.write(0, i, slot + (long) (i % 2) * (64 << 10), stalePattern);
        }
        killer.request(0, NbdProtocol.CMD_READ, 999, EXPORT_BYTES, 4096);
        RawClient.SimpleReply reply;
        do {
            reply = killer.simpleReply(0);
        } while (reply.cookie() != 999);
        killer.reset();
    }

    /**
     * Reads every witness block and notes those that do not hold their last acknowledged pattern. The
     * reads go out together and their replies come in any order, so a round takes one round trip
     * through admission, not one per block.
     */
    private static long check(
            RawClient witness, Map<Long, Integer> expected, long cookie, List<String> stale, String when)
            throws IOException {
        Map<Long, Map.Entry<Long, Integer>> byCookie = new LinkedHashMap<>();
        for (Map.Entry<Long, Integer> block : expected.entrySet()) {
            witness.request(0, NbdProtocol.CMD_READ, cookie, block.getKey(), 4096);
            byCookie.put(cookie, block);
            cookie++;
        }
        for (int i = 0; i < byCookie.size(); i++) {
            RawClient.SimpleReply reply = witness.simpleReply(4096);
            assertThat(reply.error()).isZero();
            Map.Entry<Long, Integer> block = byCookie.get(reply.cookie());
            assertThat(block)
                    .as("a reply to one of the witness's reads, cookie %d", reply.cookie())
                    .isNotNull();
            if (!Arrays.equals(reply.data(), witnessPattern(block.getValue()))) {
                stale.add(when + ": offset " + block.getKey() + " holds 0x"
                        + Integer.toHexString(reply.data()[0] & 0xff) + "…, expected round " + block.getValue());
            }
        }
        return cookie;
    }
}
