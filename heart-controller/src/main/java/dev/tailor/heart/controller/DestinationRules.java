package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tailor.heart.LocalityDistribution;
import dev.tailor.heart.Node;
import dev.tailor.heart.Route;
import dev.tailor.heart.Snapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * HEART's plan as Istio {@code DestinationRule}s (docs/design.md#actuation): one per (caller
 * workload, callee host), in the caller's namespace, with {@code workloadSelector} = the caller's
 * pods, {@code localityLbSetting.distribute} = one {@code from} per caller node with integer weights
 * in [1, 100] summing to exactly 100 (zero shares left out), {@code LEAST_REQUEST} inside a locality,
 * and {@code outlierDetection}, without which older meshes ignore {@code distribute}. Every rule is
 * labelled {@value #MANAGED_BY_LABEL}={@value #MANAGED_BY} so it can be listed and removed.
 *
 * <p>Names Kubernetes or Istio would reject (a component that is not a DNS label, a locality with
 * more than three parts) are refused with an {@link IllegalArgumentException} naming them, instead
 * of rules that fail at apply time. Used by {@code tailor heart plan --format istio} and the
 * controller.
 */
public final class DestinationRules {

    /** Label key marking the rules Tailor owns. */
    public static final String MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
    /** Its value. */
    public static final String MANAGED_BY = "tailor-heart";

    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern LABEL_NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern LOCALITY_PART = Pattern.compile("[^/\\s*]+");

    private DestinationRules() {}

    /**
     * Where rules go.
     *
     * @param namespaceOf   component → its namespace; components not in it use {@code defaultNamespace}
     * @param defaultNamespace namespace of components not in {@code namespaceOf}
     * @param selectorLabel the pod label whose value is the component (e.g. {@code app})
     * @param clusterDomain e.g. {@code cluster.local}
     * @param selectorOf    caller → the labels its rules' {@code workloadSelector} matches, for callers
     *                      whose pods are not selected by {@code selectorLabel=<caller>} (e.g. an ingress
     *                      gateway labelled {@code istio=ingressgateway}); others are not in it
     */
    public record Options(
            Map<String, String> namespaceOf,
            String defaultNamespace,
            String selectorLabel,
            String clusterDomain,
            Map<String, Map<String, String>> selectorOf) {

        public Options {
            namespaceOf = Map.copyOf(namespaceOf);
            selectorOf = selectorOf == null ? Map.of() : Map.copyOf(selectorOf);
        }

        /** Every caller selected by {@code selectorLabel=<caller>}. */
        public Options(
                Map<String, String> namespaceOf, String defaultNamespace, String selectorLabel, String clusterDomain) {
            this(namespaceOf, defaultNamespace, selectorLabel, clusterDomain, Map.of());
        }

        /** The labels the rules of {@code caller} select its pods by. */
        Map<String, String> selector(String caller) {
            return selectorOf.getOrDefault(caller, Map.of(selectorLabel, caller));
        }

        String namespace(String component) {
            return namespaceOf.getOrDefault(component, defaultNamespace);
        }
    }

    /** One DestinationRule per route that has at least one {@code from} entry, as JSON trees. */
    public static List<ObjectNode> of(List<Route> routes, Snapshot snapshot, Options options) {
        Map<String, String> localityOfNode = new HashMap<>();
        for (Node node : snapshot.nodes()) {
            String locality = node.effectiveLocality();
            String[] parts = locality.split("/", -1);
            boolean ok = parts.length <= 3;
            for (String part : parts) {
                ok &= LOCALITY_PART.matcher(part).matches();
            }
            if (!ok) {
                throw new IllegalArgumentException(
                        "node " + node.name() + ": locality \"" + locality + "\" cannot be used by Istio"
                                + " (expected: region/zone/subzone, up to three non-empty parts without spaces or '*')");
            }
            localityOfNode.put(node.name(), locality);
        }
        JsonNodeFactory json = JsonNodeFactory.instance;
        List<ObjectNode> rules = new ArrayList<>();
        for (Route route : routes) {
            List<LocalityDistribution.Entry> distribute = LocalityDistribution.of(route, localityOfNode);
            if (distribute.isEmpty()) {
                continue;
            }
            requireDnsLabel("callee", route.callee());
            requireLabelValue("caller", route.caller());
            ObjectNode rule = json.objectNode();
            rule.put("apiVersion", "networking.istio.io/v1");
            rule.put("kind", "DestinationRule");
            ObjectNode metadata = rule.putObject("metadata");
            metadata.put("name", name(route.caller(), route.callee()));
            metadata.put("namespace", options.namespace(route.caller()));
            ObjectNode labels = metadata.putObject("labels");
            labels.put(MANAGED_BY_LABEL, MANAGED_BY);
            labels.put("tailor.dev/caller", route.caller());
            labels.put("tailor.dev/callee", route.callee());
            ObjectNode spec = rule.putObject("spec");
            spec.put(
                    "host",
                    route.callee() + "." + options.namespace(route.callee()) + ".svc." + options.clusterDomain());
            ObjectNode matchLabels = spec.putObject("workloadSelector").putObject("matchLabels");
            new java.util.TreeMap<>(options.selector(route.caller())).forEach(matchLabels::put);
            ObjectNode trafficPolicy = spec.putObject("trafficPolicy");
            ObjectNode loadBalancer = trafficPolicy.putObject("loadBalancer");
            // Inside a locality Envoy picks by least request, as HEART assumes within a node group.
            loadBalancer.put("simple", "LEAST_REQUEST");
            ObjectNode locality = loadBalancer.putObject("localityLbSetting");
            locality.put("enabled", true);
            ArrayNode entries = locality.putArray("distribute");
            for (LocalityDistribution.Entry entry : distribute) {
                ObjectNode e = entries.addObject();
                e.put("from", entry.from());
                ObjectNode to = e.putObject("to");
                entry.to().forEach(to::put);
            }
            ObjectNode outlier = trafficPolicy.putObject("outlierDetection");
            outlier.put("consecutive5xxErrors", 5);
            outlier.put("interval", "10s");
            outlier.put("baseEjectionTime", "30s");
            outlier.put("maxEjectionPercent", 50);
            rules.add(rule);
        }
        return rules;
    }

    /** {@code tailor-heart-<caller>-to-<callee>}, made a valid DNS-1123 name of at most 253 characters. */
    public static String name(String caller, String callee) {
        String raw = "tailor-heart-" + caller + "-to-" + callee;
        String name =
                raw.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]", "-").replaceAll("-{2,}", "-");
        if (name.length() > 253) {
            name = name.substring(0, 244) + "-" + Integer.toHexString(raw.hashCode());
        }
        return name.replaceAll("[-.]+$", "");
    }

    private static boolean isDnsLabel(String value) {
        return value != null && value.length() <= 63 && DNS_LABEL.matcher(value).matches();
    }

    private static void requireDnsLabel(String what, String value) {
        if (!isDnsLabel(value)) {
            throw new IllegalArgumentException(
                    what + " \"" + value + "\" cannot be a Kubernetes service name (expected: a DNS"
                            + " label, lowercase letters, digits and '-', at most 63 characters)");
        }
    }

    private static void requireLabelValue(String what, String value) {
        if (value.length() > 63 || !LABEL_NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(
                    what + " \"" + value + "\" cannot be a Kubernetes label value (expected: letters,"
                            + " digits, '-', '_' and '.', at most 63 characters)");
        }
    }
}
