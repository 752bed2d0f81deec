package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Credit-gated advances ({@link AdmissionConfig#creditGatedAdvances}, with
 * {@link AdmissionConfig#overlappingAdvances}): a request costing more than the budget per interval C may
 * take an advance while another is outstanding only when its disk is within its credits (baseline × time −
 * the cost of its requests, from 0, at most R·Δ of baseline), kept with the option on although the fifo
 * deadline is off. Virtual time, one call per millisecond ({@link VirtualTimeDriver}); C = 100,000 cost
 * units per 10 ms, a byte costs one unit, one segment per disk. The baseline guarantee is off so that
 * every such request waits for its turn in the queue service and its advance.
 */
class CreditGatedAdvanceTest {

    private static final long MS = VirtualTimeDriver.MS;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000;
    private static final int BIG = 250_000; // 2.5 C
    private static final long DISK = 1L << 20;
    /** Committed 1 % of the capacity: its credits (at most 50,000 cost units deep) never cover a 2.5 C read. */
    private static final int BEYOND = 0;
    /** Committed half the capacity: 300 ms of it is 1.5 million cost units of credits, six such reads. */
    private static final int WITHIN = 1;

    private static AdmissionConfig config(boolean gated) {
        return AdmissionConfig.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(C * 1e9 / DELTA)
                .segmentSizeBytes(DISK)
                .blockSizeBytes(DISK)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000)
                .borrowing(false)
                .baselineGuarantee(false)
                .overlappingAdvances(true)
                .creditGatedAdvances(gated)
                .build();
    }

    private static List<VirtualDisk> disks() {
        double capacity = C * 1e9 / DELTA;
        return List.of(
                VirtualDisk.committed("beyond", DISK, capacity / 100),
                VirtualDisk.committed("within", DISK, capacity / 2));
    }

    /**
     * A 2.5 C read of disk {@code first} at 303 ms, which takes the advance, then one of disk {@code second}
     * at 304 ms, while that advance is outstanding: how long the second waited, ns.
     */
    private static long waitOfSecond(boolean gated, int first, int second) {
        AdmissionController controller = new AdmissionController(config(gated), disks(), 0);
        VirtualTimeDriver driver = new VirtualTimeDriver(controller);
        long[] outstandingAtSecond = {-1};
        driver.run(500, ms -> {
            if (ms == 303) {
                driver.acquireTracked(first, 0, BIG);
            } else if (ms == 304) {
                outstandingAtSecond[0] = controller.stats().debtCostUnits();
                driver.acquireTracked(second, 0, BIG);
            }
        });
        assertThat(outstandingAtSecond[0])
                .as("the first's advance, outstanding when the second arrives")
                .isGreaterThan(C);
        assertThat(driver.trackedStillQueued()).as("still waiting at the end").isEmpty();
        assertThat(driver.tracked()).hasSize(2).allMatch(VirtualTimeDriver.Admitted::queued);
        assertThat(driver.tracked().getFirst().ticket().disk())
                .as("the first admitted")
                .isEqualTo(first);
        assertThat(driver.tracked().getFirst().waitNanos())
                .as("the first's wait, ns")
                .isLessThanOrEqualTo(MS);
        return driver.tracked().get(1).waitNanos();
    }

    @Test
    void secondOversizedRequest_ofADiskWithinItsCredits_takesAnOverlappingAdvanceAtTheNextCall() {
        assertThat(waitOfSecond(true, BEYOND, WITHIN))
                .as("wait of the within-credits disk's read, ns (one call period)")
                .isLessThanOrEqualTo(MS);
    }

    @Test
    void secondOversizedRequest_ofADiskBeyondItsCredits_waitsForTheFirstAdvanceToBeRepaid() {
        // The first's advance, about 2.4 C, is repaid from C − R at each boundary: past the second
        // boundary after the request.
        assertThat(waitOfSecond(true, WITHIN, BEYOND))
                .as("wait of the beyond-credits disk's read, ns")
                .isGreaterThan(DELTA + DELTA / 2);
        // Without the gate, overlapping advances let it through at the next call.
        assertThat(waitOfSecond(false, WITHIN, BEYOND))
                .as("wait of the same read, ungated, ns")
                .isLessThanOrEqualTo(MS);
    }
}
