package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Localities as Istio derives them, and the keys rules use; every case checked against {@link IstioOracle}. */
class IstioLocalityTest {

    private static Map<String, String> node(String region, String zone, String subzone) {
        Map<String, String> labels = new TreeMap<>();
        if (region != null) {
            labels.put(IstioLocality.REGION, region);
        }
        if (zone != null) {
            labels.put(IstioLocality.ZONE, zone);
        }
        if (subzone != null) {
            labels.put(IstioLocality.SUBZONE, subzone);
        }
        return labels;
    }

    /** One pod per node, with no labels of its own. */
    private static List<IstioLocality.PodOnNode> onePodEach(Map<String, Map<String, String>> nodes) {
        List<IstioLocality.PodOnNode> pods = new ArrayList<>();
        nodes.keySet().forEach(n -> pods.add(new IstioLocality.PodOnNode("shop/cart-" + n, n, Map.of("app", "cart"))));
        return pods;
    }

    /** Each node's key matches the pods on it as Istio sees them, and no two different keys overlap. */
    private static void assertIstioMatches(
            Map<String, Map<String, String>> nodes, List<IstioLocality.PodOnNode> pods, IstioLocality.Keys keys) {
        for (IstioLocality.PodOnNode pod : pods) {
            String key = keys.keyOfNode().get(pod.node());
            assertThat(IstioOracle.matches(IstioOracle.endpointLocality(pod.labels(), nodes.get(pod.node())), key))
                    .as(pod + " endpoint vs " + key)
                    .isTrue();
            assertThat(IstioOracle.matches(IstioOracle.sidecarLocality(pod.labels(), nodes.get(pod.node())), key))
                    .as(pod + " sidecar vs " + key)
                    .isTrue();
        }
        List<String> distinct = pods.stream()
                .map(p -> keys.keyOfNode().get(p.node()))
                .distinct()
                .toList();
        assertThat(IstioOracle.invalid("keys", distinct)).isEmpty();
    }

    @Test
    void keys_everyNodeLabelled_eachNodeIsItsOwnSubzone() {
        Map<String, Map<String, String>> nodes = Map.of("w1", node("eu", "eu-a", "w1"), "w2", node("eu", "eu-b", "w2"));

        IstioLocality.Keys keys = IstioLocality.keys(nodes, onePodEach(nodes));

        assertThat(keys.keyOfNode()).containsEntry("w1", "eu/eu-a/w1").containsEntry("w2", "eu/eu-b/w2");
        assertThat(keys.notes()).isEmpty();
        assertThat(keys.nodesMissingLabels()).isEmpty();
        assertThat(keys.problem()).isNull();
    }

    @Test
    void keys_nodeWithoutSubzone_coarsensItsZoneOnly_andNamesTheCommand() {
        // The node's name is no sub-zone for Istio: w3's pods are at eu/eu-a, which a key
        // eu/eu-a/w3 never matches; eu/eu-a next to eu/eu-a/w1 would overlap, so the zone is one.
        Map<String, Map<String, String>> nodes = new TreeMap<>(Map.of(
                "w1",
                node("eu", "eu-a", "w1"),
                "w2",
                node("eu", "eu-a", "w2"),
                "w3",
                node("eu", "eu-a", null),
                "w4",
                node("eu", "eu-b", "w4")));
        List<IstioLocality.PodOnNode> pods = onePodEach(nodes);

        IstioLocality.Keys keys = IstioLocality.keys(nodes, pods);

        assertThat(keys.keyOfNode())
                .containsEntry("w1", "eu/eu-a")
                .containsEntry("w2", "eu/eu-a")
                .containsEntry("w3", "eu/eu-a")
                .containsEntry("w4", "eu/eu-b/w4");
        assertThat(keys.nodesMissingLabels()).containsExactly("w3");
        assertThat(keys.notes())
                .singleElement()
                .asString()
                .contains("eu/eu-a as one locality (nodes w1, w2, w3)")
                .contains("kubectl label node w3 topology.istio.io/subzone=w3")
                .contains("restart");
        assertThat(keys.problem()).isNull();
        assertIstioMatches(nodes, pods, keys);
    }

    @Test
    void keys_nodeWithoutZone_coarsensItsRegion() {
        Map<String, Map<String, String>> nodes = new TreeMap<>(
                Map.of("w1", node("eu", "eu-a", "w1"), "w2", node("eu", null, null), "w3", node("us", "us-a", "w3")));
        List<IstioLocality.PodOnNode> pods = onePodEach(nodes);

        IstioLocality.Keys keys = IstioLocality.keys(nodes, pods);

        assertThat(keys.keyOfNode())
                .containsEntry("w1", "eu")
                .containsEntry("w2", "eu")
                .containsEntry("w3", "us/us-a/w3");
        assertThat(keys.notes())
                .singleElement()
                .asString()
                .contains("kubectl label node w2 topology.kubernetes.io/zone=<zone> topology.istio.io/subzone=w2");
        assertIstioMatches(nodes, pods, keys);
    }

    @Test
    void keys_deprecatedLabels_readWhenTheCurrentOnesAreEmpty() {
        Map<String, String> labels = new TreeMap<>(node("", null, "w1"));
        labels.put(IstioLocality.REGION_BETA, "eu");
        labels.put(IstioLocality.ZONE_BETA, "eu-a");
        Map<String, Map<String, String>> nodes = Map.of("w1", labels);

        IstioLocality.Keys keys = IstioLocality.keys(nodes, onePodEach(nodes));

        assertThat(keys.keyOfNode()).containsEntry("w1", "eu/eu-a/w1");
        assertThat(keys.nodesMissingLabels()).isEmpty();
        assertIstioMatches(nodes, onePodEach(nodes), keys);
    }

    @Test
    void keys_podLocalityLabels_overrideTheNode_newLabelFirstEvenEmpty() {
        Map<String, Map<String, String>> nodes =
                Map.of("w1", node("eu", "eu-a", "w1"), "w2", node("eu", "eu-a", "w2"), "w3", node("eu", "eu-a", "w3"));
        List<IstioLocality.PodOnNode> pods = List.of(
                new IstioLocality.PodOnNode("shop/a", "w1", Map.of(IstioLocality.POD_LOCALITY_LEGACY, "eu.eu-c.rack9")),
                new IstioLocality.PodOnNode(
                        "shop/b",
                        "w2",
                        Map.of(
                                IstioLocality.POD_LOCALITY,
                                "us/us-a/rack1",
                                IstioLocality.POD_LOCALITY_LEGACY,
                                "eu.eu-c.rack9")),
                // An empty topology.istio.io/locality still hides istio-locality: Istio uses the node.
                new IstioLocality.PodOnNode(
                        "shop/c",
                        "w3",
                        Map.of(IstioLocality.POD_LOCALITY, "", IstioLocality.POD_LOCALITY_LEGACY, "eu.eu-c.rack9")));

        IstioLocality.Keys keys = IstioLocality.keys(nodes, pods);

        assertThat(keys.keyOfNode())
                .containsEntry("w1", "eu/eu-c/rack9")
                .containsEntry("w2", "us/us-a/rack1")
                .containsEntry("w3", "eu/eu-a/w3");
        assertIstioMatches(nodes, pods, keys);
    }

    @Test
    void keys_podsOfANodeDisagree_theNodeTakesWhatTheyShare() {
        Map<String, Map<String, String>> nodes = Map.of("w1", node("eu", "eu-a", "w1"), "w2", node("eu", "eu-b", "w2"));
        List<IstioLocality.PodOnNode> pods = List.of(
                new IstioLocality.PodOnNode("shop/a", "w1", Map.of()),
                new IstioLocality.PodOnNode("shop/b", "w1", Map.of(IstioLocality.POD_LOCALITY_LEGACY, "eu.eu-a.rack9")),
                new IstioLocality.PodOnNode("shop/c", "w2", Map.of()));

        IstioLocality.Keys keys = IstioLocality.keys(nodes, pods);

        assertThat(keys.keyOfNode()).containsEntry("w1", "eu/eu-a").containsEntry("w2", "eu/eu-b/w2");
        assertThat(keys.notes()).anySatisfy(n -> assertThat(n).contains("different Istio localities"));
        assertIstioMatches(nodes, pods, keys);
    }

    @Test
    void ofSidecar_aPartTheNodeLacks_comesFromThePodsOwnLabel() {
        // Istio puts the locality's non-empty parts over the pod's labels and reads the sidecar's back.
        Map<String, String> pod = Map.of(IstioLocality.SUBZONE, "rack2");
        IstioLocality.Locality sidecar = IstioLocality.ofSidecar(pod, node("eu", "eu-a", null));

        assertThat(sidecar).isEqualTo(new IstioLocality.Locality("eu", "eu-a", "rack2"));
        assertThat(IstioLocality.ofEndpoint(pod, node("eu", "eu-a", null)))
                .isEqualTo(new IstioLocality.Locality("eu", "eu-a", ""));
        assertThat(IstioLocality.ofSidecar(Map.of(), Map.of())).isNull();
    }

    @Test
    void keys_noRegion_isAProblem_withTheCommands() {
        Map<String, Map<String, String>> nodes = new TreeMap<>(
                Map.of("w1", node(null, null, null), "w2", node(null, null, null), "w3", node("eu", "eu-a", "w3")));

        IstioLocality.Keys keys = IstioLocality.keys(nodes, onePodEach(nodes));

        assertThat(keys.keyOfNode()).containsEntry("w1", "").containsEntry("w3", "eu/eu-a/w3");
        assertThat(keys.problem())
                .contains("w1, w2")
                .contains("no region")
                .contains("for n in w1 w2; do kubectl label"
                        + " node \"$n\" topology.kubernetes.io/region=<region> topology.kubernetes.io/zone=<zone>"
                        + " topology.istio.io/subzone=\"$n\"; done");
        assertThat(keys.nodesMissingLabels()).containsExactly("w1", "w2");
    }

    @Test
    void keys_nodesWithoutPods_doNotCoarsenOthers() {
        Map<String, Map<String, String>> nodes =
                Map.of("w1", node("eu", "eu-a", "w1"), "idle", node("eu", "eu-a", null));

        IstioLocality.Keys keys =
                IstioLocality.keys(nodes, List.of(new IstioLocality.PodOnNode("shop/a", "w1", Map.of())));

        assertThat(keys.keyOfNode()).containsEntry("w1", "eu/eu-a/w1").containsEntry("idle", "eu/eu-a");
        assertThat(keys.nodesMissingLabels()).isEmpty();
        assertThat(keys.notes()).isEmpty();
    }
}
