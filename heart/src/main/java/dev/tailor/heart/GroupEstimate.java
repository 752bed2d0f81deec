package dev.tailor.heart;

/**
 * ATPM's memory of one replica group between rounds: the EWMA of its load and the two smoothed
 * errors of the Trigg–Leach tracking signal that adapts the EWMA's weight.
 *
 * @param loadCpuSecondsPerRequest  EWMA of the group's load, CPU-seconds per request (&gt; 0)
 * @param smoothedError             smoothed forecast error E, CPU-seconds per request (signed)
 * @param smoothedAbsoluteError     smoothed absolute forecast error M, CPU-seconds per request
 *                                  (&gt;= 0)
 * @param alpha                     the EWMA weight the next update will use, chosen by the tracking
 *                                  signal through this round, in [αmin, αmax]
 * @param measuredRounds            how many rounds contributed a measurement (&gt;= 1)
 * @param samples                   the group's last measured rounds, oldest first (at most
 *                                  max(3, {@link HeartConfig#idleFitRounds()})): what the outlier
 *                                  filter takes the median of and the idle CPU fit fits; empty in
 *                                  states written before they existed and under the paper's ATPM
 * @param idleCpuCores              CPU cores the group uses whatever its traffic, as the last
 *                                  conclusive fit of CPU = idle + cost × rate found it (0 until one
 *                                  did); not charged to requests
 */
public record GroupEstimate(
        double loadCpuSecondsPerRequest,
        double smoothedError,
        double smoothedAbsoluteError,
        double alpha,
        long measuredRounds,
        java.util.List<LoadSample> samples,
        Double idleCpuCores) {

    /** Absent {@code samples} and {@code idleCpuCores} (a state written before they existed): none, 0. */
    public GroupEstimate {
        samples = samples == null ? java.util.List.of() : java.util.List.copyOf(samples);
        idleCpuCores = idleCpuCores == null ? 0.0 : idleCpuCores;
    }

    /** An estimate without remembered samples or idle CPU (the paper's state). */
    public GroupEstimate(
            double loadCpuSecondsPerRequest,
            double smoothedError,
            double smoothedAbsoluteError,
            double alpha,
            long measuredRounds) {
        this(
                loadCpuSecondsPerRequest,
                smoothedError,
                smoothedAbsoluteError,
                alpha,
                measuredRounds,
                java.util.List.of(),
                0.0);
    }

    /** Largest plausible magnitude of a load or an error, CPU-seconds per request; our bound. */
    private static final double MAX = 1e6;

    /** Problems of a value read from outside (a state file), each naming field and value. */
    java.util.List<FieldProblem> problems(String at) {
        java.util.List<FieldProblem> problems = new java.util.ArrayList<>();
        if (!(loadCpuSecondsPerRequest >= Atpm.MIN_LOAD_CPU_SECONDS_PER_REQUEST && loadCpuSecondsPerRequest <= MAX)) {
            problems.add(new FieldProblem(
                    at + ".loadCpuSecondsPerRequest",
                    loadCpuSecondsPerRequest,
                    "CPU-seconds per request in [1e-9, 1e6]"));
        }
        if (!(Math.abs(smoothedError) <= MAX)) {
            problems.add(
                    new FieldProblem(at + ".smoothedError", smoothedError, "CPU-seconds per request in [-1e6, 1e6]"));
        }
        if (!(smoothedAbsoluteError >= 0 && smoothedAbsoluteError <= MAX)) {
            problems.add(new FieldProblem(
                    at + ".smoothedAbsoluteError", smoothedAbsoluteError, "CPU-seconds per request in [0, 1e6]"));
        }
        if (!(Double.isFinite(alpha) && alpha > 0 && alpha <= 1)) {
            problems.add(new FieldProblem(at + ".alpha", alpha, "a number in (0, 1]"));
        }
        if (measuredRounds < 1) {
            problems.add(new FieldProblem(at + ".measuredRounds", measuredRounds, ">= 1"));
        }
        if (samples.size() > HeartConfig.MAX_IDLE_FIT_ROUNDS) {
            problems.add(new FieldProblem(
                    at + ".samples", samples.size() + " samples", "at most " + HeartConfig.MAX_IDLE_FIT_ROUNDS));
        }
        for (int i = 0; i < samples.size(); i++) {
            if (samples.get(i) == null) {
                problems.add(new FieldProblem(at + ".samples[" + i + "]", "null", "a sample object"));
            } else {
                problems.addAll(samples.get(i).problems(at + ".samples[" + i + "]"));
            }
        }
        if (!(idleCpuCores >= 0 && idleCpuCores <= MAX)) {
            problems.add(new FieldProblem(at + ".idleCpuCores", idleCpuCores, "cores in [0, 1e6]"));
        }
        return problems;
    }
}
