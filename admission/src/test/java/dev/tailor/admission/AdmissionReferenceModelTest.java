package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;

/**
 * The real {@link AdmissionController} against {@link ReferenceAdmissionModel}, a slow, exact
 * re-implementation of the documented semantics (docs/admission.md and the Javadoc of the admission
 * classes), on random small configurations and random operation sequences: requests on random disks,
 * ranges and directions; {@code onInterval} at random times inside intervals (reserve lending),
 * across one or several boundaries, after long idle gaps, standing still and going backwards; the
 * reserve fraction changed at run time; tickets completed. The start time is sometimes just below
 * {@link Long#MAX_VALUE}, so the controller's clock wraps while the model's offsets do not.
 *
 * <p>After every operation the two must agree exactly: the outcome of each {@code acquire} (admitted
 * with its ticket's id, cost, classes and segments; queued with its position; refused at which
 * segment), the requests each {@code onInterval} admits, in order, with the class they were admitted
 * as, the report's pool levels, hot segments and waiting requests, every counter of
 * {@link AdmissionStats}, and each segment's class and queue length. The property tests check
 * invariants that many wrong controllers also satisfy; this test checks that the controller does
 * precisely what its documentation says, request by request, so a change of any rule (the lending
 * formula, the steady-first pass, the calm count, the ring order) shows up as a first differing
 * operation, printed with the shortest operation sequence that still fails. The test also checks that
 * the random runs reached every rule (a generator that stops reaching one would hide it).
 *
 * <p>Borrowing is off: what may be borrowed depends on the headroom model's statistical estimate,
 * which {@code HeadroomModelTest} and the borrow properties of {@code AdmissionPropertiesTest} cover;
 * here the report's borrow window and headroom must stay 0, and its debt and repayment are those of
 * advances ({@link AdmissionConfig#oversizeAdvance} and {@link AdmissionConfig#overlappingAdvances}, each on
 * or off at random, and {@link AdmissionConfig#creditGatedAdvances} on in half the runs with overlapping
 * ones), which the model has, with the credits that gate them.
 */
/*
 * Maintainer note. Checked to fail: each of these one-line changes to the controller was caught within
 * 3 to 84 examples (of 1,000): the kept reserve rounded down instead of up, or computed from the time
 * elapsed instead of the time left; no steady-first pass; R + 1 calm windows instead of R; a segment
 * hot when its running window equals the threshold; set-aside queues put back at the end of the ring;
 * a hot arrival waiting only behind hot requests; a calmed hot request not drawing as steady; a steady
 * draw of the reserve taking the lent part first; a visit giving one more than the quantum; the queue
 * capacity counted per class; an advance made while another is outstanding, or one never counted as
 * repaid (both within 4 examples). On first running it found three places where the controller and its
 * documentation disagreed (the documentation won): lending only while requests waited, no service at
 * a call exactly at the interval's start, and the kept reserve computed in doubles (one token too
 * many when R × time left ÷ Δ is whole; that one is too rare for random runs and has its own case in
 * DualTokenPoolTest). Credit-gated advances: the controller letting every request overlap an advance,
 * or not capping the credits at R·Δ of baseline, each failed the run (shortened to 5 and 4 operations).
 * 6 to 11 s on a shared 2-core machine. It took three minutes while the model stepped through every
 * boundary of a long gap with a debt that r = 1 leaves unrepaid (up to ten million boundaries a gap);
 * such a gap is now passed in one step, as one without debt is.
 */
class AdmissionReferenceModelTest {

    /** Every rule the generator must reach (see {@link ReferenceAdmissionModel#events}), and the wrap. */
    private static final List<String> RULES = List.of(
            "acquire admits steady",
            "acquire admits hot",
            "acquire queues steady",
            "acquire queues hot",
            "acquire refused",
            "acquire draws the reserve",
            "acquire draws the lent reserve",
            "acquire waits behind its class although the pools cover it",
            "segment turns hot at a charge",
            "calm count reset by a hot window",
            "segment steady again after R calm windows",
            "reserve changed at a boundary",
            "call before the running interval restarts it",
            "idle boundaries passed at once",
            "boundary passed without service, requests waiting",
            "steady pass sets a hot queue aside",
            "hot request draws as steady, its segments calm",
            "queue set aside, its class can draw nothing",
            "queue draws the reserve",
            "queue draws the lent reserve",
            "queue admits in one visit",
            "queue admits after several visits",
            "queue admits on an advance",
            "advance while another is outstanding",
            "advance while another is outstanding, its disk within its credits",
            "no advance while another is outstanding, its disk beyond its credits",
            "advance, none outstanding, its disk beyond its credits",
            "advance repaid at a boundary",
            "controller clock wraps",
            "cancel of a waiting request",
            "cancel of a partly funded request");

    /** How often each rule took effect over all the runs of one test. */
    private static final Map<String, Long> reached = new TreeMap<>();

    @Test
    void randomRuns_controllerMatchesTheReferenceModelOperationByOperation() {
        reached.clear();
        qt().withExamples(1_000)
                .withShrinkCycles(2_000)
                .forAll(scenarios())
                .checkAssert(AdmissionReferenceModelTest::run);
        // A generator that stopped reaching a rule would let a change of it pass unnoticed.
        assertThat(reached.keySet())
                .as("rules the random runs reached, with counts " + reached)
                .containsAll(RULES);
    }

    // ---------------------------------------------------------------- operations

    /** One step of a run. */
    sealed interface Op {}

    /** {@code acquire(disk, kind, offsetBytes, lengthBytes)}. */
    record Acquire(int disk, IoKind kind, long offsetBytes, long lengthBytes) implements Op {
        @Override
        public String toString() {
            return "acquire(disk " + disk + ", " + kind + ", " + offsetBytes + "+" + lengthBytes + ")";
        }
    }

    /** Time moves on by {@code advanceNanos} (0: standing still) and {@code onInterval} is called. */
    record Tick(long advanceNanos, long intervalNanos) implements Op {
        @Override
        public String toString() {
            long whole = advanceNanos / intervalNanos;
            long rest = advanceNanos % intervalNanos;
            return "onInterval(now += " + (whole == 0 ? "" : whole + "Δ + ") + rest + " ns)";
        }
    }

    /**
     * {@code onInterval} at {@code backNanos} before the latest time, which stays the latest: a stray
     * reading, or a clock that stepped back and then forward again.
     */
    record Back(long backNanos) implements Op {
        @Override
        public String toString() {
            return "onInterval(now − " + backNanos + " ns)";
        }
    }

    /** {@code setReserveFraction(fraction)}. */
    record SetReserve(double fraction) implements Op {
        @Override
        public String toString() {
            return "setReserveFraction(" + fraction + ")";
        }
    }

    /** The {@code index}-th (modulo their number) of the requests waiting now, oldest first, is withdrawn. */
    record Cancel(int index) implements Op {
        @Override
        public String toString() {
            return "cancel waiting request " + index;
        }
    }

    /** The oldest admitted, not yet completed ticket is completed (if any): 0 success, 1 dropped, 2 ignore. */
    record Complete(int how) implements Op {
        @Override
        public String toString() {
            return "complete oldest ticket " + new String[] {"onSuccess", "onDropped", "onIgnore"}[how];
        }
    }

    /** A random setup and what to do with it. */
    record Scenario(AdmissionConfig config, List<VirtualDisk> disks, long startNanos, List<Op> ops) {
        @Override
        public String toString() {
            AdmissionConfig c = config;
            IoCostModel m = c.costModel();
            StringBuilder s = new StringBuilder()
                    .append("Δ ")
                    .append(c.intervalNanos())
                    .append(" ns, C ")
                    .append(c.budgetCostUnits())
                    .append(", r ")
                    .append(c.reserveFraction())
                    .append(", W ")
                    .append(c.windowIntervals())
                    .append(", R ")
                    .append(c.recoveryWindows())
                    .append(", hotThresholdRatio ")
                    .append(c.hotThresholdRatio())
                    .append(", queue ")
                    .append(c.queueCapacityPerSegment())
                    .append(", quantum ")
                    .append(c.queueQuantumCostUnits())
                    .append(", lending ")
                    .append(c.reserveLending())
                    .append(", advances ")
                    .append(c.oversizeAdvance())
                    .append(c.overlappingAdvances() ? ", overlapping" : "")
                    .append(c.creditGatedAdvances() ? ", credit-gated" : "")
                    .append(", segment/block ")
                    .append(c.segmentSizeBytes())
                    .append('/')
                    .append(c.blockSizeBytes())
                    .append(" B, cost read ")
                    .append(m.readBaseCostUnits())
                    .append(" + ")
                    .append(m.readCostUnitsPerByte())
                    .append("·B, write ")
                    .append(m.writeBaseCostUnits())
                    .append(" + ")
                    .append(m.writeCostUnitsPerByte())
                    .append("·B")
                    .append("\ndisks ")
                    .append(disks.stream()
                            .map(d -> d.name() + " " + d.sizeBytes() + " B"
                                    + (d.commitmentCostUnitsPerSecond().isPresent()
                                            ? " committed "
                                                    + d.commitmentCostUnitsPerSecond()
                                                            .getAsDouble() + "/s"
                                            : " fair share"))
                            .collect(Collectors.joining(", ")))
                    .append("\nstart ")
                    .append(startNanos)
                    .append(" ns");
            for (int i = 0; i < ops.size(); i++) {
                s.append("\n  ").append(i).append(": ").append(ops.get(i));
            }
            return s.toString();
        }
    }

    // ---------------------------------------------------------------- the run

    private static void run(Scenario scenario) {
        AdmissionController real = new AdmissionController(scenario.config(), scenario.disks(), scenario.startNanos());
        ReferenceAdmissionModel model =
                new ReferenceAdmissionModel(scenario.config(), scenario.disks(), scenario.startNanos());
        long offset = 0; // time since the start, on the model's side (never wraps)
        ArrayDeque<Ticket> inFlight = new ArrayDeque<>();
        // Requests waiting now, by id, on both sides (queued, not yet admitted or withdrawn).
        TreeMap<Long, Ticket> waitingReal = new TreeMap<>();
        TreeMap<Long, ReferenceAdmissionModel.Request> waitingModel = new TreeMap<>();
        long[] completed = new long[3];
        List<Op> ops = scenario.ops();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            String at = "after op " + i + ": " + op;
            switch (op) {
                case Acquire a -> {
                    Admission got = real.acquire(a.disk(), a.kind(), a.offsetBytes(), a.lengthBytes());
                    ReferenceAdmissionModel.Outcome want =
                            model.acquire(a.disk(), a.kind(), a.offsetBytes(), a.lengthBytes());
                    assertThat(describe(got)).as(at + ", acquire outcome").isEqualTo(describe(want));
                    if (got instanceof Admission.Admitted admitted) {
                        inFlight.add(admitted.ticket());
                    }
                    if (got instanceof Admission.Queued q
                            && want instanceof ReferenceAdmissionModel.Outcome.Queued mq) {
                        waitingReal.put(q.ticket().id(), q.ticket());
                        waitingModel.put(mq.request().id, mq.request());
                    }
                }
                case Cancel c -> {
                    if (!waitingReal.isEmpty()) {
                        long id = new ArrayList<>(waitingReal.keySet()).get(c.index() % waitingReal.size());
                        assertThat(real.cancel(waitingReal.remove(id)))
                                .as(at + ", cancel")
                                .isTrue();
                        assertThat(model.cancel(waitingModel.remove(id)))
                                .as(at + ", model cancel")
                                .isTrue();
                    }
                }
                case Tick t -> {
                    if (scenario.startNanos() + offset <= scenario.startNanos() + offset + t.advanceNanos()
                            != offset <= offset + t.advanceNanos()) {
                        reached.merge("controller clock wraps", 1L, Long::sum);
                    }
                    offset += t.advanceNanos();
                    IntervalReport got = real.onInterval(scenario.startNanos() + offset);
                    compareReports(got, model.onInterval(offset), model, inFlight, at);
                    got.admitted().forEach(admitted -> {
                        waitingReal.remove(admitted.id());
                        waitingModel.remove(admitted.id());
                    });
                }
                case Back b -> {
                    IntervalReport got = real.onInterval(scenario.startNanos() + offset - b.backNanos());
                    compareReports(got, model.onInterval(offset - b.backNanos()), model, inFlight, at);
                    got.admitted().forEach(admitted -> {
                        waitingReal.remove(admitted.id());
                        waitingModel.remove(admitted.id());
                    });
                }
                case SetReserve r -> {
                    real.setReserveFraction(r.fraction());
                    model.setReserveFraction(r.fraction());
                }
                case Complete c -> {
                    Ticket t = inFlight.poll();
                    if (t != null) {
                        switch (c.how()) {
                            case 0 -> t.onSuccess(1_000 + t.id());
                            case 1 -> t.onDropped(2_000 + t.id());
                            default -> t.onIgnore();
                        }
                        completed[c.how()]++;
                    }
                }
            }
            assertThat(real.stats()).as(at + ", stats").isEqualTo(expectedStats(model, completed));
            StringBuilder realSegments = new StringBuilder();
            StringBuilder modelSegments = new StringBuilder();
            for (int s = 0; s < model.segmentCount(); s++) {
                realSegments
                        .append(real.segmentClass(s) == SegmentClass.HOT ? 'H' : 'S')
                        .append(real.waitingRequests(s))
                        .append(' ');
                modelSegments
                        .append(model.isHot(s) ? 'H' : 'S')
                        .append(model.waitingAt(s))
                        .append(' ');
            }
            assertThat(realSegments.toString())
                    .as(at + ", class and queue length per segment (ring " + model.ringDescription() + ")")
                    .isEqualTo(modelSegments.toString());
        }
        model.events.forEach((event, count) -> reached.merge(event, count, Long::sum));
    }

    private static void compareReports(
            IntervalReport got,
            ReferenceAdmissionModel.Report want,
            ReferenceAdmissionModel model,
            ArrayDeque<Ticket> inFlight,
            String at) {
        String gotText = "boundaries " + got.intervalsElapsed() + ", interval start " + got.intervalStartNanos()
                + ", admitted "
                + got.admitted().stream()
                        .map(t -> "#" + t.id() + " as " + t.admittedAs())
                        .toList()
                + ", C " + got.budgetCostUnits() + ", main " + got.mainCostUnits() + ", reserve "
                + got.reserveCostUnits() + ", hot " + got.hotSegments() + ", waiting " + got.waitingRequests()
                + ", debt " + got.debtCostUnits() + ", repaid " + got.repaidCostUnits() + ", borrow window "
                + got.borrowWindowCostUnits() + ", headroom " + got.headroomCostUnits();
        String wantText = "boundaries " + want.intervalsElapsed() + ", interval start " + want.intervalStartNanos()
                + ", admitted "
                + want.admitted().stream()
                        .map(r -> "#" + r.id + " as " + (r.admittedSteady ? SegmentClass.STEADY : SegmentClass.HOT))
                        .toList()
                + ", C " + model.budgetCostUnits() + ", main " + model.mainCostUnits() + ", reserve "
                + model.reserveCostUnits() + ", hot " + model.hotCount() + ", waiting " + model.waiting()
                + ", debt " + model.debtCostUnits() + ", repaid " + model.repaidThisIntervalCostUnits()
                + ", borrow window 0, headroom 0";
        assertThat(gotText)
                .as(at + ", interval report (model ring " + model.ringDescription() + ")")
                .isEqualTo(wantText);
        inFlight.addAll(got.admitted());
    }

    private static String describe(Admission a) {
        return switch (a) {
            case Admission.Admitted ad -> "admitted " + ticket(ad.ticket());
            case Admission.Queued q -> "queued at position " + q.position() + ": " + ticket(q.ticket());
            case Admission.Refused r -> "refused " + r.reason() + " at segment " + r.segment();
        };
    }

    private static String ticket(Ticket t) {
        return "#" + t.id() + ", cost " + t.costUnits() + ", segment " + t.segment() + " of " + t.segmentCount()
                + ", arrived " + t.arrivedAs() + ", admitted as " + t.admittedAs();
    }

    private static String describe(ReferenceAdmissionModel.Outcome o) {
        return switch (o) {
            case ReferenceAdmissionModel.Outcome.Admitted ad -> "admitted " + request(ad.request());
            case ReferenceAdmissionModel.Outcome.Queued q ->
                "queued at position " + q.position() + ": " + request(q.request());
            case ReferenceAdmissionModel.Outcome.Refused r -> "refused QUEUE_FULL at segment " + r.segment();
        };
    }

    private static String request(ReferenceAdmissionModel.Request r) {
        return "#" + r.id + ", cost " + r.costUnits + ", segment " + r.firstSegment() + " of " + r.parts.size()
                + ", arrived " + (r.arrivedSteady ? SegmentClass.STEADY : SegmentClass.HOT) + ", admitted as "
                + (r.admittedSteady == null ? null : r.admittedSteady ? SegmentClass.STEADY : SegmentClass.HOT);
    }

    private static AdmissionStats expectedStats(ReferenceAdmissionModel m, long[] completed) {
        return new AdmissionStats(
                m.intervalsBegun(),
                m.intervalsBegun() * m.budgetCostUnits(),
                m.admittedRequests(),
                m.admittedCostUnits(),
                m.admittedSteadyRequests(),
                m.queuedRequests(),
                m.refusedRequests(),
                m.waiting(),
                m.drawnMainCostUnits(),
                m.drawnReserveCostUnits(),
                m.lentReserveCostUnits(),
                0,
                0,
                m.advancedCostUnits(),
                m.repaidCostUnits(),
                m.debtCostUnits(),
                0,
                completed[0],
                completed[1],
                completed[2],
                m.cancelledRequests());
    }

    // ---------------------------------------------------------------- failure report

    /**
     * A failing scenario as QuickTheories prints it: its setup and the shortest operation sequence
     * found by deleting operations while the run still fails (QuickTheories shrinks values, not list
     * structure), with where the two sides first disagree.
     */
    private static String describeFailure(Scenario scenario) {
        if (failure(scenario) == null) {
            return scenario.toString();
        }
        List<Op> ops = new ArrayList<>(scenario.ops());
        for (int chunk = Math.max(1, ops.size() / 2); chunk >= 1; chunk = chunk == 1 ? 0 : chunk / 2) {
            boolean removed = true;
            while (removed) {
                removed = false;
                for (int from = 0; from < ops.size(); ) {
                    List<Op> shorter = new ArrayList<>(ops.subList(0, from));
                    shorter.addAll(ops.subList(Math.min(ops.size(), from + chunk), ops.size()));
                    if (failure(new Scenario(scenario.config(), scenario.disks(), scenario.startNanos(), shorter))
                            != null) {
                        ops = shorter;
                        removed = true;
                    } else {
                        from += chunk;
                    }
                }
            }
        }
        Scenario shortest = new Scenario(scenario.config(), scenario.disks(), scenario.startNanos(), ops);
        return shortest + "\nfirst disagreement: " + failure(shortest).getMessage() + "\n(shortened from "
                + scenario.ops().size() + " operations)";
    }

    private static AssertionError failure(Scenario scenario) {
        try {
            run(scenario);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    // ---------------------------------------------------------------- generation

    private static int between(RandomnessSource in, int min, int max) {
        return integers().between(min, max).generate(in);
    }

    private static long between(RandomnessSource in, long min, long max) {
        return longs().between(min, max).generate(in);
    }

    private static double fraction(RandomnessSource in) {
        return switch (between(in, 0, 4)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> 0.2;
            default -> between(in, 0, 10) / 10.0;
        };
    }

    private static Gen<Scenario> scenarios() {
        Gen<Scenario> gen = in -> {
            long delta = switch (between(in, 0, 3)) {
                case 0 -> 1_000L;
                case 1 -> 10_000_000L;
                case 2 -> 1_000L * between(in, 1, 100_000);
                default -> between(in, 1_000L, 100_000_000L);
            };
            int budget = between(in, 0, 3) == 0 ? between(in, 1, 16) : between(in, 17, 3_000);
            long block = between(in, 10, 200);
            long segment = block * between(in, 1, 3);
            IoCostModel costs = new IoCostModel(
                    between(in, 0, 30), between(in, 0, 4) / 2.0, between(in, 0, 30), between(in, 0, 4) / 2.0);
            // Credit-gated advances refine overlapping ones, which they need: on in half the runs with those.
            boolean overlapping = between(in, 0, 1) == 0;
            boolean creditGated = overlapping && between(in, 0, 1) == 0;
            AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                    .intervalNanos(delta)
                    .capacityCostUnitsPerSecond((budget + 0.5) * 1e9 / delta)
                    .segmentSizeBytes(segment)
                    .blockSizeBytes(block)
                    .costModel(costs)
                    .reserveFraction(fraction(in))
                    .windowIntervals(between(in, 1, 6))
                    .recoveryWindows(between(in, 1, 8))
                    .hotThresholdRatio(new double[] {0.5, 1, 2}[between(in, 0, 2)])
                    .queueCapacityPerSegment(between(in, 0, 5))
                    .queueQuantumFraction(between(in, 1, 8) / 8.0)
                    .borrowing(false)
                    .oversizeAdvance(between(in, 0, 1) == 0)
                    .overlappingAdvances(overlapping)
                    .creditGatedAdvances(creditGated)
                    .repayment(between(in, 0, 1) == 0)
                    .reserveLending(between(in, 0, 3) > 0)
                    .build();
            int diskCount = between(in, 1, 3);
            List<VirtualDisk> disks = new ArrayList<>();
            for (int d = 0; d < diskCount; d++) {
                long size = between(in, 1L, 5 * segment);
                long segments = (size + segment - 1) / segment;
                if (between(in, 0, 1) == 0) {
                    disks.add(VirtualDisk.of("d" + d, size));
                } else {
                    // A baseline per segment and interval of the order of one block's cost.
                    long perInterval = between(in, 0, 3 * (30 + 2 * (int) block));
                    disks.add(VirtualDisk.committed("d" + d, size, perInterval * segments * 1e9 / delta));
                }
            }
            long start = switch (between(in, 0, 2)) {
                case 0 -> 0;
                case 1 -> Long.MAX_VALUE - between(in, 0, 40) * delta - between(in, 0L, delta);
                default -> between(in, Long.MIN_VALUE / 2, Long.MAX_VALUE / 2);
            };
            int n = between(in, 1, 300);
            List<Op> ops = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Op op = op(in, disks, delta, block);
                if (op != null) {
                    ops.add(op);
                }
            }
            return new Scenario(config, disks, start, ops);
        };
        return gen.describedAs(AdmissionReferenceModelTest::describeFailure);
    }

    /**
     * A random operation, or null for none. Shrinking moves every drawn value towards its lower bound,
     * so the lowest roll means "no operation": that lets the shrinker delete operations from the middle
     * of a sequence, not only shorten it, and the sequence printed for a failure is short.
     */
    private static Op op(RandomnessSource in, List<VirtualDisk> disks, long delta, long block) {
        int roll = between(in, 0, 100) - 1;
        if (roll < 0) {
            return null;
        } else if (roll < 55) {
            int disk = between(in, 0, disks.size() - 1);
            long size = disks.get(disk).sizeBytes();
            long offset = between(in, 0L, size - 1);
            long most = between(in, 0, 5) == 0 ? size - offset : Math.min(size - offset, 2 * block);
            return new Acquire(
                    disk, between(in, 0, 1) == 0 ? IoKind.READ : IoKind.WRITE, offset, between(in, 1L, most));
        } else if (roll < 75) {
            // Inside the running interval, or to the next boundary or just past it; often by a round
            // fraction of Δ, where reserve × time left ÷ Δ tends to be a whole number (rounding matters).
            return new Tick(
                    switch (between(in, 0, 2)) {
                        case 0 -> between(in, 0, 10) * delta / 10;
                        case 1 -> between(in, 0, 100) * delta / 100;
                        default -> between(in, 0L, delta);
                    },
                    delta);
        } else if (roll < 82) {
            return new Tick(between(in, 1, 25) * delta + between(in, 0L, delta - 1), delta);
        } else if (roll < 84) {
            // A long idle gap: up to ten million intervals (a day at Δ = 10 ms).
            return new Tick(between(in, 100L, 10_000_000L) * delta + between(in, 0L, delta - 1), delta);
        } else if (roll < 87) {
            return new Tick(0, delta);
        } else if (roll < 90) {
            return new Back(between(in, 1L, 2 * delta));
        } else if (roll < 93) {
            return new SetReserve(fraction(in));
        } else if (roll < 95) {
            return new Cancel(between(in, 0, 10));
        } else {
            return new Complete(between(in, 0, 2));
        }
    }
}
