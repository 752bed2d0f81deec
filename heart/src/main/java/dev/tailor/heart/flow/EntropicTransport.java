package dev.tailor.heart.flow;

import dev.tailor.common.Checks;
import dev.tailor.common.Numbers;

/**
 * Entropy-regularised transport of one call edge by Sinkhorn's matrix scaling: over the active links
 * of a dense sources × sinks grid, the flow f that minimises Σ f × cost + ε Σ f (log f − 1) under the
 * supplies and demands. Its form is f_ab = u_a · e^(−cost_ab ÷ ε) · v_b: every active link carries
 * some flow, the more the cheaper it is against ε, so links whose costs differ by little against ε
 * share the calls almost evenly and links much dearer than ε fade out. As ε → 0 it tends to a
 * min-cost flow; its cost exceeds the minimum by at most ε · min(H(a), H(b)) for the normalised
 * supplies a and demands b (H = entropy), plus the tolerance of the scaling.
 *
 * <p>Contract: on {@link Result#converged()} every source sends exactly its supply (to rounding of
 * doubles) and every sink receives its demand to within {@link #TOLERANCE} of the total; flows are
 * non-negative and inactive links carry none. Not converged ({@link #MAX_ITERATIONS} spent, or the
 * scaling left the range of doubles): {@code flowOut} is unspecified and the caller keeps its
 * min-cost flow. Stateless and thread-safe; O(links) time per iteration, O(sources + sinks) memory
 * beyond the kernel.
 */
/*
 * Maintainer note.
 *
 * The problem [1, §4.2]. For supplies a (sources) and demands b (sinks) of equal total T, the
 * entropic transport plan is the unique minimiser of ⟨f, C⟩ − ε H(f) over couplings of a and b
 * restricted to the active links; with K = e^(−C/ε) it is f = diag(u) K diag(v), and Sinkhorn's
 * alternating updates v ← b ÷ (Kᵀu), u ← a ÷ (Kv) converge to it linearly [2; 1, §4.2]. We stop
 * when the sinks' error Σ_b |v_b (Kᵀu)_b − b_b| is at most TOLERANCE × T, checked every iteration
 * at no extra cost (the column sums Kᵀu are the next update's); the sources are exact after each
 * u-update. Inactive links have K = 0; the caller guarantees that the active links can carry all
 * demand (the slow-link filter's max-flow check does), else no scaling exists and the loop runs
 * out of iterations.
 *
 * Numerics. Each row of the kernel is taken relative to its cheapest active link, K_ab =
 * e^(−(C_ab − min_b' C_ab') ÷ ε), which changes only u, so every row holds a 1 and no row
 * underflows; a link more than 700 ε dearer than its row's cheapest gets K = 0 (e^−700 is below
 * any flow we could express; a demand met only through such links fails the scaling, not the plan).
 * The scalings u and v then stay within e^±700 unless a sink can be reached only through links
 * that dear; a non-finite or zero scaling ends the solve unconverged.
 *
 * Bound on the cost (used by the property tests). With P the entropic plan and P* a min-cost plan of
 * the same marginals, both normalised to mass 1: ⟨P, C⟩ − εH(P) ≤ ⟨P*, C⟩ − εH(P*), so
 * ⟨P, C⟩ − ⟨P*, C⟩ ≤ ε (H(P) − H(P*)) ≤ ε (H(a) + H(b) − max(H(a), H(b))) = ε min(H(a), H(b)),
 * since every coupling has max(H(a), H(b)) ≤ H ≤ H(a) + H(b) [1, §4.1].
 *
 * [1] G. Peyré, M. Cuturi, "Computational Optimal Transport", Foundations and Trends in Machine
 *     Learning 11(5–6), 2019, §4.1–4.2.
 * [2] R. Sinkhorn, P. Knopp, "Concerning nonnegative matrices and doubly stochastic matrices",
 *     Pacific Journal of Mathematics 21(2), 1967.
 * [3] M. Cuturi, "Sinkhorn distances: lightspeed computation of optimal transport", NeurIPS 2013.
 */
public final class EntropicTransport {

    /** Largest error of the sinks' totals, as a fraction of the total flow, at which the scaling stops. */
    static final double TOLERANCE = 1e-9;

    /** Iterations before the scaling gives up (it then reports not converged). */
    static final int MAX_ITERATIONS = 20_000;

    /** Links dearer than their row's cheapest by more than this many ε get no kernel weight. */
    private static final double MAX_EXPONENT = 700;

    private EntropicTransport() {}

    /**
     * What a solve did.
     *
     * @param converged      whether the sinks' error reached {@link #TOLERANCE}
     * @param iterations     scaling iterations (one u- and one v-update each)
     * @param sinkError      Σ over sinks of |received − demand| ÷ total at the end
     * @param sinkScaling    the final scaling v of each sink (null when not converged): any source at
     *                       costs c_b sends the fraction ∝ e^(−c_b ÷ ε) v_b to sink b, also one that
     *                       supplies nothing (a zero-rate call still needs a route)
     */
    public record Result(boolean converged, int iterations, double sinkError, double[] sinkScaling) {

        Result(boolean converged, int iterations, double sinkError) {
            this(converged, iterations, sinkError, null);
        }
    }

    /**
     * Solves one edge with fixed demands.
     *
     * @param supply     per source, &gt; 0 (any unit)
     * @param demand     per sink, &gt; 0, the same total as {@code supply}
     * @param costMillis per link, row-major: link {@code a * sinks + b} joins source a to sink b; any
     *                   finite cost (a round-trip delay in ms)
     * @param active     per link, whether it may carry flow; every source and sink needs one
     * @param epsilonMillis the temperature ε, in the unit of {@code costMillis}, &gt; 0
     * @param flowOut    receives each link's flow, in the unit of {@code supply}
     * @throws IllegalArgumentException for mismatched lengths or a non-positive ε
     */
    public static Result solve(
            double[] supply,
            double[] demand,
            double[] costMillis,
            boolean[] active,
            double epsilonMillis,
            double[] flowOut) {
        return scale(supply, demand, costMillis, active, epsilonMillis, flowOut);
    }

    /**
     * Solves one callee's transport with queueing sinks instead of fixed demands: sink b is a group of
     * {@code servers[b]} M/M/1 servers of {@code capacity[b]} requests/s together, and a flow x into it
     * costs x × its mean sojourn, G_b(x) = 1000 · x · servers ÷ (capacity − x) ms per second (marginal
     * cost G'(x) = 1000 · servers · capacity ÷ (capacity − x)² ms per call), continued as a quadratic
     * beyond {@link #MAX_QUEUE_UTILISATION} of capacity so that overload stays finite. The flow f
     * minimises Σ f × cost + Σ_b G_b(x_b) + ε · I(f), every source sending its supply, where x_b is
     * what sink b takes and I(f) = Σ f log(f ÷ (a_source · x_sink ÷ total)) is the mutual information
     * between a call's source and its sink (in flow units): the entropy penalises how much knowing
     * where a call comes from tells where it goes, not how unevenly the sinks are loaded. With equal
     * link costs every source sends the same split, the square-root rule of latency-optimal routing.
     * Solved by Newton's method ({@link QueueingNewton}), typically in 4–12 iterations; the sinks' error
     * in the result is |take − target| summed, as a fraction of the total.
     *
     * @param supply     per source, requests/s, &gt; 0
     * @param capacity   per sink, requests/s, &gt; 0
     * @param servers    per sink, &gt; 0 (replicas, or cores of CPU limit)
     * @see #solve(double[], double[], double[], boolean[], double, double[]) for the other parameters
     */
    static Result solveQueueing(
            double[] supply,
            double[] capacity,
            double[] servers,
            double[] costMillis,
            boolean[] active,
            double epsilonMillis,
            double[] flowOut) {
        return solveQueueing(
                supply, capacity, servers, new double[capacity.length], costMillis, active, epsilonMillis, flowOut);
    }

    /**
     * {@link #solveQueueing(double[], double[], double[], double[], boolean[], double, double[])} with
     * a least take per sink (requests/s; Σ below the total supply and each below the sink's capacity),
     * e.g. ATPM's floors: a sink never takes less while some source reaches it.
     */
    public static Result solveQueueing(
            double[] supply,
            double[] capacity,
            double[] servers,
            double[] minimum,
            double[] costMillis,
            boolean[] active,
            double epsilonMillis,
            double[] flowOut) {
        int s = supply.length;
        int g = capacity.length;
        if (servers.length != g || minimum.length != g) {
            throw new IllegalArgumentException("servers, minimum : " + servers.length + ", " + minimum.length
                    + " sinks (expected: " + g + " each)");
        }
        checkLinks(s, g, costMillis, active, epsilonMillis, flowOut);
        for (int b = 0; b < g; b++) {
            if (!(capacity[b] > 0 && servers[b] > 0 && Double.isFinite(capacity[b]) && Double.isFinite(servers[b]))) {
                throw new IllegalArgumentException(
                        "capacity, servers of sink " + b + " : " + Numbers.written(capacity[b]) + ", "
                                + Numbers.written(servers[b]) + " (expected: finite numbers > 0)");
            }
        }
        return new QueueingNewton(supply, capacity, servers, minimum, costMillis, active, epsilonMillis).solve(flowOut);
    }

    /** Utilisation beyond which a queueing sink's cost continues as a quadratic (its marginal cost linearly). */
    static final double MAX_QUEUE_UTILISATION = 0.95;

    /** G''(x), ms per call per (call/s): the slope of {@link #marginalCostMillis}. */
    static double curvature(double x, double capacity, double servers) {
        double room = capacity - Math.min(x, MAX_QUEUE_UTILISATION * capacity);
        return 2000 * servers * capacity / (room * room * room);
    }

    /** Marginal queueing cost G'(x), ms per call. */
    static double marginalCostMillis(double x, double capacity, double servers) {
        double knee = MAX_QUEUE_UTILISATION * capacity;
        double room = capacity - Math.min(x, knee);
        double atKnee = 1000 * servers * capacity / (room * room);
        return x <= knee ? atKnee : atKnee + 2000 * servers * capacity / (room * room * room) * (x - knee);
    }

    /**
     * The x ≥ 0 with G'(x) = {@code marginalMillis}, or 0 where even G'(0) is more. With
     * {@code barrier} the M/M/1 cost without the quadratic continuation: x stays below capacity.
     */
    static double inverseMarginalCost(double marginalMillis, double capacity, double servers, boolean barrier) {
        double k = 1000 * servers * capacity;
        if (!(marginalMillis > k / (capacity * capacity))) {
            return 0;
        }
        double knee = MAX_QUEUE_UTILISATION * capacity;
        double room = capacity - knee;
        double atKnee = k / (room * room);
        if (barrier || marginalMillis <= atKnee) {
            return capacity - Math.sqrt(k / marginalMillis);
        }
        return knee + (marginalMillis - atKnee) / (2 * k / (room * room * room));
    }

    /** The link arrays' lengths against sources × sinks, and ε; an IllegalArgumentException naming what is wrong. */
    private static void checkLinks(
            int s, int g, double[] costMillis, boolean[] active, double epsilonMillis, double[] flowOut) {
        int links = s * g;
        if (costMillis.length != links || active.length != links || flowOut.length < links) {
            throw new IllegalArgumentException("links : " + costMillis.length + " costs, " + active.length
                    + " flags, room for " + flowOut.length + " flows (expected: " + s + " × " + g + " = " + links
                    + " each)");
        }
        Checks.requireAboveAtMost("epsilonMillis", epsilonMillis, 0, Double.MAX_VALUE);
    }

    /** Sinkhorn's scaling; see the maintainer note. */
    private static Result scale(
            double[] supply,
            double[] take,
            double[] costMillis,
            boolean[] active,
            double epsilonMillis,
            double[] flowOut) {
        int s = supply.length;
        int g = take.length;
        int links = s * g;
        checkLinks(s, g, costMillis, active, epsilonMillis, flowOut);
        double total = 0;
        for (double v : supply) {
            total += v;
        }
        double[] kernel = new double[links];
        for (int a = 0; a < s; a++) {
            double cheapest = Double.POSITIVE_INFINITY;
            for (int l = a * g; l < a * g + g; l++) {
                if (active[l]) {
                    cheapest = Math.min(cheapest, costMillis[l]);
                }
            }
            for (int l = a * g; l < a * g + g; l++) {
                double exponent = active[l] ? (costMillis[l] - cheapest) / epsilonMillis : Double.POSITIVE_INFINITY;
                kernel[l] = exponent <= MAX_EXPONENT ? Math.exp(-exponent) : 0;
            }
        }
        double[] u = new double[s];
        double[] v = new double[g];
        java.util.Arrays.fill(u, 1);
        java.util.Arrays.fill(v, 1);
        double[] column = new double[g];
        int iteration = 0;
        double error;
        while (true) {
            java.util.Arrays.fill(column, 0);
            for (int a = 0, l = 0; a < s; a++) {
                double ua = u[a];
                for (int b = 0; b < g; b++, l++) {
                    column[b] += kernel[l] * ua;
                }
            }
            error = 0;
            for (int b = 0; b < g; b++) {
                error += Math.abs(v[b] * column[b] - take[b]);
            }
            error /= total;
            if (iteration > 0 && error <= TOLERANCE) {
                break;
            }
            if (iteration == MAX_ITERATIONS || !(error < Double.POSITIVE_INFINITY)) {
                return new Result(false, iteration, error);
            }
            for (int b = 0; b < g; b++) {
                v[b] = column[b] > 0 ? take[b] / column[b] : 0;
                if (!(v[b] >= 0 && v[b] < Double.POSITIVE_INFINITY)) {
                    return new Result(false, iteration, error);
                }
            }
            for (int a = 0, l = 0; a < s; a++) {
                double row = 0;
                for (int b = 0; b < g; b++, l++) {
                    row += kernel[l] * v[b];
                }
                u[a] = supply[a] / row;
                if (!(u[a] > 0 && u[a] < Double.POSITIVE_INFINITY)) {
                    return new Result(false, iteration, error);
                }
            }
            iteration++;
        }
        for (int a = 0, l = 0; a < s; a++) {
            for (int b = 0; b < g; b++, l++) {
                flowOut[l] = u[a] * kernel[l] * v[b];
            }
        }
        return new Result(true, iteration, error, v);
    }

    /**
     * The fractions a source at link costs {@code costMillis} (one per sink, NaN = no link) sends
     * to each sink under the scalings {@code sinkScaling} of a converged solve, into {@code out};
     * false (out unspecified) when it reaches no sink.
     */
    public static boolean fractions(double[] costMillis, double[] sinkScaling, double epsilonMillis, double[] out) {
        double cheapest = Double.POSITIVE_INFINITY;
        for (double c : costMillis) {
            if (!Double.isNaN(c)) {
                cheapest = Math.min(cheapest, c);
            }
        }
        double sum = 0;
        for (int b = 0; b < costMillis.length; b++) {
            double exponent =
                    Double.isNaN(costMillis[b]) ? Double.POSITIVE_INFINITY : (costMillis[b] - cheapest) / epsilonMillis;
            out[b] = exponent <= MAX_EXPONENT ? Math.exp(-exponent) * sinkScaling[b] : 0;
            sum += out[b];
        }
        if (!(sum > 0 && sum < Double.POSITIVE_INFINITY)) {
            return false;
        }
        for (int b = 0; b < out.length; b++) {
            out[b] /= sum;
        }
        return true;
    }
}
