package dev.tailor.lab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether standard error is a terminal, so progress bars go only where someone watches. */
public final class Terminal {

    private Terminal() {}

    public static boolean stderrIsTerminal() {
        if ("dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        Path fd = Path.of("/proc/self/fd/2");
        if (Files.exists(fd)) {
            try {
                String target = Files.readSymbolicLink(fd).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            } catch (IOException | UnsupportedOperationException e) {
                return false;
            }
        }
        return System.console() != null;
    }
}
