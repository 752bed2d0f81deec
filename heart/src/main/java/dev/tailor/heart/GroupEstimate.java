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

    /** Problems of a value read from outside (a state file), each naming field and value. */
    java.util.List<String> problems(String at) {
        java.util.List<String> problems = new java.util.ArrayList<>();
        if (!(Double.isFinite(loadCpuSecondsPerRequest) && loadCpuSecondsPerRequest > 0)) {
            problems.add(at + ".loadCpuSecondsPerRequest: " + loadCpuSecondsPerRequest + " (expected: a finite number > 0)");
        }
        if (!Double.isFinite(smoothedError)) {
            problems.add(at + ".smoothedError: " + smoothedError + " (expected: a finite number)");
        }
        if (!(Double.isFinite(smoothedAbsoluteError) && smoothedAbsoluteError >= 0)) {
            problems.add(at + ".smoothedAbsoluteError: " + smoothedAbsoluteError + " (expected: a finite number >= 0)");
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
