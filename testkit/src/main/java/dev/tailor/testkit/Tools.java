package dev.tailor.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Assumptions;

/**
 * Real external programs that tests drive (Prometheus, NBD clients, ...). {@code .ci/run} installs
 * them; on a user's machine without them the test is <em>skipped</em> with the program's name and
 * the Debian package in the reason, unless {@code TAILOR_REQUIRE_TOOLS=true} or
 * {@code -Dtailor.requireTools=true} (CI), where it <em>fails</em>.
 */
public final class Tools {

    private static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();

    private Tools() {}

    /** Whether a missing program must fail the test instead of skipping it. */
    public static boolean required() {
        return Boolean.parseBoolean(System.getProperty("tailor.requireTools"))
                || Boolean.parseBoolean(System.getenv("TAILOR_REQUIRE_TOOLS"));
    }

    /** The program on the {@code PATH}, if any. */
    public static Optional<Path> find(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * The program {@code program} from the Debian package {@code debianPackage}; skips the calling
     * test (or fails it, when tools are required) if it is not on the {@code PATH}.
     */
    public static Path require(String program, String debianPackage) {
        Optional<Path> found = find(program);
        if (found.isPresent()) {
            return found.get();
        }
        String reason =
                program + " not found on the PATH (install the Debian package " + debianPackage + "; .ci/run does)";
        if (required()) {
            throw new AssertionError(reason + "; TAILOR_REQUIRE_TOOLS is set, so this fails instead of skipping");
        }
        if (REPORTED.add(program)) {
            System.err.println("[SKIPPED] tests that need it: " + reason);
        }
        Assumptions.abort(reason);
        throw new IllegalStateException("unreachable");
    }
}
