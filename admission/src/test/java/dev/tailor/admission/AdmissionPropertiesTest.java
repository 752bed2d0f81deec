package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The controller under random configurations and random operation sequences, in virtual time:
 * requests on random disks, ranges and directions; completions with random latencies and outcomes;
 * time advancing by random half-intervals, jumping seconds ahead, standing still or going back; the
 * reserve changed at run time. After every operation the token accounting must hold, no single
 * {@code onInterval} call may draw more than one interval's budget whatever the gap before it, and at
 * the end every request must have been admitted or refused.
 */
class AdmissionPropertiesTest {

    private static final long DELTA = 10_000_000L;

    /** A random controller setup and what to do with it. */
    record Scenario(AdmissionConfig config, List<VirtualDisk> disks, List<int[]> ops) {
        @Override
        public String toString() {
            StringBuilder s = new StringBuilder(config + "\n" + disks + "\nops:");
            for (int[] op : ops) {
                s.append(' ').append(java.util.Arrays.toString(op));
            }
            return s.toString();
        }
    }

    @Test
    void randomRuns_tokensNeverExceedBudgetPlusBoundedBorrowing_andNothingIsLost() {
        qt().withFixedSeed(20261201L)
                .withExamples(400)
                .forAll(scenarios(false, false))
                .checkAssert(AdmissionPropertiesTest::run);
    }

    /**
     * The same with the departures from the paper switched at random (baseline guarantee, paced release,
     * adaptive reserve, weighted hot service): the regular pools still never give more than the budgets
     * net of repayments, no call issues more than one budget, the adaptive reserve stays within half the
     * budget whatever r is set to at run time, what the baseline guarantee lets through
     * beyond the pools is bounded by what the disks' baseline buckets were ever given (their depths, or a
     * larger request's cost, plus baseline × the time passed), and nothing is lost or left waiting.
     */
    @Test
    void randomRuns_withTheDepartures_overdraftBoundedByTheBaselines_andNothingIsLost() {
        qt().withFixedSeed(20261202L)
                .withExamples(400)
                .forAll(scenarios(true, false))
                .checkAssert(AdmissionPropertiesTest::run);
    }

    /**
     * Requests mostly larger than the budget per interval, with advances on (the departures otherwise at
     * random, overlapping advances too): what is admitted beyond the budgets, the borrow windows and the
     * guarantee's overdraft is at most the advances outstanding, less than the largest request's cost (one
     * advance outstanding) or twice it (overlapping advances); one call advances no more than that; debt is what was borrowed, overdrawn or advanced and not repaid; nothing is lost. Advances
     * must have happened, or the property says nothing.
     */
    @Test
    void randomRuns_requestsLargerThanTheBudget_advancesBoundedByOneRequest_andNothingIsLost() {
        ADVANCED.set(0);
        qt().withFixedSeed(20261204L)
                .withExamples(400)
                .forAll(scenarios(true, true))
                .checkAssert(AdmissionPropertiesTest::run);
        assertThat(ADVANCED.get()).as("cost advanced over all runs").isPositive();
    }

    /** Cost advanced over the runs of a property (read by the one that needs advances to have happened). */
    private static final java.util.concurrent.atomic.AtomicLong ADVANCED = new java.util.concurrent.atomic.AtomicLong();

    /**
     * The most the baseline guarantee can admit beyond the pools after {@code refilledNanos} of refill: every
     * disk's bucket full at the start and refilled at its baseline since (AdmissionController's refill), in cost
     * units, and for a disk whose largest request costs more than its bucket's depth, that cost instead
     * of the depth (a full bucket covers one such request and goes below zero); 0 without the guarantee.
     */
    private static double baselineAllowance(Scenario scenario, long refilledNanos, long[] largestCostUnits) {
        AdmissionConfig config = scenario.config();
        if (!config.baselineGuarantee()) {
            return 0;
        }
        double fairShare =
                config.capacityCostUnitsPerSecond() / scenario.disks().size();
        double total = 0;
        for (int i = 0; i < scenario.disks().size(); i++) {
            double perSecond =
                    scenario.disks().get(i).commitmentCostUnitsPerSecond().orElse(fairShare);
            double depth = perSecond * (config.intervalNanos() / 1e9) * config.windowIntervals();
            total += Math.max(depth, largestCostUnits[i]) + perSecond / 1e9 * refilledNanos;
        }
        return total;
    }

    private static void run(Scenario scenario) {
        long now = 1_000_000_000L;
        // The time the controller refilled the baseline buckets for: onInterval refills from the time of the
        // last refill up to its own, and a call before the running interval (the clock stepped back) restarts
        // the refills at its time, so the span stepped back over is refilled again.
        long refilledAt = now;
        long refilledNanos = 0;
        AdmissionController c = new AdmissionController(scenario.config(), scenario.disks(), now);
        boolean guarantee = scenario.config().baselineGuarantee();
        boolean boundaryPassed = false;
        long budget = scenario.config().budgetCostUnits();
        HeadroomConfig h = scenario.config().headroom();
        ArrayDeque<Ticket> inFlight = new ArrayDeque<>();
        Set<Long> waitingIds = new HashSet<>();
        Set<Long> admittedIds = new HashSet<>();
        List<Ticket> waitingTickets = new ArrayList<>();
        long acquires = 0;
        long[] largestCostUnits = new long[scenario.disks().size()];
        // An advance is what one queued request costing more than C lacked: less than the largest queued cost.
        // One outstanding at a time, or (overlapping) a new one while what is outstanding is less than the
        // asking request's cost: less than twice the largest queued cost outstanding.
        long largestQueued = 0;
        long advance =
                !scenario.config().oversizeAdvance() ? 0 : scenario.config().overlappingAdvances() ? 2 : 1;
        long cancelled = 0;
        long windows = 0;
        long maxWindow = 0;
        long currentWindow = 0;
        long borrowedAtBoundary = 0;
        long intervalStart = now;

        for (int[] op : scenario.ops()) {
            switch (op[0]) {
                case 0 -> {
                    int disk = op[1] % scenario.disks().size();
                    long size = scenario.disks().get(disk).sizeBytes();
                    long offset = op[2] % size;
                    long length = 1 + op[3] % (size - offset);
                    Admission a = c.acquire(disk, op[4] == 0 ? IoKind.READ : IoKind.WRITE, offset, length);
                    acquires++;
                    if (a instanceof Admission.Admitted ad) {
                        largestCostUnits[disk] =
                                Math.max(largestCostUnits[disk], ad.ticket().costUnits());
                    }
                    switch (a) {
                        case Admission.Admitted ad -> {
                            assertThat(admittedIds.add(ad.ticket().id())).isTrue();
                            inFlight.add(ad.ticket());
                        }
                        case Admission.Queued q -> {
                            largestQueued = Math.max(largestQueued, q.ticket().costUnits());
                            assertThat(q.position())
                                    .isBetween(1, scenario.config().queueCapacityPerSegment());
                            waitingIds.add(q.ticket().id());
                            waitingTickets.add(q.ticket());
                        }
                        case Admission.Refused r -> {
                            assertThat(r.reason()).isEqualTo(RefusalReason.QUEUE_FULL);
                            assertThat(r.message()).contains("queueCapacityPerSegment");
                        }
                    }
                }
                case 1 -> {
                    Ticket t = inFlight.poll();
                    if (t != null) {
                        long latency = (long) op[2] * 1_000;
                        switch (op[1] % 10) {
                            case 0 -> t.onDropped(latency);
                            case 1 -> t.onIgnore();
                            default -> t.onSuccess(latency);
                        }
                    }
                }
                case 2, 3, 5 -> {
                    long at = switch (op[0]) {
                        case 2 -> now + op[1] * (DELTA / 2);
                        case 5 -> now + op[1] * DELTA; // a clock jump or a stalled caller: seconds
                        default -> now - DELTA;
                    };
                    if (op[0] != 3) {
                        now = at;
                    }
                    long drawnBefore = drawn(c.stats());
                    long advancedBefore = c.stats().advancedCostUnits();
                    // Before the running interval: the clock went back. (Not every op 3: once one has
                    // moved the interval back to its time, another at the same time is at its start.)
                    boolean back = at - intervalStart < 0;
                    if (back) {
                        refilledAt = at;
                    } else if (at - refilledAt > 0) {
                        refilledNanos += at - refilledAt;
                        refilledAt = at;
                    }
                    IntervalReport r = c.onInterval(at);
                    intervalStart = r.intervalStartNanos();
                    // One call issues at most one interval's budget, however many boundaries it passes:
                    // the budgets of the intervals it was late for expire, as unused budget always does.
                    assertThat(drawn(c.stats()) - drawnBefore)
                            .as("cost drawn by one onInterval call")
                            .isLessThanOrEqualTo(budget);
                    // And advances for requests costing more than C only while what is outstanding allows.
                    assertThat(c.stats().advancedCostUnits() - advancedBefore)
                            .as("cost advanced by one onInterval call")
                            .isLessThanOrEqualTo(advance * largestQueued);
                    for (Ticket t : r.admitted()) {
                        assertThat(waitingIds.remove(t.id()))
                                .as("admitted from a queue once, after waiting")
                                .isTrue();
                        assertThat(admittedIds.add(t.id())).isTrue();
                        assertThat(t.isAdmitted()).isTrue();
                        inFlight.add(t);
                    }
                    checkReport(r, h, budget);
                    if (r.intervalsElapsed() > 0) {
                        boundaryPassed = true;
                    }
                    if (boundaryPassed && scenario.config().adaptiveReserve()) {
                        // Sized from the steady demand within [0.05, 0.5] of C at every boundary, whatever
                        // r was set to (setReserveFraction has no effect then, even at 1).
                        assertThat(r.reserveCostUnits()).as("adaptive reserve").isLessThanOrEqualTo((long)
                                Math.ceil(AdmissionConfig.ADAPTIVE_RESERVE_MAX_FRACTION * budget));
                    }
                    if (r.intervalsElapsed() > 0) {
                        windows += r.borrowWindowCostUnits();
                        maxWindow = Math.max(maxWindow, r.borrowWindowCostUnits());
                        currentWindow = r.borrowWindowCostUnits();
                        borrowedAtBoundary = c.stats().borrowedCostUnits();
                        if (!scenario.config().borrowing()) {
                            assertThat(r.borrowWindowCostUnits()).isZero();
                        }
                    }
                    if (back) {
                        assertThat(r.admitted())
                                .as("a call before the running interval serves nothing")
                                .isEmpty();
                        assertThat(r.intervalsElapsed()).isZero();
                        assertThat(r.intervalStartNanos())
                                .as("the running interval restarts at its time")
                                .isEqualTo(at);
                    }
                }
                case 6 -> {
                    // A waiting request's client went away: withdrawn.
                    if (!waitingTickets.isEmpty()) {
                        Ticket t = waitingTickets.remove(op[1] % waitingTickets.size());
                        assertThat(c.cancel(t)).isTrue();
                        assertThat(waitingIds.remove(t.id())).isTrue();
                        cancelled++;
                    }
                }
                default -> c.setReserveFraction(op[1] / 10.0);
            }
            waitingTickets.removeIf(Ticket::isAdmitted);

            AdmissionStats s = c.stats();
            if (advance == 0) {
                assertThat(s.advancedCostUnits()).isZero();
            }
            // The advances outstanding (repaid first): one, less than the request it admitted cost, or
            // (overlapping) less than twice the largest request's cost.
            long advanceOutstanding = advance * largestQueued;
            // The guarantee's overdraft (cost admitted beyond the pools within a baseline), bounded by what
            // the baseline buckets were given; one cost unit of slack per request for rounding.
            double overdraft = guarantee ? baselineAllowance(scenario, refilledNanos, largestCostUnits) + acquires : 0;
            // The headline property: every token admitted came from some interval's budget or from a
            // borrow window, and windows open at most once per burst and hold at most H; with advances,
            // beyond that at most what is outstanding (everything advanced before was repaid from some budget).
            assertThat((double) s.admittedCostUnits())
                    .as("admitted cost")
                    .isLessThanOrEqualTo(s.budgetIssuedCostUnits() + windows + overdraft + advanceOutstanding);
            // Sharper: regular draws never exceed the budget net of repayments, borrowing never
            // exceeds the windows, and within an interval never exceeds its own window.
            assertThat(s.drawnMainCostUnits() + s.drawnReserveCostUnits() + s.lentReserveCostUnits())
                    .as("regular draws")
                    .isLessThanOrEqualTo(s.budgetIssuedCostUnits() - s.repaidCostUnits());
            assertThat(s.borrowedCostUnits()).isLessThanOrEqualTo(windows);
            assertThat(s.borrowedCostUnits() - borrowedAtBoundary)
                    .as("borrowed this interval")
                    .isLessThanOrEqualTo(currentWindow);
            assertThat((double) s.admittedCostUnits())
                    .as("admitted only what was drawn")
                    .isLessThanOrEqualTo(s.drawnMainCostUnits()
                            + s.drawnReserveCostUnits()
                            + s.lentReserveCostUnits()
                            + s.borrowedCostUnits()
                            + s.advancedCostUnits()
                            + overdraft);
            if (!scenario.config().reserveLending()) {
                assertThat(s.lentReserveCostUnits()).isZero();
            }
            assertThat(s.debtCostUnits()).isNotNegative();
            long owed = s.borrowedCostUnits() + s.advancedCostUnits() - s.repaidCostUnits();
            if (scenario.config().repayment() && guarantee) {
                // Debt is what was borrowed, overdrawn or advanced and not yet repaid.
                assertThat((double) s.debtCostUnits()).isLessThanOrEqualTo(maxWindow + overdraft + advanceOutstanding);
                assertThat(owed).isLessThanOrEqualTo(s.debtCostUnits());
            } else if (scenario.config().repayment()) {
                assertThat(s.debtCostUnits())
                        .as("debt never exceeds one window and the advances outstanding")
                        .isLessThanOrEqualTo(maxWindow + advanceOutstanding);
                assertThat(owed).isEqualTo(s.debtCostUnits());
            } else {
                // Without repayment only an advance is debt.
                assertThat(s.advancedCostUnits() - s.repaidCostUnits()).isEqualTo(s.debtCostUnits());
                assertThat(s.debtCostUnits()).isLessThanOrEqualTo(advanceOutstanding);
            }
            // Nothing lost: every request is admitted, waiting, refused or withdrawn.
            assertThat(s.cancelledRequests()).isEqualTo(cancelled);
            assertThat(s.admittedRequests() + s.waitingRequests() + s.refusedRequests() + s.cancelledRequests())
                    .isEqualTo(acquires);
            assertThat(s.waitingRequests()).isEqualTo(waitingIds.size());
        }

        // Eventually: with no new requests, everything waiting is admitted (hot segments calm down,
        // debt is repaid, large requests collect their cost), however the run left the controller.
        // A long pause first, then a call every interval, each issuing one budget.
        now += 20_000 * DELTA;
        IntervalReport last = c.onInterval(now);
        for (int i = 0; i < 100_000 && !waitingIds.isEmpty(); i++) {
            for (Ticket t : last.admitted()) {
                assertThat(waitingIds.remove(t.id())).isTrue();
            }
            now += DELTA;
            last = c.onInterval(now);
        }
        for (Ticket t : last.admitted()) {
            assertThat(waitingIds.remove(t.id())).isTrue();
        }
        assertThat(waitingIds).as("requests never admitted").isEmpty();
        assertThat(last.waitingRequests()).isZero();
        assertThat(c.stats().admittedRequests() + c.stats().refusedRequests() + cancelled)
                .isEqualTo(acquires);
        ADVANCED.addAndGet(c.stats().advancedCostUnits());
    }

    /** Cost drawn from the regular pools so far (borrowing is bounded by its own windows). */
    private static long drawn(AdmissionStats s) {
        return s.drawnMainCostUnits() + s.drawnReserveCostUnits() + s.lentReserveCostUnits();
    }

    private static void checkReport(IntervalReport r, HeadroomConfig h, long budget) {
        assertThat(r.mainCostUnits()).isBetween(0L, budget);
        assertThat(r.reserveCostUnits()).isBetween(0L, budget);
        assertThat(r.debtCostUnits()).isNotNegative();
        assertThat(r.borrowWindowCostUnits()).isBetween(0L, (long) Math.floor(h.maxBorrowRatio() * budget));
        assertThat(r.headroomCostUnits()).isBetween(0L, (long) Math.floor(h.maxBorrowRatio() * budget));
        assertThat(r.calibration()).isBetween(Math.min(1, h.calibrationMin()), Math.max(1, h.calibrationMax()));
        assertThat(r.predictionError()).isBetween(0.0, 1.0);
        assertThat(r.waitingRequests()).isNotNegative();
    }

    /**
     * Random setups: the paper's mechanism, or with {@code departures} each departure on or off at random;
     * with {@code oversized}, advances on and budgets of 10 .. 400, below most requests' costs.
     */
    private static Gen<Scenario> scenarios(boolean departures, boolean oversized) {
        Gen<Scenario> gen = in -> {
            int budget = oversized
                    ? integers().between(10, 400).generate(in)
                    : integers().between(50, 5_000).generate(in);
            double reserve = switch (integers().between(0, 4).generate(in)) {
                case 0 -> 0;
                case 1 -> 1;
                case 2 -> 0.2;
                default -> integers().between(0, 10).generate(in) / 10.0;
            };
            HeadroomConfig headroom = HeadroomConfig.DEFAULTS.toBuilder()
                    .safetyFactor(integers().between(1, 2).generate(in) / 2.0)
                    .minPredictions(integers().between(0, 2).generate(in))
                    .minSamples(integers().between(1, 6).generate(in))
                    .maxWindowIntervals(integers().between(1, 20).generate(in))
                    .maxPredictionError(integers().between(0, 1).generate(in) == 0 ? 0.5 : 1.0)
                    .maxBorrowRatio(
                            new double[] {0.5, 1, 3}[integers().between(0, 2).generate(in)])
                    .build();
            AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                    .capacityCostUnitsPerSecond(budget * 100.0)
                    .segmentSizeBytes(100L * integers().between(1, 4).generate(in))
                    .blockSizeBytes(100)
                    .costModel(new IoCostModel(
                            integers().between(0, 30).generate(in),
                            integers().between(1, 4).generate(in) / 2.0,
                            integers().between(0, 30).generate(in),
                            integers().between(1, 4).generate(in) / 2.0))
                    .reserveFraction(reserve)
                    .windowIntervals(integers().between(1, 12).generate(in))
                    .recoveryWindows(integers().between(1, 60).generate(in))
                    .queueCapacityPerSegment(integers().between(0, 4).generate(in))
                    .queueQuantumFraction(integers().between(1, 8).generate(in) / 8.0)
                    .borrowing(integers().between(0, 3).generate(in) > 0)
                    .repayment(integers().between(0, 3).generate(in) > 0)
                    .reserveLending(integers().between(0, 3).generate(in) > 0)
                    .headroom(headroom)
                    .build();
            if (departures) {
                config = config.toBuilder()
                        .baselineGuarantee(integers().between(0, 3).generate(in) > 0)
                        .pacedRelease(integers().between(0, 3).generate(in) == 0)
                        .adaptiveReserve(integers().between(0, 1).generate(in) == 0)
                        .weightedHotService(integers().between(0, 1).generate(in) == 0)
                        .arrivalOrderWithinDisk(integers().between(0, 1).generate(in) == 0)
                        .boundedLagHotService(integers().between(0, 1).generate(in) == 0)
                        .oversizeAdvance(oversized || integers().between(0, 1).generate(in) == 0)
                        .overlappingAdvances(integers().between(0, 1).generate(in) == 0)
                        .build();
            }
            int diskCount = integers().between(1, 3).generate(in);
            List<VirtualDisk> disks = new ArrayList<>();
            for (int d = 0; d < diskCount; d++) {
                long size = integers().between(100, 2_000).generate(in);
                disks.add(
                        integers().between(0, 1).generate(in) == 0
                                ? VirtualDisk.of("d" + d, size)
                                : VirtualDisk.committed(
                                        "d" + d,
                                        size,
                                        integers().between(0, budget * 100).generate(in)));
            }
            int n = integers().between(1, 250).generate(in);
            List<int[]> ops = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int roll = integers().between(0, 99).generate(in);
                int kind = roll < 55
                        ? 0
                        : roll < 75 ? 1 : roll < 90 ? 2 : roll < 92 ? 5 : roll < 94 ? 6 : roll < 97 ? 3 : 4;
                ops.add(
                        switch (kind) {
                            case 0 ->
                                new int[] {
                                    0,
                                    integers().between(0, 2).generate(in),
                                    integers().between(0, 1_999).generate(in),
                                    integers().between(0, 700).generate(in),
                                    integers().between(0, 1).generate(in)
                                };
                            case 1 ->
                                new int[] {
                                    1,
                                    integers().between(0, 9).generate(in),
                                    integers().between(0, 5_000).generate(in)
                                };
                            case 2 -> new int[] {2, integers().between(0, 6).generate(in)};
                            case 3 -> new int[] {3};
                            case 5 -> new int[] {5, integers().between(2, 1_500).generate(in)};
                            case 6 -> new int[] {6, integers().between(0, 10).generate(in)};
                            default -> new int[] {4, integers().between(0, 10).generate(in)};
                        });
            }
            return new Scenario(config, disks, ops);
        };
        return gen.describedAs(Scenario::toString);
    }
}
