package dev.tailor.common;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/** File and connection errors in the words users read in every message of the project, not Java's exception names. */
public final class IoErrors {

    private IoErrors() {}

    /**
     * The operating system's reason for {@code e} in words: {@code "permission denied"}, {@code "no such file or
     * directory"}, the file system's own reason ({@code "Not a directory"}), {@code "connection refused"} for a
     * connection that failed without a message (the JDK's HTTP client says nothing more; most often nothing
     * listens there), else the exception's message.
     */
    public static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            return fs.getReason();
        }
        if (e instanceof ConnectException && e.getMessage() == null) {
            return "connection refused";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
