package dev.tailor.lab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removing a folder the lab wrote (a run's work folder, a report's unpublished pages). */
final class Trees {

    private Trees() {}

    /**
     * Deletes {@code dir} and everything under it, deepest first; nothing when it is null or gone.
     *
     * @throws IOException when something cannot be deleted (what was deleted before stays deleted)
     */
    static void delete(Path dir) throws IOException {
        if (dir == null || Files.notExists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
