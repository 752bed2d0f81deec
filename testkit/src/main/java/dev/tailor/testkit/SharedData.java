package dev.tailor.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * Where tests find the public datasets of {@code ../shared/data} (see its PROVENANCE.md); they are
 * never copied into the repository.
 *
 * <p>The folder is the system property {@code tailor.dataDir} (set by the build to
 * {@code ../shared/data} next to the checkout), else the environment variable
 * {@code TAILOR_DATA_DIR}. When a file is missing the test is <em>skipped</em> with the path in the
 * reason (a user's fresh clone has no data), unless {@code TAILOR_REQUIRE_DATA=true} or
 * {@code -Dtailor.requireData=true} (CI), where it <em>fails</em>.
 */
public final class SharedData {

    private SharedData() {
    }

    /** The data folder, whether or not it exists. */
    public static Path dir() {
        String property = System.getProperty("tailor.dataDir");
        if (property != null && !property.isBlank()) {
            return Path.of(property).toAbsolutePath().normalize();
        }
        String env = System.getenv("TAILOR_DATA_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env).toAbsolutePath().normalize();
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
                    + " (expected ../shared/data next to the checkout; set -Dtailor.dataDir or TAILOR_DATA_DIR)";
            if (required()) {
                throw new AssertionError(reason + "; TAILOR_REQUIRE_DATA is set, so this fails instead of skipping");
            }
            Assumptions.abort(reason);
        }
        return path;
    }
}
