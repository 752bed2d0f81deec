package dev.tailor.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Assumptions;

/**
 * Where tests find the public datasets of {@code ../shared/data} (see its PROVENANCE.md); they are
 * never copied into the repository.
 *
 * <p>The folder is, in order: the system property {@code tailor.dataDir} when set and not empty
 * (relative paths are taken from the project's root folder), the environment variable
 * {@code TAILOR_DATA_DIR}, then {@code ../shared/data} next to the checkout (the build passes it as
 * {@code tailor.dataDir.default}). When a file is missing the test is <em>skipped</em>, with the path
 * in the reason and on the console (a user's fresh clone has no data), unless
 * {@code TAILOR_REQUIRE_DATA=true} or {@code -Dtailor.requireData=true} (CI), where it <em>fails</em>.
 */
public final class SharedData {

    /** Missing paths already reported on the console, so each is said once per test JVM. */
    private static final Set<Path> REPORTED = ConcurrentHashMap.newKeySet();

    private SharedData() {}

    /** The data folder, whether or not it exists. */
    public static Path dir() {
        String property = System.getProperty("tailor.dataDir");
        if (property != null && !property.isBlank()) {
            Path path = Path.of(property);
            String project = System.getProperty("tailor.projectDir");
            if (!path.isAbsolute() && project != null && !project.isBlank()) {
                path = Path.of(project).resolve(path);
            }
            return path.toAbsolutePath().normalize();
        }
        String env = System.getenv("TAILOR_DATA_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env).toAbsolutePath().normalize();
        }
        String fallback = System.getProperty("tailor.dataDir.default");
        if (fallback != null && !fallback.isBlank()) {
            return Path.of(fallback).toAbsolutePath().normalize();
        }
        return Path.of("..", "..", "shared", "data").toAbsolutePath().normalize();
    }

    /** Whether a missing dataset must fail the test instead of skipping it. */
    public static boolean required() {
        return Boolean.parseBoolean(System.getProperty("tailor.requireData"))
                || Boolean.parseBoolean(System.getenv("TAILOR_REQUIRE_DATA"));
    }

    /**
     * The file or folder {@code relative} inside the data folder; skips the calling test (or fails
     * it, when data is required) if it does not exist.
     */
    public static Path require(String relative) {
        Path path = dir().resolve(relative);
        if (!Files.exists(path)) {
            String reason = "public dataset not found at " + path
                    + " (expected ../shared/data next to the checkout; set TAILOR_DATA_DIR or -Dtailor.dataDir)";
            if (required()) {
                throw new AssertionError(reason + "; TAILOR_REQUIRE_DATA is set, so this fails instead of skipping");
            }
            if (REPORTED.add(path)) {
                System.err.println("[SKIPPED] tests that need it: " + reason);
            }
            Assumptions.abort(reason);
        }
        return path;
    }
}
