package dev.tailor.bench;

import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Route;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks a plan against NTAM's documented contract, so that a benchmark never reports the speed of a
 * planner that returns nonsense: for every call edge and caller node, the fractions over callee nodes
 * and over callee replicas each lie in [0, 1] and sum to 1.
 */
public final class PlanContract {

    /** Tolerance on a sum of fractions; NTAM promises exactness to 1/flowUnits (1e-6 by default). */
    static final double SUM_TOLERANCE = 1e-6;

    private PlanContract() {}

    /**
     * Every violation of the contract in {@code plan}, one line each, naming the edge and caller node;
     * empty when the plan keeps the contract.
     */
    public static List<String> violations(Plan plan) {
        List<String> problems = new ArrayList<>();
        for (Route route : plan.allocation().routes()) {
            for (NodeRoute from : route.from()) {
                String at = route.caller() + " -> " + route.callee() + " from " + from.fromNode();
                check(problems, at + ", toNodes", from.toNodes());
                check(problems, at + ", toReplicas", from.toReplicas());
            }
        }
        return problems;
    }

    private static void check(List<String> problems, String at, Map<String, Double> fractions) {
        double sum = 0;
        // Sorted: the plan's maps are unordered, and the first violation reported must not vary by JVM.
        for (Map.Entry<String, Double> e : new TreeMap<>(fractions).entrySet()) {
            double f = e.getValue();
            if (!(f >= -SUM_TOLERANCE && f <= 1 + SUM_TOLERANCE)) {
                problems.add(
                        String.format(Locale.ROOT, "%s: fraction to %s is %.6g (expected: 0 .. 1)", at, e.getKey(), f));
            }
            sum += f;
        }
        if (!(Math.abs(sum - 1) <= SUM_TOLERANCE)) {
            problems.add(String.format(Locale.ROOT, "%s: fractions sum to %.6g (expected: 1)", at, sum));
        }
    }
}
