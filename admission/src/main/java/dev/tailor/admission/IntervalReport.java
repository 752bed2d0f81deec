package dev.tailor.admission;

import java.util.List;

/**
 * What one {@link AdmissionController#onInterval} call did, and the state it left for the running
 * interval. Pool levels are those after the boundary's queue service, so they are what new requests
 * of the running interval can draw.
 *
 * @param intervalsElapsed         interval boundaries passed by this call; 0 when {@code nowNanos} had
 *                                 not reached the next boundary (or went backwards), in which case
 *                                 only waiting requests were served from what the pools hold
 * @param intervalStartNanos       start of the running interval on the controller's grid (the start
 *                                 time plus a whole number of intervals), in ns
 * @param admitted                 requests admitted from the queues by this call, in order; the
 *                                 caller dispatches them and completes their tickets
 * @param budgetCostUnits          C, the budget per interval
 * @param mainCostUnits            main pool left for the running interval
 * @param reserveCostUnits         reserved allowance left for the running interval (steady segments
 *                                 only)
 * @param debtCostUnits            borrowed cost still to be repaid
 * @param repaidCostUnits          debt repaid at the last boundary
 * @param borrowWindowCostUnits    what the running interval may borrow if demand exceeds the pools:
 *                                 H when it may start a burst, else 0
 * @param headroomCostUnits        H, the headroom model's current estimate (0 when borrowing is
 *                                 off or the model does not trust itself)
 * @param p95LatencyNanos          t₉₅ of the last closed latency window in ns, NaN when there is none
 * @param calibration              the headroom model's calibration factor
 * @param predictionError          the headroom model's smoothed relative prediction error, in [0, 1]
 * @param hotSegments              segments classified hot
 * @param waitingRequests          requests waiting in all queues
 */
public record IntervalReport(
        long intervalsElapsed,
        long intervalStartNanos,
        List<Ticket> admitted,
        long budgetCostUnits,
        long mainCostUnits,
        long reserveCostUnits,
        long debtCostUnits,
        long repaidCostUnits,
        long borrowWindowCostUnits,
        long headroomCostUnits,
        double p95LatencyNanos,
        double calibration,
        double predictionError,
        int hotSegments,
        int waitingRequests) {

    public IntervalReport {
        admitted = List.copyOf(admitted);
    }
}
