package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfig;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A start that fails leaves nothing behind that it created, and says why in terms of the config. */
class StartFailureTest {

    @TempDir
    Path dir;

    private static NbdConfig config(ExportConfig... exports) {
        return NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(1)
                .fileIoThreads(1)
                .exports(exports)
                .build();
    }

    private static ExportConfig file(String name, Long sizeBytes, Path file) {
        return ExportConfig.builder()
                .name(name)
                .tenant("acme")
                .size(sizeBytes == null ? null : new ByteSize(sizeBytes))
                .file(file)
                .build();
    }

    @Test
    void laterExportFails_filesCreatedByThisStartAreRemovedAndOlderOnesKept() throws Exception {
        // examples/nbd.yaml left a 20 GiB sparse vm1-root.img in the repository when golden-image failed.
        byte[] data = new byte[64 << 10];
        new Random(1).nextBytes(data);
        Path existing = Files.write(dir.resolve("existing.img"), data);
        Path created = dir.resolve("created.img");
        assertThatThrownBy(() -> NbdServer.start(config(
                        file("existing", null, existing),
                        file("created", 20L << 30, created),
                        file("golden", null, dir.resolve("missing.raw")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("export golden: ");
        assertThat(created).doesNotExist();
        assertThat(Files.readAllBytes(existing))
                .as("a file that existed before is never touched")
                .isEqualTo(data);
    }

    @Test
    void addressTaken_filesCreatedByThisStartAreRemoved() throws Exception {
        Path created = dir.resolve("created.img");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            NbdConfig config = config(file("created", 1L << 20, created)).toBuilder()
                    .port(taken.getLocalPort())
                    .build();
            assertThatThrownBy(() -> NbdServer.start(config))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("cannot listen on 127.0.0.1:" + taken.getLocalPort());
        }
        assertThat(created).doesNotExist();
    }

    @Test
    void missingParentDirectory_namesThePathAndItsMissingParent() {
        Path file = dir.resolve("no-such-dir").resolve("disk.img");
        assertThatThrownBy(() -> NbdServer.start(config(file("disk", 1L << 20, file))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("export disk: cannot create " + file + ": its parent directory " + file.getParent()
                        + " does not exist");
    }

    @Test
    void sizeOverTheFileSystemLimit_isBadInputNamingExportSizeAndLimit() throws Exception {
        long sizeBytes = 17L << 40;
        try (RandomAccessFile probe = new RandomAccessFile(dir.resolve("probe").toFile(), "rw")) {
            probe.setLength(sizeBytes);
            assumeThat(false)
                    .as("the file system of %s takes a 17 TiB file (ext4 stops at 16 TiB)", dir)
                    .isTrue();
        } catch (IOException expected) {
            // ext4 with 4 KiB blocks: File too large.
        } finally {
            Files.deleteIfExists(dir.resolve("probe"));
        }
        Path file = dir.resolve("huge.img");
        assertThatThrownBy(() -> NbdServer.start(config(file("huge", sizeBytes, file))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("export huge: size 17TiB (" + sizeBytes + " bytes) is more than the file"
                        + " system of " + dir + " allows for one file")
                .hasMessageMatching("(?s).*expected: at most \\d+ bytes there, about .*TiB\\)");
        assertThat(file).as("no 0-byte file is left").doesNotExist();
    }

    @Test
    void createdFile_hasTheExactSizeAndStaysAfterAStartThatWorked() throws Exception {
        Path file = dir.resolve("sparse.img");
        try (NbdServer server = NbdServer.start(config(file("sparse", 1L << 30, file)))) {
            assertThat(server.exports().get(0).sizeBytes()).isEqualTo(1L << 30);
        }
        assertThat(Files.size(file)).isEqualTo(1L << 30);
    }
}
