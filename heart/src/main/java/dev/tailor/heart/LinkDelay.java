package dev.tailor.heart;

/**
 * Measured one-way delay of the link from one node to another; same-node links included.
 *
 * <p>A pair without a measurement is filled in by the planner: the reverse direction if measured,
 * else the smallest measured same-node delay (or 0) for a node to itself, else the largest measured
 * delay plus a penalty ({@link HeartConfig#unmeasuredLinkPenaltyMillis()}, 1 ms), so an unmeasured
 * link is used only when nothing measured is feasible; each fill-in is reported in the plan's notes.
 *
 * @param from   caller-side node name
 * @param to     callee-side node name
 * @param millis one-way delay in milliseconds, finite and &gt;= 0; required
 */
public record LinkDelay(String from, String to, Double millis) {}
