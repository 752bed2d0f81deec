package dev.tailor.heart;

import dev.tailor.common.Numbers;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The cap on how far a route may move in one round (the paper has no such cap, so the rule is our
 * reading; the controller applies it by default, {@link #DEFAULT_MAX_MOVE}): for every call edge and
 * caller node, the fraction of that node's calls sent to each callee node moves by at most
 * {@code maxMove} from the plan applied before, e.g. 0.2 = 20 percentage points. It bounds what one
 * bad round can do to the rules, whatever the planner made of it.
 *
 * <p>Contract. Given the new plan's routes (target t) and the last applied routes (previous p), each
 * {@code from} entry that also existed before becomes the point x closest to t (in the sense of
 * one shift λ: x_i = clamp(t_i + λ, lo_i, hi_i)) with Σ x = 1 and lo_i = max(0, p_i − maxMove),
 * hi_i = min(1, p_i + maxMove). Safety wins over the cap: a callee node without a ready replica
 * gets lo = hi = 0, so no call goes to a pod that is gone. When that leaves less than the whole
 * (Σ hi &lt; 1: the calls that went to nodes now gone do not fit under the cap elsewhere), the cap
 * widens for that entry by the least amount that fits them, and a note says so. Entries, edges and
 * nodes with no previous value take the new plan.
 * Per-replica fractions follow: a node's fraction split equally among its ready replicas of the
 * callee, as NTAM splits within a group.
 *
 * <p>Capacity wins over the cap too: given the plan's {@link ComponentShares}, an edge whose capped
 * routes would load a callee node beyond both its capacity (its groups' capacity × the edge's part of
 * the callee's demand) and what the plan gives it takes the plan uncapped, with a note: a cap must
 * not be why a node is planned above what it can serve. Given the edges where that was so in the
 * round before ({@link Capped#overloaded()}), it does from the second such round in a row, as ATPM's
 * outlier filter follows a real change from its second round: call rates and an entry point's split
 * do not go through that filter, and one round reading far more (or fewer) calls from one node must
 * not release the cap.
 *
 * <p>Pure and stateless; the caller keeps the last applied routes.
 */
/*
 * Maintainer note. Why a shift λ and not a per-entry clamp and rescale: rescaling a clamped vector
 * can push entries back past their bounds, and clamping again need not end. With one λ the sum
 * Σ clamp(t_i + λ, lo_i, hi_i) is continuous and non-decreasing in λ, runs from Σ lo ≤ 1 to Σ hi ≥ 1,
 * so bisection finds Σ = 1; the solution is the Euclidean projection of t onto the box ∩ simplex.
 * The capped plan may load a slow node more than ATPM's share for a round or two; that is the
 * trade the user asks for with the cap.
 */
public final class ShareMoveCap {

    /**
     * The controller's default largest move, 0.2 = 20 points per round: one bad round moves at most
     * a fifth of a caller node's calls, and a complete move from one node to another still takes at
     * most five rounds (2.5 minutes at 30 s), the time the load EWMA itself needs to follow a
     * sustained change at α = 0.2 .. 0.8.
     */
    public static final double DEFAULT_MAX_MOVE = 0.2;

    /** Bisection steps: the bracket is 3 wide, 2^-60 of it is far below a weight's 1 %. */
    private static final int BISECTION_STEPS = 60;

    private ShareMoveCap() {}

    /**
     * The capped routes.
     *
     * @param target   the new plan's routes
     * @param previous the last applied routes (empty: nothing to cap)
     * @param snapshot the snapshot of the new plan, for which replicas are ready where
     * @param maxMove  the largest move of one fraction, in (0, 1]; 1 changes nothing
     * @param notes    receives one line per entry the cap changed or could not apply
     * @return routes in the order of {@code target}
     */
    public static List<Route> apply(
            List<Route> target, List<Route> previous, Snapshot snapshot, double maxMove, List<String> notes) {
        return apply(target, previous, snapshot, List.of(), maxMove, notes);
    }

    /**
     * The capped routes, released per edge as soon as the cap would plan a callee node above its
     * capacity (no memory of the round before).
     *
     * @param shares the new plan's ATPM shares (demand and capacity per component); empty: no check
     */
    public static List<Route> apply(
            List<Route> target,
            List<Route> previous,
            Snapshot snapshot,
            List<ComponentShares> shares,
            double maxMove,
            List<String> notes) {
        return apply(target, previous, snapshot, shares, maxMove, null, notes).routes();
    }

    /**
     * The capped routes of one round, and where they would overload a node.
     *
     * @param routes     in the order of the target
     * @param overloaded the edges ({@link #edge}) whose capped routes would load a callee node beyond
     *                   both its capacity and the plan's load this round, released or not: the next
     *                   round's {@code overloadedBefore}
     */
    public record Capped(List<Route> routes, Set<String> overloaded) {

        public Capped {
            routes = List.copyOf(routes);
            overloaded = Set.copyOf(overloaded);
        }
    }

    /** An edge's key in {@link Capped#overloaded()}. */
    public static String edge(String caller, String callee) {
        return caller + " -> " + callee;
    }

    /**
     * The capped routes, released per edge where the cap would plan a callee node above its capacity
     * in this round and in the round before.
     *
     * @param shares           the new plan's ATPM shares (demand and capacity per component); empty:
     *                         no check
     * @param overloadedBefore {@link Capped#overloaded()} of the round before (empty after a restart:
     *                         an edge is then released from the second round), or {@code null} to
     *                         release an edge in the first round it overloads a node
     */
    public static Capped apply(
            List<Route> target,
            List<Route> previous,
            Snapshot snapshot,
            List<ComponentShares> shares,
            double maxMove,
            Set<String> overloadedBefore,
            List<String> notes) {
        if (!(maxMove > 0 && maxMove <= 1)) {
            throw new IllegalArgumentException("maxShareMovePerRound: " + Numbers.written(maxMove) + " (expected: "
                    + Numbers.interval(true, 0, 1) + ")");
        }
        if (maxMove == 1 || previous.isEmpty()) {
            return new Capped(target, Set.of());
        }
        Map<String, Route> before = new HashMap<>();
        for (Route route : previous) {
            before.put(route.caller() + "\u0000" + route.callee(), route);
        }
        Map<String, Map<String, List<String>>> readyByComponentAndNode = new HashMap<>();
        for (Replica replica : snapshot.replicas()) {
            if (replica.isReady()) {
                readyByComponentAndNode
                        .computeIfAbsent(replica.component(), c -> new TreeMap<>())
                        .computeIfAbsent(replica.node(), n -> new ArrayList<>())
                        .add(replica.pod());
            }
        }
        List<Route> capped = new ArrayList<>(target.size());
        Set<String> overloaded = new TreeSet<>();
        for (Route route : target) {
            Route old = before.get(route.caller() + "\u0000" + route.callee());
            if (old == null) {
                capped.add(route);
                continue;
            }
            Map<String, NodeRoute> oldFrom = new HashMap<>();
            for (NodeRoute entry : old.from()) {
                oldFrom.put(entry.fromNode(), entry);
            }
            Map<String, List<String>> ready = readyByComponentAndNode.getOrDefault(route.callee(), Map.of());
            List<NodeRoute> from = new ArrayList<>(route.from().size());
            boolean changed = false;
            for (NodeRoute entry : route.from()) {
                NodeRoute was = oldFrom.get(entry.fromNode());
                NodeRoute next = was == null ? entry : cap(route, entry, was, ready, maxMove, notes);
                changed |= next != entry;
                from.add(next);
            }
            String overload = changed ? overload(route, from, shares) : null;
            if (overload != null) {
                String edge = edge(route.caller(), route.callee());
                overloaded.add(edge);
                if (overloadedBefore == null || overloadedBefore.contains(edge)) {
                    notes.add(overload + ": the plan is applied uncapped");
                    capped.add(route);
                    continue;
                }
                notes.add(overload + ": capped all the same this round, the first it reads so (the plan is applied"
                        + " if the next round reads so too)");
            }
            capped.add(
                    changed
                            ? new Route(
                                    route.caller(),
                                    route.callee(),
                                    route.entryPoint(),
                                    route.requestsPerSecond(),
                                    from,
                                    route.prunedLinks(),
                                    route.meanDelayMillis(),
                                    route.explain())
                            : route);
        }
        return new Capped(capped, overloaded);
    }

    /**
     * Where the capped entries {@code from} load some callee node beyond both its capacity for this
     * edge and the plan's load on it, in words; {@code null} where they do not.
     */
    private static String overload(Route route, List<NodeRoute> from, List<ComponentShares> shares) {
        ComponentShares callee = null;
        for (ComponentShares c : shares) {
            if (c.component().equals(route.callee())) {
                callee = c;
            }
        }
        if (callee == null || callee.demandRequestsPerSecond() == null || callee.capacityRequestsPerSecond() == null) {
            return null;
        }
        double edgePart = route.requestsPerSecond() / callee.demandRequestsPerSecond();
        Map<String, Double> capacity = new TreeMap<>();
        for (GroupShare group : callee.groups()) {
            if (group.capacityRequestsPerSecond() != null) {
                capacity.merge(group.node(), group.capacityRequestsPerSecond() * edgePart, Double::sum);
            }
        }
        Map<String, Double> planned = loads(route.from());
        Map<String, Double> cappedLoad = loads(from);
        for (Map.Entry<String, Double> node : cappedLoad.entrySet()) {
            double allowed =
                    Math.max(capacity.getOrDefault(node.getKey(), 0.0), planned.getOrDefault(node.getKey(), 0.0));
            if (node.getValue() > allowed * (1 + 1e-9) + 1e-12) {
                return String.format(
                        Locale.ROOT,
                        "%s -> %s: the share cap would plan %.4g req/s on %s, more than"
                                + " its capacity for these calls (%.4g) and the plan's %.4g",
                        route.caller(),
                        route.callee(),
                        node.getValue(),
                        node.getKey(),
                        capacity.getOrDefault(node.getKey(), 0.0),
                        planned.getOrDefault(node.getKey(), 0.0));
            }
        }
        return null;
    }

    /** Callee node → requests/s the entries send it. */
    private static Map<String, Double> loads(List<NodeRoute> entries) {
        Map<String, Double> load = new TreeMap<>();
        for (NodeRoute entry : entries) {
            entry.toNodes()
                    .forEach((node, fraction) ->
                            load.merge(node, entry.supplyRequestsPerSecond() * fraction, Double::sum));
        }
        return load;
    }

    private static NodeRoute cap(
            Route route,
            NodeRoute target,
            NodeRoute previous,
            Map<String, List<String>> ready,
            double maxMove,
            List<String> notes) {
        TreeSet<String> nodes = new TreeSet<>(target.toNodes().keySet());
        nodes.addAll(previous.toNodes().keySet());
        int n = nodes.size();
        String[] name = nodes.toArray(String[]::new);
        double[] t = new double[n];
        double[] lo = new double[n];
        double[] hi = new double[n];
        double sumHi = 0;
        boolean binds = false;
        for (int i = 0; i < n; i++) {
            t[i] = target.toNodes().getOrDefault(name[i], 0.0);
            double p = previous.toNodes().getOrDefault(name[i], 0.0);
            boolean alive = !ready.getOrDefault(name[i], List.of()).isEmpty();
            lo[i] = alive ? Math.max(0, p - maxMove) : 0;
            hi[i] = alive ? Math.min(1, p + maxMove) : 0;
            sumHi += hi[i];
            binds |= t[i] < lo[i] || t[i] > hi[i];
        }
        if (!binds) {
            return target;
        }
        String edge = route.caller() + " -> " + route.callee() + " from " + target.fromNode();
        if (sumHi < 1) {
            // Calls that went to nodes without a ready replica must go somewhere now: widen the cap
            // on the live nodes just enough (the smallest extra δ with Σ min(1, p + cap + δ) = 1).
            double gone = 0;
            for (int i = 0; i < n; i++) {
                if (hi[i] == 0) {
                    gone += previous.toNodes().getOrDefault(name[i], 0.0);
                }
            }
            double lowDelta = 0;
            double highDelta = 1;
            for (int step = 0; step < BISECTION_STEPS; step++) {
                double mid = (lowDelta + highDelta) / 2;
                if (upperSum(previous, name, hi, maxMove + mid) < 1) {
                    lowDelta = mid;
                } else {
                    highDelta = mid;
                }
            }
            double widened = maxMove + highDelta;
            for (int i = 0; i < n; i++) {
                if (hi[i] > 0) {
                    hi[i] = Math.min(1, previous.toNodes().getOrDefault(name[i], 0.0) + widened);
                }
            }
            notes.add(String.format(
                    Locale.ROOT,
                    "%s: %.3f of the calls went to nodes without a ready replica now;"
                            + " the share cap widens to %.3f for this entry",
                    edge,
                    gone,
                    widened));
        }
        double low = -1.5;
        double high = 1.5;
        for (int step = 0; step < BISECTION_STEPS; step++) {
            double mid = (low + high) / 2;
            if (sum(t, lo, hi, mid) < 1) {
                low = mid;
            } else {
                high = mid;
            }
        }
        double[] x = new double[n];
        double total = 0;
        for (int i = 0; i < n; i++) {
            x[i] = clamp(t[i] + high, lo[i], hi[i]);
            total += x[i];
        }
        Map<String, Double> toNodes = new TreeMap<>();
        Map<String, Double> toReplicas = new TreeMap<>();
        StringBuilder moved = new StringBuilder();
        for (int i = 0; i < n; i++) {
            double fraction = x[i] / total; // total is 1 to within 2^-60; make it exact
            if (fraction <= 0) {
                continue;
            }
            toNodes.put(name[i], fraction);
            List<String> pods = ready.get(name[i]);
            for (String pod : pods) {
                toReplicas.put(pod, fraction / pods.size());
            }
            if (Math.abs(fraction - t[i]) > 1e-9) {
                moved.append(String.format(Locale.ROOT, " %s %.3f (plan %.3f)", name[i], fraction, t[i]));
            }
        }
        notes.add(edge + ": share moves capped at " + Numbers.written(maxMove) + ":" + moved);
        return new NodeRoute(target.fromNode(), target.supplyRequestsPerSecond(), toNodes, toReplicas);
    }

    /** Σ over live nodes (hi &gt; 0) of min(1, previous + allowance). */
    private static double upperSum(NodeRoute previous, String[] name, double[] hi, double allowance) {
        double sum = 0;
        for (int i = 0; i < name.length; i++) {
            if (hi[i] > 0) {
                sum += Math.min(1, previous.toNodes().getOrDefault(name[i], 0.0) + allowance);
            }
        }
        return sum;
    }

    private static double sum(double[] t, double[] lo, double[] hi, double shift) {
        double sum = 0;
        for (int i = 0; i < t.length; i++) {
            sum += clamp(t[i] + shift, lo[i], hi[i]);
        }
        return sum;
    }

    private static double clamp(double value, double lo, double hi) {
        return Math.max(lo, Math.min(hi, value));
    }
}
