package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Properties of whole HEART rounds on random valid clusters ({@link RandomClusters}): what docs/design.md
 * and the contracts of {@link Atpm} and {@link Ntam} promise for every input, not just the
 * hand-computed ones of {@link AtpmTest} and {@link NtamTest}.
 *
 * <p>Seeds are random per run and printed on failure; replay one with {@code -DQT_SEED=<seed>}.
 */
class HeartPropertiesTest {

    private static final int EXAMPLES = 300;
    private static final HeartConfig CONFIG =
            HeartConfig.DEFAULTS.toBuilder().parallel(false).build();
    private static final Heart HEART = new Heart(CONFIG);

    @Test
    void plan_randomValidCluster_everyCallerNodesFractionsSumToOneAndAreNonNegative() {
        // Istio's distribute needs per caller node a distribution; fractions that do not sum to 1
        // would send too much or too little traffic somewhere.
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = HEART.plan(snapshot, AtpmState.EMPTY);
            for (Route route : plan.allocation().routes()) {
                for (NodeRoute from : route.from()) {
                    String at = route.caller() + " -> " + route.callee() + " from " + from.fromNode();
                    assertThat(from.toNodes().values())
                            .as(at)
                            .allSatisfy(f -> assertThat(f).isNotNegative());
                    assertThat(from.toReplicas().values())
                            .as(at)
                            .allSatisfy(f -> assertThat(f).isNotNegative());
                    assertThat(sum(from.toNodes())).as(at + ", toNodes").isCloseTo(1, within(1e-9));
                    assertThat(sum(from.toReplicas())).as(at + ", toReplicas").isCloseTo(1, within(1e-9));
                }
            }
        });
    }

    @Test
    void plan_randomValidCluster_replicaFractionsSplitEachNodesFractionEquallyAmongItsReadyReplicas() {
        // docs/design.md#ntam: a group's flow is split equally among its replicas; an unready pod gets nothing.
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = HEART.plan(snapshot, AtpmState.EMPTY);
            Map<String, Replica> pods = new HashMap<>();
            snapshot.replicas().forEach(r -> pods.put(r.pod(), r));
            for (Route route : plan.allocation().routes()) {
                for (NodeRoute from : route.from()) {
                    Map<String, List<Double>> byNode = new TreeMap<>();
                    from.toReplicas().forEach((pod, f) -> {
                        assertThat(pods.get(pod).isReady())
                                .as("%s is ready", pod)
                                .isTrue();
                        assertThat(pods.get(pod).component()).isEqualTo(route.callee());
                        byNode.computeIfAbsent(pods.get(pod).node(), n -> new ArrayList<>())
                                .add(f);
                    });
                    assertThat(byNode.keySet()).isEqualTo(from.toNodes().keySet());
                    byNode.forEach((node, fractions) -> {
                        double nodeFraction = from.toNodes().get(node);
                        assertThat(fractions)
                                .allSatisfy(
                                        f -> assertThat(f).isCloseTo(nodeFraction / fractions.size(), within(1e-12)));
                    });
                }
            }
        });
    }

    @Test
    void plan_randomValidCluster_everyCalleeNodeReceivesItsAtpmShareOfTheCalls() {
        // NTAM's core promise: the traffic arriving at each callee node is exactly ATPM's share of
        // the edge's rate (to the 1/flowUnits quantisation), whatever the slow-link filter removed.
        // Queue-aware routing lets each group's queueing cost set what it takes instead, so this holds
        // without it (with or without the entropic transport).
        Heart onShares = new Heart(CONFIG.toBuilder().queueAwareRouting(false).build());
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = onShares.plan(snapshot, AtpmState.EMPTY);
            for (Route route : plan.allocation().routes()) {
                if (route.from().isEmpty()) {
                    assertThat(route.requestsPerSecond())
                            .as("an edge with calls has caller nodes")
                            .isZero();
                    continue;
                }
                Map<String, Double> expected = new TreeMap<>();
                for (GroupShare g : sharesOf(plan, route.callee()).groups()) {
                    expected.merge(g.node(), route.requestsPerSecond() * g.share(), Double::sum);
                }
                Map<String, Double> actual = new TreeMap<>();
                for (NodeRoute from : route.from()) {
                    from.toNodes()
                            .forEach((node, f) -> actual.merge(node, from.supplyRequestsPerSecond() * f, Double::sum));
                }
                // Supplies and demands are each rounded to whole units (largest remainder, at least one
                // unit per positive value): a few units per source and sink at most.
                int endpoints = route.from().size() + expected.size();
                double tolerance = route.requestsPerSecond() * 4.0 * endpoints / CONFIG.flowUnits() + 1e-9;
                assertThat(actual.keySet()).isSubsetOf(expected.keySet());
                expected.forEach((node, rps) -> assertThat(actual.getOrDefault(node, 0.0))
                        .as("%s -> %s: calls per second arriving at %s", route.caller(), route.callee(), node)
                        .isCloseTo(rps, within(tolerance)));
                // And what leaves is what the caller sends: the edge's whole rate.
                double supplied = route.from().stream()
                        .mapToDouble(NodeRoute::supplyRequestsPerSecond)
                        .sum();
                assertThat(supplied).isCloseTo(route.requestsPerSecond(), within(1e-9 * route.requestsPerSecond()));
            }
        });
    }

    @Test
    void plan_randomValidCluster_callerNodesAreExactlyTheNodesWithSupply() {
        // A caller node that sends calls but has no entry would get no routing rule (Istio's default
        // then applies); one without calls would get a meaningless rule.
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = HEART.plan(snapshot, AtpmState.EMPTY);
            for (int i = 0; i < snapshot.calls().size(); i++) {
                Call call = snapshot.calls().get(i);
                Route route = plan.allocation().routes().get(i);
                TreeSet<String> supplying = new TreeSet<>();
                if (route.entryPoint()) {
                    if (call.byCallerNode() != null) {
                        call.byCallerNode().forEach((node, rate) -> {
                            if (rate > 0) {
                                supplying.add(node);
                            }
                        });
                    }
                    assertThat(route.from()).extracting(NodeRoute::fromNode).containsExactlyElementsOf(supplying);
                } else {
                    // Every node of a caller group with a share sends calls and needs a rule; a group the
                    // square-root rule gives nothing may still be planned load by queue-aware routing,
                    // so its node may have one too, and no other node may.
                    TreeSet<String> groupNodes = new TreeSet<>();
                    sharesOf(plan, call.caller()).groups().forEach(g -> {
                        groupNodes.add(g.node());
                        if (g.share() > 0) {
                            supplying.add(g.node());
                        }
                    });
                    assertThat(route.from())
                            .extracting(NodeRoute::fromNode)
                            .containsAll(supplying)
                            .isSubsetOf(groupNodes)
                            .doesNotHaveDuplicates();
                }
            }
        });
    }

    @Test
    void plan_randomValidCluster_noPrunedLinkCarriesFlow() {
        // The filter's point is that a pruned (slow) link is not used; a plan that still sends over
        // one would defeat it while --explain claims otherwise.
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = HEART.plan(snapshot, AtpmState.EMPTY);
            for (Route route : plan.allocation().routes()) {
                for (Link link : route.prunedLinks()) {
                    for (NodeRoute from : route.from()) {
                        if (from.fromNode().equals(link.from())) {
                            assertThat(from.toNodes())
                                    .as("flow over pruned %s", link)
                                    .doesNotContainKey(link.to());
                        }
                    }
                }
            }
        });
    }

    @Test
    void plan_randomValidClusterAndFilterSettings_neverThrows_andFilterOffPrunesNothing() {
        // Pruning is checked by max-flow at every step, so it can never leave a call edge without a
        // feasible assignment: planning valid input must not throw, whichever removal path is taken
        // (batch fraction 0: always one by one; 1: always a batch) and whatever the grouping.
        qt().withExamples(EXAMPLES)
                .forAll(
                        RandomClusters.snapshots(),
                        integers().between(0, 2),
                        integers().between(0, 1))
                .checkAssert((snapshot, batch, grouping) -> {
                    HeartConfig on = CONFIG.toBuilder()
                            .batchRemovalMaxFraction(new double[] {0, 0.3, 1}[batch])
                            .grouping(HeartConfig.Grouping.values()[grouping])
                            .build();
                    Plan filtered = new Heart(on).plan(snapshot, AtpmState.EMPTY);
                    assertThat(filtered.allocation().routes()).hasSameSizeAs(snapshot.calls());
                    Plan unfiltered =
                            new Heart(on.toBuilder().slowLinkFilter(false).build()).plan(snapshot, AtpmState.EMPTY);
                    assertThat(unfiltered.allocation().routes())
                            .allSatisfy(r -> assertThat(r.prunedLinks()).isEmpty());
                });
    }

    @Test
    void plan_filterOff_meanDelayIsTheRoutesOwnAndNoWorseThanAProportionalSplit() {
        // Min-cost flow must minimise: sending every caller node's calls in proportion to the callee
        // shares is one feasible plan, so the optimum can only be faster. And the mean delay --explain
        // reports must be the delay of the fractions actually planned.
        // Entropic transport with fixed demands keeps this: the proportional split is the most spread
        // coupling, and the entropic plan trades cost only against spread. Queue-aware routing moves
        // the demands themselves, so it is checked without it.
        Heart unfiltered = new Heart(CONFIG.toBuilder()
                .slowLinkFilter(false)
                .queueAwareRouting(false)
                .build());
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan plan = unfiltered.plan(snapshot, AtpmState.EMPTY);
            Cluster cluster = new Cluster(snapshot, CONFIG);
            for (Route route : plan.allocation().routes()) {
                double rate = route.requestsPerSecond();
                if (rate == 0 || route.from().isEmpty()) {
                    continue; // no rates to weigh the caller nodes by
                }
                double planned = 0;
                double proportional = 0;
                double slowest = 0;
                for (NodeRoute from : route.from()) {
                    int i = cluster.indexOf(from.fromNode());
                    double weight = from.supplyRequestsPerSecond() / rate;
                    for (Map.Entry<String, Double> to : from.toNodes().entrySet()) {
                        planned += weight * to.getValue() * cluster.delayMillis(i, cluster.indexOf(to.getKey()));
                    }
                    for (GroupShare g : sharesOf(plan, route.callee()).groups()) {
                        double delay = cluster.delayMillis(i, cluster.indexOf(g.node()));
                        proportional += weight * g.share() * delay;
                        slowest = Math.max(slowest, delay);
                    }
                }
                // Quantisation: a few units of 1/flowUnits per endpoint, each at most the slowest delay,
                // plus the solver's 0.5 µs rounding of each delay.
                int endpoints = route.from().size()
                        + sharesOf(plan, route.callee()).groups().size();
                double tolerance = slowest * 4.0 * endpoints / CONFIG.flowUnits() + 0.0005 + 1e-9;
                String edge = route.caller() + " -> " + route.callee();
                assertThat(route.meanDelayMillis())
                        .as("%s: reported vs planned mean delay", edge)
                        .isCloseTo(planned, within(tolerance));
                assertThat(route.meanDelayMillis())
                        .as("%s: min-cost vs proportional split", edge)
                        .isLessThanOrEqualTo(proportional + tolerance);
            }
        });
    }

    @Test
    void atpm_randomValidCluster_sharesPerComponentAreNonNegativeAndSumToOne() {
        // Shares are fractions of a component's traffic: any other sum loses or invents traffic.
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan first = HEART.plan(snapshot, AtpmState.EMPTY);
            Plan second = HEART.plan(snapshot, first.state()); // with history: the EWMA path
            for (Plan plan : List.of(first, second)) {
                TreeSet<String> components = new TreeSet<>();
                snapshot.replicas().forEach(r -> components.add(r.component()));
                assertThat(plan.allocation().shares())
                        .extracting(ComponentShares::component)
                        .containsExactlyElementsOf(components);
                for (ComponentShares c : plan.allocation().shares()) {
                    assertThat(c.groups())
                            .as(c.component())
                            .isNotEmpty()
                            .allSatisfy(g -> assertThat(g.share()).isBetween(0.0, 1.0));
                    assertThat(c.groups().stream()
                                    .mapToDouble(GroupShare::share)
                                    .sum())
                            .as(c.component())
                            .isCloseTo(1, within(1e-9));
                }
            }
        });
    }

    @Test
    void atpm_moreCpuForTheSameRequests_neverRaisesThatGroupsShare() {
        // A group that needs more CPU per request has less capacity: giving it more traffic would
        // overload exactly the group that is struggling (Atpm's contract, first round).
        qt().withExamples(EXAMPLES)
                .forAll(
                        RandomClusters.snapshots(),
                        integers().between(0, 99),
                        doubles().between(1.0001, 10))
                .checkAssert((snapshot, pick, factor) -> {
                    List<Integer> measured = measuredReplicas(snapshot);
                    if (measured.isEmpty()) {
                        return; // nothing to raise: no replica's CPU enters a load
                    }
                    int i = measured.get(pick % measured.size());
                    Replica before = snapshot.replicas().get(i);
                    Snapshot raised = withReplica(
                            snapshot,
                            i,
                            new Replica(
                                    before.pod(),
                                    before.component(),
                                    before.node(),
                                    before.ready(),
                                    before.cpuCores() * factor,
                                    before.cpuLimitCores(),
                                    before.requestsPerSecond()));
                    double shareBefore = shareOf(HEART.plan(snapshot, AtpmState.EMPTY), before);
                    double shareAfter = shareOf(HEART.plan(raised, AtpmState.EMPTY), before);
                    assertThat(shareAfter).isLessThanOrEqualTo(shareBefore + 1e-12);
                });
    }

    @Test
    void atpm_moreCpuForTheSameRequests_neverRaisesThatGroupsShare_withAdaptiveHistory() {
        // Third round, after a round of drift, with the adaptive weight: the contract must hold with
        // history too (it did not with the same-round tracking signal; see AtpmTest).
        qt().withExamples(EXAMPLES)
                .forAll(
                        RandomClusters.snapshots(),
                        integers().between(0, 99),
                        doubles().between(1.0001, 10),
                        doubles().between(0.5, 1.5))
                .checkAssert((snapshot, pick, factor, drift) -> {
                    Heart fixed = HEART;
                    AtpmState history = fixed.plan(
                                    scaledCpu(snapshot, drift),
                                    fixed.plan(snapshot, AtpmState.EMPTY).state())
                            .state();
                    List<Integer> measured = measuredReplicas(snapshot);
                    if (measured.isEmpty()) {
                        return;
                    }
                    int i = measured.get(pick % measured.size());
                    Replica before = snapshot.replicas().get(i);
                    Snapshot raised = withReplica(
                            snapshot,
                            i,
                            new Replica(
                                    before.pod(),
                                    before.component(),
                                    before.node(),
                                    before.ready(),
                                    before.cpuCores() * factor,
                                    before.cpuLimitCores(),
                                    before.requestsPerSecond()));
                    double shareBefore = shareOf(fixed.plan(snapshot, history), before);
                    double shareAfter = shareOf(fixed.plan(raised, history), before);
                    assertThat(shareAfter).isLessThanOrEqualTo(shareBefore + 1e-12);
                });
    }

    @Test
    void plan_parallelOnAndOff_identicalPlansOverTwoRounds() {
        // HeartConfig promises results do not depend on parallelism; a difference would make the
        // controller's output depend on thread timing.
        Heart parallel = new Heart(CONFIG.toBuilder().parallel(true).build());
        qt().withExamples(EXAMPLES).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            Plan sequential1 = HEART.plan(snapshot, AtpmState.EMPTY);
            Plan parallel1 = parallel.plan(snapshot, AtpmState.EMPTY);
            assertThat(parallel1).isEqualTo(sequential1);
            assertThat(parallel.plan(snapshot, parallel1.state())).isEqualTo(HEART.plan(snapshot, sequential1.state()));
        });
    }

    private static ComponentShares sharesOf(Plan plan, String component) {
        return plan.allocation().shares().stream()
                .filter(c -> c.component().equals(component))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no shares for " + component));
    }

    /** The share of the (node) group that {@code replica} belongs to. */
    private static double shareOf(Plan plan, Replica replica) {
        return sharesOf(plan, replica.component()).groups().stream()
                .filter(g -> g.group().equals(replica.node()))
                .findFirst()
                .orElseThrow()
                .share();
    }

    private static Snapshot withReplica(Snapshot s, int index, Replica replica) {
        List<Replica> replicas = new ArrayList<>(s.replicas());
        replicas.set(index, replica);
        return new Snapshot(s.windowSeconds(), s.nodes(), replicas, s.calls(), s.delays());
    }

    private static double sum(Map<String, Double> fractions) {
        return fractions.values().stream().mapToDouble(Double::doubleValue).sum();
    }

    /** The snapshot with every replica's CPU multiplied by {@code factor}: a round of drift. */
    private static Snapshot scaledCpu(Snapshot snapshot, double factor) {
        List<Replica> replicas = new ArrayList<>();
        for (Replica r : snapshot.replicas()) {
            replicas.add(new Replica(
                    r.pod(),
                    r.component(),
                    r.node(),
                    r.ready(),
                    r.cpuCores() == null ? null : r.cpuCores() * factor,
                    r.cpuLimitCores(),
                    r.requestsPerSecond()));
        }
        return new Snapshot(snapshot.windowSeconds(), snapshot.nodes(), replicas, snapshot.calls(), snapshot.delays());
    }

    /** Indices of the ready replicas whose CPU enters a load (both metrics present and positive). */
    private static List<Integer> measuredReplicas(Snapshot snapshot) {
        List<Integer> measured = new ArrayList<>();
        for (int i = 0; i < snapshot.replicas().size(); i++) {
            Replica r = snapshot.replicas().get(i);
            if (r.isReady()
                    && r.cpuCores() != null
                    && r.cpuCores() > 0
                    && r.requestsPerSecond() != null
                    && r.requestsPerSecond() > 0) {
                measured.add(i);
            }
        }
        return measured;
    }
}
