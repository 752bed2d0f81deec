package dev.tailor.common;

import java.util.Locale;

/** How the project's text and tables print a number, in one place. */
public final class Numbers {

    /** What a number that is not one ({@code NaN}) prints as. */
    public static final String NONE = "–";

    private Numbers() {}

    /**
     * {@code value} as the tables and logs print it: a whole number without a point ({@code 20}, {@code -1});
     * else to three significant digits, down to two decimals ({@code 123}, {@code 12.3}, {@code 1.23},
     * {@code 0.05}); {@link #NONE} for {@code NaN}.
     */
    public static String format(double value) {
        if (Double.isNaN(value)) {
            return NONE;
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e12) {
            return String.valueOf((long) value);
        }
        double abs = Math.abs(value);
        return String.format(Locale.ROOT, abs >= 100 ? "%.0f" : abs >= 10 ? "%.1f" : "%.2f", value);
    }
}
