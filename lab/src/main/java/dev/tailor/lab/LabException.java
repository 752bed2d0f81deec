package dev.tailor.lab;

/**
 * A user-facing failure of a lab entry point: bad input, a missing file, a program that failed. The
 * message is meant to be printed as is (no stack trace), and {@link #exitCode()} is the exit code a
 * command should end with: {@value #BAD_INPUT} for bad input, as for a usage error, 1 for a failure
 * while running.
 */
public class LabException extends RuntimeException {

    /** The exit code of bad input. */
    public static final int BAD_INPUT = 2;

    private final int exitCode;

    /** Bad input (exit {@value #BAD_INPUT}). */
    public LabException(String message) {
        this(message, BAD_INPUT, null);
    }

    /** Bad input (exit {@value #BAD_INPUT}) with its cause. */
    public LabException(String message, Throwable cause) {
        this(message, BAD_INPUT, cause);
    }

    /** A failure with the exit code a command should end with. */
    public LabException(String message, int exitCode, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** The exit code a command should end with: {@value #BAD_INPUT} for bad input, 1 for a failure. */
    public int exitCode() {
        return exitCode;
    }
}
