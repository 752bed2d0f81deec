package dev.tailor.common;

/**
 * Argument checks whose messages name the field, show the value and state the expectation, in the
 * form {@code name : value (expected: ...)}, which the record constructors of every module use. A real
 * value reads as a user writes it ({@link Numbers#written}): {@code 0}, not {@code 0.0}; {@code 10000000},
 * not {@code 1.0E7}; {@code NaN} for NaN. Each returns the value it checked.
 *
 * @throws IllegalArgumentException from every {@code require*} method when the value is out of range
 */
public final class Checks {

    private Checks() {}

    public static long requireRange(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(message(name, value, min + " .. " + max));
        }
        return value;
    }

    public static int requireRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(message(name, value, min + " .. " + max));
        }
        return value;
    }

    /** {@code min <= value <= max}, the expectation written {@code a number in [min, max]}; NaN fails. */
    public static double requireRange(String name, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(
                    message(name, Numbers.written(value), Numbers.interval(false, min, max)));
        }
        return value;
    }

    /** {@code min < value <= max}, the expectation written {@code a number in (min, max]}; NaN fails. */
    public static double requireAboveAtMost(String name, double value, double min, double max) {
        if (!(value > min && value <= max)) {
            throw new IllegalArgumentException(message(name, Numbers.written(value), Numbers.interval(true, min, max)));
        }
        return value;
    }

    public static <T> T requireNonNull(String name, T value, String expected) {
        if (value == null) {
            throw new IllegalArgumentException(message(name, null, expected));
        }
        return value;
    }

    /** Sum of two non-negative longs, saturating at {@link Long#MAX_VALUE} instead of wrapping. */
    public static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** Product of two non-negative longs, saturating at {@link Long#MAX_VALUE} instead of wrapping. */
    public static long saturatedMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }

    /**
     * An argument's problem as its message: {@code name : value (expected: ...)}; the space before
     * the colon marks a programmer's argument, as opposed to a file's field ({@link Problem#message()}).
     */
    private static String message(String name, Object value, String expected) {
        Problem problem = new Problem(name, value, expected);
        return problem.path() + " : " + problem.value() + " (expected: " + problem.expected() + ")";
    }
}
