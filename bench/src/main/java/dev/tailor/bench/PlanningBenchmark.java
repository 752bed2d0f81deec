package dev.tailor.bench;

import dev.tailor.bench.SyntheticClusters.Shape;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Snapshot;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Wall-clock time of one HEART planning round ({@link Heart#plan}: validation, ATPM, NTAM for every
 * call edge) on the synthetic clusters of {@link SyntheticClusters}, against a baseline,
 * min-cost flow per replica without the slow-link filter.
 *
 * <p>Parameters: {@code shape} ({@code paper-100}, {@code paper-400}, {@code paper-1000},
 * {@code large-10000}; see {@link Shape}) × {@code planner}:
 * <ul>
 *   <li>{@code heart} = {@link HeartConfig#DEFAULTS}: node groups, our departures (the slow-link filter
 *       off), parallel;</li>
 *   <li>{@code heart-paper} = {@link HeartConfig#PAPER}: the paper's, none of our departures, the slow-link
 *       filter on;</li>
 *   <li>{@code mcf-per-replica-no-filter}
 *       = {@code DEFAULTS.toBuilder().grouping(REPLICA).slowLinkFilter(false).build()}:
 *       every replica its own routing target, min-cost flow over all links (also parallel).</li>
 * </ul>
 * Each shape's snapshot is generated once per trial with {@link SyntheticClusters#DEFAULT_SEED}, so
 * every run plans the very same input. {@link #planFromEmptyState} is the first round after a start
 * ({@link AtpmState#EMPTY}: every group takes its first measurement); {@link #planFromWarmState}
 * carries the state of a previous, identical round (every group's EWMA is updated). Both modes are
 * declared: average time, and sample time for percentiles (its mean equals the average time's score).
 *
 * <p>Targets: {@code heart} at most 1 ms median on {@code paper-400} (the paper's Go
 * implementation took 9.4 ms at 400 replicas) and at most 200 ms on {@code large-10000}.
 *
 * <p>Before measuring, the trial set-up plans once and checks the result against NTAM's contract
 * ({@link PlanContract}); it prints one {@code PLAN-CHECK} line with the number of violations, so a
 * figure for a planner that returns wrong fractions never goes unnoticed. A planner that throws fails
 * its benchmark there.
 *
 * <p>Run (from the repository root, JDK 21 or newer):
 * <pre>{@code
 * ./mvnw -q -B -pl bench -am package -DskipTests
 * java -jar bench/target/benchmarks.jar 'PlanningBenchmark.planFromEmptyState' \
 *     -p shape=paper-400 -p planner=heart -bm sample -tu ms
 * bench/run-planning.sh      # every shape and planner, short settings, a README-ready table
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
public class PlanningBenchmark extends AbstractBenchmark {

    /** Planner id of HEART with its defaults. */
    public static final String HEART = "heart";
    /** Planner id of the paper's HEART ({@link HeartConfig#PAPER}): none of our departures. */
    public static final String HEART_PAPER = "heart-paper";
    /** Planner id of the baseline: min-cost flow per replica, no slow-link filter. */
    public static final String MCF_PER_REPLICA_NO_FILTER = "mcf-per-replica-no-filter";

    @Param({"paper-100", "paper-400", "paper-1000", "large-10000"})
    public String shape;

    @Param({HEART, HEART_PAPER, MCF_PER_REPLICA_NO_FILTER})
    public String planner;

    private Snapshot snapshot;
    private Heart heart;
    private AtpmState warmState;

    /**
     * The configuration a planner id stands for.
     *
     * @throws IllegalArgumentException naming the known ids
     */
    public static HeartConfig config(String planner) {
        return switch (planner) {
            case HEART -> HeartConfig.DEFAULTS;
            case HEART_PAPER -> HeartConfig.PAPER;
            case MCF_PER_REPLICA_NO_FILTER ->
                HeartConfig.DEFAULTS.toBuilder()
                        .grouping(HeartConfig.Grouping.REPLICA)
                        .slowLinkFilter(false)
                        .build();
            default ->
                throw new IllegalArgumentException("planner : " + planner + " (expected one of "
                        + List.of(HEART, HEART_PAPER, MCF_PER_REPLICA_NO_FILTER) + ")");
        };
    }

    @Setup(Level.Trial)
    public void setUp() {
        snapshot = SyntheticClusters.snapshot(Shape.of(shape), SyntheticClusters.DEFAULT_SEED);
        heart = new Heart(config(planner));
        Plan first = heart.plan(snapshot, AtpmState.EMPTY);
        warmState = first.state();
        List<String> violations = PlanContract.violations(first);
        System.out.println("PLAN-CHECK shape=" + shape + " planner=" + planner + " violations=" + violations.size()
                + (violations.isEmpty() ? "" : " first: " + violations.get(0)));
    }

    /** One round from no history: what the controller does after a start. */
    @Benchmark
    public Plan planFromEmptyState() {
        return heart.plan(snapshot, AtpmState.EMPTY);
    }

    /** One round with the state of a previous identical round: the steady 30 s loop. */
    @Benchmark
    public Plan planFromWarmState() {
        return heart.plan(snapshot, warmState);
    }
}
