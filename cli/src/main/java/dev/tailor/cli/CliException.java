package dev.tailor.cli;

/**
 * A user-facing failure: bad input, a missing file, an unusable option. The message is printed as
 * is (no stack trace) and the command exits with {@link #exitCode()}: 2 for bad input, as for a
 * usage error.
 */
final class CliException extends RuntimeException {

    static final int BAD_INPUT = 2;

    private final int exitCode;

    CliException(String message) {
        this(message, BAD_INPUT, null);
    }

    CliException(String message, Throwable cause) {
        this(message, BAD_INPUT, cause);
    }

    CliException(String message, int exitCode, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
