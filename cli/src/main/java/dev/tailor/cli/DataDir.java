package dev.tailor.cli;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the CLI finds the public datasets when no path is given: {@code TAILOR_DATA_DIR}, then
 * {@code ../shared/data} next to the source tree the jar was built in, then next to the current
 * directory.
 */
final class DataDir {

    private DataDir() {
    }

    /**
     * The existing path {@code relative} under a data folder, or a {@link CliException} naming the
     * option that gives it directly ({@code null} when there is none).
     */
    static Path require(String relative, String option) {
        List<Path> tried = new ArrayList<>();
        for (Path root : candidates()) {
            Path path = root.resolve(relative).toAbsolutePath().normalize();
            if (Files.exists(path)) {
                return path;
            }
            tried.add(path);
        }
        throw new CliException("dataset not found; looked at " + tried
                + " (expected: set TAILOR_DATA_DIR to the shared data folder" + (option == null ? "" : ", or pass " + option)
                + ")");
    }

    private static List<Path> candidates() {
        List<Path> roots = new ArrayList<>();
        String env = System.getenv("TAILOR_DATA_DIR");
        if (env != null && !env.isBlank()) {
            roots.add(Path.of(env));
        }
        try {
            // <repo>/cli/target/tailor.jar -> <repo>/../shared/data
            Path jar = Path.of(DataDir.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path repo = jar.getParent() == null || jar.getParent().getParent() == null ? null
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
