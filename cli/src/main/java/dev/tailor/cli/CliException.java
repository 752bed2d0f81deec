package dev.tailor.cli;

import dev.tailor.lab.LabException;

/**
 * A user-facing failure: bad input, a missing file, an unusable option. The message is printed as
 * is (no stack trace) and the command exits with {@link #exitCode()}: 2 for bad input, as for a
 * usage error. The lab's entry points throw its parent, {@link LabException}, handled the same way.
 */
final class CliException extends LabException {

    CliException(String message) {
        super(message);
    }

    CliException(String message, Throwable cause) {
        super(message, cause);
    }

    CliException(String message, int exitCode, Throwable cause) {
        super(message, exitCode, cause);
    }
}
