package dev.tailor.admission;

import dev.tailor.common.Checks;
import dev.tailor.common.Numbers;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a block request lands: the virtual disks of one controller cut into segments, with each
 * disk's address space cut into logical blocks striped across its segments (docs/design.md#segment-map).
 * Block {@code i} of a disk with {@code n} segments belongs to segment {@code i mod n}; a
 * request that spans blocks is charged to every segment it touches, with the bytes it has there.
 *
 * <p>Contract. A disk of {@code D} bytes has {@code ceil(D / segmentSizeBytes)} segments and
 * {@code ceil(D / blockSizeBytes)} blocks. Because the segment size is a whole number of blocks, no
 * segment holds more than {@code segmentSizeBytes}. Segments are numbered globally, disk after disk
 * in the order given: disk {@code d}'s segments are {@code firstSegment(d) ..
 * firstSegment(d) + segmentCount(d) - 1}. The bytes of a {@link Span} add up to the request's length,
 * and its segments are distinct. Immutable and thread-safe.
 */
/*
 * Maintainer note. A span is computed in O(min(blocks spanned, n)) without walking the blocks: the
 * request covers the blocks first .. last (b = last - first + 1 of them); the t-th of these (t = 0 ..
 * b - 1) lies in segment (first + t) mod n, so the j-th distinct segment (j < min(b, n)) receives the
 * c_j = (b - 1 - j) / n + 1 blocks with t = j (mod n). Every block is whole except the first (short
 * by offset mod B at its start) and the last (short at its end); the first belongs to j = 0 and the
 * last to j = (b - 1) mod n. A 1 TiB read of a disk with four segments is four parts, not a million
 * block visits. The products c_j * B may exceed a long for requests near 2^63 bytes, but Java's long
 * arithmetic is modular and each part's true value fits, so the result is exact.
 */
public final class SegmentMap {

    /** The design default segment size, 32 GiB (docs/design.md#segment-map). */
    public static final long DEFAULT_SEGMENT_SIZE_BYTES = 32L << 30;
    /** The design default logical block size, 1 MiB (docs/design.md#segment-map). */
    public static final long DEFAULT_BLOCK_SIZE_BYTES = 1L << 20;
    /**
     * Most segments one controller tracks (about 100 bytes of state each, so about 100 MiB at the
     * limit; 32 PiB of disks at the default segment size).
     */
    public static final int MAX_SEGMENTS = 1 << 20;

    private final List<VirtualDisk> disks;
    private final long segmentSizeBytes;
    private final long blockSizeBytes;
    /** firstSegment[d] for each disk d; firstSegment[disks.size()] is the total. */
    private final int[] firstSegment;

    private final Map<String, Integer> indexByName;

    /**
     * The block size at least one byte, and the segment size a whole number of blocks, in sizes
     * ({@code segmentSizeBytes : 1024 (expected: a multiple of blockSizeBytes, 1MiB = 1048576 bytes, at least
     * 1MiB)}), not a range up to {@link Long#MAX_VALUE}.
     *
     * @throws IllegalArgumentException naming the field that is wrong
     */
    static void requireSizes(long segmentSizeBytes, long blockSizeBytes) {
        if (blockSizeBytes < 1) {
            throw new IllegalArgumentException("blockSizeBytes : " + blockSizeBytes + " (expected: at least 1 byte)");
        }
        if (segmentSizeBytes < blockSizeBytes || segmentSizeBytes % blockSizeBytes != 0) {
            String block = Numbers.bytes(blockSizeBytes);
            throw new IllegalArgumentException("segmentSizeBytes : " + segmentSizeBytes
                    + " (expected: a multiple of blockSizeBytes, " + block + ", at least "
                    + block.replaceFirst(" = .*", "") + ")");
        }
    }

    /**
     * @param disks            the disks, at least one, names unique; their order fixes the disk and
     *                         segment numbers
     * @param segmentSizeBytes bytes per segment, a positive multiple of {@code blockSizeBytes}
     * @param blockSizeBytes   bytes per logical block, {@code >= 1}
     * @throws IllegalArgumentException naming the field when a size is out of range, the segment size
     *                                  is not a multiple of the block size, there are no disks or a
     *                                  name repeats, or the disks need more than {@link #MAX_SEGMENTS}
     */
    public SegmentMap(List<VirtualDisk> disks, long segmentSizeBytes, long blockSizeBytes) {
        Checks.requireNonNull("disks", disks, "a list of at least one disk");
        if (disks.isEmpty()) {
            throw new IllegalArgumentException("disks : [] (expected: at least one disk)");
        }
        requireSizes(segmentSizeBytes, blockSizeBytes);
        this.disks = List.copyOf(disks);
        this.segmentSizeBytes = segmentSizeBytes;
        this.blockSizeBytes = blockSizeBytes;
        this.firstSegment = new int[disks.size() + 1];
        this.indexByName = new HashMap<>();
        long total = 0;
        for (int d = 0; d < this.disks.size(); d++) {
            VirtualDisk disk = this.disks.get(d);
            if (indexByName.putIfAbsent(disk.name(), d) != null) {
                throw new IllegalArgumentException(
                        "disks : name \"" + disk.name() + "\" appears twice (expected: " + "unique names)");
            }
            firstSegment[d] = (int) total;
            total += (disk.sizeBytes() - 1) / segmentSizeBytes + 1;
            if (total > MAX_SEGMENTS) {
                throw new IllegalArgumentException("disks : " + total + " segments up to disk \"" + disk.name()
                        + "\" (expected: at most " + MAX_SEGMENTS + " per controller; raise segmentSizeBytes)");
            }
        }
        firstSegment[this.disks.size()] = (int) total;
    }

    /** The disks, in the order that numbers them. */
    public List<VirtualDisk> disks() {
        return disks;
    }

    /** Bytes per segment. */
    public long segmentSizeBytes() {
        return segmentSizeBytes;
    }

    /** Bytes per logical block. */
    public long blockSizeBytes() {
        return blockSizeBytes;
    }

    /** Number of disks. */
    public int diskCount() {
        return disks.size();
    }

    /**
     * The number of the disk called {@code name}.
     *
     * @throws IllegalArgumentException when no disk has that name
     */
    public int diskIndex(String name) {
        Integer index = indexByName.get(name);
        if (index == null) {
            throw new IllegalArgumentException(
                    "disk : \"" + name + "\" (expected: one of " + indexByName.keySet() + ")");
        }
        return index;
    }

    /** Segments of all disks together. */
    public int segmentCount() {
        return firstSegment[disks.size()];
    }

    /** Segments of disk {@code disk}: {@code ceil(size / segmentSizeBytes)}. */
    public int segmentCount(int disk) {
        checkDisk(disk);
        return firstSegment[disk + 1] - firstSegment[disk];
    }

    /** Global number of disk {@code disk}'s segment 0. */
    public int firstSegment(int disk) {
        checkDisk(disk);
        return firstSegment[disk];
    }

    /** The disk that global segment {@code segment} belongs to. */
    public int diskOfSegment(int segment) {
        Checks.requireRange("segment", segment, 0, segmentCount() - 1);
        int lo = 0;
        int hi = disks.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (firstSegment[mid] <= segment) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** A readable name for global segment {@code segment}, e.g. {@code disk "a" segment 3}. */
    public String describeSegment(int segment) {
        int disk = diskOfSegment(segment);
        return "disk \"" + disks.get(disk).name() + "\" segment " + (segment - firstSegment[disk]);
    }

    /**
     * Global segment holding byte {@code offsetBytes} of disk {@code disk}.
     *
     * @throws IllegalArgumentException when the disk does not exist or the offset lies outside it
     */
    public int segmentOf(int disk, long offsetBytes) {
        checkDisk(disk);
        long size = disks.get(disk).sizeBytes();
        if (offsetBytes < 0 || offsetBytes >= size) {
            throw new IllegalArgumentException("offsetBytes : " + offsetBytes + " (expected: 0 .. " + (size - 1)
                    + ", inside disk \"" + disks.get(disk).name() + "\" of " + size + " bytes)");
        }
        int n = firstSegment[disk + 1] - firstSegment[disk];
        return firstSegment[disk] + (int) ((offsetBytes / blockSizeBytes) % n);
    }

    /**
     * The segments the request {@code [offsetBytes, offsetBytes + lengthBytes)} of disk {@code disk}
     * touches, with its bytes in each, in the order of the request's first byte in them.
     *
     * @throws IllegalArgumentException when the disk does not exist, the offset is negative or past
     *                                  the end, the length is below 1, or the request runs past the end
     *                                  of the disk
     */
    public Span span(int disk, long offsetBytes, long lengthBytes) {
        checkRequest(disk, offsetBytes, lengthBytes);
        int n = firstSegment[disk + 1] - firstSegment[disk];
        long firstBlock = offsetBytes / blockSizeBytes;
        long end = offsetBytes + lengthBytes;
        long lastBlock = (end - 1) / blockSizeBytes;
        long blocks = lastBlock - firstBlock + 1;
        int parts = (int) Math.min(blocks, n);
        int[] segments = new int[parts];
        long[] bytes = new long[parts];
        for (int j = 0; j < parts; j++) {
            segments[j] = firstSegment[disk] + (int) ((firstBlock + j) % n);
            bytes[j] = ((blocks - 1 - j) / n + 1) * blockSizeBytes;
        }
        bytes[0] -= offsetBytes - firstBlock * blockSizeBytes;
        bytes[(int) ((blocks - 1) % n)] -= blockSizeBytes - (end - lastBlock * blockSizeBytes);
        return new Span(segments, bytes);
    }

    /**
     * Whether the request lies in one block (so in one segment): the common case, which the
     * controller serves without building a {@link Span}.
     */
    boolean singleBlock(long offsetBytes, long lengthBytes) {
        return offsetBytes / blockSizeBytes == (offsetBytes + lengthBytes - 1) / blockSizeBytes;
    }

    /** Checks a request as {@link #span} does. */
    void checkRequest(int disk, long offsetBytes, long lengthBytes) {
        checkDisk(disk);
        VirtualDisk d = disks.get(disk);
        long size = d.sizeBytes();
        if (offsetBytes < 0 || offsetBytes >= size) {
            throw new IllegalArgumentException("offsetBytes : " + offsetBytes + " (expected: 0 .. " + (size - 1)
                    + ", inside disk \"" + d.name() + "\" of " + size + " bytes)");
        }
        if (lengthBytes < 1 || lengthBytes > size - offsetBytes) {
            throw new IllegalArgumentException("lengthBytes : " + lengthBytes + " (expected: 1 .. "
                    + (size - offsetBytes) + ", the bytes from offsetBytes " + offsetBytes + " to the end of disk \""
                    + d.name() + "\")");
        }
    }

    private void checkDisk(int disk) {
        if (disk < 0 || disk >= disks.size()) {
            throw new IllegalArgumentException("disk : " + disk + " (expected: 0 .. " + (disks.size() - 1) + ")");
        }
    }

    /**
     * The parts of one request: distinct global segments and the bytes of the request in each, in
     * the order of the request's first byte in them. Immutable.
     */
    public static final class Span {
        private final int[] segments;
        private final long[] bytes;

        Span(int[] segments, long[] bytes) {
            this.segments = segments;
            this.bytes = bytes;
        }

        /** Number of segments touched, {@code >= 1}. */
        public int parts() {
            return segments.length;
        }

        /** Global segment of part {@code part}. */
        public int segment(int part) {
            return segments[part];
        }

        /** Bytes of the request in part {@code part}'s segment, {@code >= 1}. */
        public long bytes(int part) {
            return bytes[part];
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder("Span[");
            for (int i = 0; i < segments.length; i++) {
                s.append(i == 0 ? "" : ", ").append(segments[i]).append(':').append(bytes[i]);
            }
            return s.append(']').toString();
        }
    }
}
