package dev.tailor.common;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLException;

/** File and connection errors in the words users read in every message of the project, not Java's exception names. */
public final class IoErrors {

    private IoErrors() {}

    /**
     * The operating system's reason for {@code e} in words: {@code "permission denied"}, {@code "no such file or
     * directory"}, the file system's own reason ({@code "Not a directory"}), a failed connection's reason as
     * {@link #connectionReason} words it, else the exception's message.
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
        String network = network(e, null);
        if (network != null) {
            return network;
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * Why no file can be created in the folder {@code dir}, in {@link #reason}'s words, or null when one can: a hidden
     * file is created there and removed. {@link Files#isWritable} is no such check: for root it passes on any folder,
     * also on one that takes no file (a read-only file system, Linux's /proc).
     */
    public static String cannotCreateIn(Path dir) {
        try {
            Files.delete(Files.createTempFile(dir, ".tailor-", ".tmp"));
            return null;
        } catch (IOException e) {
            return reason(e);
        }
    }

    /**
     * Why a connection, or a request over it, failed, in words, from {@code error} and its causes: {@code "its
     * host name does not resolve"}, {@code "connection refused"} (also for a connection that failed without a
     * message: the JDK's HTTP client says nothing more, and most often nothing listens there), {@code "connection
     * timed out after 2 s"}, {@code "no answer within 2 s"}, {@code "TLS failed (<why>)"}, else the innermost
     * message found ({@code "No route to host"}), else {@code "the connection failed"}; never an exception's name.
     *
     * @param timeout the timeout that expired, named in the words when given; may be null
     */
    public static String connectionReason(Throwable error, Duration timeout) {
        String network = network(error, timeout);
        if (network != null) {
            return network;
        }
        String message = innermostMessage(error);
        return message == null ? "the connection failed" : message;
    }

    /** The words for the first network failure among {@code error}'s causes, or null when there is none. */
    private static String network(Throwable error, Duration timeout) {
        String after = timeout == null ? "" : " after " + seconds(timeout) + " s";
        String words = null;
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            // The name lookup decides: a client may report it as a connection that failed without a message.
            if (cause instanceof UnresolvedAddressException || cause instanceof UnknownHostException) {
                return "its host name does not resolve";
            }
            if (words != null) {
                continue;
            }
            if (cause instanceof SSLException) {
                String why = innermostMessage(cause);
                words = "TLS failed" + (why == null ? "" : " (" + why + ")");
            } else if (cause instanceof HttpConnectTimeoutException) {
                words = "connection timed out" + after;
            } else if (cause instanceof HttpTimeoutException || cause instanceof SocketTimeoutException) {
                words = timeout == null ? "timed out" : "no answer within " + seconds(timeout) + " s";
            } else if (cause instanceof ConnectException) {
                String message = innermostMessage(cause);
                words = message == null || message.equalsIgnoreCase("Connection refused")
                        ? "connection refused"
                        : message;
            }
        }
        return words;
    }

    /** The message of the innermost cause that has one, or null. */
    private static String innermostMessage(Throwable error) {
        String message = null;
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
                message = cause.getMessage();
            }
        }
        return message;
    }

    private static String seconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString();
    }
}
