package dev.tailor.sim.cluster;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * What one run of the cluster simulator measured: one (scenario, network, CPU model, policy, RPS,
 * seed). Latencies are end-to-end, user request in to response out, over the measured period only
 * (after the warm-up). A request slower than the timeout counts in {@code timeouts} and enters the
 * percentiles at the timeout; one still in flight at the end counts as a timeout if it is already
 * older than the timeout, else in {@code unfinished} and enters the percentiles at its age so far
 * (a lower bound on its latency). Nothing is dropped silently. Latency figures are {@code null}
 * when no request was measured.
 *
 * @param scenario            scenario name
 * @param network             the scenario's network used
 * @param cpuModel            {@code fluid} or {@code cfs-quota}
 * @param policy              routing policy
 * @param rps                 offered user requests per second (Poisson)
 * @param seed                the run's seed
 * @param requests            user requests started in the measured period
 * @param completed           of those, answered before the end
 * @param timeouts            of those, slower than the timeout (answered late or still in flight)
 * @param errors              of those, answered with an error: a call of it was lost to a crashed
 *                            replica (scenario events); they enter the percentiles at the timeout
 * @param unfinished          still in flight at the end, younger than the timeout (in the percentiles
 *                            at their age so far)
 * @param p50Millis           median end-to-end latency, ms; like P99 and P99.9, {@code null} (not
 *                            resolvable) with fewer requests than the percentile needs ({@link
 *                            dev.tailor.sim.storage.LatencySummary#needed}: 2, 100, 1,000)
 * @param p99Millis           99th percentile, ms
 * @param p999Millis          99.9th percentile, ms
 * @param meanMillis          mean, ms
 * @param cpuGapPercentPoints the largest, over components, of max − min mean CPU utilisation among the
 *                            component's replicas, in percentage points of the CPU limit
 * @param replicas            per replica: mean utilisation and time at the limit
 * @param planning            planning statistics of round-based policies, else {@code null}
 * @param callsServed         calls served by replicas over the whole run (warm-up included)
 * @param eventsFired         calendar events over the whole run
 * @param wallMillis          wall-clock time of the run, ms (0 when the caller gave no clock)
 * @param latency             the latency histogram, µs (not in JSON)
 * @param cpuUtilisationSeries per replica (same order as {@code replicas}), utilisation in % of the limit
 *                             for each simulated second of the whole run (not in JSON)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunResult(
        String scenario,
        String network,
        String cpuModel,
        String policy,
        double rps,
        long seed,
        long requests,
        long completed,
        long timeouts,
        long errors,
        long unfinished,
        @JsonInclude(JsonInclude.Include.ALWAYS) Double p50Millis,
        @JsonInclude(JsonInclude.Include.ALWAYS) Double p99Millis,
        @JsonInclude(JsonInclude.Include.ALWAYS) Double p999Millis,
        @JsonInclude(JsonInclude.Include.ALWAYS) Double meanMillis,
        @JsonInclude(JsonInclude.Include.ALWAYS) Double cpuGapPercentPoints,
        List<ReplicaStats> replicas,
        Planning planning,
        long callsServed,
        long eventsFired,
        double wallMillis,
        @JsonIgnore Histogram latency,
        @JsonIgnore List<double[]> cpuUtilisationSeries) {

    /**
     * One replica over the measured period.
     *
     * @param pod                       replica name
     * @param component                 its component
     * @param node                      its node
     * @param meanCpuUtilisationPercent mean CPU used ÷ CPU limit, %
     * @param secondsAtCpuLimit         simulated seconds in which it used ≥ 99.5 % of its limit (a
     *                                  limit caps the one-second mean at 100 %, so "at the limit" is
     *                                  what "above 100 %" of a request becomes here)
     * @param throttledSeconds          seconds it spent throttled by its CFS quota ({@code cfs-quota})
     */
    public record ReplicaStats(
            String pod,
            String component,
            String node,
            Double meanCpuUtilisationPercent,
            long secondsAtCpuLimit,
            double throttledSeconds) {}

    /**
     * A round-based policy's planning.
     *
     * @param rounds       rounds planned
     * @param failures     rounds that kept the previous plan because planning failed
     * @param medianMillis median wall-clock planning time per round, ms (the first rounds of a JVM
     *                     also load OR-tools and compile the planner: see {@code maxMillis})
     * @param meanMillis   mean wall-clock planning time per round, ms
     * @param maxMillis    slowest round, ms
     * @param lastFailure  the last failure's message, or {@code null}
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Planning(
            long rounds, long failures, Double medianMillis, Double meanMillis, Double maxMillis, String lastFailure) {}

    /** A copy with the wall-clock time of the run. */
    public RunResult withWallMillis(double millis) {
        return new RunResult(
                scenario,
                network,
                cpuModel,
                policy,
                rps,
                seed,
                requests,
                completed,
                timeouts,
                errors,
                unfinished,
                p50Millis,
                p99Millis,
                p999Millis,
                meanMillis,
                cpuGapPercentPoints,
                replicas,
                planning,
                callsServed,
                eventsFired,
                millis,
                latency,
                cpuUtilisationSeries);
    }
}
