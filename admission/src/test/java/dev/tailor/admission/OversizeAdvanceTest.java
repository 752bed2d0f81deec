package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Advances ({@link AdmissionConfig#oversizeAdvance}): a waiting request costing more than the budget per
 * interval C is admitted on its turn, what it lacks becoming debt, while the advances outstanding are less
 * than its cost ({@link AdmissionConfig#overlappingAdvances}; one at a time without it). Virtual
 * time, one call per millisecond ({@link VirtualTimeDriver}); every admitted request completes at the
 * next call. C = 100,000 cost units per 10 ms, a byte costs one unit, one segment per disk.
 */
class OversizeAdvanceTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000;
    private static final int BIG = 250_000; // 2.5 C: ⌈cost ÷ C⌉ = 3 intervals of budget
    private static final long DISK = 1L << 20;

    private static AdmissionConfig config(boolean advance) {
        return config(advance, true);
    }

    private static AdmissionConfig config(boolean advance, boolean overlapping) {
        return AdmissionConfig.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(C * 1e9 / DELTA)
                .segmentSizeBytes(DISK)
                .blockSizeBytes(DISK)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false)
                .oversizeAdvance(advance)
                .overlappingAdvances(overlapping)
                .build();
    }

    /** Four disks, each committed 1 % of the capacity: a full guarantee bucket covers their first request only. */
    private static List<VirtualDisk> disks() {
        List<VirtualDisk> disks = new ArrayList<>();
        for (int d = 0; d < 4; d++) {
            disks.add(VirtualDisk.committed("d" + d, DISK, C * 1e9 / DELTA / 100));
        }
        return disks;
    }

    /**
     * The longest wait of 2.5 C reads, one every 50 ms (each disk every 200 ms, in turn: half the capacity)
     * for 2 s.
     */
    private static long longestWait(boolean advance) {
        VirtualTimeDriver driver = new VirtualTimeDriver(new AdmissionController(config(advance), disks(), 0));
        driver.run(2_000, ms -> {
            if (ms % 50 == 3) {
                driver.acquireTracked((int) (ms / 50 % 4), 0, BIG);
            }
        });
        assertThat(driver.trackedStillQueued()).as("still waiting at the end").isEmpty();
        assertThat(driver.tracked()).hasSize(40);
        assertThat(driver.tracked().stream().filter(VirtualTimeDriver.Admitted::queued))
                .as("beyond their disks' baselines: queued")
                .hasSize(36);
        return driver.tracked().stream()
                .mapToLong(VirtualTimeDriver.Admitted::waitNanos)
                .max()
                .orElseThrow();
    }

    @Test
    void requestCostingMoreThanTheBudget_admittedAtTheNextCall_notAfterCollectingItsCostOverThreeIntervals() {
        assertThat(longestWait(true))
                .as("longest wait with advances, ns (one call period)")
                .isLessThanOrEqualTo(MS);
        // Without advances each collects 2.5 C from pools that give at most C per interval: from three
        // intervals' pools, the rest of its arrival's and two more, so past the second boundary after it.
        assertThat(longestWait(false)).as("longest wait without advances, ns").isGreaterThan(DELTA + DELTA / 2);
    }

    /**
     * Two 2.5 C reads 1 ms apart on two disks, every 100 ms (each disk every 200 ms: half the capacity) for
     * 2 s: the longest wait of the second of each pair.
     */
    private static long longestWaitOfPairs(boolean overlapping) {
        VirtualTimeDriver driver =
                new VirtualTimeDriver(new AdmissionController(config(true, overlapping), disks(), 0));
        driver.run(2_000, ms -> {
            int pair = (int) (ms / 100);
            if (ms % 100 == 3) {
                driver.acquireUntracked(2 * pair % 4, 0, BIG);
            } else if (ms % 100 == 4) {
                driver.acquireTracked((2 * pair + 1) % 4, 0, BIG);
            }
        });
        assertThat(driver.trackedStillQueued()).as("still waiting at the end").isEmpty();
        assertThat(driver.tracked()).hasSize(20);
        assertThat(driver.tracked().stream().filter(VirtualTimeDriver.Admitted::queued))
                .as("beyond their disks' baselines: queued")
                .hasSizeGreaterThanOrEqualTo(18);
        return driver.tracked().stream()
                .mapToLong(VirtualTimeDriver.Admitted::waitNanos)
                .max()
                .orElseThrow();
    }

    @Test
    void secondRequestCostingMoreThanTheBudget_overlappingAdvances_admittedAtTheNextCall_notAfterTheFirstIsRepaid() {
        assertThat(longestWaitOfPairs(true))
                .as("longest wait of the second with overlapping advances, ns (one call period)")
                .isLessThanOrEqualTo(MS);
        // One advance at a time: the second waits until the first's ~2.4 C are repaid, from C − R at each
        // boundary: past the second boundary after it.
        assertThat(longestWaitOfPairs(false))
                .as("longest wait of the second with a single advance, ns")
                .isGreaterThan(DELTA + DELTA / 2);
    }

    @ParameterizedTest(name = "overlapping advances {0}")
    @ValueSource(booleans = {true, false})
    void
            overloadOfRequestsCostingMoreThanTheBudget_admittedCostWithinTheBudgetsPlusTheAdvancesOutstanding_andTheBudgetIsUsed(
                    boolean overlapping) {
        // No guarantee here, so the bound is the budgets and the advances alone: 2.5 C every 5 ms, five times
        // what the budget admits, for 1 s. Outstanding: less than one request's cost with one advance at a
        // time, less than two with overlapping advances.
        AdmissionController c = new AdmissionController(
                config(true, overlapping).toBuilder().baselineGuarantee(false).build(), disks(), 0);
        VirtualTimeDriver driver = new VirtualTimeDriver(c);
        long outstanding = (overlapping ? 2 : 1) * (long) BIG;
        long[] most = {0};
        driver.run(1_000, ms -> {
            AdmissionStats s = c.stats();
            // Repayment on, nothing borrowed or overdrawn: admitted = regular draws + advances, and all that
            // was advanced but what is outstanding was repaid out of some interval's budget.
            assertThat(s.admittedCostUnits())
                    .as("admitted cost at %d ms", ms)
                    .isLessThanOrEqualTo(s.budgetIssuedCostUnits() + s.debtCostUnits());
            assertThat(s.debtCostUnits())
                    .as("debt at %d ms: the advances outstanding", ms)
                    .isLessThan(outstanding);
            most[0] = Math.max(most[0], s.debtCostUnits());
            if (ms % 5 == 0) {
                driver.acquireUntracked((int) (ms / 5 % 4), 0, BIG);
            }
        });
        AdmissionStats s = c.stats();
        assertThat(s.advancedCostUnits()).isPositive();
        assertThat(most[0]).as("largest debt").isGreaterThan(overlapping ? BIG : C);
        // Nothing idles: over 100 intervals the backlog took (nearly) every budget.
        assertThat(s.admittedCostUnits()).isGreaterThanOrEqualTo(s.budgetIssuedCostUnits() - 2 * C);
    }

    /**
     * Every request costing at most C: the same admissions at the same times, in the same order and class,
     * and the same counters, with advances and without. Random sizes 1 .. C on four disks, one request every
     * 8 ms and one every millisecond in the first 10 of every 100 (about the capacity, in bursts of five
     * budgets per interval), for 1 s.
     */
    @Test
    void requestsCostingAtMostTheBudget_admittedExactlyAsWithoutAdvances() {
        assertThat(admissions(true)).isEqualTo(admissions(false)).hasSizeGreaterThan(150);
    }

    private static List<String> admissions(boolean advance) {
        AdmissionController c = new AdmissionController(config(advance), disks(), 0);
        VirtualTimeDriver driver = new VirtualTimeDriver(c);
        SplittableRandom random = new SplittableRandom(20261204L);
        driver.run(1_000, ms -> {
            int n = ms % 100 < 10 || ms % 8 == 0 ? 1 : 0;
            for (int i = 0; i < n; i++) {
                int disk = random.nextInt(4);
                long length = 1 + random.nextLong(C);
                driver.acquireTracked(disk, random.nextLong(DISK - length + 1), length);
            }
        });
        List<String> out = new ArrayList<>();
        for (VirtualTimeDriver.Admitted a : driver.tracked()) {
            out.add(a.ticket().id() + " " + a.ticket().admittedAs() + " at " + a.admittedNanos());
        }
        AdmissionStats s = c.stats();
        out.add("stats " + s);
        assertThat(s.advancedCostUnits()).isZero();
        return out;
    }
}
