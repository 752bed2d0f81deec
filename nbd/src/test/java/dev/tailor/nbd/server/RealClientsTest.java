package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.TestServers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server as real clients use it: libnbd's nbdinfo and nbdcopy, qemu-img, qemu-io and fio's nbd
 * engine, each against file exports of an in-process server on a free loopback port; once with the file I/O on the
 * event loops' io_uring (the default here) and once on the thread pool (config {@code fileIo}).
 */
@ParameterizedClass(name = "fileIo {0}")
@ValueSource(strings = {NbdConfig.FILE_IO_URING, NbdConfig.FILE_IO_THREADS})
class RealClientsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path root;

    private static Path dir;

    /** The file I/O path this round runs on ({@link NbdConfig#fileIo}). */
    @Parameter
    String fileIo;

    private static NbdServer server;
    private static String uri;

    @BeforeParameterizedClassInvocation
    static void start(String fileIo) throws Exception {
        dir = Files.createDirectory(root.resolve(fileIo));
        Files.write(dir.resolve("ro.img"), new byte[1 << 20]);
        server = NbdServer.start(TestServers.config(
                        Limits.DEFAULTS,
                        ExportConfig.file("disk", "acme", 64L << 20, false, dir.resolve("disk.img")),
                        ExportConfig.file("image", "acme", 16L << 20, false, dir.resolve("image.img")),
                        ExportConfig.file("copy", "globex", 16L << 20, false, dir.resolve("copy.img")),
                        ExportConfig.file("fio", "globex", 32L << 20, false, dir.resolve("fio.img")),
                        ExportConfig.file("ro", "initech", 1L << 20, true, dir.resolve("ro.img")))
                .toBuilder()
                .fileIo(fileIo)
                .build());
        assertThat(server.transport())
                .isEqualTo(
                        fileIo.equals(NbdConfig.FILE_IO_URING)
                                ? NbdServer.Transport.IO_URING
                                : NbdServer.Transport.EPOLL);
        uri = "nbd://127.0.0.1:" + server.localAddress().getPort() + "/";
    }

    @AfterParameterizedClassInvocation
    static void stop() {
        server.close();
    }

    private static Path randomImage(String name, int bytes, long seed) throws Exception {
        byte[] data = new byte[bytes];
        new Random(seed).nextBytes(data);
        return Files.write(dir.resolve(name), data);
    }

    @Test
    void nbdinfo_listsEveryExportWithItsDescription() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        JsonNode list = JSON.readTree(
                Programs.run(TIMEOUT, nbdinfo, "--list", "--json", uri).ok().stdout());
        List<String> names = new ArrayList<>();
        for (JsonNode export : list.get("exports")) {
            names.add(export.get("export-name").asText());
        }
        assertThat(names).containsExactly("disk", "image", "copy", "fio", "ro");
        assertThat(list.get("exports").get(4).get("description").asText()).isEqualTo("tenant initech, 1MiB, read-only");
    }

    @Test
    void nbdinfo_showsSizeFlagsAndBlockSizes() throws Exception {
        String nbdinfo = Programs.require("nbdinfo");
        JsonNode info = JSON.readTree(
                Programs.run(TIMEOUT, nbdinfo, "--json", uri + "disk").ok().stdout());
        assertThat(info.get("protocol").asText()).isEqualTo("newstyle-fixed");
        assertThat(info.get("structured").asBoolean()).isTrue();
        JsonNode disk = info.get("exports").get(0);
        assertThat(disk.get("export-size").asLong()).isEqualTo(64L << 20);
        for (String flag : new String[] {"can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn", "can_df"}) {
            assertThat(disk.get(flag).asBoolean()).as(flag).isTrue();
        }
        assertThat(disk.get("is_read_only").asBoolean()).isFalse();
        assertThat(disk.get("block_size_minimum").asInt()).isEqualTo(1);
        assertThat(disk.get("block_size_preferred").asInt()).isEqualTo(4096);
        assertThat(disk.get("block_size_maximum").asInt()).isEqualTo(32 << 20);

        JsonNode ro = JSON.readTree(Programs.run(TIMEOUT, nbdinfo, "--json", uri + "ro")
                        .ok()
                        .stdout())
                .get("exports")
                .get(0);
        assertThat(ro.get("is_read_only").asBoolean()).isTrue();
        assertThat(ro.get("can_trim").asBoolean()).isFalse();
        assertThat(ro.get("can_zero").asBoolean()).isFalse();
    }

    @Test
    void qemuImgInfo_reportsTheVirtualSize() throws Exception {
        String qemuImg = Programs.require("qemu-img");
        JsonNode info = JSON.readTree(Programs.run(TIMEOUT, qemuImg, "info", "--output=json", uri + "disk")
                .ok()
                .stdout());
        assertThat(info.get("virtual-size").asLong()).isEqualTo(64L << 20);
    }

    @Test
    void qemuImgConvert_inAndOut_isByteIdentical() throws Exception {
        String qemuImg = Programs.require("qemu-img");
        Path source = randomImage("convert-source.img", 16 << 20, 11);
        Path back = dir.resolve("convert-back.img");
        Programs.run(TIMEOUT, qemuImg, "convert", "-n", "-f", "raw", "-O", "raw", source.toString(), uri + "image")
                .ok();
        Programs.run(TIMEOUT, qemuImg, "convert", "-f", "raw", "-O", "raw", uri + "image", back.toString())
                .ok();
        assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
        assertThat(Files.mismatch(source, dir.resolve("image.img"))).isEqualTo(-1L);
    }

    @Test
    void qemuIo_writesAndReadsBackPatterns() throws Exception {
        String qemuIo = Programs.require("qemu-io");
        Programs.Result result = Programs.run(
                        TIMEOUT,
                        qemuIo,
                        "-f",
                        "raw",
                        uri + "disk",
                        "-c",
                        "write -P 0xa5 0 1M",
                        "-c",
                        "write -f -P 0x5a 1M 64k", // FUA
                        "-c",
                        "aio_write -P 0x3c 3M 512k",
                        "-c",
                        "aio_write -P 0xc3 4M 512k",
                        "-c",
                        "aio_flush",
                        "-c",
                        "write -z 2M 1M", // WRITE_ZEROES
                        "-c",
                        "discard 8M 1M", // TRIM
                        "-c",
                        "flush",
                        "-c",
                        "read -P 0xa5 0 1M",
                        "-c",
                        "read -P 0x5a 1M 64k",
                        "-c",
                        "read -P 0 2M 1M",
                        "-c",
                        "read -P 0x3c 3M 512k",
                        "-c",
                        "read -P 0xc3 4M 512k",
                        "-c",
                        "write -P 0x77 63M 1M", // the last megabyte
                        "-c",
                        "read -P 0x77 63M 1M")
                .ok();
        assertThat(result.stdout())
                .doesNotContain("Pattern verification failed")
                .doesNotContain("error");
        // The check can fail: a wrong pattern is reported and the exit code says so.
        Programs.Result wrong = Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri + "disk", "-c", "read -P 0x11 0 4k");
        assertThat(wrong.stdout() + wrong.stderr()).contains("Pattern verification failed");
        // Past the end: the server's error reaches the client.
        Programs.Result past = Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri + "ro", "-c", "write 0 4k");
        assertThat(past.exitCode()).isNotZero();
    }

    @Test
    void nbdcopy_roundTrip_isByteIdentical() throws Exception {
        String nbdcopy = Programs.require("nbdcopy");
        Path source = randomImage("copy-source.img", 16 << 20, 12);
        Path back = dir.resolve("copy-back.img");
        Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri + "copy")
                .ok();
        Programs.run(TIMEOUT, nbdcopy, uri + "copy", back.toString()).ok();
        assertThat(Files.mismatch(source, back)).isEqualTo(-1L);
    }

    @Test
    void nbdcopy_ofASparseImage_zeroesHolesLargerThanTheMaximumBlockSize() throws Exception {
        // nbdcopy zeroes a 60 MiB hole in one WRITE_ZEROES, over the 32 MiB maximum (see check()).
        String nbdcopy = Programs.require("nbdcopy");
        Path sparse = dir.resolve("sparse.img");
        try (var channel = java.nio.channels.FileChannel.open(
                sparse, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap("first".getBytes(StandardCharsets.US_ASCII)), 0);
            channel.write(ByteBuffer.wrap("last".getBytes(StandardCharsets.US_ASCII)), (64L << 20) - 4);
        }
        Path back = dir.resolve("sparse-back.img");
        Programs.run(TIMEOUT, nbdcopy, sparse.toString(), uri + "disk").ok();
        Programs.run(TIMEOUT, nbdcopy, uri + "disk", back.toString()).ok();
        assertThat(Files.mismatch(sparse, back)).isEqualTo(-1L);
    }

    @Test
    void fio_fourJobsOfRandomWrites_verifyWithCrc32c() throws Exception {
        String fio = Programs.require("fio");
        Programs.Result result = Programs.run(
                        TIMEOUT,
                        fio,
                        "--name=verify",
                        "--ioengine=nbd",
                        "--uri=" + uri + "fio",
                        "--rw=randwrite",
                        "--bs=4k",
                        "--size=8M",
                        "--numjobs=4",
                        "--offset_increment=8M",
                        "--iodepth=16",
                        "--verify=crc32c",
                        "--do_verify=1",
                        "--verify_fatal=1",
                        "--verify_state_save=0",
                        "--group_reporting",
                        "--output-format=json")
                .ok();
        String json = result.stdout().substring(result.stdout().indexOf('{'));
        JsonNode job = JSON.readTree(json).get("jobs").get(0);
        assertThat(job.get("error").asInt()).isZero();
        assertThat(job.get("write").get("io_bytes").asLong()).isEqualTo(4L * (8 << 20));
        assertThat(job.get("read").get("io_bytes").asLong()).as("verify reads").isEqualTo(4L * (8 << 20));
    }
}
