package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.NbdConfigFiles;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Admission's variants ({@code admission.variant: tailor|paper} and the per-departure switches) and the
 * exports' provisioned baselines ({@code exports[].baseline}): how a baseline is priced in the budget's
 * units, the commitments the controller gets, bad values named by field, and on a virtual clock that a
 * steady export within its baseline is never held behind a bursting export's backlog with what Tailor
 * ships, while the paper's mechanism still holds it as before.
 */
class ProvisionedBaselineTest {

    private static NbdConfig parse(String yaml) {
        return NbdConfigFiles.parse(yaml, "test.yaml", Path.of("/etc/tailor"));
    }

    private static String problems(String yaml) {
        try {
            parse(yaml);
            return "";
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    @Test
    void variant_defaultsToWhatTailorShips_paperIsThePapersMechanism_switchesOverrideOne() {
        AdmissionConfig shipped = parse("admission: {enabled: true}\nexports: [{name: d, file: f, size: 1GiB}]")
                .admission()
                .toAdmissionConfig();
        assertThat(List.of(
                        shipped.baselineGuarantee(),
                        shipped.weightedHotService(),
                        shipped.adaptiveReserve(),
                        shipped.pacedRelease(),
                        shipped.arrivalOrderWithinDisk()))
                .containsExactly(
                        AdmissionConfig.DEFAULTS.baselineGuarantee(),
                        AdmissionConfig.DEFAULTS.weightedHotService(),
                        AdmissionConfig.DEFAULTS.adaptiveReserve(),
                        AdmissionConfig.DEFAULTS.pacedRelease(),
                        AdmissionConfig.DEFAULTS.arrivalOrderWithinDisk());
        assertThat(shipped.arrivalOrderWithinDisk()).isTrue();
        assertThat(shipped.baselineGuarantee()).isTrue();
        AdmissionConfig paper = parse(
                        "admission: {enabled: true, variant: paper}\n" + "exports: [{name: d, file: f, size: 1GiB}]")
                .admission()
                .toAdmissionConfig();
        assertThat(List.of(
                        paper.baselineGuarantee(),
                        paper.weightedHotService(),
                        paper.adaptiveReserve(),
                        paper.pacedRelease(),
                        paper.arrivalOrderWithinDisk()))
                .containsOnly(false);
        assertThat(paper.toBuilder()
                        .capacityCostUnitsPerSecond(AdmissionConfig.PAPER.capacityCostUnitsPerSecond())
                        .build())
                .as("but the queues: the proxy's hold what its clients may have outstanding")
                .isEqualTo(AdmissionConfig.PAPER.toBuilder()
                        .queueCapacityPerSegment(256 * 256)
                        .build());
        AdmissionConfig ablation = parse("admission: {enabled: true, weightedHotService: false, pacedRelease: true,"
                        + " arrivalOrderWithinDisk: false}\n"
                        + "exports: [{name: d, file: f, size: 1GiB}]")
                .admission()
                .toAdmissionConfig();
        assertThat(List.of(
                        ablation.baselineGuarantee(),
                        ablation.weightedHotService(),
                        ablation.adaptiveReserve(),
                        ablation.pacedRelease(),
                        ablation.arrivalOrderWithinDisk()))
                .containsExactly(true, false, true, true, false);
        assertThat(ablation.diskOrderAcrossGuarantee())
                .as("the shipped default")
                .isTrue();
        assertThat(paper.diskOrderAcrossGuarantee()).isFalse();
        assertThat(parse("admission: {enabled: true, diskOrderAcrossGuarantee: false}\n"
                                + "exports: [{name: d, file: f, size: 1GiB}]")
                        .admission()
                        .toAdmissionConfig()
                        .diskOrderAcrossGuarantee())
                .as("the option, through the config")
                .isFalse();
        assertThat(problems("admission: {enabled: true, variant: classic}\nexports: [{name: d, file: f}]"))
                .contains("admission.variant: \"classic\" (expected: tailor, what Tailor ships, or paper, the"
                        + " paper's mechanism)");
    }

    @Test
    void baseline_isPricedInTheBudgetsUnits_andTheOthersShareWhatIsLeft() {
        // 20,000 IOPS and 400 MB/s: b = 2.5 per byte, a = 50,000 − 4096 b = 39,760; one second is 10⁹.
        NbdConfig config = parse("""
                admission: {enabled: true, iops: 20000, megabytesPerSecond: 400}
                exports:
                  - {name: small, file: a, size: 1GiB, baseline: {iops: 500}}
                  - {name: stream, file: b, size: 1GiB, baseline: {megabytesPerSecond: 20}}
                  - {name: both, file: c, size: 1GiB, baseline: {iops: 500, megabytesPerSecond: 20}}
                  - {name: rest1, file: d, size: 1GiB}
                  - {name: rest2, file: e, size: 1GiB}
                """);
        AdmissionSettings settings = config.admission();
        assertThat(settings.baselineCostUnitsPerSecond(config.exports().get(0).baseline()))
                .as("500 reads of 4 KiB: 1/40 of the budget")
                .isEqualTo(2.5e7);
        assertThat(settings.baselineCostUnitsPerSecond(config.exports().get(1).baseline()))
                .as("20 MB/s of bytes: 1/20")
                .isEqualTo(5e7);
        assertThat(settings.baselineCostUnitsPerSecond(config.exports().get(2).baseline()))
                .as("500 I/Os carrying 20 MB")
                .isEqualTo(500 * 39_760 + 5e7);
        double left = (1e9 - 2.5e7 - 5e7 - (500 * 39_760 + 5e7)) / 2;
        assertThat(settings.commitments(config.exports()))
                .containsExactly(
                        OptionalDouble.of(2.5e7),
                        OptionalDouble.of(5e7),
                        OptionalDouble.of(500 * 39_760 + 5e7),
                        OptionalDouble.of(left),
                        OptionalDouble.of(left));
        // The whole budget's IOPS costs the whole budget.
        assertThat(settings.baselineCostUnitsPerSecond(new ExportConfig.Baseline(20_000.0, null)))
                .isEqualTo(1e9);
        // Without any baseline, admission's own default: a fair share.
        assertThat(settings.commitments(
                        List.of(config.exports().get(3), config.exports().get(4))))
                .containsOnly(OptionalDouble.empty());
    }

    @Test
    void badBaselines_areNamedByField() {
        String exportsWith =
                "admission: {enabled: true, iops: 1000}\nexports: [{name: d, file: f, size: 1GiB," + " baseline: ";
        assertThat(problems(exportsWith + "{iops: -5}}]"))
                .contains("exports[0].baseline.iops: -5 (expected: 4 KiB I/Os per second, a number in (0, 100000000])");
        assertThat(problems(exportsWith + "{iops: 0}}]")).contains("exports[0].baseline.iops: 0 (expected");
        assertThat(problems(exportsWith + "{megabytesPerSecond: .nan}}]"))
                .contains("exports[0].baseline.megabytesPerSecond: .nan (expected: MB/s, a number in (0, 10000000]) at"
                        + " line ");
        assertThat(problems(exportsWith + "{}}]"))
                .contains("exports[0].baseline: empty (expected: iops and/or" + " megabytesPerSecond)");
        assertThat(problems(exportsWith + "{iops: 1000, megabytesPerSecond: 1}}]"))
                .contains("exports[0].baseline"
                        + ".iops: 1000 4 KiB I/Os per second move 4.1 MB/s, more than megabytesPerSecond 1 (expected: at"
                        + " most 244 IOPS with that bandwidth)");
        assertThat(problems(exportsWith + "{iops: 1500}}]"))
                .contains("exports[0].baseline: 1,500 IOPS is 150 % of"
                        + " admission's budget, 1,000 IOPS (expected: at most the budget: no backend can promise more"
                        + " than it serves)");
        assertThat(problems("""
                admission: {enabled: true, iops: 1000}
                exports:
                  - {name: a, file: a, size: 1GiB, baseline: {iops: 600}}
                  - {name: b, file: b, size: 1GiB, baseline: {iops: 500}}
                """))
                .contains("exports[].baseline: the baselines of exports[0], exports[1] add up to 110 % of"
                        + " admission's budget, 1,000 IOPS (expected: at most the budget together");
        assertThat(problems(exportsWith + "{iops: 1000}}]"))
                .as("the whole budget is allowed")
                .isEmpty();
        assertThat(problems("exports: [{name: d, file: f, size: 1GiB, baseline: {iops: 100000000}}]"))
                .as("checked against the budget only with admission on")
                .isEmpty();
        assertThatThrownBy(() -> NbdServer.start(
                        parse("exports: [{name: d, file: /nonexistent/f, size: 1GiB," + " baseline: {iops: 10000000}}]")
                                .toBuilder()
                                .admission(parse("admission: {enabled: true, iops: 1000}\n"
                                                + "exports: [{name: d, file: f}]")
                                        .admission())
                                .build()))
                .as("admission switched on later (--admission on) is checked at start")
                .hasMessageContaining("exports[0].baseline: 10,000,000 IOPS is 1,000,000 % of admission's budget,"
                        + " 1,000 IOPS (expected: at most the budget");
    }

    /**
     * Budget 1,000 IOPS (C = 10 reads per 10 ms); export {@code steady} provisioned 600 IOPS reads once every
     * 2 ms (500 a second, within its baseline), export {@code bursty} (the 400 IOPS left) offers 20 reads
     * every ms, far beyond. Ten virtual seconds, the proxy's tick every ms, the backend answering at once.
     */
    private static AdmissionDispatcher.ExportCounters[] steadyBesideABurst(String variant) {
        NbdConfig config = parse("admission: {enabled: true, iops: 1000, queueCapacityPerSegment: 256, variant: "
                + variant + "}\nexports:\n"
                + "  - {name: steady, file: s, size: 16MiB, baseline: {iops: 600}}\n"
                + "  - {name: bursty, file: b, size: 16MiB}\n");
        AtomicLong clock = new AtomicLong(5_000_000_000L);
        GatedBackend steadyBackend = new GatedBackend(16 << 20);
        GatedBackend burstyBackend = new GatedBackend(16 << 20);
        Export steady = new Export(config.exports().get(0), steadyBackend, 1 << 20);
        Export bursty = new Export(config.exports().get(1), burstyBackend, 1 << 20);
        AdmissionDispatcher dispatcher = new AdmissionDispatcher(
                config.admission().toAdmissionConfig(),
                List.of(steady, bursty),
                config.admission().commitments(config.exports()),
                clock::get);
        long steadySentAtOnce = 0;
        long steadyOffered = 0;
        for (int ms = 0; ms < 10_000; ms++) {
            for (int i = 0; i < 20; i++) {
                dispatcher.dispatch(bursty, read((ms * 20L + i) % 4_096 * 4096), promise());
            }
            if (ms % 2 == 0) {
                int before = steadyBackend.heldCount();
                dispatcher.dispatch(steady, read((ms * 7919L) % 4_096 * 4096), promise());
                steadyOffered++;
                steadySentAtOnce += steadyBackend.heldCount() - before;
            }
            clock.addAndGet(1_000_000);
            dispatcher.tick();
            steadyBackend.passAll();
            burstyBackend.passAll();
        }
        dispatcher.close();
        AdmissionDispatcher.ExportCounters[] out =
                dispatcher.exportCounters().toArray(new AdmissionDispatcher.ExportCounters[0]);
        assertThat(steadyOffered).isEqualTo(5_000);
        assertThat(out[0].requests()).isEqualTo(steadyOffered);
        assertThat(out[0].queued()).as("steady requests that waited").isEqualTo(steadyOffered - steadySentAtOnce);
        return out;
    }

    @Test
    void shipped_steadyExportWithinItsBaseline_isNeverHeldBehindABurstingExportsBacklog() {
        AdmissionDispatcher.ExportCounters[] counters = steadyBesideABurst("tailor");
        AdmissionDispatcher.ExportCounters steady = counters[0];
        AdmissionDispatcher.ExportCounters bursty = counters[1];
        assertThat(bursty.queued()).as("the burst has a backlog").isGreaterThan(1_000);
        assertThat(bursty.refused()).as("and overflows its queue").isPositive();
        assertThat(steady.queued())
                .as("every steady request went to the backend at once")
                .isZero();
        assertThat(steady.refused()).isZero();
        assertThat(steady.maxQueueWaitNanos()).isZero();
        assertThat(steady.arrivedHot())
                .as("classed steady whatever its segment's history")
                .isZero();
    }

    @Test
    void paper_stillHoldsTheSteadyExportBeyondItsReserve_asBefore() {
        // The paper's mechanism: the burst drains the main pool at each boundary; the fixed reserve, 0.2 C =
        // 2 reads per interval, is less than the steady export's 5, so its other requests wait for a
        // boundary, as they did before the departures.
        AdmissionDispatcher.ExportCounters[] counters = steadyBesideABurst("paper");
        AdmissionDispatcher.ExportCounters steady = counters[0];
        assertThat(counters[1].queued()).isGreaterThan(1_000);
        assertThat(steady.queued()).as("steady requests that waited").isGreaterThan(steady.requests() / 4);
        assertThat(steady.refused()).isZero();
        assertThat(steady.maxQueueWaitNanos())
                .as("at most about an interval")
                .isPositive()
                .isLessThanOrEqualTo(20_000_000L);
    }

    private static BlockRequest read(long offset) {
        return new BlockRequest(NbdProtocol.CMD_READ, 0, offset, offset, 4096, Unpooled.EMPTY_BUFFER);
    }

    private static Promise<ByteBuf> promise() {
        Promise<ByteBuf> completion = ImmediateEventExecutor.INSTANCE.newPromise();
        completion.addListener(f -> {
            if (f.isSuccess()) {
                ((ByteBuf) f.getNow()).release();
            }
        });
        return completion;
    }
}
