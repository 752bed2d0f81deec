package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.IntervalReport;
import dev.tailor.admission.IoCostModel;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.FairDispatchSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The fair dispatch door in the proxy, on a virtual clock, with a backend that completes requests when the
 * test says: at most {@code depth} out, the waiting ones let in by their exports' weights, metadata commands
 * past it, a dropped waiting request skipped with its place given on at once, close failing what waits, and
 * admission sending what it admits through it.
 */
class FairDispatchDoorTest {

    /** One cost unit per byte. */
    private static final IoCostModel BYTES = new IoCostModel(0, 1, 0, 1);

    /** What the door sent on, in the order sent; completed by the test. */
    private record Sent(Export export, BlockRequest request, Promise<ByteBuf> completion) {}

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final ArrayDeque<Sent> sent = new ArrayDeque<>();
    private final List<String> order = new ArrayList<>();
    private final RequestDispatcher backends = (export, request, completion) -> {
        order.add(export.name());
        sent.add(new Sent(export, request, completion));
    };
    private final GatedBackend backendA = new GatedBackend(1 << 16);
    private final GatedBackend backendB = new GatedBackend(1 << 16);
    private final ExportConfig configA = ExportConfig.file("a", "t1", 1 << 16, false, Path.of("a.img"));
    private final ExportConfig configB = ExportConfig.file("b", "t2", 1 << 16, false, Path.of("b.img"));
    private final Export a = new Export(configA, backendA, 1 << 20);
    private final Export b = new Export(configB, backendB, 1 << 20);

    private FairDispatchDoor door(double weightA, double weightB, int depth, double lagSeconds) {
        return new FairDispatchDoor(
                List.of(a, b),
                List.of("disk", "disk"),
                new double[] {weightA, weightB},
                depth,
                lagSeconds,
                BYTES,
                backends,
                clock::get);
    }

    private static BlockRequest read(int length) {
        return new BlockRequest(NbdProtocol.CMD_READ, 0, 1, 0, length, Unpooled.EMPTY_BUFFER);
    }

    private static Promise<ByteBuf> promise() {
        return ImmediateEventExecutor.INSTANCE.newPromise();
    }

    /** Completes the oldest request sent, as its backend would. */
    private void completeOldest() {
        Sent s = sent.poll();
        assertThat(s).as("a request at the backend").isNotNull();
        s.request().claim();
        s.request().release();
        s.completion().setSuccess(null);
    }

    /** Drops a request as its closing connection does (TransmissionHandler.dropOutstanding). */
    private static void dropAsTheConnectionDoes(BlockRequest request, Promise<ByteBuf> completion) {
        assertThat(request.drop()).isTrue();
        request.release();
        completion.tryFailure(new NbdException(NbdProtocol.EIO, "the connection closed"));
    }

    /** Admission with a budget no test exhausts, sending what it admits through {@code door}. */
    private AdmissionDispatcher admissionThrough(FairDispatchDoor door) {
        AdmissionConfig generous = AdmissionConfig.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(1e12)
                .segmentSizeBytes(4096)
                .blockSizeBytes(512)
                .costModel(BYTES)
                .build();
        return new AdmissionDispatcher(
                generous, List.of(a, b), List.of(OptionalDouble.empty(), OptionalDouble.empty()), door, clock::get);
    }

    @Test
    void atMostDepthOut_andTheWaitingOnesGoInProportionToTheWeights() {
        FairDispatchDoor door = door(3, 1, 2, 0);
        for (int i = 0; i < 60; i++) {
            door.dispatch(a, read(100), promise());
            door.dispatch(b, read(100), promise());
        }
        assertThat(order).as("depth 2: the first two go at once").containsExactly("a", "b");
        assertThat(door.outstandingRequests()).isEqualTo(2);
        assertThat(door.waitingRequests()).isEqualTo(118);
        order.clear();
        for (int i = 0; i < 80; i++) {
            completeOldest();
            assertThat(sent).as("one in for each one out").hasSize(2);
        }
        long toA = order.stream().filter("a"::equals).count();
        assertThat(toA).as("3 : 1 weights, 80 let in: 60 and 20").isBetween(59L, 61L);
        assertThat(order).hasSize(80);
        List<FairDispatchDoor.ExportCounters> counters = door.exportCounters();
        assertThat(counters.get(0).requests()).isEqualTo(60);
        assertThat(counters.get(0).waited())
                .as("all of a's but the first, which went at once")
                .isEqualTo(59);
        assertThat(counters.get(1).waited()).as("b's likewise").isEqualTo(59);
    }

    @Test
    void exportsOnDifferentBackends_haveADoorEach_andDoNotWaitForEachOther() {
        FairDispatchDoor door = new FairDispatchDoor(
                List.of(a, b),
                List.of("device:8:1", "upstream:10.0.0.5:10809"),
                new double[] {1, 1},
                1,
                0,
                BYTES,
                backends,
                clock::get);
        BlockRequest secondA = read(100);
        door.dispatch(a, read(100), promise());
        door.dispatch(a, secondA, promise());
        door.dispatch(b, read(100), promise());
        door.dispatch(b, read(100), promise());
        assertThat(order)
                .as("depth 1 each: b's first goes at once though a's backend is full")
                .containsExactly("a", "b");
        assertThat(door.doors()).isEqualTo(2);
        List<FairDispatchDoor.DoorCounters> doors = door.doorCounters();
        assertThat(doors)
                .extracting(FairDispatchDoor.DoorCounters::backend)
                .containsExactly("device:8:1", "upstream:10.0.0.5:10809");
        assertThat(doors.get(0).exports()).containsExactly("a");
        assertThat(doors.get(1).exports()).containsExactly("b");
        assertThat(doors).allSatisfy(d -> {
            assertThat(d.depth()).isEqualTo(1);
            assertThat(d.outstanding()).isEqualTo(1);
            assertThat(d.waiting()).isEqualTo(1);
        });

        // b's backend is slow: a's completes five times over while b's first is still out.
        order.clear();
        Sent firstB = sent.stream().filter(s -> s.export() == b).findFirst().orElseThrow();
        sent.remove(firstB);
        clock.addAndGet(3_000_000);
        completeOldest(); // a's first
        assertThat(order).as("a's second let in by a's own completion").containsExactly("a");
        assertThat(secondA.doorWaitNanos()).isEqualTo(3_000_000);
        for (int i = 0; i < 4; i++) {
            door.dispatch(a, read(100), promise());
            completeOldest();
        }
        assertThat(order)
                .as("a served on, one at a time, while b's request is out")
                .hasSize(5);
        assertThat(order).containsOnly("a");
        assertThat(door.doorCounters().get(1).waiting())
                .as("b's second still waits for b's")
                .isEqualTo(1);

        firstB.request().claim();
        firstB.request().release();
        firstB.completion().setSuccess(null);
        assertThat(order.getLast()).isEqualTo("b");
        List<FairDispatchDoor.ExportCounters> counters = door.exportCounters();
        assertThat(counters.get(0).backend()).isEqualTo("device:8:1");
        assertThat(counters.get(1).backend()).isEqualTo("upstream:10.0.0.5:10809");
        assertThat(counters.get(1).waited()).isEqualTo(1);
        assertThat(counters.get(1).waitNanos())
                .as("b's second waited for b's first only")
                .isEqualTo(3_000_000);
    }

    @Test
    void exportsOnTheSameBackend_shareOneDoor_andItsDepth() {
        GatedBackend backendC = new GatedBackend(1 << 16);
        Export c = new Export(configA.toBuilder().name("c").build(), backendC, 1 << 20);
        FairDispatchDoor door = new FairDispatchDoor(
                List.of(a, b, c),
                List.of("device:8:1", "upstream:10.0.0.5:10809", "device:8:1"),
                new double[] {1, 1, 1},
                1,
                0,
                BYTES,
                backends,
                clock::get);
        door.dispatch(a, read(100), promise());
        door.dispatch(c, read(100), promise());
        door.dispatch(b, read(100), promise());
        assertThat(order).as("c waits for a, its backend's; b does not").containsExactly("a", "b");
        assertThat(door.doors()).isEqualTo(2);
        assertThat(door.doorCounters().get(0).exports()).containsExactly("a", "c");
        assertThat(door.doorCounters().get(0).waiting()).isEqualTo(1);
        assertThat(door.waitingRequests()).as("all doors'").isEqualTo(1);
        assertThat(door.outstandingRequests()).as("all doors'").isEqualTo(2);
        completeOldest();
        assertThat(order).containsExactly("a", "b", "c");
    }

    /** Without a depth in the config, a file door takes the file threads and an upstream's 16 per connection. */
    @Test
    void of_givesEachDoorTheDepthOfItsBackend() {
        ExportConfig upstreamB = ExportConfig.upstream(
                "b", "t2", false, new ExportConfig.Upstream("10.0.0.5", 10809, "b", 2, null, null));
        NbdConfig config = NbdConfig.builder()
                .fileIoThreads(6)
                .exports(configA, upstreamB)
                .fairDispatch(new FairDispatchSettings(true, null))
                .build();
        FairDispatchDoor door =
                FairDispatchDoor.of(config, List.of(a, new Export(upstreamB, backendB, 1 << 20)), backends, clock::get);
        assertThat(door.backends()).hasSize(2).endsWith("upstream:10.0.0.5:10809");
        assertThat(door.depth(door.backends().get(0))).as("the file threads").isEqualTo(6);
        assertThat(door.depth("upstream:10.0.0.5:10809"))
                .as("two connections of 16")
                .isEqualTo(32);
        assertThat(door.doorCounters())
                .extracting(FairDispatchDoor.DoorCounters::depth)
                .containsExactly(6, 32);
        assertThatThrownBy(() -> door.depth("shelf-9"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("backend : shelf-9");
    }

    @Test
    void theBannerGivesEveryDoorsDepth_onceWhenTheyAreAlike() {
        FairDispatchDoor alike = door(1, 1, 8, 0);
        assertThat(ServeSummary.doorsAndDepths(alike)).isEqualTo("1 door of depth 8");
        FairDispatchDoor mixed = new FairDispatchDoor(
                List.of(a, b),
                List.of("device:8:1", "upstream:10.0.0.5:10809"),
                new double[] {1, 1},
                backend -> backend.startsWith("upstream:") ? 64 : 8,
                0,
                BYTES,
                backends,
                clock::get);
        assertThat(ServeSummary.doorsAndDepths(mixed)).isEqualTo("2 doors of depths 8 and 64");
    }

    @Test
    void backendOf_isTheGivenName_theUpstreamsAddress_orTheFilesDevice(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        ExportConfig named = configA.toBuilder().backend("shelf-3").build();
        assertThat(FairDispatchDoor.backendOf(named)).isEqualTo("shelf-3");
        ExportConfig upstream = ExportConfig.upstream(
                "u", "t", false, new ExportConfig.Upstream("10.0.0.5", 10810, "x", null, null, null));
        assertThat(FairDispatchDoor.backendOf(upstream)).isEqualTo("upstream:10.0.0.5:10810");
        assertThat(FairDispatchDoor.backendOf(ExportConfig.upstream(
                        "v", "t", false, new ExportConfig.Upstream("::1", null, null, null, null, null))))
                .isEqualTo("upstream:[::1]:10809");
        assertThat(FairDispatchDoor.backendOf(
                        upstream.toBuilder().backend("shelf-3").build()))
                .isEqualTo("shelf-3");

        Path existing = java.nio.file.Files.write(dir.resolve("a.img"), new byte[512]);
        String device = FairDispatchDoor.backendOf(ExportConfig.file("f", "t", 512, false, existing));
        long dev = ((Number) java.nio.file.Files.getAttribute(existing, "unix:dev")).longValue();
        assertThat(device)
                .isEqualTo("device:" + FairDispatchDoor.major(dev) + ":" + FairDispatchDoor.minor(dev))
                .matches("device:\\d+:\\d+");
        assertThat(FairDispatchDoor.backendOf(ExportConfig.file("g", "t", 512, false, dir.resolve("not-yet.img"))))
                .as("a file to be created: its folder's device")
                .isEqualTo(device);
    }

    @Test
    void deviceNumbers_areSplitAsGlibcDoes() {
        assertThat(FairDispatchDoor.major(0x10301)).as("makedev(259, 1)").isEqualTo(259);
        assertThat(FairDispatchDoor.minor(0x10301)).isEqualTo(1);
        long large = (8 << 8) | (300 & 0xff) | ((long) (300 & ~0xff) << 12) | ((long) (4096 & ~0xfff) << 32);
        assertThat(FairDispatchDoor.major(large)).as("makedev(4104, 300)").isEqualTo(4096 + 8);
        assertThat(FairDispatchDoor.minor(large)).isEqualTo(300);
    }

    @Test
    void waitIsTimedOnTheProxysClock() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        BlockRequest atOnce = read(100);
        BlockRequest waiting = read(100);
        door.dispatch(a, atOnce, promise());
        door.dispatch(b, waiting, promise());
        clock.addAndGet(7_000_000);
        completeOldest();
        assertThat(order).containsExactly("a", "b");
        assertThat(waiting.doorWaitNanos())
                .as("on the request, for the slow-request attribution")
                .isEqualTo(7_000_000);
        assertThat(atOnce.doorWaitNanos()).isZero();
        FairDispatchDoor.ExportCounters waitedB = door.exportCounters().get(1);
        assertThat(waitedB.waited()).isEqualTo(1);
        assertThat(waitedB.waitNanos()).isEqualTo(7_000_000);
        assertThat(waitedB.maxWaitNanos()).isEqualTo(7_000_000);
        assertThat(door.exportCounters().get(0).waitNanos())
                .as("a went at once")
                .isZero();

        // The histogram: a's request went at once (le 0), b's waited 7 ms, in (0.0068, 0.01]. One still waiting is
        // not observed.
        door.dispatch(a, read(100), promise());
        HistogramSnapshot waits = door.waitHistogram();
        assertThat(waits.getMetadata().getPrometheusName()).isEqualTo("tailor_nbd_fair_dispatch_wait_seconds");
        HistogramSnapshot.HistogramDataPointSnapshot ofA = Histograms.point(waits, "backend", "disk", "export", "a");
        assertThat(Histograms.filledBuckets(ofA)).containsExactly(Map.entry(0.0, 1L));
        HistogramSnapshot.HistogramDataPointSnapshot ofB = Histograms.point(waits, "backend", "disk", "export", "b");
        assertThat(Histograms.filledBuckets(ofB)).containsExactly(Map.entry(0.01, 1L));
        assertThat(ofB.getSum()).isCloseTo(0.007, within(1e-12));
    }

    @Test
    void flushTrimWriteZeroesAndZeroLength_goPastTheDoor() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        door.dispatch(a, read(100), promise());
        door.dispatch(a, read(100), promise());
        assertThat(door.waitingRequests()).isEqualTo(1);
        for (int command : new int[] {NbdProtocol.CMD_FLUSH, NbdProtocol.CMD_TRIM, NbdProtocol.CMD_WRITE_ZEROES}) {
            door.dispatch(
                    a,
                    new BlockRequest(
                            command, 0, 1, 0, command == NbdProtocol.CMD_FLUSH ? 0 : 4096, Unpooled.EMPTY_BUFFER),
                    promise());
        }
        door.dispatch(a, read(0), promise());
        assertThat(backendA.heldCount()).as("straight to the export's backend").isEqualTo(4);
        assertThat(door.bypassedRequests()).isEqualTo(4);
        assertThat(door.waitingRequests()).isEqualTo(1);
        assertThat(door.outstandingRequests()).isEqualTo(1);
        assertThat(door.exportCounters().get(0).requests()).isEqualTo(2);
    }

    @Test
    void aWaitingRequestWhoseConnectionClosed_isSkipped_andItsPlaceGoesToTheNext() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        door.dispatch(a, read(100), promise());
        BlockRequest dropped = read(100);
        Promise<ByteBuf> droppedCompletion = promise();
        door.dispatch(a, dropped, droppedCompletion);
        door.dispatch(b, read(100), promise());
        dropAsTheConnectionDoes(dropped, droppedCompletion);
        assertThat(door.waitingRequests()).as("still queued until its turn").isEqualTo(2);

        completeOldest();
        assertThat(order).as("the dropped one never reaches the backend").containsExactly("a", "b");
        assertThat(door.skippedRequests()).isEqualTo(1);
        assertThat(door.waitingRequests()).isZero();
        assertThat(door.outstandingRequests()).isEqualTo(1);
        completeOldest();
        assertThat(door.outstandingRequests()).isZero();
    }

    @Test
    void aRequestLetThroughWhoseConnectionClosed_freesItsPlaceWhenItsCompletionFails() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        BlockRequest first = read(100);
        Promise<ByteBuf> firstCompletion = promise();
        door.dispatch(a, first, firstCompletion);
        door.dispatch(b, read(100), promise());
        // Still in the backend's queue, unclaimed, when its connection closes: the backend will skip it.
        dropAsTheConnectionDoes(first, firstCompletion);
        assertThat(order).containsExactly("a", "b");
        assertThat(door.outstandingRequests()).isEqualTo(1);
        assertThat(door.waitingRequests()).isZero();
    }

    @Test
    void close_failsTheWaitingWithShutdown_releasesThem_andLaterRequestsToo() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        door.dispatch(a, read(100), promise());
        BlockRequest write = new BlockRequest(
                NbdProtocol.CMD_WRITE, 0, 2, 0, 300, Unpooled.buffer(300).writeZero(300));
        Promise<ByteBuf> waiting = promise();
        door.dispatch(b, write, waiting);
        door.close();
        assertThat(waiting.cause())
                .isInstanceOf(NbdException.class)
                .hasMessageContaining("shutting down")
                .hasMessageContaining("fair dispatch door");
        assertThat(((NbdException) waiting.cause()).error()).isEqualTo(NbdProtocol.ESHUTDOWN);
        assertThat(write.refCnt()).as("its payload released").isZero();

        // The request still out completes: the failed one is not sent after all, and the door is empty.
        completeOldest();
        assertThat(order).containsExactly("a");
        assertThat(door.outstandingRequests()).isZero();
        assertThat(door.waitingRequests()).isZero();

        Promise<ByteBuf> late = promise();
        door.dispatch(a, read(100), late);
        assertThat(((NbdException) late.cause()).error()).isEqualTo(NbdProtocol.ESHUTDOWN);
        assertThat(order).containsExactly("a");
    }

    @Test
    void admissionOn_sendsWhatItAdmitsThroughTheDoor() {
        FairDispatchDoor door = door(1, 1, 1, 0);
        AdmissionDispatcher admission = admissionThrough(door);
        Promise<ByteBuf> first = promise();
        admission.dispatch(a, read(100), first);
        admission.dispatch(b, read(100), promise());
        assertThat(admission.waitingRequests()).as("both admitted at once").isZero();
        assertThat(order).as("the door lets one through").containsExactly("a");
        assertThat(door.waitingRequests()).isEqualTo(1);
        clock.addAndGet(1_000_000);
        completeOldest();
        assertThat(order).containsExactly("a", "b");
        assertThat(admission.stats().completedSuccess())
                .as("the completion reached admission too")
                .isEqualTo(1);
    }

    @Test
    void admissionOn_itsHeadroomModelTimesTheBackendOnly_notTheWaitAtTheDoor() {
        // Thirty requests admitted at once queue at a door of depth 1; each takes 1 ms at the backend. The
        // latency window admission closes must hold the backend's 1 ms, not the up to 30 ms since admission.
        FairDispatchDoor door = door(1, 1, 1, 0);
        AdmissionDispatcher admission = admissionThrough(door);
        for (int i = 0; i < 30; i++) {
            admission.dispatch(i % 2 == 0 ? a : b, read(100), promise());
        }
        assertThat(door.waitingRequests()).isEqualTo(29);
        for (int i = 0; i < 30; i++) {
            clock.addAndGet(1_000_000);
            completeOldest();
        }
        clock.addAndGet(10_000_000); // past the boundary after the last completion
        IntervalReport report = admission.tick();
        assertThat(report.p95LatencyNanos()).isEqualTo(1_000_000, org.assertj.core.data.Offset.offset(10_000.0));
    }

    @Test
    void weights_areTheExportsCommitments_orAFairShareOfTheBudget() {
        AdmissionSettings budget = AdmissionSettings.builder().iops(1000.0).build();
        ExportConfig plain = ExportConfig.file("p", "t", 1 << 20, false, Path.of("p.img"));
        ExportConfig provisioned = plain.toBuilder()
                .name("q")
                .baseline(new ExportConfig.Baseline(250.0, null))
                .build();
        // 1000 IOPS: a device-second per second, 10⁹ cost units; 250 IOPS is a quarter, the other takes the rest.
        assertThat(FairDispatchDoor.weights(budget, List.of(provisioned, plain)))
                .containsExactly(2.5e8, 7.5e8);
        assertThat(FairDispatchDoor.weights(
                        budget, List.of(plain, plain.toBuilder().name("r").build())))
                .as("no baseline anywhere: equal shares")
                .containsExactly(5e8, 5e8);
        ExportConfig all = provisioned.toBuilder()
                .baseline(new ExportConfig.Baseline(1000.0, null))
                .build();
        assertThat(FairDispatchDoor.weights(budget, List.of(all, plain)))
                .as("a budget promised in full leaves the other a millionth")
                .containsExactly(1e9, 1e3);
    }

    @Test
    void of_takesTheLagAndCostModelFromAdmission_andTheDepthFromTheFileThreads() {
        NbdConfig config = NbdConfig.builder()
                .fileIoThreads(6)
                .exports(configA, configB)
                .fairDispatch(new FairDispatchSettings(true, null))
                .build();
        FairDispatchDoor door = FairDispatchDoor.of(config, List.of(a, b), backends, clock::get);
        AdmissionConfig admission = AdmissionConfig.DEFAULTS;
        assertThat(door.doors())
                .as("a.img and b.img in one folder: one device, one door")
                .isEqualTo(1);
        assertThat(door.depth(door.backends().get(0))).isEqualTo(6);
        assertThat(door.lagSeconds())
                .as("W·Δ: 10 intervals of 10 ms")
                .isEqualTo(admission.windowIntervals() * admission.intervalNanos() / 1e9);
        assertThat(door.weightsCostUnitsPerSecond()).containsExactly(5e8, 5e8);
        FairDispatchDoor deep = FairDispatchDoor.of(
                config.toBuilder()
                        .fairDispatch(new FairDispatchSettings(true, 32))
                        .build(),
                List.of(a, b),
                backends,
                clock::get);
        assertThat(deep.depth(deep.backends().get(0))).isEqualTo(32);
    }

    /**
     * The door by finish tag ({@code fairDispatch.finishTag}): export a's two 1 MiB reads and b's 4 KiB read
     * wait behind one read out at depth 1, a's first. Their start tags tie (both exports at the virtual time,
     * equal weights), so by start tag a's large read goes first (ties to the lower index, a) and b's small one
     * waits for it; by finish tag (start + cost ÷ weight) b's small read finishes first and goes ahead of both
     * large reads, which arrived before it. The charging is the same either way: a's second read then waits
     * for its first's tag, and goes last in both orders.
     */
    @Test
    void byFinishTag_aSmallRequestOvertakesTheLargeOnesOfAnotherExportThatArrivedBefore() {
        NbdConfig startTags = NbdConfig.builder()
                .exports(configA, configB)
                .fairDispatch(new FairDispatchSettings(true, 1, false))
                .build();
        NbdConfig finishTags = startTags.toBuilder()
                .fairDispatch(new FairDispatchSettings(true, 1, true))
                .build();
        List<List<String>> orders = new ArrayList<>();
        for (NbdConfig config : List.of(startTags, finishTags)) {
            order.clear();
            FairDispatchDoor door = FairDispatchDoor.of(config, List.of(a, b), backends, clock::get);
            assertThat(door.doors())
                    .as("a.img and b.img in one folder: one door")
                    .isEqualTo(1);
            assertThat(door.finishTag()).isEqualTo(config.fairDispatch().finishTagOrder(config.admission()));
            door.dispatch(a, read(4096), promise());
            door.dispatch(a, read(1 << 20), promise());
            door.dispatch(a, read(1 << 20), promise());
            door.dispatch(b, read(4096), promise());
            assertThat(order).as("depth 1: the first goes at once").containsExactly("a");
            assertThat(door.waitingRequests()).isEqualTo(3);
            for (int i = 0; i < 3; i++) {
                completeOldest();
            }
            assertThat(door.waitingRequests()).isZero();
            completeOldest();
            orders.add(List.copyOf(order));
        }
        assertThat(orders.get(0))
                .as("by start tag: a's large read first (tie), then b's small one, then a's second")
                .containsExactly("a", "a", "b", "a");
        assertThat(orders.get(1))
                .as("by finish tag: b's small read ahead of a's large reads that arrived before it")
                .containsExactly("a", "b", "a", "a");
    }

    @Test
    void arrivalsOnTwoThreads_completionsOnThree_neverMoreThanDepthOut_eachSentOnce() throws Exception {
        int perThread = 5_000;
        int depth = 4;
        java.util.concurrent.ExecutorService completers = java.util.concurrent.Executors.newFixedThreadPool(3);
        java.util.concurrent.atomic.AtomicInteger out = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger mostOut = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger sentOn = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(2 * perThread);
        RequestDispatcher threaded = (export, request, completion) -> {
            sentOn.incrementAndGet();
            mostOut.accumulateAndGet(out.incrementAndGet(), Math::max);
            completers.execute(() -> {
                request.claim();
                out.decrementAndGet();
                completion.setSuccess(null); // runs the door's listener, which may send the next
                done.countDown();
            });
        };
        FairDispatchDoor door = new FairDispatchDoor(
                List.of(a, b), List.of("disk", "disk"), new double[] {2, 1}, depth, 0.1, BYTES, threaded, clock::get);
        try {
            List<Thread> arrivals = new ArrayList<>();
            for (Export export : List.of(a, b)) {
                arrivals.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < perThread; i++) {
                        door.dispatch(export, read(512), promise());
                    }
                }));
            }
            for (Thread t : arrivals) {
                t.join();
            }
            assertThat(done.await(60, java.util.concurrent.TimeUnit.SECONDS))
                    .as("every request completed, the door's listener run")
                    .isTrue();
        } finally {
            completers.shutdownNow();
        }
        assertThat(sentOn.get()).as("each sent once").isEqualTo(2 * perThread);
        assertThat(mostOut.get()).as("never more than depth at the backend").isBetween(1, depth);
        assertThat(door.outstandingRequests()).isZero();
        assertThat(door.waitingRequests()).isZero();
        assertThat(door.exportCounters().get(0).requests()).isEqualTo(perThread);
    }

    @Test
    void badDepthOrWeights_areNamed() {
        assertThatThrownBy(() -> door(1, 1, 0, 0)).hasMessage("depth : 0 (expected: >= 1)");
        assertThatThrownBy(() -> door(1, 0, 1, 0))
                .hasMessage(
                        "weightsCostUnitsPerSecond[1] : 0 (expected: a finite number of cost units per second > 0)");
        assertThatThrownBy(() -> door(Double.NaN, 1, 1, 0))
                .hasMessage("weightsCostUnitsPerSecond[0] : NaN (expected: a finite number of cost units per"
                        + " second > 0)");
        assertThatThrownBy(() -> door(1e7, Double.POSITIVE_INFINITY, 1, 0))
                .hasMessage("weightsCostUnitsPerSecond[1] : Infinity (expected: a finite number of cost units per"
                        + " second > 0)");
        assertThatThrownBy(() -> door(-1e7, 1, 1, 0))
                .hasMessage("weightsCostUnitsPerSecond[0] : -10000000 (expected: a finite number of cost units per"
                        + " second > 0)");
        assertThatThrownBy(() -> door(1, 1, 1, Double.NaN))
                .hasMessage("lagSeconds : NaN (expected: a finite number >= 0)");
        assertThatThrownBy(() -> door(1, 1, 1, -0.5)).hasMessage("lagSeconds : -0.5 (expected: a finite number >= 0)");
    }
}
