package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A call edge no call reached this round (its callee got none at all): nothing says how its calls should
 * be split, so every caller node splits them as the callee's ATPM shares, not as the min-cost flow's corner
 * solution that sends each node's calls to itself; the share cap then has nothing to walk back when the
 * calls return. The paper's variant still plans such an edge like any other.
 */
class ZeroTrafficEdgeTest {

    private static final double MAX_MOVE = ShareMoveCap.DEFAULT_MAX_MOVE;

    /**
     * Three nodes, {@code a} and {@code b} with a pod on each (w3 twice w1's CPU per request), the ingress
     * calling {@code a} evenly and {@code a} calling {@code b} at {@code rate}: without calls {@code b}'s pods
     * use no CPU and serve nothing.
     */
    private static Snapshot round(double rate) {
        return TestSnapshots.builder()
                .nodes("w1", "w2", "w3")
                .uniformDelays(0.05, 0.5)
                .replica("a-1", "a", "w1", 0.20, 50.0)
                .replica("a-2", "a", "w2", 0.25, 50.0)
                .replica("a-3", "a", "w3", 0.50, 50.0)
                .replica("b-1", "b", "w1", 0.004 * rate / 3, rate / 3)
                .replica("b-2", "b", "w2", 0.005 * rate / 3, rate / 3)
                .replica("b-3", "b", "w3", 0.010 * rate / 3, rate / 3)
                .entry("ingress", "a", 150, "w1", 50, "w2", 50, "w3", 50)
                .call("a", "b", rate)
                .build();
    }

    /** The rounds at these rates into {@code b}, each capped from the last as the controller does. */
    private static List<Round> rounds(HeartConfig config, double... rates) {
        Heart heart = new Heart(config);
        AtpmState state = AtpmState.EMPTY;
        List<Route> applied = List.of();
        List<Round> rounds = new ArrayList<>();
        for (double rate : rates) {
            Snapshot snapshot = round(rate);
            Plan plan = heart.plan(snapshot, state);
            List<Route> capped = ShareMoveCap.apply(
                    plan.allocation().routes(),
                    applied,
                    snapshot,
                    plan.allocation().shares(),
                    MAX_MOVE,
                    new ArrayList<>());
            rounds.add(new Round(plan, edge(plan.allocation().routes()), edge(capped)));
            state = plan.state();
            applied = capped;
        }
        return rounds;
    }

    private record Round(Plan plan, Route target, Route capped) {
        Map<String, Double> shares() {
            Map<String, Double> shares = new TreeMap<>();
            plan.allocation().shares().stream()
                    .filter(s -> s.component().equals("b"))
                    .findFirst()
                    .orElseThrow()
                    .groups()
                    .forEach(g -> shares.put(g.node(), g.share()));
            return shares;
        }
    }

    private static Route edge(List<Route> routes) {
        return routes.stream().filter(r -> r.callee().equals("b")).findFirst().orElseThrow();
    }

    /** The largest move of any fraction between two routes of the edge. */
    private static double largestMove(Route from, Route to) {
        double largest = 0;
        for (int i = 0; i < to.from().size(); i++) {
            NodeRoute a = from.from().get(i);
            NodeRoute b = to.from().get(i);
            for (String node : List.of("w1", "w2", "w3")) {
                largest = Math.max(
                        largest,
                        Math.abs(a.toNodes().getOrDefault(node, 0.0)
                                - b.toNodes().getOrDefault(node, 0.0)));
            }
        }
        return largest;
    }

    @Test
    void edgeWithoutCalls_everyCallerNodeSplitsAsTheCalleesShares_notToItself() {
        Round idle = rounds(HeartConfig.DEFAULTS, 150, 0).get(1);

        assertThat(idle.target().from()).hasSize(3);
        for (NodeRoute node : idle.target().from()) {
            assertThat(node.toNodes()).as(node.fromNode()).containsOnlyKeys("w1", "w2", "w3");
            idle.shares()
                    .forEach((to, share) -> assertThat(node.toNodes().get(to))
                            .as(node.fromNode() + " -> " + to)
                            .isCloseTo(share, within(1.0 / HeartConfig.DEFAULTS.flowUnits())));
        }
        assertThat(idle.target().explain().get(0)).startsWith("no calls into b this round: every caller node's");
    }

    @Test
    void callsReturnAfterRoundsWithout_theCapReachesThePlanInOneRound() {
        List<Round> rounds = rounds(HeartConfig.DEFAULTS, 150, 0, 0, 0, 0, 0, 150);
        Round busy = rounds.get(0);
        Round back = rounds.get(rounds.size() - 1);

        // The same metrics plan the same split; within the cap of the idle rounds' split, so applied at once.
        assertThat(back.target().from()).isEqualTo(busy.target().from());
        assertThat(largestMove(rounds.get(rounds.size() - 2).capped(), back.target()))
                .isLessThanOrEqualTo(MAX_MOVE);
        assertThat(back.capped().from()).isEqualTo(back.target().from());
    }

    @Test
    void paperVariant_edgeWithoutCalls_isStillTheMinCostFlow() {
        Round idle = rounds(HeartConfig.PAPER, 150, 0).get(1);

        // a's and b's shares are alike on every node, so the cheapest flow keeps every node's calls local.
        for (NodeRoute node : idle.target().from()) {
            assertThat(node.toNodes()).as(node.fromNode()).containsOnlyKeys(node.fromNode());
        }
    }
}
