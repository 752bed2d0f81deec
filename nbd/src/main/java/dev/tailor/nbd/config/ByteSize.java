package dev.tailor.nbd.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import dev.tailor.common.StrictReader;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A number of bytes in a configuration file: a whole number (bytes) or a string with a binary unit,
 * {@code "512"}, {@code "64KiB"}, {@code "32 MiB"}, {@code "1GiB"}, {@code "2TiB"} (B, KiB, MiB, GiB,
 * TiB; case-insensitive; no fractions).
 *
 * @param bytes the count, at least 0
 */
public record ByteSize(long bytes) {

    /** What a size field takes, in words, for error messages. */
    public static final String EXPECTED = "a size like 1GiB or a number of bytes";

    private static final Pattern TEXT = Pattern.compile("\\s*(\\d+)\\s*(b|kib|mib|gib|tib|k|m|g|t)?\\s*");

    /** @throws IllegalArgumentException when negative */
    public ByteSize {
        if (bytes < 0) {
            throw new IllegalArgumentException("size: " + bytes + " (expected: at least 0 bytes)");
        }
    }

    /**
     * @throws IllegalArgumentException for anything but a whole number of at least 0 or a string with a
     *                                  binary unit; the message is {@code VALUE (expected: ...)}
     */
    @JsonCreator
    public static ByteSize of(JsonNode node) {
        if (node.isIntegralNumber() && node.canConvertToLong() && node.longValue() >= 0) {
            return new ByteSize(node.longValue());
        }
        if (node.isTextual()) {
            return parse(node.textValue());
        }
        throw new IllegalArgumentException((node.isContainerNode() ? StrictReader.written(node, true) : node.toString())
                + " (expected: "
                + EXPECTED + ")");
    }

    /**
     * @throws IllegalArgumentException for anything but a whole number or a number with a binary unit; the
     *                                  message is {@code "TEXT" (expected: ...)}
     */
    public static ByteSize parse(String text) {
        Matcher m = TEXT.matcher(text.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("\"" + text + "\" (expected: " + EXPECTED + ", in B, KiB, MiB, GiB"
                    + " or TiB (K, M, G, T: the same), without fractions)");
        }
        int shift = switch (m.group(2) == null ? "b" : m.group(2)) {
            case "kib", "k" -> 10; // K, M, G and T are binary, as qemu-img and nbdkit read them
            case "mib", "m" -> 20;
            case "gib", "g" -> 30;
            case "tib", "t" -> 40;
            default -> 0;
        };
        try {
            long value = Long.parseLong(m.group(1));
            if (value > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return new ByteSize(value << shift);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + text + "\" (expected: a size under 8 EiB)");
        }
    }

    /** The size in the largest binary unit that divides it, e.g. {@code 1GiB} or {@code 1536KiB}. */
    @JsonValue
    @Override
    public String toString() {
        return format(bytes);
    }

    /**
     * {@code bytes} in the largest binary unit not above it, to one decimal, e.g. {@code 16TiB} for
     * 16 TiB − 4 KiB or {@code 1.5GiB}; for messages, next to the exact count.
     */
    public static String approximate(long bytes) {
        String[] units = {"TiB", "GiB", "MiB", "KiB"};
        for (int i = 0; i < units.length; i++) {
            int shift = 40 - 10 * i;
            if (bytes >= 1L << shift) {
                String number = String.format(Locale.ROOT, "%.1f", bytes / (double) (1L << shift));
                return (number.endsWith(".0") ? number.substring(0, number.length() - 2) : number) + units[i];
            }
        }
        return bytes + "B";
    }

    /** {@code bytes} in the largest binary unit that divides it exactly, e.g. {@code 1GiB}. */
    public static String format(long bytes) {
        String[] units = {"TiB", "GiB", "MiB", "KiB"};
        for (int i = 0; i < units.length; i++) {
            int shift = 40 - 10 * i;
            if (bytes != 0 && bytes % (1L << shift) == 0) {
                return (bytes >> shift) + units[i];
            }
        }
        return bytes + "B";
    }
}
