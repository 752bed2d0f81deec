package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * A call edge: the rate at which a caller sends requests to a callee component.
 *
 * <p>A caller with no replicas in the snapshot (an ingress gateway, outside clients) is an
 * <em>entry point</em>: Tailor does not route its traffic, so where its requests come from is the
 * measured {@code byCallerNode}, which is then required. For every other caller the supply per node
 * is the caller's own ATPM share this round, because the plan being applied moves the caller's
 * traffic too (docs/design.md#ntam); {@code byCallerNode} is then informational only.
 *
 * @param caller            calling component, or an entry point's name
 * @param callee            called component; must have replicas in the snapshot
 * @param requestsPerSecond total calls per second over the window; required
 * @param byCallerNode      optional, calls per second by the caller's node (node name → rate);
 *                          required for entry points. Only the proportions are used.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Call(String caller, String callee, Double requestsPerSecond, Map<String, Double> byCallerNode) {

    /** The rate with absence read as 0; only for a validated call, where it is never absent. */
    public double rate() {
        return requestsPerSecond == null ? 0 : requestsPerSecond;
    }
}
