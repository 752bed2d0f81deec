package dev.tailor.heart;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One round's input to HEART: the cluster as it was over the last window. JSON-serialisable;
 * the format with units and an example is in {@code docs/snapshot-format.md}.
 *
 * <p>A snapshot is plain data and may be invalid; {@link SnapshotValidator#validate} names every
 * problem, and {@link Heart#plan} validates before it plans.
 *
 * @param windowSeconds length of the measurement window in seconds (HEART's round, 30 s by default)
 * @param nodes         the nodes; names unique
 * @param replicas      every pod of every routed component
 * @param calls         call edges, one per (caller, callee)
 * @param delays        one-way link delays between nodes
 */
public record Snapshot(
        Double windowSeconds, List<Node> nodes, List<Replica> replicas, List<Call> calls, List<LinkDelay> delays) {

    public Snapshot {
        nodes = frozen(nodes);
        replicas = frozen(replicas);
        calls = frozen(calls);
        delays = frozen(delays);
    }

    // Not List.copyOf: a null element is the validator's to report, with its index.
    private static <T> List<T> frozen(List<T> list) {
        return list == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(list));
    }
}
