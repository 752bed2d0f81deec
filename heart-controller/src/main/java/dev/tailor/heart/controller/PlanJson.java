package dev.tailor.heart.controller;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.tailor.heart.Allocation;
import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.GroupShare;
import dev.tailor.heart.Link;
import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Route;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code tailor heart plan --format json}: the plan as one JSON document, for scripts and for the
 * controller's plan-file sink. Fractions are in [0, 1]; rates in requests per second; delays in ms.
 */
public final class PlanJson {

    private PlanJson() {}

    /** The document. {@code explain} adds each group's load details and the filter's steps. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Document(
            long round,
            String snapshot,
            Map<String, Map<String, Double>> shares,
            List<RouteEntry> routes,
            List<PrunedLink> prunedLinks,
            List<String> notes,
            Map<String, List<GroupShare>> groups,
            List<EdgeExplanation> explain) {}

    /** Where one caller node's calls of one edge go. */
    record RouteEntry(
            String caller,
            String callee,
            boolean entryPoint,
            String fromNode,
            double requestsPerSecond,
            Map<String, Double> to,
            Map<String, Double> replicas) {}

    /** A link the slow-link filter removed. */
    record PrunedLink(
            String caller, String callee, String from, String to, String group, double delayMillis, boolean assumed) {}

    /** The filter's reasoning for one edge. */
    record EdgeExplanation(
            String caller, String callee, double requestsPerSecond, double meanDelayMillis, List<String> steps) {}

    public static Document of(Plan plan, String source, boolean explain) {
        Allocation allocation = plan.allocation();
        Map<String, Map<String, Double>> shares = new LinkedHashMap<>();
        Map<String, List<GroupShare>> groups = explain ? new LinkedHashMap<>() : null;
        for (ComponentShares component : allocation.shares()) {
            Map<String, Double> byNode = new TreeMap<>();
            for (GroupShare group : component.groups()) {
                byNode.merge(group.node(), group.share(), Double::sum);
            }
            shares.put(component.component(), byNode);
            if (explain) {
                groups.put(component.component(), component.groups());
            }
        }
        List<RouteEntry> routes = new ArrayList<>();
        List<PrunedLink> pruned = new ArrayList<>();
        List<EdgeExplanation> explanations = explain ? new ArrayList<>() : null;
        for (Route route : allocation.routes()) {
            for (NodeRoute from : route.from()) {
                routes.add(new RouteEntry(
                        route.caller(),
                        route.callee(),
                        route.entryPoint(),
                        from.fromNode(),
                        from.supplyRequestsPerSecond(),
                        new TreeMap<>(from.toNodes()),
                        new TreeMap<>(from.toReplicas())));
            }
            for (Link link : route.prunedLinks()) {
                pruned.add(new PrunedLink(
                        route.caller(),
                        route.callee(),
                        link.from(),
                        link.to(),
                        link.group(),
                        link.delayMillis(),
                        link.assumed()));
            }
            if (explain) {
                explanations.add(new EdgeExplanation(
                        route.caller(),
                        route.callee(),
                        route.requestsPerSecond(),
                        route.meanDelayMillis(),
                        route.explain()));
            }
        }
        return new Document(
                plan.state().rounds(), source, shares, routes, pruned, allocation.notes(), groups, explanations);
    }
}
