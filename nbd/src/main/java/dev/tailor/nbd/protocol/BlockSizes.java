package dev.tailor.nbd.protocol;

/**
 * Block size constraints of an export (proto.md, "Block size constraints"), advertised with
 * {@code NBD_INFO_BLOCK_SIZE}. The server enforces them: offsets and lengths that are not multiples of
 * the minimum, and reads, writes and write-zeroes longer than the maximum, fail with
 * {@code NBD_EINVAL}.
 *
 * @param minimumBytes   the smallest addressable length and alignment: a power of 2, 1 to 65,536
 * @param preferredBytes the length from which aligned requests are efficient: a power of 2, at least
 *                       512 and at least {@code minimumBytes}
 * @param maximumBytes   the longest read, write or write-zeroes accepted in one request: a multiple of
 *                       {@code minimumBytes}, at least {@code preferredBytes}, at most 2^30 here (a
 *                       read's reply is one buffer)
 */
public record BlockSizes(int minimumBytes, int preferredBytes, int maximumBytes) {

    /** Largest maximum this server accepts: one request's payload is one buffer. */
    public static final int LARGEST_MAXIMUM_BYTES = 1 << 30;

    /** @throws IllegalArgumentException naming the first constraint broken */
    public BlockSizes {
        if (minimumBytes < 1 || minimumBytes > 65_536 || Integer.bitCount(minimumBytes) != 1) {
            throw new IllegalArgumentException(
                    "minimumBytes: " + minimumBytes + " (expected: a power of 2 from 1 to 65536)");
        }
        if (preferredBytes < Math.max(512, minimumBytes) || Integer.bitCount(preferredBytes) != 1) {
            throw new IllegalArgumentException("preferredBytes: " + preferredBytes
                    + " (expected: a power of 2, at least 512 and at least minimumBytes " + minimumBytes + ")");
        }
        if (maximumBytes < preferredBytes || maximumBytes > LARGEST_MAXIMUM_BYTES || maximumBytes % minimumBytes != 0) {
            throw new IllegalArgumentException("maximumBytes: " + maximumBytes + " (expected: a multiple of"
                    + " minimumBytes " + minimumBytes + " from preferredBytes " + preferredBytes + " to 2^30)");
        }
    }
}
