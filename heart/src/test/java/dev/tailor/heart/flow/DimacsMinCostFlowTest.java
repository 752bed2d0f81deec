package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.tailor.testkit.SharedData;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link FlowNetwork} against public DIMACS min-cost-flow instances with known optima
 * ({@code shared/data/flow_benchmarks}, PROVENANCE.md §4): the solver NTAM trusts must reach the
 * optimum with a flow that really is one, and its max-flow must see that every instance is feasible.
 *
 * <p>With OR-tools the whole suite, netgen_8_13a (8,192 nodes, 65,536 arcs) included, runs in about
 * 2 s on the 2-core build machine (JGraphT, which we used first, needed 4–19 s for netgen_8_13a
 * alone), so it stays in the default run. circulation_100_0_10 has no supplies at all, so its max-flow check
 * is 0 = 0; its min-cost check (negative costs) is the meaningful one.
 */
class DimacsMinCostFlowTest {

    /** Optimal costs as PROVENANCE.md §4 lists them (re-verified there with an LP solver). */
    static Stream<Arguments> instances() {
        return Stream.of(
                arguments("small/grid_5x5", 27_000L),
                arguments("small/assignment_50x50", 50L),
                arguments("small/transport_40x30", 42_667L),
                arguments("small/circulation_100_0_10", -352_582L),
                arguments("netgen/netgen_8_08a", 142_274_536L),
                arguments("netgen/netgen_8_10a", 369_269_289L),
                arguments("netgen/netgen_8_13a", 1_184_953_451L));
    }

    /** The instances that come with a {@code .sol} file (netgen_8_10a has none). */
    static Stream<Arguments> instancesWithSolution() {
        return instances().filter(a -> !a.get()[0].equals("netgen/netgen_8_10a"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("instances")
    void minCostFlow_dimacsInstance_reachesTheKnownOptimumWithAFeasibleFlow(
            String instance, long optimum, TestReporter reporter) {
        // NTAM's plan is only as good as this solver: a wrong optimum, or a "flow" that breaks a bound
        // or loses units at a node, would silently misroute traffic.
        solveAndCheck(instance, optimum, reporter);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("instances")
    void maxFlow_superSourceToSuperSink_carriesTheTotalSupply(String instance, long optimum, TestReporter reporter) {
        // NTAM prunes a link only if a max-flow still carries all demand; on a known-feasible network
        // the max-flow must say so, and its flow must respect every capacity and conserve at each node.
        maxFlowAndCheck(instance, reporter);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("instancesWithSolution")
    void solutionFile_statedOptimum_matchesTheTableAndItsFlowIsFeasibleAtThatCost(String instance, long optimum) {
        // Checks the reader and the data apart from any solver: the .sol's own flow must be a
        // feasible flow of the .min whose cost is the s line, and the s line must be the table's value.
        Dimacs.Instance problem = Dimacs.readInstance(SharedData.require("flow_benchmarks/" + instance + ".min"));
        Dimacs.Solution solution = Dimacs.readSolution(SharedData.require("flow_benchmarks/" + instance + ".sol"));
        long[] flow = problem.arcFlows(solution);

        assertThat(solution.cost()).as("s line of %s.sol", instance).isEqualTo(optimum);
        assertThat(violations(problem, flow))
                .as("bound and conservation violations of the .sol flow")
                .isEmpty();
        assertThat(cost(problem, flow)).as("Σ flow × cost of the .sol flow").isEqualTo(optimum);
    }

    private static void solveAndCheck(String instance, long optimum, TestReporter reporter) {
        Dimacs.Instance problem = Dimacs.readInstance(SharedData.require("flow_benchmarks/" + instance + ".min"));
        FlowNetwork network = network(problem, 0);

        long start = System.nanoTime();
        FlowNetwork.MinCostFlow result = network.minCostFlow(null);
        long nanos = System.nanoTime() - start;
        reporter.publishEntry("minCostFlowMillis", String.format(Locale.ROOT, "%.1f", nanos / 1e6));

        long[] flow = integral(result.flow());
        assertThat(result.cost())
                .as("cost reported by FlowNetwork for %s", instance)
                .isEqualTo((double) optimum);
        assertThat(violations(problem, flow))
                .as("bound and conservation violations")
                .isEmpty();
        assertThat(cost(problem, flow))
                .as("Σ flow × cost recomputed from the flow")
                .isEqualTo(optimum);
    }

    private static void maxFlowAndCheck(String instance, TestReporter reporter) {
        Dimacs.Instance problem = Dimacs.readInstance(SharedData.require("flow_benchmarks/" + instance + ".min"));
        for (int a = 0; a < problem.arcs(); a++) {
            // Max-flow ignores lower bounds, so with a positive one this check would prove nothing.
            assertThat(problem.lower()[a])
                    .as("lower bound of arc %d (not modelled by this check)", a + 1)
                    .isZero();
        }
        int n = problem.nodes();
        int superSource = n;
        int superSink = n + 1;
        FlowNetwork network = network(problem, 2);
        // One super arc per node with a supply or demand; superNode[k] is the node of arc arcs() + k.
        int[] superNode = new int[n];
        int supers = 0;
        for (int v = 0; v < n; v++) {
            long s = problem.supply()[v];
            if (s > 0) {
                network.addArc(superSource, v, 0, toInt(problem, "supply of node " + (v + 1), s), 0);
                superNode[supers++] = v;
            } else if (s < 0) {
                network.addArc(v, superSink, 0, toInt(problem, "demand of node " + (v + 1), -s), 0);
                superNode[supers++] = v;
            }
        }
        double[] arcFlow = new double[network.arcs()];

        long start = System.nanoTime();
        double value = network.maxFlow(superSource, superSink, null, arcFlow);
        long nanos = System.nanoTime() - start;
        reporter.publishEntry("maxFlowMillis", String.format(Locale.ROOT, "%.1f", nanos / 1e6));

        assertThat(value).as("max-flow value of %s", instance).isEqualTo((double) problem.totalSupply());
        // The flow itself: within capacity on every arc, and conserved at every original node.
        long[] flow = integral(arcFlow);
        long[] net = new long[n];
        List<String> problems = new ArrayList<>();
        for (int a = 0; a < network.arcs(); a++) {
            boolean own = a < problem.arcs();
            long cap = own ? problem.upper()[a] : Math.abs(problem.supply()[superNode[a - problem.arcs()]]);
            if (flow[a] < 0 || flow[a] > cap) {
                problems.add("arc " + (a + 1) + ": flow " + flow[a] + " outside [0, " + cap + "]");
            }
            if (own) {
                net[problem.from()[a]] += flow[a];
                net[problem.to()[a]] -= flow[a];
            } else {
                int v = superNode[a - problem.arcs()];
                net[v] += problem.supply()[v] > 0 ? -flow[a] : flow[a];
            }
        }
        for (int v = 0; v < n; v++) {
            if (net[v] != 0) {
                problems.add("node " + (v + 1) + ": out - in = " + net[v] + " (expected: 0)");
            }
        }
        assertThat(problems)
                .as("capacity and conservation violations of the max-flow")
                .isEmpty();
    }

    /**
     * The instance as a {@link FlowNetwork} with {@code extraVertices} more vertices after its own.
     * Values FlowNetwork cannot take are reported, not clipped: its capacities and supplies are
     * {@code int}.
     */
    static FlowNetwork network(Dimacs.Instance problem, int extraVertices) {
        FlowNetwork network = new FlowNetwork(problem.nodes() + extraVertices);
        long supplied = 0;
        for (int v = 0; v < problem.nodes(); v++) {
            network.setSupply(v, toInt(problem, "supply of node " + (v + 1), problem.supply()[v]));
            supplied += Math.abs(problem.supply()[v]);
        }
        if (supplied > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    problem.name() + ": Σ|supply| = " + supplied + " overflows JGraphT's int supply sum");
        }
        for (int a = 0; a < problem.arcs(); a++) {
            String arc = "arc " + (a + 1) + " (" + (problem.from()[a] + 1) + " -> " + (problem.to()[a] + 1) + ")";
            int lower = toInt(problem, arc + " LOW", problem.lower()[a]);
            int upper = toInt(problem, arc + " CAP", problem.upper()[a]);
            network.addArc(problem.from()[a], problem.to()[a], lower, upper, problem.cost()[a]);
        }
        return network;
    }

    private static int toInt(Dimacs.Instance problem, String what, long value) {
        if (Math.abs(value) >= Integer.MAX_VALUE) {
            throw new IllegalArgumentException(problem.name() + ": " + what + " = " + value + " is at or beyond"
                    + " the int range of FlowNetwork's capacities and supplies (" + Integer.MAX_VALUE + ")");
        }
        return (int) value;
    }

    /** Flows as longs; a fractional flow is a violation in itself (all data here is integral). */
    private static long[] integral(double[] flow) {
        long[] result = new long[flow.length];
        for (int a = 0; a < flow.length; a++) {
            assertThat(flow[a]).as("flow on arc %d is integral", a + 1).isEqualTo(Math.rint(flow[a]));
            result[a] = (long) flow[a];
        }
        return result;
    }

    /** Every broken bound and every node where out − in ≠ supply; at most 20, then a count. */
    static List<String> violations(Dimacs.Instance problem, long[] flow) {
        List<String> problems = new ArrayList<>();
        long[] net = new long[problem.nodes()];
        int broken = 0;
        for (int a = 0; a < problem.arcs(); a++) {
            if (flow[a] < problem.lower()[a] || flow[a] > problem.upper()[a]) {
                broken++;
                if (problems.size() < 20) {
                    problems.add("arc " + (a + 1) + " (" + (problem.from()[a] + 1) + " -> " + (problem.to()[a] + 1)
                            + "): flow " + flow[a] + " outside [" + problem.lower()[a] + ", " + problem.upper()[a]
                            + "]");
                }
            }
            net[problem.from()[a]] += flow[a];
            net[problem.to()[a]] -= flow[a];
        }
        for (int v = 0; v < problem.nodes(); v++) {
            if (net[v] != problem.supply()[v]) {
                broken++;
                if (problems.size() < 20) {
                    problems.add("node " + (v + 1) + ": out - in = " + net[v] + " (expected: supply "
                            + problem.supply()[v] + ")");
                }
            }
        }
        if (broken > problems.size()) {
            problems.add("... " + (broken - problems.size()) + " more");
        }
        return problems;
    }

    /** Σ flow × cost in exact integer arithmetic. */
    static long cost(Dimacs.Instance problem, long[] flow) {
        long total = 0;
        for (int a = 0; a < problem.arcs(); a++) {
            total = Math.addExact(total, Math.multiplyExact(flow[a], problem.cost()[a]));
        }
        return total;
    }
}
