package dev.tailor.eventloop;

/**
 * Argument checks whose messages name the field, show the value and state the expectation, in the
 * form {@code name : value (expected: ...)}.
 */
final class Checks {

    private Checks() {
    }

    static long requireRange(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " : " + value + " (expected: " + min + " .. " + max + ")");
        }
        return value;
    }

    /** {@code min <= value <= max}; NaN fails. */
    static double requireRange(String name, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(name + " : " + value + " (expected: " + min + " .. " + max + ")");
        }
        return value;
    }

    static <T> T requireNonNull(String name, T value, String expected) {
        if (value == null) {
            throw new IllegalArgumentException(name + " : null (expected: " + expected + ")");
        }
        return value;
    }
}
