package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import dev.tailor.common.IoErrors;
import dev.tailor.common.StrictReader;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A cluster as {@code kubectl get nodes,pods,destinationrules -A -o yaml} (or {@code -o json}, or
 * manifests separated by {@code ---}) saved it: nodes with their labels, pods, and DestinationRules.
 * The controller's discovery reads it as it reads an API server ({@link ClusterReader}), so a dry-run
 * round can be tried without a cluster. Pods and rules are chosen by namespace and labels here, as the
 * API server would; other kinds (Services, ...) are counted and left out. Immutable.
 *
 * <p>Read with fabric8's own deserialisation, the one its client uses for {@code kubectl}-style files.
 */
public final class RecordedCluster implements ClusterReader {

    private static final String ISTIO_NETWORKING = "networking.istio.io/";

    private final Path file;
    private final List<Node> nodes;
    private final List<Pod> pods;
    private final List<GenericKubernetesResource> rules;
    private final Map<String, Integer> ignored;

    private RecordedCluster(
            Path file,
            List<Node> nodes,
            List<Pod> pods,
            List<GenericKubernetesResource> rules,
            Map<String, Integer> ignored) {
        this.file = file;
        this.nodes = List.copyOf(nodes);
        this.pods = List.copyOf(pods);
        this.rules = List.copyOf(rules);
        this.ignored = Map.copyOf(ignored);
    }

    /**
     * Reads {@code file}.
     *
     * @throws IllegalArgumentException naming the file (and the item) when it cannot be read, is not
     *         Kubernetes objects, has no node, or holds a pod or rule without name or namespace
     */
    public static RecordedCluster read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(file + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read it (" + IoErrors.reason(e) + ")");
        }
        Object parsed;
        try {
            parsed = new KubernetesSerialization().unmarshal(text);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    file + ": not Kubernetes objects (" + oneLine(e, text) + "); " + EXPECTED);
        }
        List<HasMetadata> items = new ArrayList<>();
        flatten(parsed, items, file);
        List<Node> nodes = new ArrayList<>();
        List<Pod> pods = new ArrayList<>();
        List<GenericKubernetesResource> rules = new ArrayList<>();
        Map<String, Integer> ignored = new TreeMap<>();
        for (int i = 0; i < items.size(); i++) {
            HasMetadata item = items.get(i);
            String where = file + ": items[" + i + "] (" + item.getKind() + ")";
            if (item.getMetadata() == null
                    || item.getMetadata().getName() == null
                    || item.getMetadata().getName().isBlank()) {
                throw new IllegalArgumentException(where + ": metadata.name is missing");
            }
            if (item instanceof Node node) {
                nodes.add(node);
            } else if (item instanceof Pod pod) {
                pods.add(namespaced(pod, where));
            } else if (item instanceof GenericKubernetesResource generic
                    && "DestinationRule".equals(item.getKind())
                    && item.getApiVersion() != null
                    && item.getApiVersion().startsWith(ISTIO_NETWORKING)) {
                rules.add(namespaced(generic, where));
            } else {
                ignored.merge(String.valueOf(item.getKind()), 1, Integer::sum);
            }
        }
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException(file + ": no Node in it; " + EXPECTED);
        }
        return new RecordedCluster(file, nodes, pods, rules, ignored);
    }

    private static final String EXPECTED = "expected the output of kubectl get nodes,pods,destinationrules -A"
            + " -o yaml (a List, or objects separated by ---)";

    private static void flatten(Object parsed, List<HasMetadata> items, Path file) {
        flatten(parsed, items, file, "");
    }

    /** {@code where}: the path of {@code parsed} in the file ({@code items[2]}, or empty for a whole document). */
    private static void flatten(Object parsed, List<HasMetadata> items, Path file, String where) {
        if (parsed instanceof KubernetesList list) {
            // The parser leaves an item without apiVersion and kind as a RawExtension, whatever the list's type says.
            List<?> listed = list.getItems();
            for (int i = 0; i < listed.size(); i++) {
                flatten(listed.get(i), items, file, where + "items[" + i + "]");
            }
        } else if (parsed instanceof List<?> documents) {
            for (Object document : documents) {
                flatten(document, items, file, where);
            }
        } else if (parsed instanceof HasMetadata item) {
            items.add(item);
        } else if (parsed != null) {
            throw new IllegalArgumentException(file + ": " + (where.isEmpty() ? "" : where + ": ")
                    + "not Kubernetes objects (found " + found(parsed)
                    + "); expected Kubernetes objects with apiVersion and kind, as kubectl get"
                    + " nodes,pods,destinationrules -A -o yaml prints them (a List, or objects separated by ---)");
        }
    }

    /** What a document without apiVersion and kind holds, in the file's terms (not the parser's types). */
    private static String found(Object parsed) {
        Object value =
                parsed instanceof io.fabric8.kubernetes.api.model.runtime.RawExtension raw ? raw.getValue() : parsed;
        if (value instanceof Map<?, ?> map) {
            List<String> keys =
                    map.keySet().stream().map(String::valueOf).limit(6).toList();
            return map.isEmpty()
                    ? "an empty mapping"
                    : "a mapping with the keys " + String.join(", ", keys) + (map.size() > keys.size() ? ", ..." : "")
                            + " and no apiVersion or kind";
        }
        if (value instanceof List<?>) {
            return "a list without apiVersion or kind";
        }
        if (value instanceof String text) {
            String line = text.strip().replaceAll("\\s+", " ");
            return "the text \"" + (line.length() > 40 ? line.substring(0, 40) + "..." : line) + "\"";
        }
        return value == null ? "nothing" : "the value " + value;
    }

    private static <T extends HasMetadata> T namespaced(T item, String where) {
        String namespace = item.getMetadata().getNamespace();
        if (namespace == null || namespace.isBlank()) {
            throw new IllegalArgumentException(where + " " + item.getMetadata().getName()
                    + ": metadata.namespace is missing (kubectl get -o yaml writes it)");
        }
        return item;
    }

    /**
     * Why the file did not parse: a YAML or JSON syntax error as the configuration files tell theirs
     * ({@code not valid YAML at line 2: the file ends too early ...}), else the parser's message. The
     * Kubernetes client says a syntax error in its parser's words, or only "An error has occurred.", so
     * the text is read again, after that failure only, by the reader the configuration files go through.
     */
    private static String oneLine(RuntimeException e, String text) {
        try (MappingIterator<JsonNode> documents =
                StrictReader.yaml().readerFor(JsonNode.class).readValues(text)) {
            documents.readAll();
        } catch (JacksonException syntax) {
            return "not valid YAML" + StrictReader.where(syntax) + ": " + StrictReader.reason(syntax);
        } catch (IOException | RuntimeException other) {
            // Not a syntax error the reader can tell: the client's own message follows.
        }
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        return message.strip().replaceAll("\\s+", " ");
    }

    @Override
    public List<Node> nodes() {
        return nodes;
    }

    @Override
    public List<Pod> podsWithLabel(String namespace, String key) {
        return pods.stream()
                .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
                .filter(p -> labels(p).containsKey(key))
                .toList();
    }

    @Override
    public List<Pod> podsWithLabels(String namespace, Map<String, String> selector) {
        return pods.stream()
                .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
                .filter(p -> selector.entrySet().stream()
                        .allMatch(e -> Objects.equals(labels(p).get(e.getKey()), e.getValue())))
                .toList();
    }

    @Override
    public List<GenericKubernetesResource> ownedRules(String namespace) {
        return rules.stream()
                .filter(r -> namespace.equals(r.getMetadata().getNamespace()))
                .filter(r -> DestinationRules.MANAGED_BY.equals(labels(r).get(DestinationRules.MANAGED_BY_LABEL)))
                .toList();
    }

    @Override
    public String address() {
        return file.toString();
    }

    /** One line: how many nodes, pods and DestinationRules were read, and what was left out. */
    public String summary() {
        StringBuilder line = new StringBuilder()
                .append(nodes.size())
                .append(" node(s), ")
                .append(pods.size())
                .append(" pod(s), ")
                .append(rules.size())
                .append(" DestinationRule(s)");
        if (!ignored.isEmpty()) {
            List<String> kinds = new ArrayList<>();
            new TreeMap<>(ignored).forEach((kind, n) -> kinds.add(n + " " + kind + " object(s)"));
            line.append("; left out: ").append(String.join(", ", kinds));
        }
        return line.toString();
    }

    private static Map<String, String> labels(HasMetadata item) {
        Map<String, String> labels = item.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }
}
