package dev.tailor.heart.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The localities Istio gives the application's pods, and the keys a DestinationRule's
 * {@code distribute} can use for HEART's node groups, so that no rule names a locality Istio never
 * matches.
 *
 * <p>How Istio derives a locality (our reading of istiod's source: {@code getPodLocality} in
 * pilot/pkg/serviceregistry/kube/controller/controller.go, {@code GetLocalityLabel} and
 * {@code SanitizeLocalityLabel} in pkg/model/proxy.go, {@code AugmentLabels} in
 * pilot/pkg/serviceregistry/util/label/label.go, {@code localityFromProxyLabels} in
 * pilot/pkg/xds/ads.go):
 * <ol>
 *   <li>a pod label {@code topology.istio.io/locality} (read by Istio 1.29 and later), else
 *       {@code istio-locality}, when not empty: {@code region.zone.subzone} (label values cannot hold
 *       '/', so '.' stands for it);</li>
 *   <li>else the node's labels: region {@code topology.kubernetes.io/region}, or when that is empty
 *       the deprecated {@code failure-domain.beta.kubernetes.io/region}; zone likewise; sub-zone
 *       {@code topology.istio.io/subzone} only — nothing else gives a sub-zone, not the node's
 *       name.</li>
 * </ol>
 * That is the locality of the pod's endpoints. Its sidecar's locality is the same, except that a
 * part left empty there is taken from the pod's own label of that part, if it has one.
 *
 * <p>How Istio matches a key ({@code LocalityMatch}, pilot/pkg/networking/util/util.go): the
 * region must be equal; a zone or sub-zone left out of the key matches any. Istio refuses keys with
 * an empty part ({@code eu//w1}) and keys that overlap ({@code eu/eu-a} next to
 * {@code eu/eu-a/w1}) ({@code validateLocalities}, pkg/config/validation/agent/validation.go).
 *
 * <p>So {@link #keys} gives each node hosting the application's pods the finest key that matches
 * all of them and overlaps no other node's key: {@code region/zone/subzone} when Istio knows all
 * three; {@code region/zone} for every node of a zone where some node's pods have no sub-zone (and
 * {@code region} likewise for a region with a node without zone); none when a pod on it has no
 * region. Nodes with the same key are one locality for Istio, and their routes are written as one
 * ({@code LocalityDistribution} merges them, weighted by calls).
 */
public final class IstioLocality {

    /** The region label Kubernetes sets on nodes. */
    public static final String REGION = "topology.kubernetes.io/region";
    /** The zone label Kubernetes sets on nodes. */
    public static final String ZONE = "topology.kubernetes.io/zone";
    /** The deprecated region label, read when {@link #REGION} is empty. */
    public static final String REGION_BETA = "failure-domain.beta.kubernetes.io/region";
    /** The deprecated zone label, read when {@link #ZONE} is empty. */
    public static final String ZONE_BETA = "failure-domain.beta.kubernetes.io/zone";
    /** Istio's sub-zone label; the only source of a node's sub-zone. */
    public static final String SUBZONE = "topology.istio.io/subzone";
    /** A pod's own locality, {@code region.zone.subzone} (Istio 1.29 and later). */
    public static final String POD_LOCALITY = "topology.istio.io/locality";
    /** A pod's own locality, the older label. */
    public static final String POD_LOCALITY_LEGACY = "istio-locality";

    private static final String RESTART = " (then restart the pods there: Istio reads a pod's locality when its sidecar"
            + " connects and its endpoints are built)";

    private IstioLocality() {}

    /**
     * A locality; an empty string where Istio has no value.
     *
     * @param region  e.g. {@code eu-west-1}
     * @param zone    e.g. {@code eu-west-1a}
     * @param subzone e.g. the node's name, from {@link #SUBZONE}
     */
    public record Locality(String region, String zone, String subzone) {

        String part(int index) {
            return switch (index) {
                case 0 -> region;
                case 1 -> zone;
                default -> subzone;
            };
        }

        boolean complete() {
            return !region.isEmpty() && !zone.isEmpty() && !subzone.isEmpty();
        }

        @Override
        public String toString() {
            return region + "/" + zone + "/" + subzone;
        }
    }

    /**
     * A pod of the application or of an entry point.
     *
     * @param pod    {@code namespace/name}
     * @param node   the node it runs on
     * @param labels its labels
     */
    public record PodOnNode(String pod, String node, Map<String, String> labels) {}

    /**
     * The keys of the nodes.
     *
     * @param keyOfNode          node → its {@code distribute} key, for every node hosting a pod that
     *                           has one; nodes without pods get the finest key of their own labels
     *                           ({@code ""} when they have no region)
     * @param notes              why some nodes share a key and the {@code kubectl label} commands that
     *                           give them their own, one line each
     * @param nodesMissingLabels nodes hosting pods that take their locality from the node while it
     *                           lacks one of the labels Istio reads (region, zone, sub-zone); sorted
     * @param problem            {@code null}, or why some node hosting pods has no key at all (Istio
     *                           gives them no region) and the commands that fix it
     */
    public record Keys(
            Map<String, String> keyOfNode, List<String> notes, List<String> nodesMissingLabels, String problem) {

        public Keys {
            keyOfNode = Map.copyOf(keyOfNode);
            notes = List.copyOf(notes);
            nodesMissingLabels = List.copyOf(nodesMissingLabels);
        }
    }

    /** The locality of a pod's endpoints, as istiod derives it (see the class comment). */
    public static Locality ofEndpoint(Map<String, String> podLabels, Map<String, String> nodeLabels) {
        String override = podOverride(podLabels);
        if (!override.isEmpty()) {
            return split(override.contains("/") ? override : override.replace('.', '/'));
        }
        return ofNode(nodeLabels);
    }

    /**
     * The locality of a pod's sidecar: that of its endpoints, where a part left empty is taken from
     * the pod's own label of that part; {@code null} when the pod has none of them either (Istio then
     * takes what the sidecar's bootstrap says, which Kubernetes does not show).
     */
    public static Locality ofSidecar(Map<String, String> podLabels, Map<String, String> nodeLabels) {
        Locality endpoint = ofEndpoint(podLabels, nodeLabels);
        String[] keys = {REGION, ZONE, SUBZONE};
        String[] parts = new String[3];
        boolean any = false;
        for (int i = 0; i < 3; i++) {
            String value = endpoint.part(i).isEmpty() ? podLabels.get(keys[i]) : endpoint.part(i);
            any |= value != null;
            parts[i] = value == null ? "" : value;
        }
        return any ? new Locality(parts[0], parts[1], parts[2]) : null;
    }

    /** The locality the node's labels give (pods without a locality label of their own). */
    public static Locality ofNode(Map<String, String> nodeLabels) {
        return new Locality(
                either(nodeLabels, REGION, REGION_BETA),
                either(nodeLabels, ZONE, ZONE_BETA),
                nodeLabels.getOrDefault(SUBZONE, ""));
    }

    /**
     * The {@code distribute} key of every node (see the class comment).
     *
     * @param nodeLabels every node's labels
     * @param pods       the pods that rules concern (application and entry points), each on a node of
     *                   {@code nodeLabels}
     */
    public static Keys keys(Map<String, Map<String, String>> nodeLabels, List<PodOnNode> pods) {
        Map<String, List<PodOnNode>> podsOnNode = new TreeMap<>();
        for (PodOnNode pod : pods) {
            podsOnNode.computeIfAbsent(pod.node(), n -> new ArrayList<>()).add(pod);
        }
        List<String> notes = new ArrayList<>();
        Set<String> missingLabels = new TreeSet<>();
        Map<String, List<String>> own = new TreeMap<>();
        List<String> withoutRegion = new ArrayList<>();
        podsOnNode.forEach((node, onNode) -> {
            Map<String, String> labels = nodeLabels.getOrDefault(node, Map.of());
            Set<String> seen = new TreeSet<>();
            List<Locality> localities = new ArrayList<>();
            for (PodOnNode pod : onNode) {
                Locality endpoint = ofEndpoint(pod.labels(), labels);
                Locality sidecar = ofSidecar(pod.labels(), labels);
                localities.add(endpoint);
                localities.add(sidecar == null ? new Locality("", "", "") : sidecar);
                if (podOverride(pod.labels()).isEmpty() && !ofNode(labels).complete()) {
                    missingLabels.add(node);
                } else if (!podOverride(pod.labels()).isEmpty() && !endpoint.complete()) {
                    notes.add("pod " + pod.pod() + " on node " + node + ": its locality label says " + endpoint
                            + " (Istio reads " + POD_LOCALITY + ", else " + POD_LOCALITY_LEGACY
                            + "), which lacks a part");
                }
                seen.add(endpoint.toString());
                if (sidecar != null) {
                    seen.add(sidecar.toString());
                }
            }
            List<String> parts = commonParts(localities);
            if (seen.size() > 1 && !parts.isEmpty()) {
                notes.add("the pods on node " + node + " have different Istio localities " + seen
                        + ": its rules use what they share, " + String.join("/", parts));
            }
            if (parts.isEmpty()) {
                withoutRegion.add(node);
            }
            own.put(node, parts);
        });

        // A node's coarse key covers its whole zone (or region): Istio refuses overlapping keys.
        Set<String> coarseRegions = new TreeSet<>();
        Set<String> coarseZones = new TreeSet<>();
        own.values().forEach(parts -> {
            if (parts.size() == 1) {
                coarseRegions.add(parts.get(0));
            } else if (parts.size() == 2) {
                coarseZones.add(parts.get(0) + "/" + parts.get(1));
            }
        });
        Map<String, String> keyOfNode = new TreeMap<>();
        nodeLabels.forEach((node, labels) ->
                keyOfNode.put(node, String.join("/", commonParts(List.of(ofNode(labels))))));
        Map<String, List<String>> shared = new TreeMap<>();
        own.forEach((node, parts) -> {
            String key;
            if (parts.isEmpty()) {
                key = "";
            } else if (coarseRegions.contains(parts.get(0))) {
                key = parts.get(0);
            } else if (parts.size() >= 2 && coarseZones.contains(parts.get(0) + "/" + parts.get(1))) {
                key = parts.get(0) + "/" + parts.get(1);
            } else {
                key = String.join("/", parts);
            }
            keyOfNode.put(node, key);
            if (!key.isEmpty() && key.split("/").length < 3) {
                shared.computeIfAbsent(key, k -> new ArrayList<>()).add(node);
            }
        });
        shared.forEach((key, nodes) -> {
            List<String> culprits =
                    nodes.stream().filter(n -> own.get(n).size() < 3).toList();
            List<String> unlabelled =
                    culprits.stream().filter(missingLabels::contains).toList();
            String missing = key.contains("/") ? "sub-zone" : "zone";
            notes.add("rules address " + key + " as one locality (" + (nodes.size() == 1 ? "node " : "nodes ")
                    + String.join(", ", nodes) + "): Istio gives the pods on " + String.join(", ", culprits) + " no "
                    + missing
                    + (nodes.size() == 1
                            ? ""
                            : ", and refuses a key for one node of " + key + " next to " + key + " itself")
                    + (unlabelled.isEmpty()
                            ? ""
                            : "; label " + (unlabelled.size() == 1 ? "it" : "them") + ": "
                                    + command(unlabelled, nodeLabels) + RESTART));
        });
        String problem = null;
        if (!withoutRegion.isEmpty()) {
            List<String> unlabelled =
                    withoutRegion.stream().filter(missingLabels::contains).toList();
            problem = "Istio gives pods on node(s) " + String.join(", ", withoutRegion) + " no region (labels " + REGION
                    + " and " + REGION_BETA + " are empty or missing), so no DestinationRule can name their locality"
                    + (unlabelled.isEmpty()
                            ? ""
                            : "; label " + (unlabelled.size() == 1 ? "it" : "them") + ": "
                                    + command(unlabelled, nodeLabels) + RESTART);
        }
        return new Keys(keyOfNode, notes, List.copyOf(missingLabels), problem);
    }

    /** The parts all localities share, up to the first part one of them lacks. */
    private static List<String> commonParts(List<Locality> localities) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String value = localities.get(0).part(i);
            if (value.isEmpty()) {
                break;
            }
            for (Locality locality : localities) {
                if (!locality.part(i).equals(value)) {
                    return parts;
                }
            }
            parts.add(value);
        }
        return parts;
    }

    /** {@code kubectl label} commands giving {@code nodes} the labels they lack; one loop per set of lacking labels. */
    static String command(List<String> nodes, Map<String, Map<String, String>> nodeLabels) {
        Map<String, List<String>> byArguments = new LinkedHashMap<>();
        for (String node : nodes) {
            Locality locality = ofNode(nodeLabels.getOrDefault(node, Map.of()));
            StringBuilder arguments = new StringBuilder();
            if (locality.region().isEmpty()) {
                arguments.append(' ').append(REGION).append("=<region>");
            }
            if (locality.zone().isEmpty()) {
                arguments.append(' ').append(ZONE).append("=<zone>");
            }
            if (locality.subzone().isEmpty()) {
                arguments.append(' ').append(SUBZONE).append("=$NODE");
            }
            byArguments
                    .computeIfAbsent(arguments.toString(), a -> new ArrayList<>())
                    .add(node);
        }
        List<String> commands = new ArrayList<>();
        byArguments.forEach((arguments, group) -> commands.add(
                group.size() == 1
                        ? "kubectl label node " + group.get(0) + arguments.replace("$NODE", group.get(0))
                        : "for n in " + String.join(" ", group) + "; do kubectl label node \"$n\""
                                + arguments.replace("$NODE", "\"$n\"") + "; done"));
        return String.join("; ", commands);
    }

    private static String podOverride(Map<String, String> podLabels) {
        // Istio takes topology.istio.io/locality whenever the label exists, even empty.
        String value =
                podLabels.containsKey(POD_LOCALITY) ? podLabels.get(POD_LOCALITY) : podLabels.get(POD_LOCALITY_LEGACY);
        return value == null ? "" : value;
    }

    private static String either(Map<String, String> labels, String key, String fallback) {
        String value = labels.get(key);
        return value != null && !value.isEmpty() ? value : labels.getOrDefault(fallback, "");
    }

    /** Istio's {@code SplitLocalityLabel}: one to three parts, more are ignored. */
    private static Locality split(String locality) {
        String[] items = locality.split("/", -1);
        return new Locality(items[0], items.length > 1 ? items[1] : "", items.length > 2 ? items[2] : "");
    }
}
