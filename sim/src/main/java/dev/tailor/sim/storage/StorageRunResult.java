package dev.tailor.sim.storage;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * What one run of the storage simulator measured: one (scenario variant, policy, seed). Latency is
 * arrival at the proxy to completion at the backend, over the requests that arrived in the measured
 * period; one still unfinished when the run ends enters the percentiles at its age (a lower bound)
 * and counts in {@code unfinished}; a refused one is counted in {@code refused} and has no latency.
 *
 * <p><b>Classes</b> (ground truth, not admission's opinion): {@code steady} = requests of tenants
 * without bursts, {@code hot} = requests of tenants with bursts (whether or not in a burst at that
 * moment). Admission's own classification is in {@link AdmissionCounters}.
 *
 * <p><b>Segment classes</b> (the paper's "steady segments"): every request is also labelled with the
 * class admission's classifier gives its segments when it arrives ({@code SegmentClassification},
 * the configuration of the {@code segment-admission-paper} policy: the paper's per-segment classes).
 * Classification depends only on arrivals, so the label of a request is the same under every policy,
 * fifo included, and the {@code steadySegments} latencies of two policies compare the same requests.
 *
 * <p><b>Within baseline</b> (our reading of "a request within its tenant's baseline"): every request is
 * also labelled, when it arrives, by its tenant's bucket of the shipped {@code segment-admission}
 * policy's baseline guarantee ({@code BaselineMeter}: the guarantee's rate, depth and cost, its
 * scaling of the baselines), whatever the policy: within when the bucket held its cost. The label
 * depends only on arrivals, so {@code steadyWithinBaseline} compares the same requests under every
 * policy: the requests of steady tenants that kept to their commitment.
 *
 * @param scenario                    scenario name
 * @param burstMultiplier             the variant's burst multiplier, or {@code null} when the scenario
 *                                    sweeps none
 * @param policy                      policy name
 * @param seed                        the run's seed
 * @param measuredSeconds             simulated seconds whose arrivals are measured
 * @param offeredRequests             requests that arrived in the measured period
 * @param steady                      latency of steady tenants' requests
 * @param hot                         latency of bursty tenants' requests
 * @param steadySegments              latency of requests whose segments were steady when they arrived
 * @param hotSegments                 latency of requests that touched a hot segment when they arrived
 * @param steadyWithinBaseline        latency of steady tenants' requests within their tenant's baseline
 *                                    when they arrived
 * @param allWithinBaseline           latency of every tenant's requests within their tenant's baseline
 *                                    when they arrived
 * @param throughputRequestsPerSecond requests the backend completed within the measured period (whenever
 *                                    they arrived: warm-up's too, not the drain's) ÷ measured seconds;
 *                                    what the backend served, so at most its capacity however much is
 *                                    offered
 * @param throughputMiBPerSecond      their bytes, MiB per second
 * @param backendUtilizationPercent   busy channel-time ÷ (channels × measured time), %
 * @param unusedCapacityPercent       of the backend's channel-time during which some request waited at a
 *                                    proxy (held by its policy), the share left idle, %; 0 when nothing
 *                                    ever waited
 * @param waitingTimePercent          share of the measured time during which some request waited at a
 *                                    proxy, %
 * @param refused                     measured requests refused
 * @param unfinished                  measured requests not completed when the run ended
 * @param admission                   counters of the segment-admission policies, else {@code null}
 * @param mclockReservationPercent    mclock only: share of cost dispatched in the reservation phase, %
 * @param simulatedRequests           requests simulated, warm-up and drain included
 * @param eventsFired                 calendar events of the run
 * @param wallMillis                  wall-clock time of the run, ms (0 when no clock was given)
 * @param tenants                     per tenant, in the setup's order, its figures ({@link TenantResult})
 * @param steadyLatency               steady latencies, ns (not in JSON)
 * @param hotLatency                  hot latencies, ns (not in JSON)
 * @param series                      per-interval series of one proxy (not in JSON)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StorageRunResult(
        String scenario,
        Double burstMultiplier,
        String policy,
        long seed,
        double measuredSeconds,
        long offeredRequests,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary steady,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary hot,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary steadySegments,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary hotSegments,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary steadyWithinBaseline,
        @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary allWithinBaseline,
        double throughputRequestsPerSecond,
        double throughputMiBPerSecond,
        double backendUtilizationPercent,
        double unusedCapacityPercent,
        double waitingTimePercent,
        long refused,
        long unfinished,
        AdmissionCounters admission,
        Double mclockReservationPercent,
        long simulatedRequests,
        long eventsFired,
        double wallMillis,
        @JsonInclude(JsonInclude.Include.ALWAYS) List<TenantResult> tenants,
        @JsonIgnore Histogram steadyLatency,
        @JsonIgnore Histogram hotLatency,
        @JsonIgnore IntervalSeries series) {

    public StorageRunResult {
        tenants = tenants == null ? List.of() : List.copyOf(tenants);
    }

    /** A result without per-tenant figures (its {@code tenants} empty). */
    public StorageRunResult(
            String scenario,
            Double burstMultiplier,
            String policy,
            long seed,
            double measuredSeconds,
            long offeredRequests,
            LatencySummary steady,
            LatencySummary hot,
            LatencySummary steadySegments,
            LatencySummary hotSegments,
            LatencySummary steadyWithinBaseline,
            LatencySummary allWithinBaseline,
            double throughputRequestsPerSecond,
            double throughputMiBPerSecond,
            double backendUtilizationPercent,
            double unusedCapacityPercent,
            double waitingTimePercent,
            long refused,
            long unfinished,
            AdmissionCounters admission,
            Double mclockReservationPercent,
            long simulatedRequests,
            long eventsFired,
            double wallMillis,
            Histogram steadyLatency,
            Histogram hotLatency,
            IntervalSeries series) {
        this(
                scenario,
                burstMultiplier,
                policy,
                seed,
                measuredSeconds,
                offeredRequests,
                steady,
                hot,
                steadySegments,
                hotSegments,
                steadyWithinBaseline,
                allWithinBaseline,
                throughputRequestsPerSecond,
                throughputMiBPerSecond,
                backendUtilizationPercent,
                unusedCapacityPercent,
                waitingTimePercent,
                refused,
                unfinished,
                admission,
                mclockReservationPercent,
                simulatedRequests,
                eventsFired,
                wallMillis,
                List.of(),
                steadyLatency,
                hotLatency,
                series);
    }

    /**
     * One tenant's figures in one run. Its requests are those that arrived in the measured period; its
     * latency is measured as the classes' is (refused requests have none, unfinished ones count at their
     * age), with the same rule for percentiles with too few requests behind them.
     *
     * @param name                       the tenant's name
     * @param tenantClass                ground truth, {@code steady} or {@code hot} (it has bursts); in JSON
     *                                   {@code class}
     * @param proxy                      the proxy it uses
     * @param baselineIops               its provisioned baseline's I/Os per second, when the scenario gives it
     *                                   one ({@code baseline.iops}), else absent
     * @param baselineMiBPerSecond       its provisioned baseline's MiB per second, when the scenario gives it one,
     *                                   else absent
     * @param baselineCostUnitsPerSecond its baseline in cost units per second (10⁹ = the backend kept busy): the
     *                                   provisioned one's cost, its commitment ratio × its rate, or the fair share
     *                                   (the proxy's capacity ÷ its tenants)
     * @param offeredCostUnitsPerSecond  the cost of its measured requests ÷ measured seconds, bursts included: its
     *                                   rate against its baseline
     * @param requests                   requests that arrived in the measured period
     * @param withinBaselinePercent      of those, the share within its baseline when they arrived (the label of
     *                                   {@code steadyWithinBaseline}), %
     * @param latency                    its requests' latency
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TenantResult(
            String name,
            @JsonProperty("class") String tenantClass,
            int proxy,
            Double baselineIops,
            Double baselineMiBPerSecond,
            double baselineCostUnitsPerSecond,
            double offeredCostUnitsPerSecond,
            long requests,
            double withinBaselinePercent,
            @JsonInclude(JsonInclude.Include.ALWAYS) LatencySummary latency) {

        /** Its offered cost rate ÷ its baseline, %. */
        @JsonIgnore
        public double offeredPercentOfBaseline() {
            return baselineCostUnitsPerSecond <= 0 ? 0 : 100 * offeredCostUnitsPerSecond / baselineCostUnitsPerSecond;
        }
    }

    /**
     * What the admission controllers (summed over proxies) did in the whole run, warm-up included
     * for the cost counters; classification counts are over measured requests.
     *
     * @param admittedSteady             latency of requests admission admitted as steady
     * @param admittedHot                latency of requests admission admitted as hot
     * @param steadyAdmittedAsHotPercent of ground-truth steady requests, the share admitted as hot, %
     * @param hotAdmittedAsSteadyPercent of ground-truth hot requests, the share admitted as steady, %
     * @param queued                     requests that waited in admission's queues
     * @param budgetIssuedCostUnits      C × intervals begun
     * @param reserveDrawnCostUnits      drawn from the reserve by steady segments
     * @param reserveLentCostUnits       drawn from the reserve by hot segments, lent to them late in
     *                                   intervals (reserve lending)
     * @param borrowedCostUnits          borrowed beyond the budget at the starts of bursts
     * @param repaidCostUnits            debt repaid from later budgets
     * @param forgivenCostUnits          borrowed but never owed (no-repay)
     * @param reserveDrawnPercent        reserve draws ÷ budget issued, %
     * @param reserveLentPercent         reserve lent ÷ budget issued, %
     * @param borrowedPercent            borrowed ÷ budget issued, %
     * @param repaidPercent              repaid ÷ budget issued, %
     * @param burstsBorrowing            intervals that borrowed
     */
    public record AdmissionCounters(
            LatencySummary admittedSteady,
            LatencySummary admittedHot,
            double steadyAdmittedAsHotPercent,
            double hotAdmittedAsSteadyPercent,
            long queued,
            long budgetIssuedCostUnits,
            long reserveDrawnCostUnits,
            long reserveLentCostUnits,
            long borrowedCostUnits,
            long repaidCostUnits,
            long forgivenCostUnits,
            double reserveDrawnPercent,
            double reserveLentPercent,
            double borrowedPercent,
            double repaidPercent,
            long burstsBorrowing) {}

    /** The scenario with the variant, e.g. {@code burst-microbench ×8}. */
    @JsonIgnore
    public String label() {
        if (burstMultiplier == null) {
            return scenario;
        }
        double m = burstMultiplier;
        return scenario + " ×" + (m == Math.rint(m) ? String.valueOf((long) m) : String.valueOf(m));
    }

    /** A copy with the wall-clock time of the run. */
    public StorageRunResult withWallMillis(double millis) {
        return new StorageRunResult(
                scenario,
                burstMultiplier,
                policy,
                seed,
                measuredSeconds,
                offeredRequests,
                steady,
                hot,
                steadySegments,
                hotSegments,
                steadyWithinBaseline,
                allWithinBaseline,
                throughputRequestsPerSecond,
                throughputMiBPerSecond,
                backendUtilizationPercent,
                unusedCapacityPercent,
                waitingTimePercent,
                refused,
                unfinished,
                admission,
                mclockReservationPercent,
                simulatedRequests,
                eventsFired,
                millis,
                tenants,
                steadyLatency,
                hotLatency,
                series);
    }
}
