package dev.tailor.testkit;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A small Istio mesh for controller tests: nodes w1 (fast), w2, w3 (slow); components
 * {@code frontend} and {@code cart} with one pod per node in namespace {@code shop}; the ingress
 * gateway ({@code istio-system}, pods {@code ingress-<node>}) on every node. {@link #exposition}
 * is what its exporters (cAdvisor, Istio, kubenurse) would show at a time: counters growing at
 * fixed rates, so Prometheus's {@code rate()} gives {@link #RPS_PER_POD} requests/s per pod and
 * {@link #CPU_PER_REQUEST} CPU-seconds per request, more on the slow node.
 */
public final class ShopCluster {

    /** The nodes. */
    public static final List<String> NODES = List.of("w1", "w2", "w3");
    /** Per node: CPU seconds per request of an app container there. */
    public static final Map<String, Double> CPU_PER_REQUEST = Map.of("w1", 0.004, "w2", 0.005, "w3", 0.010);
    /** Requests per second every pod serves, and every caller pod sends. */
    public static final double RPS_PER_POD = 20;

    private ShopCluster() {
    }

    /**
     * A real Prometheus scraping this mesh's exporters every second, returned once scrapes cover a
     * 5 s rate window (what the controller tests configure), so {@code rate(...[5s])} is right.
     */
    public static PrometheusServer prometheus() throws IOException, InterruptedException {
        long started = System.nanoTime();
        PrometheusServer server = PrometheusServer.start(() -> exposition((System.nanoTime() - started) / 1e9 + 100));
        boolean covered = server.await(Duration.ofSeconds(40), () -> server.value(
                "count_over_time(istio_requests_total{pod=\"cart-w1\",reporter=\"destination\"}[5s])") >= 5);
        if (!covered) {
            server.close();
            throw new IllegalStateException("Prometheus did not scrape the test exporter within 40 s");
        }
        return server;
    }

    /** Creates the nodes and pods (all Ready) through {@code client}, e.g. on the fabric8 mock API server. */
    public static void create(KubernetesClient client) {
        for (String node : NODES) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node)
                    .addToLabels("topology.kubernetes.io/region", "eu").addToLabels("topology.kubernetes.io/zone", "eu-a")
                    .endMetadata().build()).create();
            for (String component : List.of("frontend", "cart")) {
                client.pods().inNamespace("shop").resource(pod("shop", component + "-" + node, component, node, true))
                        .create();
            }
            client.pods().inNamespace("istio-system").resource(pod("istio-system", "ingress-" + node,
                    "istio-ingressgateway", node, true)).create();
        }
    }

    /** A pod labelled {@code app=<app>} on {@code node}: the app container with a 1-core limit and a sidecar. */
    public static Pod pod(String namespace, String name, String app, String node, boolean ready) {
        return new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name).addToLabels("app", app)
                .endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName(app).withNewResources()
                .addToLimits("cpu", new Quantity("1")).endResources().endContainer()
                .addNewContainer().withName("istio-proxy").endContainer().endSpec()
                .withNewStatus().addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .endStatus().build();
    }

    /** The exposition (Prometheus text format) at {@code t} seconds of counters' life. */
    public static String exposition(double t) {
        StringBuilder text = new StringBuilder();
        text.append("# TYPE container_cpu_usage_seconds_total counter\n");
        for (String node : List.of("w1", "w2", "w3")) {
            for (String component : List.of("frontend", "cart")) {
                text.append(String.format(Locale.ROOT, "container_cpu_usage_seconds_total{namespace=\"shop\",pod=\"%s-%s\","
                        + "container=\"%s\"} %.6f%n", component, node, component, CPU_PER_REQUEST.get(node) * RPS_PER_POD * t));
                // The sidecar's CPU must not count.
                text.append(String.format(Locale.ROOT, "container_cpu_usage_seconds_total{namespace=\"shop\",pod=\"%s-%s\","
                        + "container=\"istio-proxy\"} %.6f%n", component, node, 5 * t));
            }
        }
        text.append("# TYPE istio_requests_total counter\n");
        for (String node : List.of("w1", "w2", "w3")) {
            for (String component : List.of("frontend", "cart")) {
                text.append(String.format(Locale.ROOT, "istio_requests_total{reporter=\"destination\",namespace=\"shop\","
                        + "pod=\"%s-%s\"} %.3f%n", component, node, RPS_PER_POD * t));
            }
            text.append(String.format(Locale.ROOT, "istio_requests_total{reporter=\"source\",namespace=\"istio-system\","
                    + "pod=\"ingress-%s\",destination_workload=\"frontend\",destination_workload_namespace=\"shop\"} %.3f%n",
                    node, RPS_PER_POD * t));
            text.append(String.format(Locale.ROOT, "istio_requests_total{reporter=\"source\",namespace=\"shop\","
                    + "pod=\"frontend-%s\",destination_workload=\"cart\",destination_workload_namespace=\"shop\"} %.3f%n",
                    node, RPS_PER_POD * t));
        }
        text.append("# TYPE kubenurse_httpclient_request_duration_seconds histogram\n");
        for (String from : List.of("w1", "w2", "w3")) {
            for (String to : List.of("w1", "w2", "w3")) {
                if (from.equals(to)) {
                    continue;
                }
                // Every probe between two nodes takes between 1 and 2 ms (in the le="0.002" bucket).
                double probes = 2 * t;
                for (String le : List.of("0.001", "0.002", "0.005", "+Inf")) {
                    double count = le.equals("0.001") ? 0 : probes;
                    text.append(String.format(Locale.ROOT, "kubenurse_httpclient_request_duration_seconds_bucket{node=\"%s\","
                            + "type=\"path_%s\",le=\"%s\"} %.3f%n", from, to, le, count));
                }
            }
        }
        return text.toString();
    }

}
