package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

class SegmentMapTest {

    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    private static SegmentMap defaults(VirtualDisk... disks) {
        return new SegmentMap(
                List.of(disks), SegmentMap.DEFAULT_SEGMENT_SIZE_BYTES, SegmentMap.DEFAULT_BLOCK_SIZE_BYTES);
    }

    @Test
    void segmentCount_defaults_ceilOfSizeOver32GiBAndNumberedDiskAfterDisk() {
        // 100 GiB / 32 GiB = 3.125 -> 4 segments; 32 GiB exactly -> 1; 1 byte -> 1.
        SegmentMap map =
                defaults(VirtualDisk.of("a", 100 * GIB), VirtualDisk.of("b", 32 * GIB), VirtualDisk.of("c", 1));
        assertThat(map.segmentCount(0)).isEqualTo(4);
        assertThat(map.segmentCount(1)).isEqualTo(1);
        assertThat(map.segmentCount(2)).isEqualTo(1);
        assertThat(map.segmentCount()).isEqualTo(6);
        assertThat(map.firstSegment(1)).isEqualTo(4);
        assertThat(map.firstSegment(2)).isEqualTo(5);
        assertThat(map.diskOfSegment(3)).isZero();
        assertThat(map.diskOfSegment(4)).isEqualTo(1);
        assertThat(map.diskOfSegment(5)).isEqualTo(2);
        assertThat(map.describeSegment(3)).isEqualTo("disk \"a\" segment 3");
        assertThat(map.diskIndex("c")).isEqualTo(2);
    }

    @Test
    void segmentOf_blocksStripedAcrossSegments_blockIModN() {
        // Disk "a" of 100 GiB has 4 segments: 1 MiB block i lies in segment i mod 4, so consecutive
        // blocks go to different segments and block 4 wraps around to segment 0.
        SegmentMap map = defaults(VirtualDisk.of("x", 1 * GIB), VirtualDisk.of("a", 100 * GIB));
        int base = map.firstSegment(1);
        assertThat(map.segmentOf(1, 0)).isEqualTo(base);
        assertThat(map.segmentOf(1, MIB - 1)).isEqualTo(base);
        assertThat(map.segmentOf(1, MIB)).isEqualTo(base + 1);
        assertThat(map.segmentOf(1, 3 * MIB)).isEqualTo(base + 3);
        assertThat(map.segmentOf(1, 4 * MIB)).isEqualTo(base);
        assertThat(map.segmentOf(1, 4099 * MIB + 17)).isEqualTo(base + 4099 % 4);
        assertThat(map.segmentOf(1, 100 * GIB - 1)).isEqualTo(base + (int) ((100 * GIB / MIB - 1) % 4));
    }

    @Test
    void span_requestCrossingABlockBoundary_chargedToBothSegmentsWithItsBytesInEach() {
        // 8 KiB starting 4 KiB before the end of block 0: 4 KiB in segment 0, 4 KiB in segment 1.
        SegmentMap map = defaults(VirtualDisk.of("a", 100 * GIB));
        SegmentMap.Span span = map.span(0, MIB - 4096, 8192);
        assertThat(span.parts()).isEqualTo(2);
        assertThat(span.segment(0)).isZero();
        assertThat(span.bytes(0)).isEqualTo(4096);
        assertThat(span.segment(1)).isEqualTo(1);
        assertThat(span.bytes(1)).isEqualTo(4096);
    }

    @Test
    void span_moreBlocksThanSegments_eachSegmentGetsItsBlocksAndPartialEnds() {
        // Blocks of 100 B, segments of 400 B, a disk of 1,000 B: 3 segments, 10 blocks (block i in
        // segment i mod 3). Bytes 50 .. 949: segment 0 has blocks 0, 3, 6, 9 = 50 + 100 + 100 + 50,
        // segment 1 blocks 1, 4, 7 = 300, segment 2 blocks 2, 5, 8 = 300.
        SegmentMap map = new SegmentMap(List.of(VirtualDisk.of("a", 1000)), 400, 100);
        assertThat(map.segmentCount(0)).isEqualTo(3);
        SegmentMap.Span span = map.span(0, 50, 900);
        assertThat(span.parts()).isEqualTo(3);
        assertThat(new int[] {span.segment(0), span.segment(1), span.segment(2)})
                .containsExactly(0, 1, 2);
        assertThat(new long[] {span.bytes(0), span.bytes(1), span.bytes(2)}).containsExactly(300, 300, 300);
        // Starting in block 2: order of first touch is segment 2, 0, 1.
        SegmentMap.Span later = map.span(0, 250, 350);
        assertThat(later.toString()).isEqualTo("Span[2:150, 0:100, 1:100]");
    }

    @Test
    void span_wholeHugeDisk_exactDespiteProductsBeyondLongRange() {
        // A disk of Long.MAX_VALUE bytes in one segment of the largest multiple of 1 MiB: the whole
        // disk is one part of exactly Long.MAX_VALUE bytes even though blocks × block size overflows.
        long segment = Long.MAX_VALUE / MIB * MIB;
        SegmentMap map = new SegmentMap(List.of(VirtualDisk.of("a", Long.MAX_VALUE)), segment, MIB);
        assertThat(map.segmentCount(0)).isEqualTo(2);
        SegmentMap.Span span = map.span(0, 0, Long.MAX_VALUE);
        assertThat(span.bytes(0) + span.bytes(1)).isEqualTo(Long.MAX_VALUE);
        assertThat(span.bytes(0)).isPositive();
        assertThat(span.bytes(1)).isPositive();
    }

    @Test
    void segments_neverHoldMoreThanSegmentSize() {
        // Why the segment size must be a multiple of the block size: then striping never puts more
        // than segmentSize bytes in one segment. 1,000 B disk, 400 B segments: 400 + 300 + 300.
        SegmentMap map = new SegmentMap(List.of(VirtualDisk.of("a", 1000)), 400, 100);
        SegmentMap.Span all = map.span(0, 0, 1000);
        assertThat(all.toString()).isEqualTo("Span[0:400, 1:300, 2:300]");
    }

    @Test
    void span_badRequests_rejectedNamingFieldValueAndExpectation() {
        SegmentMap map = defaults(VirtualDisk.of("a", GIB));
        assertThatThrownBy(() -> map.span(0, -1, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("offsetBytes : -1 (expected: 0 .. 1073741823, inside disk \"a\" of 1073741824 bytes)");
        assertThatThrownBy(() -> map.span(0, GIB, 10)).hasMessageStartingWith("offsetBytes : 1073741824 (expected");
        assertThatThrownBy(() -> map.span(0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lengthBytes : 0 (expected: 1 .. 1073741824, the bytes from offsetBytes 0 to the end "
                        + "of disk \"a\")");
        assertThatThrownBy(() -> map.span(0, GIB - 10, 11))
                .hasMessageStartingWith("lengthBytes : 11 (expected: 1 .. 10");
        assertThatThrownBy(() -> map.span(0, 10, Long.MAX_VALUE))
                .hasMessageStartingWith("lengthBytes : " + Long.MAX_VALUE);
        assertThatThrownBy(() -> map.span(1, 0, 1)).hasMessage("disk : 1 (expected: 0 .. 0)");
        assertThatThrownBy(() -> map.diskIndex("b")).hasMessage("disk : \"b\" (expected: one of [a])");
    }

    @Test
    void constructor_badSizes_rejectedNamingTheField() {
        List<VirtualDisk> a = List.of(VirtualDisk.of("a", GIB));
        assertThatThrownBy(() -> new SegmentMap(a, 3 * MIB + 1, MIB))
                .hasMessage("segmentSizeBytes : 3145729 (expected: a multiple of blockSizeBytes, 1MiB = 1048576 bytes,"
                        + " at least 1MiB)");
        assertThatThrownBy(() -> new SegmentMap(a, 100, 200))
                .hasMessage("segmentSizeBytes : 100 (expected: a multiple of blockSizeBytes, 200 bytes, at least 200"
                        + " bytes)");
        assertThatThrownBy(() -> new SegmentMap(a, MIB, 0))
                .hasMessage("blockSizeBytes : 0 (expected: at least 1 byte)");
        assertThatThrownBy(() -> new SegmentMap(List.of(), MIB, MIB))
                .hasMessage("disks : [] (expected: at least one disk)");
        assertThatThrownBy(() -> new SegmentMap(List.of(VirtualDisk.of("a", 1), VirtualDisk.of("a", 2)), MIB, MIB))
                .hasMessageContaining("\"a\" appears twice");
        assertThatThrownBy(() -> new SegmentMap(List.of(VirtualDisk.of("a", Long.MAX_VALUE)), MIB, MIB))
                .hasMessageContaining("at most 1048576 per controller");
        assertThatThrownBy(() -> VirtualDisk.of("a", 0)).hasMessageStartingWith("sizeBytes of disk \"a\" : 0");
        assertThatThrownBy(() -> VirtualDisk.of(" ", 1)).hasMessage("name : \" \" (expected: a non-blank disk name)");
        assertThatThrownBy(() -> VirtualDisk.committed("a", 1, Double.NaN))
                .hasMessageStartingWith(
                        "commitmentCostUnitsPerSecond of disk \"a\" : NaN (expected: a finite number >= 0)");
        assertThatThrownBy(() -> VirtualDisk.committed("a", 1, -1))
                .hasMessageStartingWith("commitmentCostUnitsPerSecond of disk \"a\" : -1 ");
    }

    @Test
    void span_randomRequests_matchesABlockByBlockWalk() {
        // Reference model: walk every byte range block by block and add it to block mod n. The
        // closed form must agree exactly, list each segment once, and cover the request's bytes.
        qt().withExamples(2000)
                .forAll(layouts(), longs().between(0, Long.MAX_VALUE), longs().all())
                .checkAssert((layout, offsetSeed, lengthSeed) -> {
                    SegmentMap map = new SegmentMap(List.of(VirtualDisk.of("d", layout[0])), layout[1], layout[2]);
                    long size = layout[0];
                    long offset = offsetSeed % size;
                    long length = 1 + Math.floorMod(lengthSeed, size - offset);
                    SegmentMap.Span span = map.span(0, offset, length);
                    Map<Integer, Long> expected = walk(offset, length, layout[2], map.segmentCount(0));
                    Map<Integer, Long> actual = new LinkedHashMap<>();
                    for (int i = 0; i < span.parts(); i++) {
                        assertThat(actual.put(span.segment(i), span.bytes(i)))
                                .as("segment listed twice")
                                .isNull();
                        assertThat(span.bytes(i)).isPositive();
                    }
                    assertThat(actual).containsExactlyEntriesOf(expected);
                    assertThat(span.segment(0)).isEqualTo(map.segmentOf(0, offset));
                });
    }

    /** Bytes per segment, in order of first touch, by walking the blocks one at a time. */
    private static Map<Integer, Long> walk(long offset, long length, long block, int n) {
        Map<Integer, Long> bytes = new LinkedHashMap<>();
        long at = offset;
        long end = offset + length;
        while (at < end) {
            long blockEnd = (at / block + 1) * block;
            long part = Math.min(end, blockEnd) - at;
            bytes.merge((int) ((at / block) % n), part, Long::sum);
            at += part;
        }
        return bytes;
    }

    /** {disk size, segment size, block size}, small enough to walk: at most a few thousand blocks. */
    private static Gen<long[]> layouts() {
        return integers()
                .between(1, 64)
                .zip(integers().between(1, 8), integers().between(1, 4000), (block, blocksPerSegment, blocks) -> {
                    long size = Math.max(1, (long) blocks * block - block / 2);
                    return new long[] {size, (long) block * blocksPerSegment, block};
                })
                .describedAs(l -> "size " + l[0] + ", segment " + l[1] + ", block " + l[2]);
    }
}
