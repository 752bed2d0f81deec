package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * BaselineMeter labels a request within its disk's baseline exactly as the controller's baseline
 * guarantee would admit it: a tenant at its baseline is all within, one above it for longer than the
 * bucket's depth has the excess beyond; the rate, depth and scaling are the guarantee's.
 */
class BaselineMeterTest {

    private static final long MS = 1_000_000L;
    private static final Offset<Double> CLOSE = Offset.offset(1e-6);

    /**
     * Δ = 10 ms, W = 10, every request costs 90; disks a and b committed at 10,000 cost units per second
     * (one request per 9 ms), so each bucket is 1,000 cost units (11 requests and 10 cost units) deep.
     */
    private static final AdmissionConfig CONFIG = AdmissionConfig.DEFAULTS.toBuilder()
            .intervalNanos(10 * MS)
            .windowIntervals(10)
            .capacityCostUnitsPerSecond(1e6)
            .segmentSizeBytes(1 << 20)
            .blockSizeBytes(4096)
            .costModel(new IoCostModel(90, 0, 90, 0))
            .build();

    private static final List<VirtualDisk> DISKS =
            List.of(VirtualDisk.committed("a", 1 << 20, 10_000), VirtualDisk.committed("b", 1 << 20, 10_000));

    @Test
    void atItsBaseline_allWithin_twiceItForLongerThanTheDepth_theExcessBeyond() {
        BaselineMeter meter = new BaselineMeter(CONFIG, DISKS, 0);
        assertThat(meter.rateCostUnitsPerSecond(0)).isCloseTo(10_000.0, CLOSE);
        assertThat(meter.depthCostUnits(0)).isCloseTo(1_000.0, CLOSE);
        // a: one request every 9 ms (its baseline) for 10 s; b: one every 4.5 ms (2×) for 2 s, 20 depths.
        int aRequests = 0;
        int aWithin = 0;
        int bRequests = 0;
        int bWithin = 0;
        int bFirstBeyond = -1;
        for (long t = 0; t < 10_000 * MS; t += 4_500_000) {
            if (t % (9 * MS) == 0) {
                aRequests++;
                aWithin += meter.within(0, IoKind.READ, 0, 4096, t) ? 1 : 0;
            }
            if (t < 2_000 * MS) {
                boolean within = meter.within(1, IoKind.WRITE, 8192, 4096, t);
                if (!within && bFirstBeyond < 0) {
                    bFirstBeyond = bRequests;
                }
                bRequests++;
                bWithin += within ? 1 : 0;
            }
        }
        assertThat(aRequests).isEqualTo(1_112);
        assertThat(aWithin).as("a at its baseline: every request within").isEqualTo(aRequests);
        // b drains its full bucket by 45 cost units per request (charged 90, refilled 45): before its n-th
        // it holds 1,000 − 45 n, so the first 21 are within and the 22nd (n = 21, 55 left) is beyond.
        assertThat(bFirstBeyond).isEqualTo(21);
        // Of its 445 requests, the depth plus 1.998 s of baseline (1,000 + 19,980 cost units) are within:
        // 233; the excess, 212, beyond.
        assertThat(bRequests).isEqualTo(445);
        assertThat(bWithin).isEqualTo(233);
        // Idle since, b's bucket is full again, but no fuller than its depth: 11 requests within, the 12th not.
        int again = 0;
        while (meter.within(1, IoKind.READ, 0, 4096, 10_000 * MS)) {
            again++;
        }
        assertThat(again).isEqualTo(11);
    }

    @Test
    void rateAndDepth_areTheGuarantees_scaledTogetherWhenTheyExceedTheCapacity() {
        // Commitments of 10,000 and 30,000 on a capacity of 10,000: scaled by ¼, as the guarantee does.
        AdmissionConfig over =
                CONFIG.toBuilder().capacityCostUnitsPerSecond(10_000).build();
        List<VirtualDisk> disks =
                List.of(VirtualDisk.committed("a", 1 << 20, 10_000), VirtualDisk.committed("b", 1 << 20, 30_000));
        BaselineMeter scaled = new BaselineMeter(over, disks, 0);
        assertThat(scaled.rateCostUnitsPerSecond(0)).isCloseTo(2_500.0, CLOSE);
        assertThat(scaled.rateCostUnitsPerSecond(1)).isCloseTo(7_500.0, CLOSE);
        assertThat(scaled.depthCostUnits(1)).isCloseTo(750.0, CLOSE);
        BaselineMeter unscaled =
                new BaselineMeter(over.toBuilder().scaledBaselines(false).build(), disks, 0);
        assertThat(unscaled.rateCostUnitsPerSecond(1)).isCloseTo(30_000.0, CLOSE);
        assertThat(unscaled.depthCostUnits(1)).isCloseTo(3_000.0, CLOSE);
        // A disk without a commitment has the fair share: the capacity ÷ the disks.
        BaselineMeter fair =
                new BaselineMeter(CONFIG, List.of(VirtualDisk.of("a", 1 << 20), VirtualDisk.of("b", 1 << 20)), 0);
        assertThat(fair.rateCostUnitsPerSecond(1)).isCloseTo(500_000.0, CLOSE);
    }

    @Test
    void aRequestAcrossSegments_costsTheSumOfItsParts_asTheControllerCharges() {
        // a + b·bytes with a = 100, b = 1 per byte; 4 KiB blocks striped over 1 MiB segments. 8,192 bytes on a
        // disk of one segment cost 8,292; on a disk of two they span both, 2 × 4,196 = 8,392. Each bucket is
        // 84,000 × 0.1 s = 8,400 deep.
        AdmissionConfig config =
                CONFIG.toBuilder().costModel(new IoCostModel(100, 1, 100, 1)).build();
        BaselineMeter one = new BaselineMeter(config, List.of(VirtualDisk.committed("a", 1 << 20, 84_000)), 0);
        assertThat(one.within(0, IoKind.READ, 0, 8192, 0)).isTrue();
        assertThat(one.within(0, IoKind.READ, 0, 1, 0))
                .as("108 left: a 1-byte read, 101, fits")
                .isTrue();
        BaselineMeter two = new BaselineMeter(config, List.of(VirtualDisk.committed("a", 2 << 20, 84_000)), 0);
        assertThat(two.within(0, IoKind.READ, 0, 8192, 0)).isTrue();
        assertThat(two.within(0, IoKind.READ, 0, 1, 0))
                .as("8 left: 101 is beyond")
                .isFalse();
    }

    /**
     * Each disk's bucket is refilled from its own last refill: disk a drains its bucket to 10 at 0 ms,
     * disk b's requests arrive every millisecond after that (each refills b's bucket only), and at 8 ms
     * a's bucket holds 10 + 8 ms × 10 = 90, one request's cost, whoever arrived in between. So does the
     * controller's guarantee (every segment hot, so "steady" is exactly "the bucket covered it").
     */
    @Test
    void eachDisk_isRefilledFromItsOwnLastRefill_whateverOtherDisksDoInBetween() {
        AdmissionConfig everySegmentHot =
                CONFIG.toBuilder().hotThresholdRatio(1e-9).build();
        BaselineMeter meter = new BaselineMeter(everySegmentHot, DISKS, 0);
        AdmissionController controller = new AdmissionController(everySegmentHot, DISKS, 0);
        for (int i = 0; i < 11; i++) {
            assertThat(meter.within(0, IoKind.READ, 0, 4096, 0)).isTrue();
            assertThat(arrivedSteady(controller.acquire(0, IoKind.READ, 0, 4096, 0)))
                    .isTrue();
        }
        for (long ms = 1; ms <= 7; ms++) {
            assertThat(meter.within(1, IoKind.READ, 0, 4096, ms * MS)).isTrue();
            assertThat(arrivedSteady(controller.acquire(1, IoKind.READ, 0, 4096, ms * MS)))
                    .isTrue();
        }
        assertThat(meter.within(0, IoKind.READ, 0, 4096, 8 * MS))
                .as("a at 8 ms")
                .isTrue();
        assertThat(meter.within(0, IoKind.READ, 0, 4096, 8 * MS))
                .as("a again at 8 ms")
                .isFalse();
        assertThat(arrivedSteady(controller.acquire(0, IoKind.READ, 0, 4096, 8 * MS)))
                .as("controller: a at 8 ms")
                .isTrue();
        assertThat(arrivedSteady(controller.acquire(0, IoKind.READ, 0, 4096, 8 * MS)))
                .as("controller: a again at 8 ms")
                .isFalse();
    }

    private static boolean arrivedSteady(Admission admission) {
        return switch (admission) {
            case Admission.Admitted a -> a.ticket().arrivedAs() == SegmentClass.STEADY;
            case Admission.Queued q -> q.ticket().arrivedAs() == SegmentClass.STEADY;
            case Admission.Refused r -> false;
        };
    }

    @Test
    void agreesWithTheControllersGuarantee_requestByRequest() {
        // With a threshold so low that every segment is hot, the controller says "steady" of exactly the
        // requests its guarantee's bucket covered: the meter must say "within" of the same ones.
        qt().withExamples(100)
                .forAll(
                        integers().between(1, 1_000_000),
                        integers().between(1, 12),
                        integers().between(0, 1))
                .checkAssert((seed, window, unscaled) -> {
                    var random = new java.util.SplittableRandom(seed);
                    AdmissionConfig config = AdmissionConfig.DEFAULTS.toBuilder()
                            .intervalNanos(10 * MS)
                            .capacityCostUnitsPerSecond(30_000)
                            .segmentSizeBytes(200)
                            .blockSizeBytes(100)
                            .costModel(new IoCostModel(1, 1, 2, 1))
                            .windowIntervals(window)
                            .hotThresholdRatio(1e-9)
                            .scaledBaselines(unscaled == 0)
                            .queueCapacityPerSegment(random.nextInt(3))
                            // The guarantee taken at arrival: with disk order (the default) a request behind
                            // its own disk's waiting ones takes it later, so the bucket's charges differ.
                            .diskOrderAcrossGuarantee(false)
                            .build();
                    List<VirtualDisk> disks = List.of(
                            VirtualDisk.of("a", 1_000),
                            VirtualDisk.committed("b", 700, 1_000 + random.nextInt(30_000)),
                            VirtualDisk.committed("c", 500, 1_000 + random.nextInt(30_000)));
                    long now = 0;
                    AdmissionController controller = new AdmissionController(config, disks, now);
                    BaselineMeter meter = new BaselineMeter(config, disks, now);
                    int within = 0;
                    int beyond = 0;
                    for (int op = 0; op < 400; op++) {
                        if (random.nextInt(4) == 0) {
                            now += random.nextLong(3 * 10 * MS);
                            controller.onInterval(now);
                        } else {
                            int disk = random.nextInt(3);
                            long size = disks.get(disk).sizeBytes();
                            long offset = random.nextLong(size);
                            long length = 1 + random.nextLong(Math.min(400, size - offset));
                            IoKind kind = random.nextBoolean() ? IoKind.READ : IoKind.WRITE;
                            boolean mine = meter.within(disk, kind, offset, length, now);
                            Admission a = controller.acquire(disk, kind, offset, length);
                            SegmentClass theirs = switch (a) {
                                case Admission.Admitted ad -> ad.ticket().arrivedAs();
                                case Admission.Queued q -> q.ticket().arrivedAs();
                                case Admission.Refused r -> null;
                            };
                            if (theirs != null) {
                                assertThat(mine).as("request %d", op).isEqualTo(theirs == SegmentClass.STEADY);
                                within += mine ? 1 : 0;
                                beyond += mine ? 0 : 1;
                            }
                        }
                    }
                    assertThat(within + beyond).isPositive();
                });
    }

    @Test
    void badRequests_rejectedNamingTheField() {
        BaselineMeter meter = new BaselineMeter(CONFIG, DISKS, 0);
        assertThatThrownBy(() -> meter.within(2, IoKind.READ, 0, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("disk");
        assertThatThrownBy(() -> meter.within(0, null, 0, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kind");
        assertThatThrownBy(() -> meter.rateCostUnitsPerSecond(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("disk");
    }
}
