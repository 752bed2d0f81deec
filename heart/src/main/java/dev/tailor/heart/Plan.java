package dev.tailor.heart;

/**
 * The result of one HEART round: the allocation to apply and the state to carry into the next
 * round.
 *
 * @param allocation what to apply
 * @param state      ATPM state after this round
 */
public record Plan(Allocation allocation, AtpmState state) {}
