package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One pod of a component, with what it did during the snapshot's window.
 *
 * <p>{@code null} metric fields mean "no data" (a scrape gap, NaN or ±Inf at the source), which
 * is different from zero: ATPM then keeps the group's previous estimate (docs/design.md#atpm).
 *
 * @param pod               pod name, unique in the snapshot
 * @param component         the workload (service) this pod belongs to
 * @param node              name of the node the pod runs on; must be one of the snapshot's nodes
 * @param ready             Kubernetes readiness; an unready pod is never a routing target.
 *                          Absent means ready.
 * @param cpuCores          mean CPU used over the window, in cores; {@code null} = no data
 * @param cpuLimitCores     the container's CPU limit in cores; optional. When every replica of a
 *                          group has one, the group's capacity is Σ limit ÷ load, else it is the
 *                          replica count ÷ load.
 * @param requestsPerSecond requests served over the window, per second; {@code null} = no data
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Replica(
        String pod,
        String component,
        String node,
        Boolean ready,
        Double cpuCores,
        Double cpuLimitCores,
        Double requestsPerSecond) {

    /** Readiness with the default applied: absent means ready. */
    public boolean isReady() {
        return ready == null || ready;
    }
}
