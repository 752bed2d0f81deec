package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.IoCostModel;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.LogRecords;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Segment admission in front of the backends, on a virtual clock: what the budget covers goes to
 * the backend at once, the rest waits and goes when a tick admits it, a full queue refuses with a
 * readable EIO, metadata commands bypass admission, completions feed the controller, and closing
 * fails what still waits without leaking a buffer.
 */
class AdmissionDispatcherTest {

    private static final long DELTA = 10_000_000L;

    /** C = 1,000 cost units per 10 ms, one cost unit per byte: main 800, reserve 200. */
    private static final AdmissionConfig CONFIG = AdmissionConfig.PAPER.toBuilder()
            .capacityCostUnitsPerSecond(100_000)
            .segmentSizeBytes(4096)
            .blockSizeBytes(512)
            .costModel(new IoCostModel(0, 1, 0, 1))
            .queueCapacityPerSegment(2)
            .queueQuantumFraction(1.0)
            .build();

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final GatedBackend backendA = new GatedBackend(1 << 16);
    private final GatedBackend backendB = new GatedBackend(1 << 16);
    private final Export a =
            new Export(ExportConfig.file("a", "t1", 1 << 16, false, Path.of("a.img")), backendA, 1 << 20);
    private final Export b =
            new Export(ExportConfig.file("b", "t2", 1 << 16, false, Path.of("b.img")), backendB, 1 << 20);
    private final AdmissionDispatcher dispatcher = new AdmissionDispatcher(CONFIG, List.of(a, b), clock::get);

    private static BlockRequest read(long offset, int length) {
        return new BlockRequest(NbdProtocol.CMD_READ, 0, offset, offset, length, Unpooled.EMPTY_BUFFER);
    }

    private static Promise<ByteBuf> promise() {
        return ImmediateEventExecutor.INSTANCE.newPromise();
    }

    @Test
    void withinTheBudget_sentAtOnce_beyondIt_waitsForATick() {
        // Disk a is committed a fair share, 500 per interval: 400 + 400 exceeds its window (hot), so
        // the second 400 takes main (800 -> 0) and the third waits.
        Promise<ByteBuf> first = promise();
        dispatcher.dispatch(a, read(0, 400), first);
        dispatcher.dispatch(a, read(0, 400), promise());
        Promise<ByteBuf> third = promise();
        dispatcher.dispatch(a, read(0, 400), third);
        assertThat(backendA.heldCount()).isEqualTo(2);
        assertThat(dispatcher.waitingRequests()).isEqualTo(1);

        // Still inside the interval: the hot request waits (the reserve is lent only as the interval
        // runs out). At the boundary it goes.
        dispatcher.tick();
        assertThat(backendA.heldCount()).isEqualTo(2);
        clock.addAndGet(DELTA);
        dispatcher.tick();
        assertThat(backendA.heldCount()).isEqualTo(3);
        assertThat(dispatcher.waitingRequests()).isZero();

        // Each request carries its passage for the slow-request attribution: the third waited one interval, hot.
        assertThat(backendA.heldCount()).isEqualTo(3);

        // Completions reach the controller's headroom model as successes.
        clock.addAndGet(2_000_000);
        backendA.passAll();
        assertThat(first.isSuccess()).isTrue();
        assertThat(third.isSuccess()).isTrue();
        first.getNow().release();
        third.getNow().release();
        assertThat(dispatcher.stats().completedSuccess()).isEqualTo(3);
    }

    @Test
    void queueFull_refusedWithEioNamingTheLimit() {
        dispatcher.dispatch(a, read(0, 800), promise());
        dispatcher.dispatch(a, read(0, 300), promise());
        dispatcher.dispatch(a, read(0, 300), promise());
        Promise<ByteBuf> refused = promise();
        BlockRequest request = new BlockRequest(
                NbdProtocol.CMD_WRITE, 0, 9, 0, 300, Unpooled.buffer(300).writeZero(300));
        dispatcher.dispatch(a, request, refused);
        assertThat(refused.cause())
                .isInstanceOf(NbdException.class)
                .hasMessageContaining("admission refused")
                .hasMessageContaining("queueCapacityPerSegment 2");
        assertThat(((NbdException) refused.cause()).error()).isEqualTo(NbdProtocol.EIO);
        assertThat(request.refCnt()).isZero();
        assertThat(dispatcher.refusedRequests()).isEqualTo(1);
    }

    @Test
    void refusals_firstLoggedAtOnce_theRestSummedUpPerExportTenSecondsLater() {
        // A client answered EIO finds the reason in the server's log: one warning at once, the
        // refusals that follow within 10 s counted and summed up in one line, not one line each.
        try (LogRecords log = LogRecords.of(AdmissionDispatcher.class)) {
            dispatcher.dispatch(a, read(0, 800), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            assertThat(log.messages()).isEmpty();
            dispatcher.dispatch(a, read(0, 300), promise());
            assertThat(log.messages())
                    .singleElement()
                    .asString()
                    .startsWith("WARNING export a: segment admission refused a request, the client was answered EIO: ")
                    .contains("queueCapacityPerSegment 2")
                    .contains("admission.queueCapacityPerSegment a larger value in the config")
                    .contains("fewer requests in flight");
            dispatcher.dispatch(a, read(0, 300), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            assertThat(dispatcher.refusedRequests()).isEqualTo(3);
            assertThat(log.messages()).hasSize(1);
            // Still within the 10 s: ticks sum nothing up yet.
            clock.addAndGet(9_990_000_000L);
            dispatcher.tick();
            assertThat(log.messages()).hasSize(1);
            clock.addAndGet(DELTA);
            dispatcher.tick();
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 2 more requests refused by segment admission in the last 10 s, answered EIO"
                            + " (per export: a 2); see admission.queueCapacityPerSegment");
            // Summed up once only.
            clock.addAndGet(20_000_000_000L);
            dispatcher.tick();
            dispatcher.close();
            assertThat(log.messages()).hasSize(2);
        }
    }

    @Test
    void refusalsCountedAtClose_areSummedUpThen() {
        try (LogRecords log = LogRecords.of(AdmissionDispatcher.class)) {
            dispatcher.dispatch(a, read(0, 800), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            dispatcher.dispatch(a, read(0, 300), promise());
            assertThat(log.messages()).hasSize(1);
            dispatcher.close();
            assertThat(log.messages())
                    .hasSize(2)
                    .last()
                    .asString()
                    .isEqualTo("WARNING 1 more request refused by segment admission in the last 10 s, answered EIO"
                            + " (per export: a 1); see admission.queueCapacityPerSegment");
        }
    }

    @Test
    void flushTrimWriteZeroes_bypassAdmission() {
        // The budget is spent and a read waits; the metadata commands still go.
        dispatcher.dispatch(a, read(0, 800), promise());
        dispatcher.dispatch(a, read(0, 100), promise());
        for (int command : new int[] {NbdProtocol.CMD_FLUSH, NbdProtocol.CMD_TRIM, NbdProtocol.CMD_WRITE_ZEROES}) {
            dispatcher.dispatch(
                    a,
                    new BlockRequest(
                            command, 0, 1, 0, command == NbdProtocol.CMD_FLUSH ? 0 : 4096, Unpooled.EMPTY_BUFFER),
                    promise());
        }
        assertThat(backendA.heldCount()).isEqualTo(4);
        assertThat(dispatcher.waitingRequests()).isEqualTo(1);
        assertThat(dispatcher.bypassedRequests()).isEqualTo(3);
    }

    @Test
    void steadyDisk_notHeldBehindAHotOne() {
        // a floods (hot, waits); b's small read is steady and takes the reserve at once.
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(b, read(0, 100), promise());
        assertThat(backendB.heldCount()).isEqualTo(1);
        assertThat(dispatcher.stats().drawnReserveCostUnits()).isEqualTo(100);
    }

    @Test
    void perExportCounters_sayWhoArrivedHot_whoWaited_andForHowLong() {
        // A disk of 16 segments has a baseline of 500 / 16 per segment and interval, 312 per window of
        // 10: every 400 of a arrives hot, b's 100 steady. The third of a waits one interval.
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(b, read(0, 100), promise());
        clock.addAndGet(DELTA);
        dispatcher.tick();
        assertThat(backendA.heldCount()).isEqualTo(3);
        // Metadata commands are not counted; a refusal is.
        dispatcher.dispatch(b, new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 1, 0, 0, Unpooled.EMPTY_BUFFER), promise());
        assertThat(dispatcher.exportCounters())
                .containsExactly(
                        new AdmissionDispatcher.ExportCounters("a", 3, 3, 1, 0, DELTA, DELTA, 0),
                        new AdmissionDispatcher.ExportCounters("b", 1, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void waitHistogram_countsEveryRequestSentOn_thoseAdmittedAtOnceAsZero_aHeldOneInTheBucketOfItsWait() {
        // As above: the third of a waits, here 13 ms (one boundary, passed at the tick), b's goes at once.
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(b, read(0, 100), promise());
        clock.addAndGet(13_000_000);
        dispatcher.tick();
        assertThat(backendA.heldCount()).isEqualTo(3);
        // Requests still waiting are not observed yet; a metadata command never is.
        dispatcher.dispatch(a, read(0, 800), promise());
        dispatcher.dispatch(a, read(0, 800), promise());
        assertThat(dispatcher.waitingRequests()).isEqualTo(2);
        dispatcher.dispatch(b, new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 1, 0, 0, Unpooled.EMPTY_BUFFER), promise());

        HistogramSnapshot waits = dispatcher.waitHistogram();
        assertThat(waits.getMetadata().getPrometheusName()).isEqualTo("tailor_nbd_admission_wait_seconds");
        HistogramSnapshot.HistogramDataPointSnapshot ofA = Histograms.point(waits, "export", "a");
        assertThat(ofA.getCount()).isEqualTo(3);
        assertThat(Histograms.filledBuckets(ofA))
                .as("two admitted at once (le 0), the held one in (0.01, 0.015]")
                .containsExactly(Map.entry(0.0, 2L), Map.entry(0.015, 1L));
        assertThat(ofA.getSum()).isCloseTo(0.013, within(1e-12));
        HistogramSnapshot.HistogramDataPointSnapshot ofB = Histograms.point(waits, "export", "b");
        assertThat(Histograms.filledBuckets(ofB)).containsExactly(Map.entry(0.0, 1L));
        assertThat(ofB.getSum()).isZero();
    }

    /** What a closing connection does to a request nothing has claimed: drop, release, fail. */
    private static void dropLikeAClosingConnection(BlockRequest request, Promise<ByteBuf> completion) {
        assertThat(request.drop()).isTrue();
        request.release();
        completion.tryFailure(new NbdException(NbdProtocol.EIO, "the connection closed"));
    }

    private long waitingOf(String export) {
        return dispatcher.exportCounters().stream()
                .filter(e -> e.export().equals(export))
                .findFirst()
                .orElseThrow()
                .waiting();
    }

    @Test
    void queuedRequestOfAClosedConnection_isWithdrawn_neverSent_andTakesNoBudget() {
        Promise<ByteBuf> first = promise();
        dispatcher.dispatch(a, read(0, 800), first);
        BlockRequest write = new BlockRequest(
                NbdProtocol.CMD_WRITE, 0, 2, 0, 300, Unpooled.buffer(300).writeZero(300));
        Promise<ByteBuf> waiting = promise();
        dispatcher.dispatch(a, write, waiting);
        Promise<ByteBuf> behind = promise();
        dispatcher.dispatch(a, read(4096, 300), behind);
        assertThat(dispatcher.waitingRequests()).isEqualTo(2);
        assertThat(waitingOf("a")).as("a's requests waiting, per export").isEqualTo(2);
        assertThat(waitingOf("b")).isZero();
        dropLikeAClosingConnection(write, waiting);
        assertThat(dispatcher.waitingRequests()).isOne();
        assertThat(waitingOf("a")).as("the withdrawn one no longer counts").isOne();
        assertThat(dispatcher.withdrawnRequests()).isOne();
        assertThat(dispatcher.stats().cancelledRequests()).isOne();
        assertThat(write.refCnt()).isZero();
        // The next boundary sends the read behind it, and never the write.
        clock.addAndGet(DELTA);
        dispatcher.tick();
        assertThat(backendA.heldCount()).isEqualTo(2);
        assertThat(waitingOf("a")).as("sent on: none waits").isZero();
        backendA.passAll();
        assertThat(behind.isSuccess()).isTrue();
        behind.getNow().release();
        first.getNow().release();
        assertThat(dispatcher.stats().admittedRequests()).isEqualTo(2);
    }

    @Test
    void requestDroppedJustAfterATickAdmittedIt_isSkippedByTheBackend_andItsTicketCompleted() {
        Promise<ByteBuf> first = promise();
        dispatcher.dispatch(a, read(1024, 800), first);
        byte[] data = new byte[300];
        java.util.Arrays.fill(data, (byte) 0x7f);
        BlockRequest write = new BlockRequest(NbdProtocol.CMD_WRITE, 0, 2, 0, 300, Unpooled.wrappedBuffer(data));
        Promise<ByteBuf> waiting = promise();
        dispatcher.dispatch(a, write, waiting);
        clock.addAndGet(DELTA);
        dispatcher.tick();
        assertThat(backendA.heldCount())
                .as("sent to the backend, not started there")
                .isEqualTo(2);
        dropLikeAClosingConnection(write, waiting);
        backendA.passAll();
        assertThat(write.refCnt()).isZero();
        assertThat(dispatcher.withdrawnRequests()).isZero();
        assertThat(dispatcher.stats().completedIgnored())
                .as("the dropped one's ticket")
                .isOne();
        assertThat(backendA.memory.bytes[0]).as("the dropped write never ran").isZero();
        first.getNow().release();
    }

    @Test
    void close_failsWhatWaits_withEshutdown_andReleasesIt() {
        dispatcher.dispatch(a, read(0, 1000), promise());
        BlockRequest write = new BlockRequest(
                NbdProtocol.CMD_WRITE, 0, 2, 0, 16, Unpooled.buffer(16).writeZero(16));
        Promise<ByteBuf> waiting = promise();
        dispatcher.dispatch(a, write, waiting);
        assertThat(waiting.isDone()).isFalse();
        assertThat(waitingOf("a"))
                .as("the first read beyond the bucket, the write behind it")
                .isEqualTo(2);
        dispatcher.close();
        assertThat(waitingOf("a")).as("failed at shutdown: none waits").isZero();
        assertThat(((NbdException) waiting.cause()).error()).isEqualTo(NbdProtocol.ESHUTDOWN);
        assertThat(write.refCnt()).isZero();
        Promise<ByteBuf> late = promise();
        dispatcher.dispatch(a, read(0, 1), late);
        assertThat(((NbdException) late.cause()).error()).isEqualTo(NbdProtocol.ESHUTDOWN);
    }

    @Test
    void admittedRequests_carryTheirQueueWaitAndClass() throws Exception {
        // The slow-request attribution's inputs: a request sent at once waited 0; one that waited in its segment's
        // queue carries the wait, arrival to dispatch, and the class it was admitted as.
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        dispatcher.dispatch(a, read(0, 400), promise());
        clock.addAndGet(DELTA);
        dispatcher.tick();
        GatedBackend.Held first = backendA.next();
        backendA.next();
        GatedBackend.Held third = backendA.next();
        assertThat(first.request().admissionWaitNanos()).isZero();
        // (Its class is the controller's business; it is recorded either way.)
        assertThat(first.request().admittedClass()).isNotEqualTo(SlowSegments.NOT_ADMITTED);
        assertThat(third.request().admissionWaitNanos()).isEqualTo(DELTA);
        assertThat(third.request().admittedClass()).isEqualTo(SlowSegments.HOT);
        backendA.passAll();
    }
}
