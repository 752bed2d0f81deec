package dev.tailor.cli;

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

/**
 * {@code tailor heart plan --format istio}: one Istio {@code DestinationRule} per (caller workload,
 * callee host), as DESIGN.md's Actuation section describes: {@code workloadSelector} = the caller's
 * pods, {@code localityLbSetting.distribute} = one {@code from} per caller node with integer weights
 * summing to 100, and {@code outlierDetection}, without which older meshes ignore
 * {@code distribute}. Apply with {@code kubectl apply -f -} or server-side apply.
 */
final class IstioRules {

    /** Label on every rule Tailor writes, so they can be listed and removed. */
    static final String MANAGED_BY = "tailor-heart";

    private IstioRules() {
    }

    /** Options of the Istio output. */
    record Options(String namespace, String selectorLabel, String clusterDomain) {
    }

    /** One DestinationRule per route that has at least one {@code from} entry, as JSON trees. */
    static List<ObjectNode> of(List<Route> routes, Snapshot snapshot, Options options) {
        Map<String, String> localityOfNode = new HashMap<>();
        for (Node node : snapshot.nodes()) {
            localityOfNode.put(node.name(), node.effectiveLocality());
        }
        JsonNodeFactory json = JsonNodeFactory.instance;
        List<ObjectNode> rules = new ArrayList<>();
        for (Route route : routes) {
            List<LocalityDistribution.Entry> distribute = LocalityDistribution.of(route, localityOfNode);
            if (distribute.isEmpty()) {
                continue;
            }
            ObjectNode rule = json.objectNode();
            rule.put("apiVersion", "networking.istio.io/v1");
            rule.put("kind", "DestinationRule");
            ObjectNode metadata = rule.putObject("metadata");
            metadata.put("name", name(route.caller(), route.callee()));
            metadata.put("namespace", options.namespace());
            ObjectNode labels = metadata.putObject("labels");
            labels.put("app.kubernetes.io/managed-by", MANAGED_BY);
            labels.put("tailor.dev/caller", labelValue(route.caller()));
            labels.put("tailor.dev/callee", labelValue(route.callee()));
            ObjectNode spec = rule.putObject("spec");
            spec.put("host", route.callee() + "." + options.namespace() + ".svc." + options.clusterDomain());
            spec.putObject("workloadSelector").putObject("matchLabels").put(options.selectorLabel(), route.caller());
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

    /** {@code tailor-heart-<caller>-to-<callee>}, made a valid DNS-1123 name. */
    static String name(String caller, String callee) {
        String raw = "tailor-heart-" + caller + "-to-" + callee;
        String name = raw.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]", "-").replaceAll("-{2,}", "-");
        if (name.length() > 253) {
            name = name.substring(0, 244) + "-" + Integer.toHexString(raw.hashCode());
        }
        return name.replaceAll("[-.]+$", "");
    }

    private static String labelValue(String value) {
        String v = value.replaceAll("[^A-Za-z0-9._-]", "-");
        return v.length() > 63 ? v.substring(0, 63) : v;
    }
}
