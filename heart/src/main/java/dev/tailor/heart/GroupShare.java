package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * ATPM's result for one replica group: its load estimate, capacity and share of the component's
 * traffic.
 *
 * @param group                           group id: the node name (or pod name under per-replica
 *                                        grouping)
 * @param node                            node the group's replicas run on
 * @param pods                            the group's ready replicas, sorted
 * @param observedLoadCpuSecondsPerRequest this round's measurement Σ cpu ÷ Σ requests over the
 *                                        replicas that served requests; {@code null} = no data
 * @param loadCpuSecondsPerRequest        the load used for the share (EWMA, carried, or the mean of
 *                                        valid groups); {@code null} under equal split
 * @param alpha                           EWMA weight used in this round's update; {@code null} when
 *                                        there was no update (first measurement, carried, mean, equal)
 * @param capacityRequestsPerSecond       replicas (or Σ CPU limit in cores) ÷ load; {@code null}
 *                                        under equal split
 * @param share                           fraction of the component's traffic, in [0, 1]; shares of a
 *                                        component sum to 1
 * @param basis                           where the load came from
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record GroupShare(
        String group,
        String node,
        List<String> pods,
        Double observedLoadCpuSecondsPerRequest,
        Double loadCpuSecondsPerRequest,
        Double alpha,
        Double capacityRequestsPerSecond,
        double share,
        Basis basis) {

    public GroupShare {
        pods = List.copyOf(pods);
    }

    /** Where a group's load estimate came from this round (docs/design.md#atpm, missing data). */
    public enum Basis {
        /** First measurement of a new group: the estimate is the measurement. */
        FIRST_MEASUREMENT,
        /** EWMA updated with this round's measurement. */
        MEASURED,
        /** No data this round: the previous EWMA is kept. */
        CARRIED,
        /** New group without data: the mean load of the component's groups that have one. */
        MEAN_OF_VALID,
        /** No group of the component has a load: traffic is split equally per replica. */
        EQUAL_SPLIT
    }
}
