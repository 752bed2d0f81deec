package dev.tailor.cli;

import dev.tailor.common.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The options several commands share, as picocli mixins ({@code @Mixin}): one name, one help text,
 * one default and one check each.
 */
final class SharedOptions {

    private SharedOptions() {}

    /** Output formats of the simulators and the demo. */
    enum Format {
        table,
        json
    }

    /** {@code --format table|json}, for output whose JSON is {@code {"results": [...]}}. */
    static final class FormatOption {

        @Option(
                names = "--format",
                paramLabel = "FORMAT",
                defaultValue = "table",
                description = "table or json ({\"results\": [...]}). Default: ${DEFAULT-VALUE}.")
        Format format;

        boolean json() {
            return format == Format.json;
        }
    }

    /** {@code --report DIR}: an HTML report with plots, not written unless asked for. */
    static final class ReportOption {

        @Option(
                names = "--report",
                paramLabel = "DIR",
                description = "Also write an HTML report with plots to DIR/index.html.")
        Path report;

        /** The folder, created and checked (see {@link #checkReportDir}), or {@code null} when not given. */
        Path checked() {
            return report == null ? null : checkReportDir(report, "--report");
        }
    }

    /** {@code --threads N}: runs in parallel. */
    static final class ThreadsOption {

        @Option(
                names = "--threads",
                paramLabel = "N",
                description = "Runs in parallel. Default: the number of processors.")
        Integer threads;

        /** {@code --threads}, or the number of processors; a {@link CliException} outside 1 .. 256. */
        int workers() {
            int workers = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
            if (workers < 1 || workers > 256) {
                throw new CliException("--threads: " + workers + " (expected: 1 .. 256)");
            }
            return workers;
        }
    }

    /** {@code --seed N}: the seed of a run, else the scenario's. */
    static final class SeedOption {

        @Option(names = "--seed", paramLabel = "N", description = "Seed of the run. Default: the scenario's.")
        Long seed;
    }

    /**
     * {@code dir}, created if needed, after checking that a report can be written there; a
     * {@link CliException} naming {@code option} and the problem otherwise, before any simulation runs.
     */
    static Path checkReportDir(Path dir, String option) {
        if (dir.toString().isBlank()) {
            throw new CliException(option + ": empty (expected: a directory for index.html)");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new CliException(option + ": " + dir + " is a file (expected: a directory for index.html)");
        }
        Path index = dir.resolve("index.html");
        if (Files.isDirectory(index)) {
            throw new CliException(option + ": " + index + " is a directory (expected: a directory where index.html"
                    + " can be written)");
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new CliException(option + ": cannot create " + dir + " (" + IoErrors.reason(e)
                    + "; expected: a writable directory for index.html)");
        }
        String unwritable = IoErrors.cannotCreateIn(dir);
        if (unwritable != null) {
            throw new CliException(option + ": cannot write in " + dir + " (" + unwritable
                    + "; expected: a writable directory for index.html)");
        }
        return dir;
    }
}
