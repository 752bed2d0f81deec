package dev.tailor.nbd.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;

/**
 * The round trips the proxy tests make through an NBD server with the real clients (nbdinfo, qemu-io,
 * nbdcopy), whatever the upstream: one place for what "a proxied export works" means.
 */
public final class RealClients {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private RealClients() {}

    /** nbdinfo sees the export's size in bytes and the flush, FUA, trim, zero and multi-conn flags. */
    public static void assertSizeAndFlags(String nbdinfo, String uri, long sizeBytes) throws IOException {
        JsonNode info = JSON.readTree(
                        Programs.run(TIMEOUT, nbdinfo, "--json", uri).ok().stdout())
                .get("exports")
                .get(0);
        assertThat(info.get("export-size").asLong()).isEqualTo(sizeBytes);
        for (String flag : new String[] {"can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"}) {
            assertThat(info.get(flag).asBoolean()).as(flag).isTrue();
        }
    }

    /**
     * qemu-io writes patterns (one with FUA), zeroes {@code zeroedMiB} MiB from 2 MiB, runs {@code more}
     * commands (each one {@code -c} argument), flushes and reads every pattern back; fails on any error.
     */
    public static void writeAndReadPatterns(String qemuIo, String uri, int zeroedMiB, String... more) {
        String zeroed = zeroedMiB + "M";
        String[] head = {
            qemuIo,
            "-f",
            "raw",
            uri,
            "-c",
            "write -P 0xa5 0 1M",
            "-c",
            "write -f -P 0x5a 1M 64k",
            "-c",
            "write -z 2M " + zeroed
        };
        String[] tail = {
            "-c", "flush", "-c", "read -P 0xa5 0 1M", "-c", "read -P 0x5a 1M 64k", "-c", "read -P 0 2M " + zeroed
        };
        String[] command = Arrays.copyOf(head, head.length + 2 * more.length + tail.length);
        int at = head.length;
        for (String c : more) {
            command[at++] = "-c";
            command[at++] = c;
        }
        System.arraycopy(tail, 0, command, at, tail.length);
        Programs.run(TIMEOUT, command).ok();
    }

    /**
     * nbdcopy copies {@code bytes} random bytes (from {@code seed}) to the export with a flush, and the
     * export back to a file in {@code dir}; returns what came back, whole, and asserts its head is what was sent.
     */
    public static byte[] copyThereAndBack(String nbdcopy, String uri, Path dir, long seed, int bytes)
            throws IOException {
        byte[] data = new byte[bytes];
        new Random(seed).nextBytes(data);
        Path source = Files.write(dir.resolve("source.img"), data);
        Path back = dir.resolve("back.img");
        Programs.run(TIMEOUT, nbdcopy, "--flush", source.toString(), uri).ok();
        Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
        byte[] all = Files.readAllBytes(back);
        assertThat(Arrays.copyOf(all, bytes)).isEqualTo(data);
        return all;
    }

    /**
     * In front of an upstream serving {@code file}: nbdcopy reads the export back identical to the file, and a
     * qemu-io FUA write of 4 KiB of 0x42 at 1 MiB, then a flush, is in the file.
     */
    public static void readsTheFileAndWritesThrough(String nbdcopy, String qemuIo, String uri, Path file, Path dir)
            throws IOException {
        Path back = dir.resolve("back.img");
        Programs.run(TIMEOUT, nbdcopy, uri, back.toString()).ok();
        assertThat(Files.mismatch(file, back)).isEqualTo(-1L);

        Programs.run(TIMEOUT, qemuIo, "-f", "raw", uri, "-c", "write -f -P 0x42 1M 4k", "-c", "flush")
                .ok();
        byte[] after = Files.readAllBytes(file);
        for (int i = 1 << 20; i < (1 << 20) + 4096; i++) {
            assertThat(after[i]).isEqualTo((byte) 0x42);
        }
    }
}
