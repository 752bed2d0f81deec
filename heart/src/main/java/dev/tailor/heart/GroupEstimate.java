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
 */
public record GroupEstimate(
        double loadCpuSecondsPerRequest,
        double smoothedError,
        double smoothedAbsoluteError,
        double alpha,
        long measuredRounds) {

    /** Largest plausible magnitude of a load or an error, CPU-seconds per request; our bound. */
    private static final double MAX = 1e6;

    /** Problems of a value read from outside (a state file), each naming field and value. */
    java.util.List<String> problems(String at) {
        java.util.List<String> problems = new java.util.ArrayList<>();
        if (!(loadCpuSecondsPerRequest >= Atpm.MIN_LOAD_CPU_SECONDS_PER_REQUEST && loadCpuSecondsPerRequest <= MAX)) {
            problems.add(at + ".loadCpuSecondsPerRequest: " + loadCpuSecondsPerRequest
                    + " (expected: CPU-seconds per request in [1e-9, 1e6])");
        }
        if (!(Math.abs(smoothedError) <= MAX)) {
            problems.add(at + ".smoothedError: " + smoothedError + " (expected: CPU-seconds per request in [-1e6, 1e6])");
        }
        if (!(smoothedAbsoluteError >= 0 && smoothedAbsoluteError <= MAX)) {
            problems.add(at + ".smoothedAbsoluteError: " + smoothedAbsoluteError
                    + " (expected: CPU-seconds per request in [0, 1e6])");
        }
        if (!(Double.isFinite(alpha) && alpha > 0 && alpha <= 1)) {
            problems.add(at + ".alpha: " + alpha + " (expected: a number in (0, 1])");
        }
        if (measuredRounds < 1) {
            problems.add(at + ".measuredRounds: " + measuredRounds + " (expected: >= 1)");
        }
        return problems;
    }
}
