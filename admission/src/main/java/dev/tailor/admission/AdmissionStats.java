package dev.tailor.admission;

/**
 * Cumulative counters of one {@link AdmissionController} since it was created, read at one instant
 * ({@link AdmissionController#stats}). Cost sums saturate at {@link Long#MAX_VALUE}.
 *
 * @param intervalsBegun          intervals begun, the first one included
 * @param budgetIssuedCostUnits   C × intervals begun: every token the pools were ever given
 * @param admittedRequests        requests admitted, at once or from a queue
 * @param admittedCostUnits       their total cost
 * @param admittedSteadyRequests  of them, admitted as steady
 * @param queuedRequests          requests that had to wait (whether admitted since or still waiting)
 * @param refusedRequests         requests refused because their queue was full
 * @param waitingRequests         requests waiting now
 * @param drawnMainCostUnits      cost drawn from the main pool
 * @param drawnReserveCostUnits   cost drawn from the reserved allowance by steady segments
 * @param lentReserveCostUnits    cost hot segments drew from the part of the reserve lent to them
 *                                (reserve lending, {@link AdmissionConfig#reserveLending})
 * @param borrowedCostUnits       cost borrowed beyond the budget at the starts of bursts
 * @param forgivenCostUnits       of that, never turned into debt (repayment off)
 * @param advancedCostUnits       cost admitted beyond the pools as advances to requests costing more
 *                                than C ({@link AdmissionConfig#oversizeAdvance}), all of it debt
 * @param repaidCostUnits         debt repaid from later budgets
 * @param debtCostUnits           debt outstanding now
 * @param burstsBorrowing         intervals that borrowed (one per burst at most)
 * @param completedSuccess        tickets completed with {@link Ticket#onSuccess}
 * @param completedDropped        tickets completed with {@link Ticket#onDropped}
 * @param completedIgnored        tickets completed with {@link Ticket#onIgnore}
 * @param cancelledRequests       requests withdrawn while waiting ({@link AdmissionController#cancel});
 *                                with admitted, waiting and refused, every request is counted once
 */
public record AdmissionStats(
        long intervalsBegun,
        long budgetIssuedCostUnits,
        long admittedRequests,
        long admittedCostUnits,
        long admittedSteadyRequests,
        long queuedRequests,
        long refusedRequests,
        long waitingRequests,
        long drawnMainCostUnits,
        long drawnReserveCostUnits,
        long lentReserveCostUnits,
        long borrowedCostUnits,
        long forgivenCostUnits,
        long advancedCostUnits,
        long repaidCostUnits,
        long debtCostUnits,
        long burstsBorrowing,
        long completedSuccess,
        long completedDropped,
        long completedIgnored,
        long cancelledRequests) {}
