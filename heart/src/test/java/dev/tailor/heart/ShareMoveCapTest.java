package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ShareMoveCapTest {

    private static final List<String> NODES = List.of("n1", "n2", "n3", "n4");

    /** Callee "b" with {@code podsPerNode[i]} ready pods on node i (0 = none ready there). */
    private static Snapshot snapshot(int... podsPerNode) {
        List<Replica> replicas = new ArrayList<>();
        for (int i = 0; i < podsPerNode.length; i++) {
            for (int k = 0; k < podsPerNode[i]; k++) {
                replicas.add(new Replica("b-" + NODES.get(i) + "-" + k, "b", NODES.get(i), true, 0.1, null, 1.0));
            }
            replicas.add(new Replica("b-" + NODES.get(i) + "-gone", "b", NODES.get(i), false, null, null, null));
        }
        return new Snapshot(30.0, List.of(), replicas, List.of(), List.of());
    }

    private static Route route(Map<String, Double> toNodes) {
        return new Route(
                "a", "b", false, 10, List.of(new NodeRoute("n1", 10, toNodes, Map.of())), List.of(), 0, List.of());
    }

    private static Map<String, Double> capped(
            Map<String, Double> target,
            Map<String, Double> previous,
            double cap,
            Snapshot snapshot,
            List<String> notes) {
        return ShareMoveCap.apply(List.of(route(target)), List.of(route(previous)), snapshot, cap, notes)
                .get(0)
                .from()
                .get(0)
                .toNodes();
    }

    @Test
    void bigMove_stopsAtTheCap_byOneShift() {
        List<String> notes = new ArrayList<>();
        // Plan: everything from n1 to n2. Cap 0.2: n1 may only drop to 0.5 and n2 only rise to 0.5.
        Map<String, Double> x = capped(Map.of("n2", 1.0), Map.of("n1", 0.7, "n2", 0.3), 0.2, snapshot(1, 1), notes);
        assertThat(x.get("n1")).isCloseTo(0.5, offset(1e-12));
        assertThat(x.get("n2")).isCloseTo(0.5, offset(1e-12));
        assertThat(notes).singleElement().asString().contains("a -> b from n1").contains("n1 0.500 (plan 0.000)");
    }

    @Test
    void shiftSpreadsOverTheFreeEntries() {
        // Plan moves n1 from 0.6 to 0; capped at 0.3 it keeps 0.3, and the 0.4 that n2 and n3 may take
        // beyond the plan is cut evenly: plan 0.5 / 0.5 → 0.35 / 0.35.
        Map<String, Double> x = capped(
                Map.of("n2", 0.5, "n3", 0.5),
                Map.of("n1", 0.6, "n2", 0.2, "n3", 0.2),
                0.3,
                snapshot(1, 1, 1),
                new ArrayList<>());
        assertThat(x.get("n1")).isCloseTo(0.3, offset(1e-12));
        assertThat(x.get("n2")).isCloseTo(0.35, offset(1e-12));
        assertThat(x.get("n3")).isCloseTo(0.35, offset(1e-12));
    }

    @Test
    void smallMove_isTheNewPlanUnchanged() {
        Route target = route(Map.of("n1", 0.55, "n2", 0.45));
        List<Route> out = ShareMoveCap.apply(
                List.of(target), List.of(route(Map.of("n1", 0.6, "n2", 0.4))), snapshot(1, 1), 0.1, new ArrayList<>());
        assertThat(out.get(0)).isSameAs(target);
    }

    @Test
    void nodeWithoutReadyReplica_dropsToZero_despiteTheCap() {
        // n1's pod is gone: its 0.1 must go at once, more than the cap of 0.05. The plan gives it to
        // n3, which may only rise by 0.05; n2 takes the rest.
        List<String> notes = new ArrayList<>();
        Map<String, Double> x = capped(
                Map.of("n2", 0.5, "n3", 0.5), Map.of("n1", 0.1, "n2", 0.5, "n3", 0.4), 0.05, snapshot(0, 1, 1), notes);
        assertThat(x).doesNotContainKey("n1");
        assertThat(x.get("n2")).isCloseTo(0.55, offset(1e-12));
        assertThat(x.get("n3")).isCloseTo(0.45, offset(1e-12));
        // Most calls went to a node that is gone: they must move, so the cap widens just enough.
        Map<String, Double> y = capped(Map.of("n2", 1.0), Map.of("n1", 0.9, "n2", 0.1), 0.2, snapshot(0, 1), notes);
        assertThat(y).containsExactly(Map.entry("n2", 1.0));
        assertThat(notes)
                .anySatisfy(n -> assertThat(n)
                        .contains("0.900 of the calls went to nodes without a ready" + " replica")
                        .contains("widens to 0.900"));
        // Only part of it: n1's 0.2 does not fit under the cap of 0.05 on n2 and n3 (0.45 + 0.45); widened
        // to 0.1 it does, exactly, so both take 0.5 although the plan wants everything on n3.
        notes.clear();
        Map<String, Double> z =
                capped(Map.of("n3", 1.0), Map.of("n1", 0.2, "n2", 0.4, "n3", 0.4), 0.05, snapshot(0, 1, 1), notes);
        assertThat(z.get("n2")).isCloseTo(0.5, offset(1e-9));
        assertThat(z.get("n3")).isCloseTo(0.5, offset(1e-9));
        assertThat(notes)
                .anySatisfy(n -> assertThat(n).contains("0.200 of the calls").contains("widens to 0.100"));
    }

    @Test
    void replicaFractions_splitEachNodeEquallyAmongItsReadyPods() {
        Route out = ShareMoveCap.apply(
                        List.of(route(Map.of("n2", 1.0))),
                        List.of(route(Map.of("n1", 1.0))),
                        snapshot(1, 2),
                        0.25,
                        new ArrayList<>())
                .get(0);
        Map<String, Double> pods = out.from().get(0).toReplicas();
        assertThat(pods).containsOnlyKeys("b-n1-0", "b-n2-0", "b-n2-1");
        assertThat(pods.get("b-n1-0")).isCloseTo(0.75, offset(1e-12));
        assertThat(pods.get("b-n2-0")).isCloseTo(0.125, offset(1e-12));
        assertThat(pods.get("b-n2-1")).isCloseTo(0.125, offset(1e-12));
    }

    @Test
    void noPreviousPlan_orNoCap_changesNothing() {
        List<Route> target = List.of(route(Map.of("n2", 1.0)));
        assertThat(ShareMoveCap.apply(target, List.of(), snapshot(1, 1), 0.1, new ArrayList<>()))
                .isSameAs(target);
        assertThat(ShareMoveCap.apply(
                        target, List.of(route(Map.of("n1", 1.0))), snapshot(1, 1), 1.0, new ArrayList<>()))
                .isSameAs(target);
        assertThatThrownBy(() -> ShareMoveCap.apply(target, List.of(), snapshot(1, 1), 0, new ArrayList<>()))
                .hasMessage("maxShareMovePerRound: 0 (expected: a number in (0, 1])");
        assertThatThrownBy(() -> ShareMoveCap.apply(target, List.of(), snapshot(1, 1), Double.NaN, new ArrayList<>()))
                .hasMessage("maxShareMovePerRound: NaN (expected: a number in (0, 1])");
    }

    @Test
    void note_writesTheCapAsAUserWouldNotInJavasExponentForm() {
        List<String> notes = new ArrayList<>();
        capped(Map.of("n2", 1.0), Map.of("n1", 0.7, "n2", 0.3), 1e-4, snapshot(1, 1), notes);
        assertThat(notes).singleElement().asString().contains("share moves capped at 0.0001:");
    }

    @Test
    void property_sumsToOne_staysWithinTheCap_neverRoutesToAGoneNode() {
        qt().withExamples(3000)
                .forAll(
                        lists().of(doubles().between(0, 1)).ofSize(4),
                        lists().of(doubles().between(0, 1)).ofSize(4),
                        lists().of(integers().between(0, 2)).ofSize(4),
                        doubles().between(0.01, 1))
                .checkAssert((t, p, pods, cap) -> {
                    int[] podsPerNode =
                            pods.stream().mapToInt(Integer::intValue).toArray();
                    if (podsPerNode[0] == 0 && podsPerNode[1] == 0 && podsPerNode[2] == 0 && podsPerNode[3] == 0) {
                        podsPerNode[0] = 1;
                    }
                    Map<String, Double> target = normalised(t, podsPerNode);
                    Map<String, Double> previous = normalised(p, new int[] {1, 1, 1, 1});
                    List<String> notes = new ArrayList<>();
                    Map<String, Double> x = capped(target, previous, cap, snapshot(podsPerNode), notes);
                    assertThat(x.values().stream()
                                    .mapToDouble(Double::doubleValue)
                                    .sum())
                            .isCloseTo(1, offset(1e-9));
                    double allowed = cap;
                    for (String note : notes) {
                        java.util.regex.Matcher m = java.util.regex.Pattern.compile("widens to ([0-9.]+)")
                                .matcher(note);
                        if (m.find()) {
                            allowed = Double.parseDouble(m.group(1)) + 1e-3; // printed to 3 decimals
                            // Widened only when the live nodes could not take the calls under the cap.
                            double underCap = 0;
                            for (int i = 0; i < 4; i++) {
                                if (podsPerNode[i] > 0) {
                                    underCap += Math.min(1, previous.getOrDefault(NODES.get(i), 0.0) + cap);
                                }
                            }
                            assertThat(underCap).isLessThan(1);
                        }
                    }
                    for (int i = 0; i < 4; i++) {
                        double xi = x.getOrDefault(NODES.get(i), 0.0);
                        assertThat(xi).isBetween(0.0, 1.0);
                        if (podsPerNode[i] == 0) {
                            assertThat(xi).as("node without a ready pod").isZero();
                        } else {
                            assertThat(Math.abs(xi - previous.getOrDefault(NODES.get(i), 0.0)))
                                    .isLessThanOrEqualTo(allowed + 1e-9);
                        }
                    }
                });
    }

    /** Weights on the nodes with pods, made to sum to 1 (equal when all are zero). */
    private static Map<String, Double> normalised(List<Double> weights, int[] podsPerNode) {
        double sum = 0;
        for (int i = 0; i < 4; i++) {
            sum += podsPerNode[i] > 0 ? weights.get(i) : 0;
        }
        int alive = 0;
        for (int pods : podsPerNode) {
            alive += pods > 0 ? 1 : 0;
        }
        Map<String, Double> map = new TreeMap<>();
        for (int i = 0; i < 4; i++) {
            if (podsPerNode[i] > 0) {
                double w = sum > 0 ? weights.get(i) / sum : 1.0 / alive;
                if (w > 0) {
                    map.put(NODES.get(i), w);
                }
            }
        }
        return map;
    }
}
