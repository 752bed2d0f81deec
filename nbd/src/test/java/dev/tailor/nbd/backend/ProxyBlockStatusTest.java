package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.TestServers;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block status passed through from an upstream (proxy mode): the pool's connections negotiate structured
 * replies and {@code base:allocation}, so {@code nbdinfo --map} and {@code nbdcopy} see the upstream's holes
 * through the proxy; reads answered in several chunks, holes among them ({@code qemu-nbd}), are put
 * together; an upstream without structured replies still serves, with every range reported as data.
 */
class ProxyBlockStatusTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static NbdServer proxy(int upstreamPort, String upstreamExport) throws IOException {
        return NbdServer.start(TestServers.config(
                Limits.DEFAULTS,
                ExportConfig.upstream(
                        "proxied",
                        "acme",
                        false,
                        new ExportConfig.Upstream("127.0.0.1", upstreamPort, upstreamExport, 4, null, null))));
    }

    private static String uri(NbdServer server) {
        return "nbd://127.0.0.1:" + server.localAddress().getPort() + "/proxied";
    }

    /** A sparse file of {@code sizeBytes} with 1 MiB of random data at each of {@code dataAt}. */
    private Path sparseFile(String name, long sizeBytes, long... dataAt) throws IOException {
        Path file = dir.resolve(name);
        byte[] data = new byte[1 << 20];
        Random random = new Random(11);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(sizeBytes);
            for (long at : dataAt) {
                random.nextBytes(data);
                raf.seek(at);
                raf.write(data);
            }
        }
        return file;
    }

    private static List<String> map(String nbdinfo, String uri) throws IOException {
        return Programs.run(TIMEOUT, nbdinfo, "--map", uri)
                .ok()
                .stdout()
                .lines()
                .map(l -> l.strip().replaceAll("\\s+", " "))
                .toList();
    }

    /** Skips when nbdkit itself finds no holes in a sparse file here (the file system cannot say). */
    private static void assumeUpstreamSeesHoles(String nbdinfo, int port) throws IOException {
        List<String> direct = map(nbdinfo, "nbd://127.0.0.1:" + port + "/");
        Assumptions.assumeTrue(
                direct.stream().anyMatch(l -> l.contains("hole")),
                "nbdkit finds no holes in a sparse file on this file system: " + direct);
    }

    @Test
    void nbdinfoMap_throughTheProxy_showsTheUpstreamsHoles() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String nbdinfo = Programs.require("nbdinfo");
        Path file = sparseFile("sparse.img", 64L << 20, 8L << 20);
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit,
                        "--exit-with-parent",
                        "-f",
                        "-r",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        "{port}",
                        "file",
                        file.toString());
                NbdServer server = proxy(upstream.port, "")) {
            assumeUpstreamSeesHoles(nbdinfo, upstream.port);
            assertThat(server.exports().get(0).backend().answersBlockStatus()).isTrue();
            assertThat(map(nbdinfo, uri(server)))
                    .containsExactly("0 8388608 3 hole,zero", "8388608 1048576 0 data", "9437184 57671680 3 hole,zero");
        }
    }

    @Test
    void nbdcopy_ofASparse1GiBUpstreamWith4MiBOfData_readsAbout4MiBAndCopiesItExactly() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String nbdinfo = Programs.require("nbdinfo");
        String nbdcopy = Programs.require("nbdcopy");
        Path big = sparseFile("big.img", 1L << 30, 0, 100L << 20, 512L << 20, (1L << 30) - (1 << 20));
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit,
                        "--exit-with-parent",
                        "-f",
                        "-r",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        "{port}",
                        "file",
                        big.toString());
                NbdServer server = proxy(upstream.port, "")) {
            assumeUpstreamSeesHoles(nbdinfo, upstream.port);
            Path copy = dir.resolve("big-copy.img");
            Programs.run(TIMEOUT, nbdcopy, uri(server), copy.toString()).ok();
            // The 4 MiB of data, not the 1 GiB: the upstream's block status reached nbdcopy.
            assertThat(server.exports().get(0).bytesRead()).isBetween(4L << 20, 8L << 20);
            assertThat(Files.mismatch(big, copy)).isEqualTo(-1L);
        }
    }

    @Test
    void readsAnsweredWithHoleChunks_arePutTogether() throws Exception {
        // qemu-nbd answers a read over a sparse range with OFFSET_DATA and OFFSET_HOLE chunks.
        String qemuNbd = Programs.require("qemu-nbd");
        String nbdcopy = Programs.require("nbdcopy");
        String qemuIo = Programs.require("qemu-io");
        Path file = sparseFile("holes.img", 16L << 20, 1L << 20, 5L << 20, (16L << 20) - (1 << 20));
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        qemuNbd, "-f", "raw", "-x", "base", "-b", "127.0.0.1", "-p", "{port}", "-t", file.toString());
                NbdServer server = proxy(upstream.port, "base")) {
            assertThat(server.exports().get(0).backend().answersBlockStatus()).isTrue();
            Path copy = dir.resolve("holes-copy.img");
            Programs.run(TIMEOUT, nbdcopy, uri(server), copy.toString()).ok();
            assertThat(Files.mismatch(file, copy)).isEqualTo(-1L);
            // Reads that straddle data and holes, in one request each.
            Programs.run(
                            TIMEOUT,
                            qemuIo,
                            "-f",
                            "raw",
                            uri(server),
                            "-c",
                            "write -P 0x77 3M 4k",
                            "-c",
                            "flush",
                            "-c",
                            "read -P 0 2M 1M",
                            "-c",
                            "read -P 0x77 3M 4k",
                            "-c",
                            "read -P 0 3076k 1020k")
                    .ok();
        }
    }

    @Test
    void upstreamWithoutStructuredReplies_servesWithEveryRangeAsData() throws Exception {
        String nbdkit = Programs.require("nbdkit");
        String nbdinfo = Programs.require("nbdinfo");
        String nbdcopy = Programs.require("nbdcopy");
        Path file = sparseFile("plain.img", 8L << 20, 2L << 20);
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit,
                        "--exit-with-parent",
                        "-f",
                        "--no-sr",
                        "-r",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        "{port}",
                        "file",
                        file.toString());
                NbdServer server = proxy(upstream.port, "")) {
            assertThat(server.exports().get(0).backend().answersBlockStatus()).isFalse();
            assertThat(map(nbdinfo, uri(server))).containsExactly("0 8388608 0 data");
            Path copy = dir.resolve("plain-copy.img");
            Programs.run(TIMEOUT, nbdcopy, uri(server), copy.toString()).ok();
            assertThat(Files.mismatch(file, copy)).isEqualTo(-1L);
        }
    }

    @Test
    void anUpstreamErrorChunk_failsTheReadWithItsError() throws Exception {
        // nbdkit's error filter answers every read with EIO, which structured replies carry as an error chunk.
        String nbdkit = Programs.require("nbdkit");
        String qemuIo = Programs.require("qemu-io");
        try (Programs.Daemon upstream = Programs.Daemon.start(
                        nbdkit,
                        "--exit-with-parent",
                        "-f",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        "{port}",
                        "--filter=error",
                        "memory",
                        "4M",
                        "error-pread=EIO",
                        "error-pread-rate=1");
                NbdServer server = proxy(upstream.port, "")) {
            Programs.Result read = Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri(server), "-c", "read 0 4k");
            assertThat(read.stdout() + read.stderr()).containsIgnoringCase("Input/output error");
            // The connection survives the error: a write and a read of another kind still work.
            Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri(server), "-c", "write -P 0x11 0 4k")
                    .ok();
        }
    }
}
