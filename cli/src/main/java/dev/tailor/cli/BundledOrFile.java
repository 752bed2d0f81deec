package dev.tailor.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An option that takes a bundled name or a file ({@code --scenario NAME|FILE}). A bundled name is the
 * bundled one, as it has always been, also when a file of that name is in the working directory; that
 * file is told once, on standard error, with how to run it instead.
 */
final class BundledOrFile {

    private BundledOrFile() {}

    /**
     * {@code tailor: note: --scenario mix50 is the bundled scenario; the file ./mix50 is not read (give a path,
     * ./mix50, to run it)} when {@code name} is {@code bundled} and a file of that name is in {@code workingDir};
     * otherwise null.
     *
     * @param option     the option as the user gave it ({@code --scenario})
     * @param workingDir the directory a relative path is read from ({@code Path.of("")}: the working directory)
     */
    static String note(String option, String name, boolean bundled, Path workingDir) {
        if (!bundled || !Files.isRegularFile(workingDir.resolve(name))) {
            return null;
        }
        String path = "./" + name;
        return "tailor: note: " + option + " " + name + " is the bundled scenario; the file " + path
                + " is not read (give a path, " + path + ", to run it)";
    }
}
