package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster recorded with {@code kubectl get ... -o yaml} is discovered as the live API server is:
 * the same nodes, localities and pods, chosen by the same namespaces and labels. The live side is the
 * fabric8 mock API server in CRUD mode, which applies label selectors as an API server does.
 */
@EnableKubernetesMockClient(crud = true)
class RecordedClusterTest {

    static KubernetesClient client;

    private static final ControllerConfig.Kubernetes SHOP = ControllerConfig.Kubernetes.builder()
            .namespaces(List.of("shop"))
            .stateConfigMap("")
            .build();

    @TempDir
    Path dir;

    @BeforeEach
    void cluster() {
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        ShopCluster.create(client);
    }

    /** What {@code kubectl get nodes,pods,destinationrules -A -o yaml} prints for the mock cluster now. */
    private Path recording(String fileName, boolean json) throws Exception {
        List<HasMetadata> items = new ArrayList<>();
        items.addAll(client.nodes().list().getItems());
        items.addAll(client.pods().inAnyNamespace().list().getItems());
        items.addAll(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .list()
                .getItems());
        KubernetesSerialization serialization = new KubernetesSerialization();
        Object list = new KubernetesListBuilder().withItems(items).build();
        return Files.writeString(dir.resolve(fileName), json ? serialization.asJson(list) : serialization.asYaml(list));
    }

    private static ClusterView sorted(ClusterView view) {
        List<ClusterView.PodInfo> pods = new ArrayList<>(view.pods());
        pods.sort(Comparator.comparing(ClusterView.PodInfo::key));
        return new ClusterView(
                view.nodes(), pods, view.skipped(), view.nodesMissingLocalityLabels(), view.localityProblem());
    }

    @Test
    void discover_recordingOfTheCluster_seesWhatTheApiServerShows() throws Exception {
        // A pod outside the namespaces, one without the component label, one on no node yet, one not
        // Ready: each must be chosen or left out as the API server's label selection and discovery do.
        client.pods()
                .inNamespace("other")
                .resource(ShopCluster.pod("other", "cart-x", "cart", "w1", true))
                .create();
        client.pods()
                .inNamespace("shop")
                .resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withNewMetadata()
                        .withName("job-1")
                        .withNamespace("shop")
                        .endMetadata()
                        .withNewSpec()
                        .withNodeName("w1")
                        .endSpec()
                        .build())
                .create();
        client.pods()
                .inNamespace("shop")
                .resource(ShopCluster.pod("shop", "cart-pending", "cart", null, false))
                .create();
        client.pods()
                .inNamespace("shop")
                .resource(ShopCluster.pod("shop", "cart-w1b", "cart", "w1", false))
                .create();

        ClusterView live = KubernetesDiscovery.discover(client, SHOP);
        for (boolean json : List.of(false, true)) {
            RecordedCluster recorded = RecordedCluster.read(recording(json ? "cluster.json" : "cluster.yaml", json));
            ClusterView fromFile = KubernetesDiscovery.discover(recorded, SHOP);

            assertThat(sorted(fromFile)).as(json ? "JSON" : "YAML").isEqualTo(sorted(live));
        }
        assertThat(live.pods())
                .extracting(ClusterView.PodInfo::name)
                .contains("ingress-w1", "cart-w1b")
                .doesNotContain("cart-x", "job-1", "cart-pending");
        assertThat(live.skipped()).anyMatch(s -> s.startsWith("shop/cart-pending: not scheduled"));
    }

    @Test
    void discover_bundledExample_isTheTestCluster() throws Exception {
        // examples/tryout/cluster.yaml is ShopCluster as kubectl would print it, Services included.
        Path example = Path.of("").toAbsolutePath().getParent().resolve("examples/tryout/cluster.yaml");
        RecordedCluster recorded = RecordedCluster.read(example);

        assertThat(sorted(KubernetesDiscovery.discover(recorded, SHOP)))
                .isEqualTo(sorted(KubernetesDiscovery.discover(client, SHOP)));
        assertThat(recorded.summary())
                .isEqualTo("3 node(s), 9 pod(s), 0 DestinationRule(s); left out: 2 Service" + " object(s)");
    }

    @Test
    void read_aDirectory_saysWhyInWords_notTheExceptionsName() throws Exception {
        Path directory = Files.createTempDirectory("recorded-cluster-test");
        try {
            assertThatThrownBy(() -> RecordedCluster.read(directory))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(directory + ": cannot read it (")
                    .hasMessageNotContaining("Exception");
        } finally {
            Files.delete(directory);
        }
    }

    @Test
    void ownedRules_onlyTailorsInTheNamespace() throws Exception {
        for (String[] rule : List.of(
                new String[] {"shop", "ours", "tailor-heart"},
                new String[] {"shop", "theirs", "someone-else"},
                new String[] {"other", "ours-elsewhere", "tailor-heart"})) {
            client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                    .inNamespace(rule[0])
                    .resource(new GenericKubernetesResourceBuilder()
                            .withApiVersion("networking.istio.io/v1")
                            .withKind("DestinationRule")
                            .withNewMetadata()
                            .withName(rule[1])
                            .withNamespace(rule[0])
                            .addToLabels(DestinationRules.MANAGED_BY_LABEL, rule[2])
                            .endMetadata()
                            .build())
                    .create();
        }
        RecordedCluster recorded = RecordedCluster.read(recording("cluster.yaml", false));

        assertThat(recorded.ownedRules("shop"))
                .extracting(r -> r.getMetadata().getName())
                .containsExactly("ours");
        assertThat(recorded.ownedRules("shop"))
                .extracting(r -> r.getMetadata().getName())
                .isEqualTo(ClusterReader.of(client).ownedRules("shop").stream()
                        .map(r -> r.getMetadata().getName())
                        .toList());
        assertThat(recorded.podsWithLabels("istio-system", Map.of("app", "istio-ingressgateway")))
                .hasSize(3);
    }

    @Test
    void read_documentsSeparatedByDashes_likeManifests() throws Exception {
        Path file = Files.writeString(dir.resolve("manifests.yaml"), """
                apiVersion: v1
                kind: Node
                metadata: {name: w1, labels: {topology.kubernetes.io/region: eu}}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: cart-1, namespace: shop, labels: {app: cart}}
                spec: {nodeName: w1, containers: [{name: cart}]}
                """);

        RecordedCluster recorded = RecordedCluster.read(file);

        assertThat(recorded.nodes()).hasSize(1);
        assertThat(recorded.podsWithLabel("shop", "app"))
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("cart-1");
        assertThat(recorded.podsWithLabel("shop", "tier")).isEmpty();
    }

    @Test
    void read_badInput_namesTheFileAndWhatWasExpected() throws Exception {
        assertThatThrownBy(() -> RecordedCluster.read(dir.resolve("missing.yaml")))
                .hasMessage(dir.resolve("missing.yaml") + ": no such file");
        Path broken = Files.writeString(dir.resolve("broken.yaml"), "items: [\n");
        assertThatThrownBy(() -> RecordedCluster.read(broken))
                .hasMessageStartingWith(broken + ": not Kubernetes objects (")
                .hasMessageContaining("expected the output of kubectl get nodes,pods,destinationrules -A -o yaml");
        // Was "(An error has occurred.)", the client library's wrapper, for a file cut short.
        assertThatThrownBy(() -> RecordedCluster.read(broken))
                .hasMessageStartingWith(broken + ": not Kubernetes objects (not valid YAML at line 2: the file ends"
                        + " too early (expected: a value)); ")
                .hasMessageNotContaining("An error has occurred");
        Path cutJson = Files.writeString(dir.resolve("cut.json"), "{\"a\":\n");
        assertThatThrownBy(() -> RecordedCluster.read(cutJson))
                .hasMessageStartingWith(cutJson + ": not Kubernetes objects (not valid YAML at line 2")
                .hasMessageNotContaining("An error has occurred");
        Path text = Files.writeString(dir.resolve("text.yaml"), "hello\n");
        assertThatThrownBy(() -> RecordedCluster.read(text))
                .hasMessageStartingWith(text + ": not Kubernetes objects")
                .hasMessageNotContaining("RawExtension");
        // A controller configuration given by mistake: what was found and what was expected, in the file's terms.
        Path config = Files.writeString(dir.resolve("heart.yaml"), """
                prometheus: {url: http://127.0.0.1:9090}
                kubernetes: {namespaces: [shop]}
                """);
        assertThatThrownBy(() -> RecordedCluster.read(config))
                .hasMessage(config + ": not Kubernetes objects (found a mapping with the keys prometheus, kubernetes"
                        + " and no apiVersion or kind); expected Kubernetes objects with apiVersion and kind, as"
                        + " kubectl get nodes,pods,destinationrules -A -o yaml prints them (a List, or objects"
                        + " separated by ---)");
        // A List's item without apiVersion and kind: named by its place in the list, not a crash.
        Path bareItem = Files.writeString(dir.resolve("bare.yaml"), """
                apiVersion: v1
                kind: List
                items:
                  - {}
                """);
        assertThatThrownBy(() -> RecordedCluster.read(bareItem))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(bareItem + ": items[0]: not Kubernetes objects (")
                .hasMessageNotContaining("RawExtension");
        Path podsOnly = Files.writeString(dir.resolve("pods.yaml"), """
                apiVersion: v1
                kind: List
                items:
                - {apiVersion: v1, kind: Pod, metadata: {name: cart-1, namespace: shop}}
                """);
        assertThatThrownBy(() -> RecordedCluster.read(podsOnly)).hasMessageStartingWith(podsOnly + ": no Node in it");
        Path noNamespace = Files.writeString(dir.resolve("nons.yaml"), """
                apiVersion: v1
                kind: List
                items:
                - {apiVersion: v1, kind: Node, metadata: {name: w1}}
                - {apiVersion: v1, kind: Pod, metadata: {name: cart-1}}
                """);
        assertThatThrownBy(() -> RecordedCluster.read(noNamespace))
                .hasMessage(noNamespace + ": items[1] (Pod) cart-1: metadata.namespace is missing (kubectl get -o yaml"
                        + " writes it)");
    }

    @Test
    void controller_onARecordedCluster_runsDryRoundsOnly() throws Exception {
        // Nothing can be written to a file: a writing round is a programming error, not a failed round.
        RecordedCluster recorded = RecordedCluster.read(recording("cluster.yaml", false));
        Controller controller = new Controller(
                ControllerRoundTest.config("http://127.0.0.1:1"),
                HeartConfig.DEFAULTS,
                TestPrometheus.client(URI.create("http://127.0.0.1:1")),
                recorded,
                AtpmState.EMPTY,
                null);

        assertThatThrownBy(() -> controller.round(Instant.now(), false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only dry runs");
        // A dry round reads the recording, then fails on the unreachable Prometheus as a live one would.
        Controller.Round round = controller.round(Instant.now(), true);
        assertThat(round.failure()).isEqualTo(Controller.FailureReason.PROMETHEUS_UNREACHABLE);
    }
}
