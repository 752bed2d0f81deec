package dev.tailor.heart;

/**
 * One measured round of a replica group, as ATPM remembers it for the outlier filter and the idle
 * CPU fit ({@link HeartConfig#outlierFilter()}, {@link HeartConfig#idleFitRounds()}).
 *
 * @param requestsPerSecond Σ requests/s served over the group's replicas that had both metrics (&gt; 0)
 * @param cpuCores          Σ CPU cores used by those replicas over the window (&gt; 0)
 * @param replicas          how many replicas the sums cover (&gt;= 1); samples of another count are
 *                          not compared with each other
 */
public record LoadSample(double requestsPerSecond, double cpuCores, int replicas) {

    /** Largest plausible rate or CPU of one group; our bound against unit mistakes in a state file. */
    private static final double MAX = 1e9;

    /** Problems of a value read from outside (a state file), each naming field and value. */
    java.util.List<FieldProblem> problems(String at) {
        java.util.List<FieldProblem> problems = new java.util.ArrayList<>();
        if (!(requestsPerSecond > 0 && requestsPerSecond <= MAX)) {
            problems.add(new FieldProblem(at + ".requestsPerSecond", requestsPerSecond, "requests/s in (0, 1e9]"));
        }
        if (!(cpuCores > 0 && cpuCores <= MAX)) {
            problems.add(new FieldProblem(at + ".cpuCores", cpuCores, "cores in (0, 1e9]"));
        }
        if (replicas < 1) {
            problems.add(new FieldProblem(at + ".replicas", replicas, ">= 1"));
        }
        return problems;
    }

    /** CPU-seconds per request with {@code idleCores} of the CPU not charged to requests. */
    double loadCpuSecondsPerRequest(double idleCores, double maxIdleFraction) {
        double charged = Math.max(cpuCores - idleCores, (1 - maxIdleFraction) * cpuCores);
        return charged / requestsPerSecond;
    }
}
