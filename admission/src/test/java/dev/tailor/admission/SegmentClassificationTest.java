package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SegmentClassification classifies as a controller does: fed the same requests at the same times, it
 * and an AdmissionController agree on every request's class and every segment's class, whatever the
 * controller admits, queues or refuses.
 */
class SegmentClassificationTest {

    private static final long DELTA = 10_000_000L;

    @Test
    void agreesWithTheController_requestByRequest_underAnyAdmission() {
        qt().withExamples(150)
                .forAll(
                        integers().between(1, 1_000_000),
                        integers().between(200, 5_000),
                        integers().between(1, 12),
                        integers().between(1, 20))
                .checkAssert((seed, budget, window, recovery) -> {
                    var random = new java.util.SplittableRandom(seed);
                    AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                            .capacityCostUnitsPerSecond(budget * 100.0)
                            .segmentSizeBytes(200)
                            .blockSizeBytes(100)
                            .costModel(new IoCostModel(1, 1, 1, 1))
                            .windowIntervals(window)
                            .recoveryWindows(recovery)
                            .queueCapacityPerSegment(random.nextInt(3))
                            .build();
                    List<VirtualDisk> disks =
                            List.of(VirtualDisk.of("a", 1_000), VirtualDisk.committed("b", 700, budget * 10.0));
                    long now = 0;
                    AdmissionController controller = new AdmissionController(config, disks, now);
                    SegmentClassification classification = new SegmentClassification(config, disks, now);
                    for (int op = 0; op < 400; op++) {
                        if (random.nextInt(5) == 0) {
                            now += random.nextLong(3 * DELTA);
                            classification.advanceTo(now);
                            controller.onInterval(now);
                        } else {
                            int disk = random.nextInt(2);
                            long size = disks.get(disk).sizeBytes();
                            long offset = random.nextLong(size);
                            long length = 1 + random.nextLong(Math.min(400, size - offset));
                            SegmentClass asClass = classification.classify(disk, IoKind.READ, offset, length);
                            Admission a = controller.acquire(disk, IoKind.READ, offset, length);
                            SegmentClass controllerClass = switch (a) {
                                case Admission.Admitted ad -> ad.ticket().arrivedAs();
                                case Admission.Queued q -> q.ticket().arrivedAs();
                                case Admission.Refused r -> null;
                            };
                            if (controllerClass != null) {
                                assertThat(asClass).as("request %d", op).isEqualTo(controllerClass);
                            }
                        }
                        for (int s = 0; s < classification.segmentMap().segmentCount(); s++) {
                            assertThat(classification.segmentClass(s)).isEqualTo(controller.segmentClass(s));
                        }
                    }
                });
    }

    @Test
    void badRequests_rejectedNamingTheField() {
        var classification = new SegmentClassification(AdmissionConfig.PAPER, List.of(VirtualDisk.of("a", 4096)), 0);
        assertThatThrownBy(() -> classification.classify(1, IoKind.READ, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("disk");
        assertThatThrownBy(() -> classification.classify(0, IoKind.READ, 4000, 200))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> classification.classify(0, null, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kind");
    }
}
