package dev.tailor.heart;

import java.util.List;

/**
 * ATPM's result for one component: the share of its traffic each replica group should receive.
 *
 * @param component component name
 * @param groups    one entry per group with at least one ready replica, sorted by group id;
 *                  shares sum to 1
 */
public record ComponentShares(String component, List<GroupShare> groups) {

    public ComponentShares {
        groups = List.copyOf(groups);
    }
}
