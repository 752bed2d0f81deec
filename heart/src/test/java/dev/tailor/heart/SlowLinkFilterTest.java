package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.tailor.heart.flow.RandomTransports;
import dev.tailor.heart.flow.RandomTransports.Transport;
import dev.tailor.heart.flow.TransportNetwork;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The slow-link filter's shortcuts against the plain procedure they replace. The batch mode finds
 * the fewest slow links to reinstate (fastest first) with a bound from single nodes, galloping, and
 * feasibility proofs on a few links; the plain procedure reinstates them one at a time and asks
 * OR-tools' max-flow over every active link after each. Both must prune exactly the same links.
 *
 * <p>Seeds are random per run and printed on failure; replay one with {@code -DQT_SEED=<seed>}.
 */
class SlowLinkFilterTest {

    private static final int EXAMPLES = 400;
    /** Always the batch mode, whatever the size of the slow cluster. */
    private static final HeartConfig BATCH =
            HeartConfig.DEFAULTS.toBuilder().batchRemovalMaxFraction(1.0).build();

    @Test
    void filterSlowLinks_batch_prunesWhatReinstatingOneAtATimeWouldPrune() {
        // docs/design.md#slow-link-filter: remove the slow cluster, then reinstate its links fastest first until
        // max-flow meets all demand. The pruned set is the slow links after the shortest feasible prefix.
        // NTAM starts from every link active (so the full set is feasible), as here.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(1_000_000, false, 0))
                .checkAssert(t -> {
                    List<String> explain = new ArrayList<>();
                    TreeSet<Integer> pruned = new TreeSet<>();
                    try (TransportNetwork network = t.network()) {
                        for (Link link : Ntam.filterSlowLinks(network, byIndex(t), BATCH, explain)) {
                            pruned.add(Integer.parseInt(link.from()));
                        }
                    }
                    assertThat(pruned).as("explain: %s", explain).isEqualTo(referencePruned(t));
                });
    }

    @Test
    void nodeShortfall_batchRemoved_boundsTheAnswerAndTheUnmetDemandFromBelow() {
        // The bound lets the filter skip max-flow below it, and the unmet figure goes into --explain
        // as "at least": both must never exceed the truth.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(1_000_000, false, 0))
                .checkAssert(t -> {
                    try (TransportNetwork network = t.network()) {
                        Split split = split(network);
                        if (split == null) {
                            return;
                        }
                        for (int k = split.from; k < split.order.length; k++) {
                            network.setActive(split.order[k], false);
                        }
                        TransportNetwork.NodeShortfall shortfall =
                                network.nodeShortfall(split.order, split.from, split.order.length);
                        long carried = network.maxFlow(null);
                        assertThat(shortfall.unmetAtLeast()).isLessThanOrEqualTo(t.total() - carried);
                        assertThat(shortfall.fewest() > 0)
                                .as("a short node proves the batch infeasible")
                                .isEqualTo(shortfall.shortNodes() > 0);
                        if (shortfall.fewest() > 0) {
                            assertThat(carried).isLessThan(t.total());
                        }
                        int answer = shortestFeasiblePrefix(t, split);
                        assertThat(shortfall.fewest()).isLessThanOrEqualTo(answer);
                    }
                });
    }

    @Test
    void demandCarried_randomActiveLinks_isTheMaxFlowValue() {
        // Feasibility is proved on a few links when possible; whatever the route, the value must be
        // the max-flow over every active link.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(1_000_000, false, 2))
                .checkAssert(t -> {
                    long full;
                    try (TransportNetwork reference = t.network()) {
                        full = reference.maxFlow(null);
                    }
                    try (TransportNetwork network = t.network()) {
                        assertThat(network.demandCarried()).isEqualTo(full);
                    }
                });
    }

    /** Each link described by its index (as {@link Link#from()}), so pruned sets compare as indices. */
    private static IntFunction<Link> byIndex(Transport t) {
        return l -> new Link(Integer.toString(l), "to", "to", t.costMicros()[l] / 1000.0, false);
    }

    /** The links in delay order and where the slow cluster starts, or null when nothing is slow. */
    private record Split(int[] order, int from) {}

    private static Split split(TransportNetwork network) {
        int[] order = network.linksByCost();
        double[] sorted = new double[order.length];
        for (int k = 0; k < order.length; k++) {
            sorted[k] = network.costMicros(order[k]) / 1000.0;
        }
        int from = TwoMeans.split(sorted);
        return from < 0 ? null : new Split(order, from);
    }

    /**
     * The plain procedure: remove every slow link, then switch them back on one at a time, fastest
     * first, running max-flow over all active links after each, until all demand is met.
     */
    private static TreeSet<Integer> referencePruned(Transport t) {
        TreeSet<Integer> pruned = new TreeSet<>();
        try (TransportNetwork network = t.network()) {
            Split split = split(network);
            if (split == null) {
                return pruned;
            }
            int reinstated = shortestFeasiblePrefix(t, split);
            for (int k = split.from + reinstated; k < split.order.length; k++) {
                pruned.add(split.order[k]);
            }
        }
        return pruned;
    }

    /** How many slow links, fastest first, must be back on for max-flow to meet all demand. */
    private static int shortestFeasiblePrefix(Transport t, Split split) {
        try (TransportNetwork network = t.network()) {
            for (int k = split.from; k < split.order.length; k++) {
                network.setActive(split.order[k], false);
            }
            for (int p = 0; ; p++) {
                if (network.maxFlow(null) == t.total()) {
                    return p;
                }
                network.setActive(split.order[split.from + p], true);
            }
        }
    }
}
