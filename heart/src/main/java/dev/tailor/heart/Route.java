package dev.tailor.heart;

import java.util.List;

/**
 * NTAM's result for one call edge caller → callee: per caller node, the distribution of its calls
 * over callee nodes and replicas, and why links were pruned.
 *
 * @param caller                  calling component or entry point
 * @param callee                  called component
 * @param entryPoint              true when the caller has no replicas and its per-node split is
 *                                the measured one
 * @param requestsPerSecond       the edge's total rate
 * @param from                    one entry per caller node with calls, sorted by node name
 * @param prunedLinks             links removed by the slow-link filter; none carries flow
 * @param meanDelayMillis         flow-weighted mean link delay of the plan, in milliseconds
 * @param explain                 the slow-link filter's steps in words: the 2-means split, each
 *                                removal and its max-flow check
 */
public record Route(
        String caller,
        String callee,
        boolean entryPoint,
        double requestsPerSecond,
        List<NodeRoute> from,
        List<Link> prunedLinks,
        double meanDelayMillis,
        List<String> explain) {

    public Route {
        from = List.copyOf(from);
        prunedLinks = List.copyOf(prunedLinks);
        explain = List.copyOf(explain);
    }
}
