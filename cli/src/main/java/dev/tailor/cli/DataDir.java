package dev.tailor.cli;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the CLI finds the public datasets when no path is given: {@code TAILOR_DATA_DIR}, then
 * {@code ../shared/data} next to the source tree the jar was built in, then next to the current
 * directory. A {@code TAILOR_DATA_DIR} that is set is the only place looked at: when it is not a
 * folder that is an error, not a reason to quietly read another copy of the data.
 */
final class DataDir {

    private DataDir() {}

    /**
     * The existing path {@code relative} under a data folder, or a {@link CliException} naming the
     * option that gives it directly ({@code null} when there is none).
     */
    static Path require(String relative, String option) {
        return require(relative, option, System.getenv("TAILOR_DATA_DIR"));
    }

    /** {@link #require(String, String)} with {@code env} standing for {@code TAILOR_DATA_DIR} (tests). */
    static Path require(String relative, String option, String env) {
        if (env != null && !env.isBlank()) {
            Path root = Path.of(env).toAbsolutePath().normalize();
            if (!Files.isDirectory(root)) {
                throw new CliException(
                        "TAILOR_DATA_DIR=" + env + ": " + (Files.exists(root) ? "not a folder" : "no such folder")
                                + " (expected: the shared data folder, or unset it to use ../shared/data"
                                + (option == null ? "" : ", or pass " + option) + ")");
            }
            Path path = root.resolve(relative).normalize();
            if (!Files.exists(path)) {
                throw new CliException("dataset not found: " + path + " (TAILOR_DATA_DIR=" + env
                        + "; expected the layout of ../shared/data" + (option == null ? "" : ", or pass " + option)
                        + ")");
            }
            return path;
        }
        List<Path> tried = new ArrayList<>();
        Path foundRoot = null;
        for (Path root : candidates()) {
            Path path = root.resolve(relative).toAbsolutePath().normalize();
            if (Files.exists(path)) {
                return path;
            }
            tried.add(path);
            if (foundRoot == null && Files.isDirectory(root)) {
                foundRoot = root.toAbsolutePath().normalize();
            }
        }
        if (foundRoot != null) {
            // The data folder is there, the file is not: most likely a typo in the path.
            throw new CliException("dataset not found: " + relative + " is not in the data folder " + foundRoot
                    + " (expected: a path in its layout, see its PROVENANCE.md"
                    + (option == null ? "" : "; or pass " + option) + ")");
        }
        throw new CliException("dataset not found; looked at " + tried
                + " (expected: set TAILOR_DATA_DIR to the shared data folder"
                + (option == null ? "" : ", or pass " + option)
                + ")");
    }

    private static List<Path> candidates() {
        List<Path> roots = new ArrayList<>();
        try {
            // <repo>/cli/target/tailor.jar -> <repo>/../shared/data
            Path jar = Path.of(DataDir.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            Path repo = jar.getParent() == null || jar.getParent().getParent() == null
                    ? null
                    : jar.getParent().getParent().getParent();
            if (repo != null && repo.getParent() != null) {
                roots.add(repo.getParent().resolve("shared").resolve("data"));
            }
        } catch (URISyntaxException | RuntimeException e) {
            // no code source: fall through to the working directory
        }
        Path here = Path.of("..", "shared", "data").toAbsolutePath().normalize();
        if (!roots.contains(here)) {
            roots.add(here);
        }
        return roots;
    }
}
