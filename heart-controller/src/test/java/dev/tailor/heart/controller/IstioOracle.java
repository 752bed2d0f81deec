package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Istio's own rules for localities, written again for the tests from Istio's source and kept apart
 * from the code under test, so a test can ask "would Istio ever match this rule?":
 * <ul>
 *   <li>an endpoint's locality: {@code getPodLocality} (pilot/pkg/serviceregistry/kube/controller/
 *       controller.go) — the pod label {@code topology.istio.io/locality}, else {@code istio-locality}
 *       ('.' for '/'), else the node's {@code topology.kubernetes.io/region|zone} (falling back to
 *       the {@code failure-domain.beta.kubernetes.io} ones) and {@code topology.istio.io/subzone};</li>
 *   <li>a sidecar's locality: {@code AugmentLabels} (pilot/pkg/serviceregistry/util/label) puts the
 *       non-empty parts of that locality over the pod's labels, then {@code localityFromProxyLabels}
 *       (pilot/pkg/xds/ads.go) reads the three topology labels back;</li>
 *   <li>{@code LocalityMatch} (pilot/pkg/networking/util/util.go): the region must be equal, a zone or
 *       sub-zone left out of the key (or {@code *}) matches any;</li>
 *   <li>{@code validateLocalities} (pkg/config/validation/agent/validation.go): no empty part, one
 *       {@code *} at most and only at the end, no key overlapping another.</li>
 * </ul>
 */
final class IstioOracle {

    private static final ObjectMapper JSON = new ObjectMapper();

    private IstioOracle() {}

    /** region, zone, sub-zone of a pod's endpoints. */
    static String[] endpointLocality(Map<String, String> podLabels, Map<String, String> nodeLabels) {
        String override = podLabels.containsKey("topology.istio.io/locality")
                ? podLabels.get("topology.istio.io/locality")
                : podLabels.getOrDefault("istio-locality", "");
        if (!override.isEmpty()) {
            return split(override.contains("/") ? override : override.replace('.', '/'));
        }
        String region = first(nodeLabels, "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region");
        String zone = first(nodeLabels, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone");
        String subzone = nodeLabels.getOrDefault("topology.istio.io/subzone", "");
        return new String[] {region, zone, subzone};
    }

    /** region, zone, sub-zone of a pod's sidecar, or {@code null} when Istio takes it from elsewhere. */
    static String[] sidecarLocality(Map<String, String> podLabels, Map<String, String> nodeLabels) {
        String[] endpoint = endpointLocality(podLabels, nodeLabels);
        String[] keys = {"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "topology.istio.io/subzone"};
        String[] parts = new String[3];
        boolean any = false;
        for (int i = 0; i < 3; i++) {
            parts[i] = !endpoint[i].isEmpty() ? endpoint[i] : podLabels.get(keys[i]);
            any |= parts[i] != null;
            parts[i] = parts[i] == null ? "" : parts[i];
        }
        return any ? parts : null;
    }

    static boolean matches(String[] locality, String key) {
        String[] rule = split(key);
        return (rule[0].equals("*") || rule[0].equals(locality[0]))
                && (rule[1].equals("*") || rule[1].isEmpty() || rule[1].equals(locality[1]))
                && (rule[2].equals("*") || rule[2].isEmpty() || rule[2].equals(locality[2]));
    }

    /**
     * Every reason Istio would refuse or never apply a part of these rules (JSON trees of
     * DestinationRules, or the rules as fabric8 read them): keys it refuses, {@code from} keys no
     * caller sidecar has, {@code to} keys no callee endpoint has. Empty when every key can match.
     */
    static List<String> problems(KubernetesClient client, List<?> rules) {
        List<String> problems = new ArrayList<>();
        List<Pod> pods = client.pods().inAnyNamespace().list().getItems();
        for (Object rule : rules) {
            Map<?, ?> tree = JSON.convertValue(rule, Map.class);
            Map<?, ?> labels = (Map<?, ?>) ((Map<?, ?>) tree.get("metadata")).get("labels");
            String name = String.valueOf(((Map<?, ?>) tree.get("metadata")).get("name"));
            String caller = String.valueOf(labels.get("tailor.dev/caller"));
            String callee = String.valueOf(labels.get("tailor.dev/callee"));
            Map<?, ?> localityLb = (Map<?, ?>) ((Map<?, ?>)
                            ((Map<?, ?>) ((Map<?, ?>) tree.get("spec")).get("trafficPolicy")).get("loadBalancer"))
                    .get("localityLbSetting");
            List<String> froms = new ArrayList<>();
            for (Object entry : (List<?>) localityLb.get("distribute")) {
                String from = String.valueOf(((Map<?, ?>) entry).get("from"));
                froms.add(from);
                if (pods.stream()
                        .filter(p -> caller.equals(p.getMetadata().getLabels().get("app")))
                        .map(p -> sidecarLocality(p.getMetadata().getLabels(), nodeLabels(client, p)))
                        .noneMatch(l -> l != null && matches(l, from))) {
                    problems.add(name + ": from " + from + " matches no sidecar of " + caller);
                }
                List<String> tos = new ArrayList<>();
                for (Object to : ((Map<?, ?>) ((Map<?, ?>) entry).get("to")).keySet()) {
                    tos.add(String.valueOf(to));
                    if (pods.stream()
                            .filter(p ->
                                    callee.equals(p.getMetadata().getLabels().get("app")))
                            .map(p -> endpointLocality(p.getMetadata().getLabels(), nodeLabels(client, p)))
                            .noneMatch(l -> matches(l, String.valueOf(to)))) {
                        problems.add(name + ": to " + to + " (from " + from + ") matches no endpoint of " + callee);
                    }
                }
                problems.addAll(invalid(name + ": to of " + from, tos));
            }
            problems.addAll(invalid(name + ": from", froms));
        }
        return problems;
    }

    /** What {@code validateLocalities} refuses in one list of keys. */
    static List<String> invalid(String where, List<String> keys) {
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            long stars = key.chars().filter(c -> c == '*').count();
            if (stars > 1 || stars == 1 && !key.endsWith("*")) {
                problems.add(where + ": " + key + " has a '*' Istio refuses");
            }
            for (String part : key.split("/", -1)) {
                if (part.isEmpty()) {
                    problems.add(where + ": " + key + " has an empty part");
                }
            }
            for (int j = 0; j < i; j++) {
                String other = keys.get(j);
                if (key.equals(other) || key.startsWith(other + "/") || other.startsWith(key + "/")) {
                    problems.add(where + ": " + key + " overlaps " + other);
                }
            }
        }
        return problems;
    }

    private static Map<String, String> nodeLabels(KubernetesClient client, Pod pod) {
        Node node = client.nodes().withName(pod.getSpec().getNodeName()).get();
        return node == null || node.getMetadata().getLabels() == null
                ? Map.of()
                : node.getMetadata().getLabels();
    }

    private static String first(Map<String, String> labels, String key, String fallback) {
        String value = labels.get(key);
        return value != null && !value.isEmpty() ? value : labels.getOrDefault(fallback, "");
    }

    private static String[] split(String locality) {
        String[] items = locality.split("/", -1);
        return new String[] {items[0], items.length > 1 ? items[1] : "", items.length > 2 ? items[2] : ""};
    }
}
