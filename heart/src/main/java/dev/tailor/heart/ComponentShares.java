package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * ATPM's result for one component: the share of its traffic each replica group should receive, and
 * whether its groups can serve what it is asked to.
 *
 * @param component                  component name
 * @param groups                     one entry per group with at least one ready replica, sorted by
 *                                   group id; shares sum to 1
 * @param demandRequestsPerSecond    Σ of the component's incoming call rates this round, requests/s;
 *                                   {@code null} when no call reaches it
 * @param capacityRequestsPerSecond  Σ of its groups' capacities, requests/s (at 100 % of their CPU);
 *                                   {@code null} under equal split (no load known)
 * @param shortfallRequestsPerSecond demand − capacity when the demand is larger, else {@code null}: the
 *                                   requests/s its ready groups cannot serve; shares then stay
 *                                   proportional to capacity, so every group is overloaded alike
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ComponentShares(
        String component,
        List<GroupShare> groups,
        Double demandRequestsPerSecond,
        Double capacityRequestsPerSecond,
        Double shortfallRequestsPerSecond) {

    public ComponentShares {
        groups = List.copyOf(groups);
    }

    /** Shares without demand and capacity totals. */
    public ComponentShares(String component, List<GroupShare> groups) {
        this(component, groups, null, null, null);
    }
}
