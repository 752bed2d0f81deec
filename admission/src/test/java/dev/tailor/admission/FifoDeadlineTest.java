package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fifo deadline ({@link AdmissionConfig#fifoDeadline}): a steady tenant that spent less than its
 * baseline, then surges beyond the guarantee's bucket while another tenant keeps the proxy loaded, has
 * none of its requests held longer than a first-come-first-served proxy would take to finish them.
 * Without the option the same input holds its requests beyond the guarantee's bucket in the hot queue,
 * sharing the hot service with the loaded tenant, for longer than that: the path the option bounds.
 * Virtual time, one call per millisecond.
 */
class FifoDeadlineTest {

    private static final long MS = 1_000_000L;
    private static final long DELTA = 10 * MS;
    private static final long C = 100_000; // budget per interval; a byte costs one unit
    private static final double CAPACITY_PER_NANO = (double) C / DELTA;
    private static final int COST = 1_000;

    private static AdmissionConfig config(boolean fifoDeadline) {
        return AdmissionConfig.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(C * 1e9 / DELTA)
                .segmentSizeBytes(1L << 20)
                .blockSizeBytes(1L << 20)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false)
                .fifoDeadline(fifoDeadline)
                .build();
    }

    /**
     * Per request of the steady tenant: how much later than its fifo finish it was admitted, ns (negative:
     * earlier). The fifo finish is when a first-come-first-served server at the capacity, fed every
     * request of both tenants in order of arrival, would have finished it.
     *
     * <p>Each tenant has half the capacity as baseline. 0–600 ms: the steady tenant sends 40 % of its
     * baseline, the loaded one 140 % of its own (90 % of the capacity together: no fifo backlog);
     * 600–800 ms the steady tenant sends twice its baseline (a fifo backlog builds); then 40 % again until
     * 1.5 s. Every admitted request completes at the next call.
     */
    private static List<Long> steadyLateness(boolean fifoDeadline) {
        AdmissionController c = new AdmissionController(
                config(fifoDeadline),
                List.of(
                        VirtualDisk.committed("steady", 1L << 20, C * 1e9 / DELTA / 2),
                        VirtualDisk.committed("loaded", 1L << 20, C * 1e9 / DELTA / 2)),
                0);
        Map<Ticket, Long> fifoFinish = new IdentityHashMap<>();
        List<Long> lateness = new ArrayList<>();
        List<Ticket> inFlight = new ArrayList<>();
        double fifoBacklog = 0;
        long offset = 0;
        for (long t = 0; t <= 1_500 * MS; t += MS) {
            for (Ticket done : inFlight) {
                done.onSuccess(MS);
            }
            inFlight.clear();
            IntervalReport report = c.onInterval(t);
            for (Ticket admitted : report.admitted()) {
                inFlight.add(admitted);
                Long finish = fifoFinish.remove(admitted);
                if (finish != null) {
                    lateness.add(t - finish);
                }
            }
            fifoBacklog = Math.max(0, fifoBacklog - CAPACITY_PER_NANO * MS);
            long ms = t / MS;
            int steady = ms >= 600 && ms < 800 ? 10 : 2;
            int loaded = 7;
            for (int i = 0; i < steady + loaded; i++) {
                int disk = i < steady ? 0 : 1;
                offset = (offset + 4_096) % ((1 << 20) - COST);
                fifoBacklog += COST;
                long finish = t + (long) Math.ceil(fifoBacklog / CAPACITY_PER_NANO);
                switch (c.acquire(disk, IoKind.READ, offset, COST)) {
                    case Admission.Admitted a -> {
                        inFlight.add(a.ticket());
                        if (disk == 0) {
                            lateness.add(t - finish);
                        }
                    }
                    case Admission.Queued q -> {
                        if (disk == 0) {
                            fifoFinish.put(q.ticket(), finish);
                        }
                    }
                    case Admission.Refused r -> throw new AssertionError(r.message());
                }
            }
        }
        assertThat(fifoFinish).as("steady requests still waiting at the end").isEmpty();
        return lateness;
    }

    @Test
    void fifoDeadline_steadyTenantBeyondItsBucket_neverHeldPastItsFifoFinish() {
        List<Long> with = steadyLateness(true);
        assertThat(with).hasSize(1_301 * 2 + 200 * 10);
        assertThat(with.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("latest admission after the fifo finish, ns (one call period allowed)")
                .isLessThanOrEqualTo(MS);

        // The path the option bounds: without it the same requests wait in the hot queue, beside the loaded
        // tenant's backlog, well past their fifo finish.
        List<Long> without = steadyLateness(false);
        assertThat(without.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("latest admission after the fifo finish without the option, ns")
                .isGreaterThan(20 * MS);
    }
}
