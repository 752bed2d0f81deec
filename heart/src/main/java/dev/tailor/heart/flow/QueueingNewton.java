package dev.tailor.heart.flow;

import java.util.Arrays;

/**
 * Newton's method for the queue-aware entropic transport of one callee
 * ({@link EntropicTransport#solveQueueing}): the caller nodes' calls (sources) go to the callee's
 * groups (queueing sinks), each source split by a softmax over its links, f_ab = a_a · K_ab · e^(y_b)
 * ÷ Z_a with K_ab = e^(−cost_ab ÷ ε) and Z_a = Σ_b K_ab e^(y_b); the unknowns are the sinks' log
 * scalings y. A sink takes x̂_b(y) = Σ_a f_ab, and at the optimum it takes what its marginal queueing
 * cost makes worth it: G'_b(x̂_b) = ε ln ρ_b with ρ_b = Σ_a a_a K_ab ÷ Z_a, or it sits at its floor
 * (minimum) wanting less.
 *
 * <p>Contract: on convergence every source sends exactly its supply (to rounding of doubles), and
 * Σ_b |x̂_b − max(minimum_b, G'_b⁻¹(ε ln ρ_b))| is at most {@link EntropicTransport#TOLERANCE} of the
 * total; flows are non-negative and inactive links carry none. Otherwise ({@link #MAX_ITERATIONS}
 * spent, no step reduced the residual, or the numbers left the range of doubles) the result says not
 * converged and the caller plans otherwise. Single use, not thread-safe; O(sources × sinks²) time per
 * iteration for the Jacobian plus O(sinks³) for its solve, O(sources × sinks) memory.
 */
/*
 * Maintainer note.
 *
 * Where the equations come from. The primal is: minimise Σ f c + Σ_b G_b(x_b) + ε I(f) over flows
 * whose rows are the supplies, with I(f) = Σ f ln(f ÷ (a ⊗ x ÷ T)) the mutual information of source
 * and sink (convex in f for fixed rows), and x_b ≥ minimum_b. Its stationarity in f_ab reads
 * c_ab + G'_b(x_b) − ν_b + ε ln(f_ab ÷ x_b) + μ_a = 0 (ν_b ≥ 0 the floor's multiplier), so
 * f_ab = a_a K_ab w_b ÷ Z_a with w_b = x_b e^(−(G'_b(x_b) − ν_b) ÷ ε); a sink then takes x̂_b = w_b ρ_b,
 * and x̂_b = x_b holds exactly when G'_b(x_b) − ν_b = ε ln ρ_b. With y_b = ln w_b as unknowns that is a
 * complementarity problem per sink: A_b = G'_b(x̂_b) − ε ln ρ_b ≥ 0, B_b = ε ln(x̂_b ÷ floor_b) ≥ 0,
 * one of them 0. We solve φ(A_b, B_b) = A_b + B_b − √(A_b² + B_b²) = 0 (Fischer–Burmeister), whose
 * square is smooth, by Newton's method with a backtracking line search on ½ ‖φ‖². There is no free
 * constant: y + c leaves the flows alone but moves every ln ρ by −c.
 *
 * Why this form. The alternating scaling (v ← take ÷ reach, Sinkhorn's form) converges at a rate
 * that approaches one as a sink's take grows more sensitive to its reach, ε ÷ (x G''(x)), which is
 * 10–1,000 at low utilisation; it needed damping and 3,000–17,000 iterations on a five-node plan.
 * Newton on the residual x̂ − target stalled wherever every target sat at its floor (no slope) or a
 * sink was fed by a source that reaches nothing else (its take cannot move, only its target can);
 * min(A, B) instead of φ lost the gauge in a capacity shortfall, where both are positive everywhere
 * and every row took B. The form above converged on every callee of the benchmark clusters in 4–21
 * iterations (capacity shortfalls aside, which the caller does not give it).
 *
 * The Jacobian. With π_ab = f_ab ÷ a_a and D_bc = Σ_a κ_ab π_ac, κ_ab = a_a K_ab ÷ (Z_a ρ_b) (weights
 * over a summing to 1, computed without x̂_b so that a sink priced out keeps a finite row):
 * ∂x̂_b ÷ ∂y_c = x̂_b (δ_bc − D_bc) and ∂ ln ρ_b ÷ ∂y_c = −D_bc, so
 * ∂A_b ÷ ∂y = G''_b x̂_b δ_b + (ε − G''_b x̂_b) D_b and ∂B_b ÷ ∂y = ε (δ_b − D_b), blended by
 * ∂φ ÷ ∂A = 1 − A ÷ r and ∂φ ÷ ∂B = 1 − B ÷ r, r = √(A² + B²). No y moves by more than
 * {@link #MAX_STEP} at once.
 *
 * The floor of a sink without a minimum is {@link #NEGLIGIBLE_TAKE} of the total, so that a sink
 * priced out has a root to reach. Everything is in log space (log-sum-exp per source and per sink).
 * Under the barrier (the reachable sinks can serve the total) the pure M/M/1 cost applies and a step
 * that takes a sink to its capacity has an infinite merit and is halved.
 */
final class QueueingNewton {

    /** Newton iterations before the solve gives up. */
    static final int MAX_ITERATIONS = 50;

    /** A take this small a fraction of the total counts as none: the floor of a sink without a minimum. */
    static final double NEGLIGIBLE_TAKE = 1e-12;

    /** The generalised gradient picked at the Fischer–Burmeister function's kink (A = B = 0). */
    private static final double FB_ORIGIN = 1 / Math.sqrt(2);

    /** Largest change of a sink's log scaling in one step. */
    static final double MAX_STEP = 8;

    private final double[] supply;
    private final double[] capacity;
    private final double[] servers;
    private final double[] minimum;
    private final double epsilon;
    private final int s;
    private final int g;
    private final double total;
    /** Whether the reachable sinks can serve the total: then the pure M/M/1 cost, takes below capacity. */
    private final boolean barrier;
    /** ln K per link, relative to the row's cheapest; −∞ for inactive links. */
    private final double[] logKernel;

    private final boolean[] reachable;

    // Per evaluation.
    private final double[] logZ;
    private final double[] pi;
    private final double[] logRho;
    private final double[] take;
    private final double[] residual;
    /** ∂φ ÷ ∂A and ∂φ ÷ ∂B of each row's Fischer–Burmeister function at the last evaluation. */
    private final double[] costWeight;

    private final double[] floorWeight;
    /** Σ_b |x̂_b − max(minimum_b, G'_b⁻¹(ε ln ρ_b))| at the last evaluation: the stopping test. */
    private double takeError;

    private final double[] logSupply;
    /** The floors of the complementarity rows: the minimum, or a negligible take where it is 0. */
    private final double[] floors;

    QueueingNewton(
            double[] supply,
            double[] capacity,
            double[] servers,
            double[] minimum,
            double[] costMillis,
            boolean[] active,
            double epsilonMillis) {
        this.supply = supply;
        this.capacity = capacity;
        this.servers = servers;
        this.minimum = minimum;
        this.epsilon = epsilonMillis;
        this.s = supply.length;
        this.g = capacity.length;
        double sum = 0;
        for (double a : supply) {
            sum += a;
        }
        this.total = sum;
        this.logKernel = new double[s * g];
        this.reachable = new boolean[g];
        for (int a = 0; a < s; a++) {
            double cheapest = Double.POSITIVE_INFINITY;
            for (int b = 0; b < g; b++) {
                if (active[a * g + b]) {
                    cheapest = Math.min(cheapest, costMillis[a * g + b]);
                }
            }
            for (int b = 0; b < g; b++) {
                int l = a * g + b;
                logKernel[l] = active[l] ? -(costMillis[l] - cheapest) / epsilonMillis : Double.NEGATIVE_INFINITY;
                reachable[b] |= active[l];
            }
        }
        double room = 0;
        for (int b = 0; b < g; b++) {
            if (reachable[b]) {
                room += capacity[b];
            }
        }
        this.barrier = total < room;
        this.logZ = new double[s];
        this.pi = new double[s * g];
        this.logRho = new double[g];
        this.take = new double[g];
        this.residual = new double[g];
        this.costWeight = new double[g];
        this.floorWeight = new double[g];
        this.logSupply = new double[s];
        for (int a = 0; a < s; a++) {
            logSupply[a] = Math.log(supply[a]);
        }
        this.floors = new double[g];
        for (int b = 0; b < g; b++) {
            floors[b] = Math.max(minimum[b], NEGLIGIBLE_TAKE * total);
        }
    }

    /** Most Sinkhorn updates spent looking for a start that loads every sink below its capacity. */
    static final int START_SCALINGS = 1_000;

    EntropicTransport.Result solve(double[] flowOut) {
        if (!(total > 0 && total < Double.POSITIVE_INFINITY)) {
            return new EntropicTransport.Result(false, 0, Double.NaN);
        }
        for (double a : supply) {
            if (!(a > 0 && a < Double.POSITIVE_INFINITY)) {
                return new EntropicTransport.Result(false, 0, Double.NaN);
            }
        }
        // Start from the capacity-proportional split: y_b = ln x_b.
        double room = 0;
        for (int b = 0; b < g; b++) {
            room += reachable[b] ? capacity[b] : 0;
        }
        if (!(room > 0)) {
            return new EntropicTransport.Result(false, 0, Double.NaN);
        }
        double[] y = new double[g];
        for (int b = 0; b < g; b++) {
            y[b] = reachable[b] ? Math.log(total * capacity[b] / room) : Double.NEGATIVE_INFINITY;
        }
        double merit = evaluate(y);
        // Under the barrier the start must load no sink to its capacity: the softmax can send one more
        // than its proportional share. Sinkhorn's updates towards the capacity-proportional takes
        // (each below its capacity while the total is) bring every sink under it; near capacity that
        // takes more than a few, so up to START_SCALINGS of them.
        for (int attempt = 0; attempt < START_SCALINGS && merit == Double.POSITIVE_INFINITY; attempt++) {
            for (int b = 0; b < g; b++) {
                if (reachable[b] && take[b] > 0) {
                    y[b] += Math.log(total * capacity[b] / room / take[b]);
                }
            }
            merit = evaluate(y);
        }
        double[] jacobian = new double[g * g];
        double[] step = new double[g];
        double[] trial = new double[g];
        int iteration = 0;
        while (!(takeError <= EntropicTransport.TOLERANCE * total)) {
            if (iteration == MAX_ITERATIONS || !(merit < Double.POSITIVE_INFINITY)) {
                return new EntropicTransport.Result(false, iteration, takeError / total);
            }
            jacobian(jacobian);
            for (int b = 0; b < g; b++) {
                step[b] = -residual[b];
            }
            if (!solveLinear(jacobian, step, g)) {
                return new EntropicTransport.Result(false, iteration, takeError / total);
            }
            double largest = 0;
            for (int b = 0; b < g; b++) {
                largest = Math.max(largest, Math.abs(step[b]));
            }
            double t = largest > MAX_STEP ? MAX_STEP / largest : 1;
            double next = Double.NaN;
            for (int halving = 0; halving < 40; halving++, t /= 2) {
                for (int b = 0; b < g; b++) {
                    trial[b] = reachable[b] ? y[b] + t * step[b] : Double.NEGATIVE_INFINITY;
                }
                next = evaluate(trial);
                if (next <= (1 - 1e-4 * t) * merit) {
                    break;
                }
            }
            if (!(next < merit)) {
                evaluate(y);
                return new EntropicTransport.Result(false, iteration, takeError / total);
            }
            System.arraycopy(trial, 0, y, 0, g);
            merit = next;
            iteration++;
        }
        double highest = Double.NEGATIVE_INFINITY;
        for (int b = 0; b < g; b++) {
            highest = Math.max(highest, y[b]);
        }
        double[] scaling = new double[g];
        for (int b = 0; b < g; b++) {
            scaling[b] = reachable[b] ? Math.exp(y[b] - highest) : 0;
        }
        for (int a = 0; a < s; a++) {
            for (int b = 0; b < g; b++) {
                flowOut[a * g + b] = supply[a] * pi[a * g + b];
            }
        }
        return new EntropicTransport.Result(true, iteration, takeError / total, scaling);
    }

    /**
     * Fills the per-evaluation arrays for {@code y}: flows, takes, ln ρ, the residual F and the take
     * error; returns the merit ½ ‖F‖² (ms², ∞ when a take reaches a capacity under the barrier, NaN
     * when the numbers leave the range of doubles).
     */
    private double evaluate(double[] y) {
        for (int a = 0; a < s; a++) {
            double highest = Double.NEGATIVE_INFINITY;
            for (int b = 0; b < g; b++) {
                highest = Math.max(highest, logKernel[a * g + b] + y[b]);
            }
            double z = 0;
            for (int b = 0; b < g; b++) {
                double e = logKernel[a * g + b] + y[b] - highest;
                z += e == Double.NEGATIVE_INFINITY ? 0 : Math.exp(e);
            }
            logZ[a] = highest + Math.log(z);
            if (!(logZ[a] > Double.NEGATIVE_INFINITY && logZ[a] < Double.POSITIVE_INFINITY)) {
                return Double.NaN;
            }
            for (int b = 0; b < g; b++) {
                double e = logKernel[a * g + b] + y[b] - logZ[a];
                pi[a * g + b] = e == Double.NEGATIVE_INFINITY ? 0 : Math.exp(e);
            }
        }
        double merit = 0;
        takeError = 0;
        boolean overloaded = false;
        for (int b = 0; b < g; b++) {
            if (!reachable[b]) {
                take[b] = 0;
                residual[b] = 0;
                logRho[b] = Double.NEGATIVE_INFINITY;
                continue;
            }
            // ln ρ_b = ln Σ_a a_a K_ab ÷ Z_a, by log-sum-exp over the sources.
            double highest = Double.NEGATIVE_INFINITY;
            for (int a = 0; a < s; a++) {
                highest = Math.max(highest, logSupply[a] + logKernel[a * g + b] - logZ[a]);
            }
            double rho = 0;
            double x = 0;
            for (int a = 0; a < s; a++) {
                double e = logSupply[a] + logKernel[a * g + b] - logZ[a] - highest;
                rho += e == Double.NEGATIVE_INFINITY ? 0 : Math.exp(e);
                x += supply[a] * pi[a * g + b];
            }
            logRho[b] = highest + Math.log(rho);
            take[b] = x;
            if (barrier && !(x < capacity[b])) {
                overloaded = true;
                continue;
            }
            double price = epsilon * logRho[b];
            double interior = EntropicTransport.inverseMarginalCost(price, capacity[b], servers[b], barrier);
            takeError += Math.abs(x - Math.max(minimum[b], interior));
            // Fischer–Burmeister: φ(A, B) = A + B − √(A² + B²) is 0 exactly when A ≥ 0, B ≥ 0 and one
            // of them is 0; unlike min(A, B) its square is smooth, and each row keeps both gradients.
            double cost = marginalCost(x, b) - price;
            double floor = epsilon * Math.log(x / floors[b]);
            double r = Math.hypot(cost, floor);
            residual[b] = cost + floor - r;
            costWeight[b] = r > 0 ? 1 - cost / r : 1 - FB_ORIGIN;
            floorWeight[b] = r > 0 ? 1 - floor / r : 1 - FB_ORIGIN;
            merit += residual[b] * residual[b] / 2;
        }
        if (overloaded) {
            takeError = Double.POSITIVE_INFINITY;
            return Double.POSITIVE_INFINITY;
        }
        return merit;
    }

    /** G'(x) of the cost in use, ms per call. */
    private double marginalCost(double x, int b) {
        if (barrier) {
            double room = capacity[b] - x;
            return 1000 * servers[b] * capacity[b] / (room * room);
        }
        return EntropicTransport.marginalCostMillis(x, capacity[b], servers[b]);
    }

    /** G''(x) of the cost in use: the pure M/M/1 one under the barrier, else with the quadratic continuation. */
    private double curvature(double x, int b) {
        if (barrier) {
            double room = capacity[b] - x;
            return 2000 * servers[b] * capacity[b] / (room * room * room);
        }
        return EntropicTransport.curvature(x, capacity[b], servers[b]);
    }

    /** ∂F ÷ ∂y at the last evaluation, g × g row-major (see the maintainer note). */
    private void jacobian(double[] j) {
        Arrays.fill(j, 0);
        double[] weight = new double[s];
        for (int b = 0; b < g; b++) {
            int row = b * g;
            if (!reachable[b]) {
                j[row + b] = 1;
                continue;
            }
            // D_bc = Σ_a κ_ab π_ac, κ_ab = a_a K_ab ÷ (Z_a ρ_b) = exp(ln a_a + ln K_ab − ln Z_a − ln ρ_b).
            for (int a = 0; a < s; a++) {
                double e = logSupply[a] + logKernel[a * g + b] - logZ[a] - logRho[b];
                weight[a] = e == Double.NEGATIVE_INFINITY ? 0 : Math.exp(e);
            }
            // ∂A: G'' x̂ δ + (ε − G'' x̂) D; ∂B: ε (δ − D); the row is their Fischer–Burmeister blend.
            double curvatureTake = curvature(take[b], b) * take[b];
            double diagonal = costWeight[b] * curvatureTake + floorWeight[b] * epsilon;
            double factor = costWeight[b] * (epsilon - curvatureTake) - floorWeight[b] * epsilon;
            for (int a = 0; a < s; a++) {
                double w = weight[a] * factor;
                if (w == 0) {
                    continue;
                }
                int offset = a * g;
                for (int c = 0; c < g; c++) {
                    j[row + c] += w * pi[offset + c];
                }
            }
            j[row + b] += diagonal;
        }
    }

    /** Gaussian elimination with partial pivoting: solves m x = rhs in place; false when singular. */
    static boolean solveLinear(double[] m, double[] rhs, int n) {
        for (int col = 0; col < n; col++) {
            int pivot = col;
            double best = Math.abs(m[col * n + col]);
            for (int r = col + 1; r < n; r++) {
                double v = Math.abs(m[r * n + col]);
                if (v > best) {
                    best = v;
                    pivot = r;
                }
            }
            if (!(best > 0) || !Double.isFinite(best)) {
                return false;
            }
            if (pivot != col) {
                for (int c = 0; c < n; c++) {
                    double tmp = m[col * n + c];
                    m[col * n + c] = m[pivot * n + c];
                    m[pivot * n + c] = tmp;
                }
                double tmp = rhs[col];
                rhs[col] = rhs[pivot];
                rhs[pivot] = tmp;
            }
            double diagonal = m[col * n + col];
            for (int r = col + 1; r < n; r++) {
                double factor = m[r * n + col] / diagonal;
                if (factor == 0) {
                    continue;
                }
                for (int c = col; c < n; c++) {
                    m[r * n + c] -= factor * m[col * n + c];
                }
                rhs[r] -= factor * rhs[col];
            }
        }
        for (int r = n - 1; r >= 0; r--) {
            double v = rhs[r];
            for (int c = r + 1; c < n; c++) {
                v -= m[r * n + c] * rhs[c];
            }
            rhs[r] = v / m[r * n + r];
            if (!Double.isFinite(rhs[r])) {
                return false;
            }
        }
        return true;
    }
}
