package dev.tailor.sim.cluster;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.HdrHistogram.Histogram;

/**
 * Runs of one comparison repeated over several seeds, gathered per cell — one (scenario, network, CPU
 * model, policy, rate) — with the spread of the P99 over the seeds. The seeds change everything a
 * seed draws (link means, replica cost factors, arrivals, costs, routing), so the spread says how
 * much of a difference between two policies one run could owe to luck.
 */
public final class SeedCells {

    private SeedCells() {}

    /**
     * Min, median, mean and max of a latency over the seeds of a cell, ms ({@code null} when no seed
     * measured a request).
     */
    public record Spread(Double minMillis, Double medianMillis, Double meanMillis, Double maxMillis) {

        /** The spread of {@code values}, nulls (no data) left out; all {@code null} when none is left. */
        public static Spread of(List<Double> values) {
            List<Double> known =
                    values.stream().filter(Objects::nonNull).sorted().toList();
            if (known.isEmpty()) {
                return new Spread(null, null, null, null);
            }
            double mean = known.stream().mapToDouble(Double::doubleValue).sum() / known.size();
            return new Spread(known.get(0), median(known), ClusterModel.round(mean, 3), known.get(known.size() - 1));
        }
    }

    /**
     * One cell over its seeds. Latencies are medians over the seeds (the middle seed's value for an odd
     * count), counts are sums over the seeds.
     *
     * @param scenario            scenario name
     * @param network             network
     * @param cpuModel            {@code fluid} or {@code cfs-quota}
     * @param policy              routing policy
     * @param rps                 offered user requests per second
     * @param seeds               the seeds, in run order
     * @param requests            user requests measured, summed over the seeds
     * @param completed           of those, answered before the end of their run
     * @param timeouts            of those, slower than the timeout
     * @param errors              of those, answered with an error (a call lost to a crash)
     * @param unfinished          still in flight at the end of their run, younger than the timeout
     * @param p50Millis           median over the seeds of the P50, ms
     * @param p99Millis           median over the seeds of the P99, ms
     * @param p999Millis          median over the seeds of the P99.9, ms
     * @param meanMillis          median over the seeds of the mean latency, ms
     * @param p99Spread           the P99 over the seeds: min, median, mean, max
     * @param cpuGapPercentPoints median over the seeds of the CPU max–min gap, percentage points
     * @param runs                every seed's run
     * @param latency             the seeds' latency histograms added up, µs (not in JSON)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Cell(
            String scenario,
            String network,
            String cpuModel,
            String policy,
            double rps,
            List<Long> seeds,
            long requests,
            long completed,
            long timeouts,
            long errors,
            long unfinished,
            @JsonInclude(JsonInclude.Include.ALWAYS) Double p50Millis,
            @JsonInclude(JsonInclude.Include.ALWAYS) Double p99Millis,
            @JsonInclude(JsonInclude.Include.ALWAYS) Double p999Millis,
            @JsonInclude(JsonInclude.Include.ALWAYS) Double meanMillis,
            Spread p99Spread,
            @JsonInclude(JsonInclude.Include.ALWAYS) Double cpuGapPercentPoints,
            List<RunResult> runs,
            @JsonIgnore Histogram latency) {}

    /**
     * {@code results} gathered per cell, in the order the cells first appear; a cell's runs in their
     * order.
     */
    public static List<Cell> of(List<RunResult> results) {
        Map<List<Object>, List<RunResult>> byCell = new LinkedHashMap<>();
        for (RunResult r : results) {
            byCell.computeIfAbsent(
                            List.of(r.scenario(), r.network(), r.cpuModel(), r.policy(), r.rps()),
                            k -> new ArrayList<>())
                    .add(r);
        }
        List<Cell> cells = new ArrayList<>();
        for (List<RunResult> runs : byCell.values()) {
            RunResult first = runs.get(0);
            Histogram latency = null;
            for (RunResult run : runs) {
                if (run.latency() != null) {
                    if (latency == null) {
                        latency = run.latency().copy();
                    } else {
                        latency.add(run.latency());
                    }
                }
            }
            cells.add(new Cell(
                    first.scenario(),
                    first.network(),
                    first.cpuModel(),
                    first.policy(),
                    first.rps(),
                    runs.stream().map(RunResult::seed).toList(),
                    runs.stream().mapToLong(RunResult::requests).sum(),
                    runs.stream().mapToLong(RunResult::completed).sum(),
                    runs.stream().mapToLong(RunResult::timeouts).sum(),
                    runs.stream().mapToLong(RunResult::errors).sum(),
                    runs.stream().mapToLong(RunResult::unfinished).sum(),
                    medianOf(runs.stream().map(RunResult::p50Millis).toList()),
                    medianOf(runs.stream().map(RunResult::p99Millis).toList()),
                    medianOf(runs.stream().map(RunResult::p999Millis).toList()),
                    medianOf(runs.stream().map(RunResult::meanMillis).toList()),
                    Spread.of(runs.stream().map(RunResult::p99Millis).toList()),
                    medianOf(runs.stream().map(RunResult::cpuGapPercentPoints).toList()),
                    List.copyOf(runs),
                    latency));
        }
        return cells;
    }

    /**
     * HEART's planning time of a cell: the median over the seeds of each seed's median round, ms;
     * {@code null} when a seed has no planning (a policy that does not plan).
     */
    public static Double planMillis(Cell cell) {
        List<Double> plans = cell.runs().stream()
                .map(RunResult::planning)
                .map(p -> p == null ? null : p.medianMillis())
                .toList();
        return plans.contains(null) ? null : medianOf(plans);
    }

    private static Double medianOf(List<Double> values) {
        return Spread.of(values).medianMillis();
    }

    private static Double median(List<Double> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : ClusterModel.round((sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2, 3);
    }
}
