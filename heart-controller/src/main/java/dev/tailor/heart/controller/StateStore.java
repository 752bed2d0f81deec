package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.Numbers;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Route;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Keeps HEART's ATPM state (the EWMA estimates) and the routes last applied in a ConfigMap, so a
 * restarted or failed-over controller continues where the last one stopped instead of starting every
 * group over, and its share cap continues from the rules in the cluster. Key {@value #KEY} holds the
 * state as JSON (the format of {@code tailor heart plan --state}), key {@value #ROUTES_KEY} the
 * routes' fractions; both are written in one update, so they always belong to the same round.
 */
public final class StateStore {

    /** The ConfigMap key. */
    public static final String KEY = "state.json";
    /** The ConfigMap key of the last applied routes. */
    public static final String ROUTES_KEY = "routes.json";

    /**
     * One applied route as saved: per caller node, the fraction of its calls to each callee node.
     *
     * @param caller    calling component or entry point
     * @param callee    called component
     * @param fractions caller node → callee node → fraction in [0, 1]
     */
    public record SavedRoute(String caller, String callee, Map<String, Map<String, Double>> fractions) {}

    private static final ObjectMapper JSON =
            new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final KubernetesClient client;
    private final String namespace;
    private final String name;

    /** @param location {@code namespace/name} of the ConfigMap */
    public StateStore(KubernetesClient client, String location) {
        int slash = location.indexOf('/');
        this.client = client;
        this.namespace = location.substring(0, slash);
        this.name = location.substring(slash + 1);
    }

    /** {@code namespace/name} of the ConfigMap. */
    public String location() {
        return namespace + "/" + name;
    }

    /**
     * A loaded state, the routes applied with it (empty when none were saved), and what was wrong, if
     * anything.
     */
    public record Loaded(AtpmState state, List<Route> routes, String note) {

        public Loaded {
            routes = List.copyOf(routes);
        }

        /** A state without routes. */
        public Loaded(AtpmState state, String note) {
            this(state, List.of(), note);
        }
    }

    /**
     * The stored state; {@link AtpmState#EMPTY} with a note when there is none or it is unreadable
     * (a bad state costs a few rounds of convergence, never a failed controller).
     *
     * @throws KubernetesClientException when the API server cannot be read
     */
    public Loaded load() {
        ConfigMap map =
                client.configMaps().inNamespace(namespace).withName(name).get();
        if (map == null || map.getData() == null || map.getData().get(KEY) == null) {
            return new Loaded(
                    AtpmState.EMPTY,
                    "no state in ConfigMap " + namespace + "/" + name
                            + ": every group starts from its first measurement");
        }
        try {
            AtpmState state = JSON.readValue(map.getData().get(KEY), AtpmState.class);
            List<String> problems = state.problems();
            if (!problems.isEmpty()) {
                return new Loaded(
                        AtpmState.EMPTY,
                        "state in ConfigMap " + namespace + "/" + name + " is invalid (" + String.join("; ", problems)
                                + "): starting over");
            }
            String routes = map.getData().get(ROUTES_KEY);
            if (routes == null) {
                return new Loaded(
                        state,
                        List.of(),
                        "no routes in ConfigMap " + namespace + "/" + name + ": the share"
                                + " cap starts from the routes of this round");
            }
            try {
                List<SavedRoute> saved =
                        JSON.readValue(routes, new com.fasterxml.jackson.core.type.TypeReference<>() {});
                List<String> routeProblems = problems(saved);
                if (!routeProblems.isEmpty()) {
                    return new Loaded(
                            state,
                            List.of(),
                            "routes in ConfigMap " + namespace + "/" + name + " are invalid ("
                                    + String.join("; ", routeProblems) + "): the share cap starts over");
                }
                return new Loaded(state, routes(saved), null);
            } catch (JsonProcessingException e) {
                return new Loaded(
                        state,
                        List.of(),
                        "routes in ConfigMap " + namespace + "/" + name + " are not" + " readable ("
                                + e.getOriginalMessage() + "): the share cap starts over");
            }
        } catch (JsonProcessingException e) {
            return new Loaded(
                    AtpmState.EMPTY,
                    "state in ConfigMap " + namespace + "/" + name + " is not readable (" + e.getOriginalMessage()
                            + "): starting over");
        }
    }

    /**
     * Stores {@code state} without routes.
     *
     * @throws KubernetesClientException when the API server refuses the write
     */
    public void save(AtpmState state) {
        save(state, List.of());
    }

    /**
     * Stores {@code state} and the routes applied with it, in one write.
     *
     * @throws KubernetesClientException when the API server refuses the write
     */
    public void save(AtpmState state, List<Route> routes) {
        String json;
        String routesJson;
        try {
            json = JSON.writeValueAsString(state);
            routesJson = JSON.writeValueAsString(saved(routes));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise the ATPM state", e);
        }
        ConfigMap map = new ConfigMapBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .addToLabels(DestinationRules.MANAGED_BY_LABEL, DestinationRules.MANAGED_BY)
                .endMetadata()
                .addToData(KEY, json)
                .addToData(ROUTES_KEY, routesJson)
                .build();
        // The ConfigMap is ours alone: create it, or replace it whole.
        client.configMaps().inNamespace(namespace).resource(map).createOr(NonDeletingOperation::update);
    }

    private static List<SavedRoute> saved(List<Route> routes) {
        List<SavedRoute> saved = new ArrayList<>(routes.size());
        for (Route route : routes) {
            Map<String, Map<String, Double>> fractions = new TreeMap<>();
            for (NodeRoute entry : route.from()) {
                fractions.put(entry.fromNode(), new TreeMap<>(entry.toNodes()));
            }
            saved.add(new SavedRoute(route.caller(), route.callee(), fractions));
        }
        return saved;
    }

    /** Routes with what the share cap reads: the fractions (supplies and replicas are not saved). */
    private static List<Route> routes(List<SavedRoute> saved) {
        List<Route> routes = new ArrayList<>(saved.size());
        for (SavedRoute route : saved) {
            List<NodeRoute> from = new ArrayList<>();
            route.fractions().forEach((node, toNodes) -> from.add(new NodeRoute(node, 0, toNodes, Map.of())));
            routes.add(new Route(route.caller(), route.callee(), false, 0, from, List.of(), 0, List.of()));
        }
        return routes;
    }

    private static List<String> problems(List<SavedRoute> saved) {
        List<String> problems = new ArrayList<>();
        if (saved == null) {
            problems.add("null (expected: a list of routes)");
            return problems;
        }
        for (int i = 0; i < saved.size(); i++) {
            SavedRoute route = saved.get(i);
            String at = "[" + i + "]";
            if (route == null || route.caller() == null || route.callee() == null || route.fractions() == null) {
                problems.add(at + ": caller, callee or fractions missing");
                continue;
            }
            route.fractions().forEach((from, toNodes) -> {
                if (toNodes == null) {
                    problems.add(at + ".fractions." + from + ": null (expected: callee node -> fraction)");
                    return;
                }
                toNodes.forEach((to, fraction) -> {
                    if (fraction == null || !(fraction >= 0 && fraction <= 1)) {
                        problems.add(at + ".fractions." + from + "." + to + ": "
                                + (fraction == null ? "null" : Numbers.written(fraction))
                                + " (expected: a fraction in [0, 1])");
                    }
                });
            });
        }
        return problems;
    }
}
