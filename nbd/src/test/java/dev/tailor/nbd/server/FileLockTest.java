package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.testing.Programs;
import dev.tailor.nbd.testing.TestServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock a server holds on each file it serves: a second server of the file fails to start, whether it is in
 * this process or another (qemu-nbd here; a second {@code tailor nbd serve} in the CLI's tests), and qemu cannot
 * open a file the server serves.
 */
class FileLockTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static NbdConfig serving(String name, Path file, boolean readOnly) {
        return TestServers.config(Limits.DEFAULTS, ExportConfig.file(name, "t", 1 << 20, readOnly, file));
    }

    @Test
    void aSecondServerOfTheFileInThisProcess_failsToStart_andOnceTheFirstStopsItStarts() throws Exception {
        // Was: both served it, writes through one appearing in the other.
        Path disk = Files.write(dir.resolve("disk.raw"), new byte[1 << 20]);
        Path link = Files.createSymbolicLink(dir.resolve("link.raw"), disk);
        try (NbdServer first = NbdServer.start(serving("first", disk, false))) {
            Throwable second = catchThrowable(() -> NbdServer.start(serving("second", link, true)));
            assertThat(second)
                    .isInstanceOf(IOException.class)
                    .hasMessage("export second: " + link.toAbsolutePath() + " is served already by this process"
                            + " (another export of the same file, or a link to it; expected: one export per file)")
                    .hasCauseInstanceOf(FileBackend.FileInUseException.class);
            assertThat(first.exports()).hasSize(1);
        }
        try (NbdServer again = NbdServer.start(serving("again", link, false))) {
            assertThat(again.exports())
                    .as("the lock went with the first server")
                    .hasSize(1);
        }
    }

    @Test
    void aFileQemuNbdServes_isRefusedNamingTheFileAndTheOtherProcess() throws Exception {
        String qemuNbd = Programs.require("qemu-nbd");
        Path disk = Files.write(dir.resolve("disk.raw"), new byte[1 << 20]);
        try (Programs.Daemon other = Programs.Daemon.start(
                qemuNbd, "--persistent", "-f", "raw", "-b", "127.0.0.1", "-p", "{port}", disk.toString())) {
            Throwable refused = catchThrowable(() -> NbdServer.start(serving("disk", disk, false)));
            assertThat(refused)
                    .isInstanceOf(IOException.class)
                    .hasMessage("export disk: cannot get a write lock on " + disk + ": another process holds a lock on"
                            + " it (another tailor nbd serve, or qemu using it); two servers of one file write over"
                            + " each other's data (expected: a file no other process is serving; stop the other, or"
                            + " serve a copy of " + disk + ")")
                    .hasCauseInstanceOf(FileBackend.FileInUseException.class);
            assertThat(other.process.isAlive()).isTrue();
        }
    }

    @Test
    void qemuCannotOpenAFileTheServerServes_writableOrReadOnly() throws Exception {
        String qemuIo = Programs.require("qemu-io");
        Path disk = Files.write(dir.resolve("disk.raw"), new byte[1 << 20]);
        try (NbdServer server = NbdServer.start(serving("disk", disk, false))) {
            Programs.Result write =
                    Programs.run(TIMEOUT, qemuIo, "-f", "raw", "-c", "write -P 0x5a 0 4096", disk.toString());
            assertThat(write.exitCode()).as(write.stderr()).isNotZero();
            assertThat(write.stderr()).contains("lock");
            Programs.Result read =
                    Programs.run(TIMEOUT, qemuIo, "-r", "-f", "raw", "-c", "read 0 4096", disk.toString());
            assertThat(read.exitCode()).as(read.stderr()).isNotZero();
            assertThat(server.exports()).hasSize(1);
        }
        assertThat(Files.readAllBytes(disk)).as("qemu wrote nothing").containsOnly((byte) 0);
        Programs.Result after =
                Programs.run(TIMEOUT, qemuIo, "-f", "raw", "-c", "write -P 0x5a 0 4096", disk.toString());
        assertThat(after.exitCode())
                .as("the lock went with the server; " + after.stderr())
                .isZero();
    }
}
