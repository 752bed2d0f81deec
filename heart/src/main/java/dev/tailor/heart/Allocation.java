package dev.tailor.heart;

import java.util.List;

/**
 * One round's plan: ATPM's shares per component and NTAM's routes per call edge, with the notes a
 * user needs to trust it ({@code tailor heart plan --explain}).
 *
 * @param shares one entry per component, sorted by name
 * @param routes one entry per call edge, in the snapshot's order
 * @param notes  what the planner assumed: filled-in delays, ignored inputs
 */
public record Allocation(List<ComponentShares> shares, List<Route> routes, List<String> notes) {

    public Allocation {
        shares = List.copyOf(shares);
        routes = List.copyOf(routes);
        notes = List.copyOf(notes);
    }
}
