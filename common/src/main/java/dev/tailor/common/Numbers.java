package dev.tailor.common;

import java.math.BigDecimal;
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

    /**
     * A number of bytes as the messages write a size: in the largest binary unit that divides it exactly, with
     * the exact count ({@code 1MiB = 1048576 bytes}), else the count alone ({@code 300 bytes}, {@code 1 byte}).
     */
    public static String bytes(long bytes) {
        String[] units = {"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"};
        for (int i = 0; i < units.length; i++) {
            int shift = 60 - 10 * i;
            if (bytes != 0 && bytes % (1L << shift) == 0) {
                return (bytes >> shift) + units[i] + " = " + bytes + " bytes";
            }
        }
        return bytes + (bytes == 1 ? " byte" : " bytes");
    }

    /**
     * {@code value} as a user writes it, for echoing a value back in an error message and for the bounds
     * an error states: exactly, the shortest decimal that reads back as the same double, without an
     * exponent or trailing zeros ({@code 0}, {@code -1.5}, {@code 0.0001}, {@code 2000000}); beyond
     * 15 digits before the point or 9 after it, with an exponent ({@code 1e308}, {@code 2.5e-12}).
     * {@code NaN} prints as {@code NaN}, the infinities as {@code Infinity} and {@code -Infinity}: as a user
     * writes them (Java, and so the command-line options, read exactly those).
     * Unlike {@link #format}, it never rounds: {@code 1.00001} is not the {@code 1} of a range's bound.
     */
    public static String written(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        if (value == 0) {
            return "0";
        }
        BigDecimal exact = BigDecimal.valueOf(value).stripTrailingZeros();
        if (exact.scale() > 9 || exact.precision() - exact.scale() > 15) {
            return exact.toString().replace("E+", "e").replace('E', 'e');
        }
        return exact.toPlainString();
    }

    /**
     * A real range as the messages write it, an interval: {@code [0, 1]} with {@code lowOpen}
     * {@code false}, {@code (0, 1]} with it {@code true}; the bounds as {@link #written}. An upper bound
     * of {@link Double#MAX_VALUE} reads as no bound: {@code a finite number >= 0} ({@code > 0}).
     */
    public static String interval(boolean lowOpen, double min, double max) {
        if (max == Double.MAX_VALUE) {
            return "a finite number " + (lowOpen ? "> " : ">= ") + written(min);
        }
        return "a number in " + (lowOpen ? "(" : "[") + written(min) + ", " + written(max) + "]";
    }
}
