package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.heart.AtpmState;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.util.List;

/**
 * Keeps HEART's ATPM state (the EWMA estimates) in a ConfigMap, so a restarted or failed-over
 * controller continues where the last one stopped instead of starting every group over. One key,
 * {@value #KEY}, holds the state as JSON (the format of {@code tailor heart plan --state}).
 */
public final class StateStore {

    /** The ConfigMap key. */
    public static final String KEY = "state.json";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

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

    /** A loaded state and what was wrong, if anything. */
    public record Loaded(AtpmState state, String note) {
    }

    /**
     * The stored state; {@link AtpmState#EMPTY} with a note when there is none or it is unreadable
     * (a bad state costs a few rounds of convergence, never a failed controller).
     *
     * @throws KubernetesClientException when the API server cannot be read
     */
    public Loaded load() {
        ConfigMap map = client.configMaps().inNamespace(namespace).withName(name).get();
        if (map == null || map.getData() == null || map.getData().get(KEY) == null) {
            return new Loaded(AtpmState.EMPTY, "no state in ConfigMap " + namespace + "/" + name
                    + ": every group starts from its first measurement");
        }
        try {
            AtpmState state = JSON.readValue(map.getData().get(KEY), AtpmState.class);
            List<String> problems = state.problems();
            if (!problems.isEmpty()) {
                return new Loaded(AtpmState.EMPTY, "state in ConfigMap " + namespace + "/" + name + " is invalid ("
                        + String.join("; ", problems) + "): starting over");
            }
            return new Loaded(state, null);
        } catch (JsonProcessingException e) {
            return new Loaded(AtpmState.EMPTY, "state in ConfigMap " + namespace + "/" + name + " is not readable ("
                    + e.getOriginalMessage() + "): starting over");
        }
    }

    /**
     * Stores {@code state}.
     *
     * @throws KubernetesClientException when the API server refuses the write
     */
    public void save(AtpmState state) {
        String json;
        try {
            json = JSON.writeValueAsString(state);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise the ATPM state", e);
        }
        ConfigMap map = new ConfigMapBuilder().withNewMetadata().withNamespace(namespace).withName(name)
                .addToLabels(DestinationRules.MANAGED_BY_LABEL, DestinationRules.MANAGED_BY).endMetadata()
                .addToData(KEY, json).build();
        // The ConfigMap is ours alone: create it, or replace it whole.
        client.configMaps().inNamespace(namespace).resource(map).createOr(NonDeletingOperation::update);
    }
}
