package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * Writes DestinationRules: compares the desired rules with the ones Tailor owns (label
 * {@value DestinationRules#MANAGED_BY_LABEL}={@value DestinationRules#MANAGED_BY}), then creates or
 * updates by server-side apply with the configured field manager (a new rule is created by POST;
 * the next apply, with {@code force}, takes its fields over) and deletes owned rules no plan wants
 * any more. Idempotent: a rule whose labels and spec are unchanged, whatever the order of their keys, is
 * not written.
 */
public final class Actuator {

    /** The DestinationRule resource, so no API discovery is needed. */
    public static final ResourceDefinitionContext DESTINATION_RULE = new ResourceDefinitionContext.Builder()
            .withGroup("networking.istio.io")
            .withVersion("v1")
            .withKind("DestinationRule")
            .withPlural("destinationrules")
            .withNamespaced(true)
            .build();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final YAMLMapper YAML = new YAMLMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    private static final YAMLMapper MANIFEST = new YAMLMapper(new YAMLFactory()
            .enable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
            .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));

    /** What a round changes. */
    public enum Action {
        CREATE,
        UPDATE,
        DELETE,
        UNCHANGED
    }

    /**
     * One rule's change.
     *
     * @param action    what happens to it
     * @param namespace its namespace
     * @param name      its name
     * @param before    the owned rule now (labels + spec) as YAML, or {@code ""}
     * @param after     the desired rule (labels + spec) as YAML, or {@code ""} when deleted
     */
    public record Change(Action action, String namespace, String name, String before, String after) {}

    private final ClusterReader reader;
    private final KubernetesClient client;
    private final String fieldManager;

    public Actuator(KubernetesClient client, String fieldManager) {
        this(ClusterReader.of(client), client, fieldManager);
    }

    /**
     * @param reader       where {@link #plan} lists the owned rules
     * @param client       where {@link #apply} writes, or {@code null} for an actuator that only plans
     *                     (a recorded cluster)
     * @param fieldManager the server-side apply field manager
     */
    public Actuator(ClusterReader reader, KubernetesClient client, String fieldManager) {
        this.reader = reader;
        this.client = client;
        this.fieldManager = fieldManager;
    }

    /** The changes that would bring the owned rules in {@code namespaces} to {@code desired}. */
    public List<Change> plan(List<ObjectNode> desired, List<String> namespaces) {
        Map<String, GenericKubernetesResource> owned = new TreeMap<>();
        for (String namespace : namespaces) {
            for (GenericKubernetesResource rule : reader.ownedRules(namespace)) {
                owned.put(namespace + "/" + rule.getMetadata().getName(), rule);
            }
        }
        List<Change> changes = new ArrayList<>();
        Map<String, ObjectNode> wanted = new LinkedHashMap<>();
        for (ObjectNode rule : desired) {
            wanted.put(
                    rule.at("/metadata/namespace").asText() + "/"
                            + rule.at("/metadata/name").asText(),
                    rule);
        }
        wanted.forEach((key, rule) -> {
            String after = yaml(essence(rule));
            GenericKubernetesResource current = owned.get(key);
            String namespace = key.substring(0, key.indexOf('/'));
            String name = key.substring(key.indexOf('/') + 1);
            if (current == null) {
                changes.add(new Change(Action.CREATE, namespace, name, "", after));
            } else {
                // The API server (and kubectl get -o yaml) returns the keys in its own order: compare
                // regardless of it, and print the rule now in the desired rule's order, for a readable diff.
                JsonNode now = essence(JSON.valueToTree(current));
                String before = yaml(inOrderOf(now, essence(rule)));
                changes.add(new Change(
                        canonical(now).equals(canonical(essence(rule))) ? Action.UNCHANGED : Action.UPDATE,
                        namespace,
                        name,
                        before,
                        after));
            }
        });
        owned.forEach((key, rule) -> {
            if (!wanted.containsKey(key)) {
                changes.add(new Change(
                        Action.DELETE,
                        rule.getMetadata().getNamespace(),
                        rule.getMetadata().getName(),
                        yaml(essence(JSON.valueToTree(rule))),
                        ""));
            }
        });
        return changes;
    }

    /** Carries out {@code changes} (creates and updates by server-side apply, then deletes). */
    public void apply(List<Change> changes, List<ObjectNode> desired) {
        apply(changes, desired, () -> true);
    }

    /**
     * Thrown by {@link #apply(List, List, BooleanSupplier)} when the guard said stop before a write;
     * the writes before it were made.
     */
    public static final class WriteStopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        WriteStopped(int written, int pending) {
            super("stopped after " + written + " of " + (written + pending) + " writes: this replica no longer leads");
        }
    }

    /**
     * Carries out {@code changes}, asking {@code mayWrite} before each write, so a replica that lost
     * its lease mid-round stops writing at once (the lease can still lapse between the check and
     * the write; the window is one API call, not a round).
     *
     * @throws WriteStopped when {@code mayWrite} answered false
     * @throws IllegalStateException when this actuator has no client to write with
     */
    public void apply(List<Change> changes, List<ObjectNode> desired, BooleanSupplier mayWrite) {
        if (client == null) {
            throw new IllegalStateException("this actuator only plans: it reads " + reader.address());
        }
        int pending = (int)
                changes.stream().filter(c -> c.action() != Action.UNCHANGED).count();
        int written = 0;
        Map<String, ObjectNode> byKey = new LinkedHashMap<>();
        for (ObjectNode rule : desired) {
            byKey.put(
                    rule.at("/metadata/namespace").asText() + "/"
                            + rule.at("/metadata/name").asText(),
                    rule);
        }
        for (Change change : changes) {
            if (change.action() != Action.UNCHANGED && !mayWrite.getAsBoolean()) {
                throw new WriteStopped(written, pending - written);
            }
            switch (change.action()) {
                case CREATE -> {
                    // POST, not server-side apply: same result on a real API server, and the mock
                    // API server of the tests cannot create by apply. Someone created it meanwhile
                    // (409): apply over it.
                    GenericKubernetesResource resource = resource(byKey, change);
                    try {
                        client.genericKubernetesResources(DESTINATION_RULE)
                                .inNamespace(change.namespace())
                                .resource(resource)
                                .create();
                    } catch (KubernetesClientException e) {
                        if (e.getCode() != 409) {
                            throw e;
                        }
                        serverSideApply(change.namespace(), resource);
                    }
                }
                case UPDATE -> serverSideApply(change.namespace(), resource(byKey, change));
                case DELETE ->
                    client.genericKubernetesResources(DESTINATION_RULE)
                            .inNamespace(change.namespace())
                            .withName(change.name())
                            .delete();
                case UNCHANGED -> {}
            }
            if (change.action() != Action.UNCHANGED) {
                written++;
            }
        }
    }

    private static GenericKubernetesResource resource(Map<String, ObjectNode> byKey, Change change) {
        return JSON.convertValue(byKey.get(change.namespace() + "/" + change.name()), GenericKubernetesResource.class);
    }

    private void serverSideApply(String namespace, GenericKubernetesResource resource) {
        try {
            client.genericKubernetesResources(DESTINATION_RULE)
                    .inNamespace(namespace)
                    .resource(resource)
                    .fieldManager(fieldManager)
                    .forceConflicts()
                    .serverSideApply();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 415) {
                throw e;
            }
            // 415: the server takes no apply patches (API servers before 1.16, the tests' mock API
            // server). Replace the rule instead: the same result for a rule only Tailor writes.
            GenericKubernetesResource current = client.genericKubernetesResources(DESTINATION_RULE)
                    .inNamespace(namespace)
                    .withName(resource.getMetadata().getName())
                    .get();
            if (current == null) {
                client.genericKubernetesResources(DESTINATION_RULE)
                        .inNamespace(namespace)
                        .resource(resource)
                        .create();
                return;
            }
            resource.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
            client.genericKubernetesResources(DESTINATION_RULE)
                    .inNamespace(namespace)
                    .resource(resource)
                    .update();
        }
    }

    /** What Tailor decides about a rule: its labels and spec (not status, versions, managed fields). */
    private static JsonNode essence(JsonNode rule) {
        ObjectNode essence = JSON.createObjectNode();
        JsonNode labels = rule.at("/metadata/labels");
        if (!labels.isMissingNode()) {
            essence.putObject("metadata").set("labels", sorted(labels));
        }
        essence.set("spec", rule.path("spec"));
        return essence;
    }

    /** {@code node} with its keys sorted, at every depth, and each number as its least-scaled decimal (73 = 73.0). */
    static JsonNode canonical(JsonNode node) {
        if (node.isObject()) {
            ObjectNode sorted = JSON.createObjectNode();
            Map<String, JsonNode> fields = new TreeMap<>();
            node.properties().forEach(field -> fields.put(field.getKey(), canonical(field.getValue())));
            sorted.setAll(fields);
            return sorted;
        }
        if (node.isArray()) {
            ArrayNode array = JSON.createArrayNode();
            node.forEach(element -> array.add(canonical(element)));
            return array;
        }
        if (node.isNumber()) {
            return DecimalNode.valueOf(node.decimalValue().stripTrailingZeros());
        }
        return node;
    }

    /** {@code node} with the keys {@code order} also has first, in its order, at every depth; then the rest. */
    private static JsonNode inOrderOf(JsonNode node, JsonNode order) {
        if (node.isObject() && order.isObject()) {
            ObjectNode ordered = JSON.createObjectNode();
            order.fieldNames().forEachRemaining(key -> {
                if (node.has(key)) {
                    ordered.set(key, inOrderOf(node.get(key), order.get(key)));
                }
            });
            node.properties().forEach(field -> {
                if (!ordered.has(field.getKey())) {
                    ordered.set(field.getKey(), field.getValue());
                }
            });
            return ordered;
        }
        if (node.isArray() && order.isArray()) {
            ArrayNode array = JSON.createArrayNode();
            for (int i = 0; i < node.size(); i++) {
                array.add(i < order.size() ? inOrderOf(node.get(i), order.get(i)) : node.get(i));
            }
            return array;
        }
        return node;
    }

    private static JsonNode sorted(JsonNode labels) {
        ObjectNode sorted = JSON.createObjectNode();
        new TreeMap<>(JSON.convertValue(labels, Map.class)).forEach((k, v) -> sorted.put(k.toString(), v.toString()));
        return sorted;
    }

    /**
     * The rules a round would write, complete (apiVersion, kind, metadata with name, namespace and
     * labels, spec), as YAML documents each starting with {@code ---}, in the order given: what
     * {@code kubectl apply -f -} takes. Strings that YAML would read as numbers or booleans are quoted.
     * Empty for no rules.
     */
    public static String manifests(List<ObjectNode> rules) {
        StringBuilder text = new StringBuilder();
        for (ObjectNode rule : rules) {
            try {
                text.append(MANIFEST.writeValueAsString(rule));
            } catch (IOException e) {
                throw new IllegalStateException("cannot write YAML", e);
            }
        }
        return text.toString();
    }

    static String yaml(JsonNode node) {
        try {
            return YAML.writeValueAsString(node);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write YAML", e);
        }
    }

    /**
     * A readable diff of one change: {@code -} lines before, {@code +} lines after, by longest common
     * subsequence; where a line was replaced, what goes comes before what replaces it, as in {@code diff -u}.
     */
    public static List<String> diff(Change change) {
        String[] a = change.before().isEmpty() ? new String[0] : change.before().split("\n");
        String[] b = change.after().isEmpty() ? new String[0] : change.after().split("\n");
        int[][] lcs = new int[a.length + 1][b.length + 1];
        for (int i = a.length - 1; i >= 0; i--) {
            for (int j = b.length - 1; j >= 0; j--) {
                lcs[i][j] = a[i].equals(b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
            }
        }
        List<String> lines = new ArrayList<>();
        int i = 0;
        int j = 0;
        while (i < a.length || j < b.length) {
            if (i < a.length && j < b.length && a[i].equals(b[j])) {
                lines.add("  " + a[i]);
                i++;
                j++;
            } else if (i < a.length && (j == b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
                lines.add("- " + a[i++]);
            } else {
                lines.add("+ " + b[j++]);
            }
        }
        return lines;
    }
}
