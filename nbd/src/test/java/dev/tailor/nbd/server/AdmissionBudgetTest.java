package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.IoCostModel;
import dev.tailor.admission.IoKind;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfigFiles;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Admission's budget in operators' units ({@code admission.iops}, {@code admission.megabytesPerSecond}):
 * the cost model and budget derived from them, the problems named by field, and on a virtual clock a
 * client asking for three times the budget getting the budget.
 */
class AdmissionBudgetTest {

    private static AdmissionSettings budget(Double iops, Double megabytesPerSecond) {
        return AdmissionSettings.builder()
                .enabled(true)
                .iops(iops)
                .megabytesPerSecond(megabytesPerSecond)
                .build();
    }

    private static List<String> problems(String admission) {
        try {
            NbdConfigFiles.parse(
                    "exports: [{name: disk, file: disk.img, size: 1GiB}]\nadmission: " + admission,
                    "test.yaml",
                    Path.of("/etc/tailor"));
            return List.of();
        } catch (IllegalArgumentException e) {
            return List.of(e.getMessage());
        }
    }

    @Test
    void iopsAndBandwidth_derivePricesAsBlkIocostDoes() {
        // 20,000 4 KiB I/Os per second and 400 MB/s: b = 10⁹ / 4·10⁸ = 2.5 per byte, a = 50,000 − 4096 b.
        AdmissionConfig config = budget(20_000.0, 400.0).toAdmissionConfig();
        IoCostModel model = config.costModel();
        assertThat(config.capacityCostUnitsPerSecond()).isEqualTo(1e9);
        assertThat(model.costUnits(IoKind.READ, 4096))
                .as("a 4 KiB read is 1/20,000 of a second")
                .isEqualTo(50_000);
        assertThat(model.costUnits(IoKind.WRITE, 4096)).as("writes alike").isEqualTo(50_000);
        // A 1 MB read takes 1/400 of a second of bandwidth, plus the small per-I/O part.
        assertThat(model.costUnits(IoKind.READ, 1_000_000)).isEqualTo(2_500_000 + 50_000 - 4096 * 5 / 2);
    }

    @Test
    void iopsAlone_countsEveryIoAsOne_bandwidthAlone_countsBytes() {
        IoCostModel iopsOnly = budget(8_000.0, null).toAdmissionConfig().costModel();
        assertThat(iopsOnly.costUnits(IoKind.READ, 4096)).isEqualTo(125_000);
        assertThat(iopsOnly.costUnits(IoKind.WRITE, 1 << 20)).isEqualTo(125_000);
        IoCostModel bandwidthOnly = budget(null, 100.0).toAdmissionConfig().costModel();
        assertThat(bandwidthOnly.costUnits(IoKind.READ, 1_000_000))
                .as("1 MB at 100 MB/s: 10 ms")
                .isEqualTo(10_000_000);
        assertThat(bandwidthOnly.costUnits(IoKind.READ, 4096)).isEqualTo(40_960);
    }

    @Test
    void costUnits_stayForExperts_withTheDefaultModel() {
        AdmissionSettings experts = AdmissionSettings.builder()
                .enabled(true)
                .capacityCostUnitsPerSecond(3.9e8)
                .build();
        AdmissionConfig config = experts.toAdmissionConfig();
        assertThat(config.capacityCostUnitsPerSecond()).isEqualTo(3.9e8);
        assertThat(config.costModel()).isEqualTo(IoCostModel.DEFAULT);
        assertThat(experts.budgetDescription()).isEqualTo("390,000,000 cost units/s (about 3,322 4 KiB reads/s)");
        assertThat(AdmissionSettings.builder().enabled(true).build().budgetDescription())
                .isEqualTo("1,000,000,000 cost units/s (about 8,518 4 KiB reads/s)");
        assertThat(budget(20_000.0, 400.0).budgetDescription()).isEqualTo("20,000 IOPS and 400 MB/s");
        assertThat(budget(100_000_000.0, 10_000_000.0).budgetDescription())
                .isEqualTo("100,000,000 IOPS and 10,000,000 MB/s");
        assertThat(budget(1.5, null).budgetDescription()).isEqualTo("1.5 IOPS");
        assertThat(budget(null, 2.5).budgetDescription()).isEqualTo("2.5 MB/s");
    }

    @Test
    void badBudgets_areNamedByField() {
        assertThat(problems("{enabled: true, iops: 5000, capacityCostUnitsPerSecond: 1e9}"))
                .singleElement()
                .asString()
                .contains("admission.iops: given with capacityCostUnitsPerSecond (expected: the budget in"
                        + " IOPS and/or MB/s, or in cost units, not both)");
        assertThat(problems("{enabled: true, iops: 0}"))
                .singleElement()
                .asString()
                .contains("admission.iops: 0 (expected: 4 KiB I/Os per second, a number in [1, 100000000])");
        assertThat(problems("{enabled: true, megabytesPerSecond: -5}"))
                .singleElement()
                .asString()
                .contains("admission.megabytesPerSecond: -5 (expected: MB/s, a number in [0.01, 10000000])");
        assertThat(problems("{enabled: true, iops: 200000, megabytesPerSecond: 500}"))
                .singleElement()
                .asString()
                .contains("admission.iops: 200000 4 KiB I/Os per second move 819.2 MB/s, more than megabytesPerSecond"
                        + " 500 (expected: at most 122070 IOPS with that bandwidth");
        assertThat(problems("{enabled: true, iops: 20000, megabytesPerSecond: 400}"))
                .isEmpty();
        assertThatThrownBy(() -> budget(Double.NaN, null).toAdmissionConfig())
                .hasMessage("iops : NaN (expected: 4 KiB I/Os per second, a number in [1, 100000000])");
        assertThatThrownBy(() -> budget(null, Double.POSITIVE_INFINITY).toAdmissionConfig())
                .hasMessage("megabytesPerSecond : Infinity (expected: MB/s, a number in [0.01, 10000000])");
        assertThat(dev.tailor.nbd.config.NbdConfig.builder()
                        .exports(ExportConfig.file("disk", "t", 1 << 20, false, Path.of("disk.img")))
                        .admission(budget(Double.NaN, null))
                        .build()
                        .problems())
                .extracting(dev.tailor.common.Problem::message)
                .containsExactly("admission.iops: NaN (expected: 4 KiB I/Os per second, a number in [1, 100000000])");
    }

    @Test
    void aClientAskingThreeTimesTheBudget_getsTheBudget() {
        // 1,000 IOPS; the client offers 3 reads of 4 KiB every ms for 10 virtual seconds, the backend
        // answers at once. What reaches the backend is the budget: about 1,000 a second. The client keeps no
        // in-flight limit, so a queue of 64 (admission's own default, set as a config may) fills and refuses.
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        GatedBackend backend = new GatedBackend(1 << 20);
        Export export =
                new Export(ExportConfig.file("disk", "t", 1 << 20, false, Path.of("disk.img")), backend, 1 << 20);
        AdmissionDispatcher dispatcher = new AdmissionDispatcher(
                budget(1_000.0, null).toBuilder()
                        .queueCapacityPerSegment(64)
                        .build()
                        .toAdmissionConfig(),
                List.of(export),
                clock::get);
        long admitted = 0;
        int seconds = 10;
        for (int ms = 0; ms < seconds * 1000; ms++) {
            for (int i = 0; i < 3; i++) {
                Promise<ByteBuf> completion = ImmediateEventExecutor.INSTANCE.newPromise();
                completion.addListener(f -> {
                    if (f.isSuccess()) {
                        ((ByteBuf) f.getNow()).release();
                    }
                });
                long offset = ((ms * 3L + i) % 256) * 4096;
                dispatcher.dispatch(
                        export,
                        new BlockRequest(NbdProtocol.CMD_READ, 0, offset, offset, 4096, Unpooled.EMPTY_BUFFER),
                        completion);
            }
            clock.addAndGet(1_000_000);
            dispatcher.tick();
            admitted += backend.heldCount();
            backend.passAll();
        }
        dispatcher.close();
        double perSecond = (double) admitted / seconds;
        assertThat(perSecond).as("reads per second reaching the backend").isBetween(900.0, 1_100.0);
        assertThat(dispatcher.refusedRequests())
                .as("the rest was refused once the queue was full")
                .isPositive();
    }
}
