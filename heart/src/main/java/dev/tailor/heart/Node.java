package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A Kubernetes node, the unit HEART routes between.
 *
 * @param name     node name, unique in the snapshot
 * @param locality Istio locality of the node, {@code region/zone/subzone}; HEART's node-level
 *                 routing needs one subzone per node (docs/design.md#actuation). Absent means the
 *                 node name is used as locality.
 * @param cpuCores allocatable CPU of the node in cores; optional, informational
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Node(String name, String locality, Double cpuCores) {

    /** The locality Istio sees for this node: {@link #locality()} or, when absent, the name. */
    public String effectiveLocality() {
        return locality == null || locality.isBlank() ? name : locality;
    }
}
