package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the CLI looks for the datasets when {@code TAILOR_DATA_DIR} is set. */
class DataDirTest {

    @TempDir
    Path dir;

    @Test
    void require_setFolder_isUsed() throws IOException {
        Path file = Files.createDirectories(dir.resolve("block_io")).resolve("trace.csv");
        Files.writeString(file, "x");

        assertThat(DataDir.require("block_io/trace.csv", null, dir.toString())).isEqualTo(file);
    }

    @Test
    void require_setFolderMissing_isAnErrorNamingTheVariable_notAQuietFallback() {
        String missing = dir.resolve("nope").toString();

        assertThatThrownBy(() -> DataDir.require("block_io/trace.csv", "--dataset", missing))
                .isInstanceOf(CliException.class)
                .hasMessageContaining("TAILOR_DATA_DIR=" + missing + ": no such folder")
                .hasMessageContaining("--dataset");
    }

    @Test
    void require_setToAFile_saysSo() throws IOException {
        Path file = Files.writeString(dir.resolve("data.txt"), "x");

        assertThatThrownBy(() -> DataDir.require("block_io/trace.csv", null, file.toString()))
                .isInstanceOf(CliException.class)
                .hasMessageContaining("not a folder");
    }

    @Test
    void require_fileMissingUnderTheSetFolder_namesThePath() {
        assertThatThrownBy(() -> DataDir.require("block_io/trace.csv", null, dir.toString()))
                .isInstanceOf(CliException.class)
                .hasMessageContaining(dir.resolve("block_io/trace.csv").toString());
    }
}
