package dev.tailor.admission;

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

    static int requireRange(String name, int value, int min, int max) {
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

    /** {@code min < value <= max}; NaN fails. */
    static double requireAboveAtMost(String name, double value, double min, double max) {
        if (!(value > min && value <= max)) {
            throw new IllegalArgumentException(name + " : " + value + " (expected: > " + min + " .. " + max + ")");
        }
        return value;
    }

    static <T> T requireNonNull(String name, T value, String expected) {
        if (value == null) {
            throw new IllegalArgumentException(name + " : null (expected: " + expected + ")");
        }
        return value;
    }

    /** Sum of two non-negative longs, saturating at {@link Long#MAX_VALUE} instead of wrapping. */
    static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** Product of two non-negative longs, saturating at {@link Long#MAX_VALUE} instead of wrapping. */
    static long saturatedMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }
}
