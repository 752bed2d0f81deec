package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MaxFlow} (Dinic's) by hand and against OR-tools' push-relabel, the solver it replaced, on
 * random graphs: the same maximum value, and a flow that respects every capacity and conserves
 * flow at every other vertex.
 */
class MaxFlowTest {

    @Test
    void solve_handComputed_diamondWithACrossArc() {
        // s=0, t=3: 0->1 (3), 0->2 (2), 1->2 (1), 1->3 (2), 2->3 (3). The cut {0} has 5; the flow:
        // 2 over 0-1-3, 1 over 0-1-2-3, 2 over 0-2-3 = 5.
        MaxFlow flow = new MaxFlow(4);
        int[] arc = {
            flow.addArc(0, 1, 3), flow.addArc(0, 2, 2), flow.addArc(1, 2, 1), flow.addArc(1, 3, 2), flow.addArc(2, 3, 3)
        };
        assertThat(flow.solve(0, 3)).isEqualTo(5);
        assertThat(flow.flow(arc[0]) + flow.flow(arc[1])).isEqualTo(5);
        assertThat(flow.flow(arc[3]) + flow.flow(arc[4])).isEqualTo(5);
        // A capacity set to 0 takes the arc out of the next solve, which starts from zero flow.
        flow.setCapacity(arc[1], 0);
        assertThat(flow.solve(0, 3)).isEqualTo(3);
        assertThat(flow.flow(arc[1])).isZero();
    }

    @Test
    void badArguments_nameTheField() {
        assertThatThrownBy(() -> new MaxFlow(1)).hasMessageContaining("vertices: 1");
        MaxFlow flow = new MaxFlow(2);
        assertThatThrownBy(() -> flow.addArc(0, 2, 1)).hasMessageContaining("arc 0 -> 2");
        assertThatThrownBy(() -> flow.addArc(0, 1, -1)).hasMessageContaining("capacity: -1");
        assertThatThrownBy(() -> flow.solve(1, 1)).hasMessageContaining("source and sink");
    }

    @Test
    void solve_randomGraphs_sameValueAsOrTools_andAValidFlow() {
        // Property, fixed seed: up to 12 vertices, 40 arcs (parallel arcs, self-loops and arcs into
        // the source included), capacities 0..20; some arcs switched off after a first solve.
        qt().withFixedSeed(20261202L)
                .withExamples(500)
                .forAll(
                        integers().between(2, 12),
                        lists().of(integers().between(0, Integer.MAX_VALUE)).ofSizeBetween(0, 160))
                .checkAssert((vertices, draws) -> check(vertices, draws));
    }

    private static void check(int vertices, List<Integer> draws) {
        int arcs = draws.size() / 4;
        int[] from = new int[arcs];
        int[] to = new int[arcs];
        int[] capacity = new int[arcs];
        MaxFlow ours = new MaxFlow(vertices);
        FlowNetwork oracle = new FlowNetwork(vertices);
        for (int a = 0; a < arcs; a++) {
            from[a] = draws.get(4 * a) % vertices;
            to[a] = draws.get(4 * a + 1) % vertices;
            capacity[a] = draws.get(4 * a + 2) % 21;
            ours.addArc(from[a], to[a], capacity[a]);
            oracle.addArc(from[a], to[a], 0, capacity[a], 0);
        }
        for (int round = 0; round < 2; round++) {
            boolean[] active = new boolean[arcs];
            for (int a = 0; a < arcs; a++) {
                active[a] = round == 0 || draws.get(4 * a + 3) % 3 != 0;
                ours.setCapacity(a, active[a] ? capacity[a] : 0);
            }
            long value = ours.solve(0, vertices - 1);
            double expected = oracle.maxFlow(0, vertices - 1, active, new double[arcs]);
            assertThat((double) value).isEqualTo(expected);
            long[] net = new long[vertices];
            for (int a = 0; a < arcs; a++) {
                assertThat(ours.flow(a)).isBetween(0L, active[a] ? (long) capacity[a] : 0L);
                net[from[a]] -= ours.flow(a);
                net[to[a]] += ours.flow(a);
            }
            for (int v = 1; v < vertices - 1; v++) {
                assertThat(net[v]).as("net flow into vertex %d", v).isZero();
            }
            assertThat(net[vertices - 1]).isEqualTo(value);
        }
    }
}
