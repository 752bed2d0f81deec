package dev.tailor.sim.storage;

/**
 * What happened at one proxy in every interval of a run, for the report's plots around a burst:
 * the cost that arrived from steady and from hot tenants (ground truth) and, under the
 * segment-admission policies, what the token pools gave. Index {@code i} is the interval
 * {@code [i·Δ, (i+1)·Δ)}; every value is in cost units except the counts. Arrays are shared, not
 * copied: treat them as read-only.
 *
 * @param proxy                   the proxy observed (that of the first tenant with bursts, else 0)
 * @param intervalNanos           Δ, ns
 * @param budgetCostUnits         C, the admission budget per interval (0 for other policies)
 * @param steadyArrivingCostUnits cost arriving from tenants without bursts
 * @param hotArrivingCostUnits    cost arriving from tenants with bursts
 * @param drawnMainCostUnits      drawn from the main pool (admission policies, else {@code null})
 * @param drawnReserveCostUnits   drawn from the reserve
 * @param borrowedCostUnits       borrowed beyond the budget
 * @param repaidCostUnits         debt repaid at the interval's start
 * @param debtCostUnits           debt outstanding at the interval's end
 * @param waitingRequests         requests waiting in admission's queues at the interval's end
 * @param hotSegments             segments admission classified hot at the interval's start
 * @param firstBurstNanos         arrival of the first measured burst request at this proxy, or -1
 */
public record IntervalSeries(
        int proxy,
        long intervalNanos,
        long budgetCostUnits,
        float[] steadyArrivingCostUnits,
        float[] hotArrivingCostUnits,
        float[] drawnMainCostUnits,
        float[] drawnReserveCostUnits,
        float[] borrowedCostUnits,
        float[] repaidCostUnits,
        float[] debtCostUnits,
        float[] waitingRequests,
        float[] hotSegments,
        long firstBurstNanos) {

    /** Whether the pool series are present (a segment-admission policy ran). */
    public boolean hasPools() {
        return drawnMainCostUnits != null;
    }
}
