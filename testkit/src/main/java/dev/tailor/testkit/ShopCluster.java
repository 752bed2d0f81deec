package dev.tailor.testkit;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleBiFunction;

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

    private ShopCluster() {}

    /**
     * A real Prometheus scraping this mesh's exporters every second, returned once scrapes cover a
     * 5 s rate window (what the controller tests configure), so {@code rate(...[5s])} is right.
     */
    public static PrometheusServer prometheus() throws IOException, InterruptedException {
        long started = System.nanoTime();
        PrometheusServer server = PrometheusServer.start(() -> exposition((System.nanoTime() - started) / 1e9 + 100));
        boolean covered;
        try {
            covered = Await.holds(
                    Duration.ofSeconds(40),
                    () -> server.value(
                                    "count_over_time(istio_requests_total{pod=\"cart-w1\",reporter=\"destination\"}[5s])")
                            >= 5);
        } catch (IllegalStateException exited) { // with the server's log
            server.close();
            throw exited;
        }
        if (!covered) {
            server.close();
            throw new IllegalStateException("Prometheus did not scrape the test exporter within 40 s");
        }
        return server;
    }

    /**
     * Creates the nodes and pods (all Ready) through {@code client}, e.g. on the fabric8 mock API server.
     * Each node is in region {@code eu}, zone {@code eu-a}, and its own Istio sub-zone (label
     * {@code topology.istio.io/subzone} = its name), as HEART needs: Istio's locality is then
     * {@code eu/eu-a/<node>}.
     */
    public static void create(KubernetesClient client) {
        for (String node : NODES) {
            client.nodes()
                    .resource(new NodeBuilder()
                            .withNewMetadata()
                            .withName(node)
                            .addToLabels("topology.kubernetes.io/region", "eu")
                            .addToLabels("topology.kubernetes.io/zone", "eu-a")
                            .addToLabels("topology.istio.io/subzone", node)
                            .endMetadata()
                            .build())
                    .create();
            for (String component : List.of("frontend", "cart")) {
                client.pods()
                        .inNamespace("shop")
                        .resource(pod("shop", component + "-" + node, component, node, true))
                        .create();
            }
            client.pods()
                    .inNamespace("istio-system")
                    .resource(pod("istio-system", "ingress-" + node, "istio-ingressgateway", node, true))
                    .create();
        }
    }

    /** A pod labelled {@code app=<app>} on {@code node}: the app container with a 1-core limit and a sidecar. */
    public static Pod pod(String namespace, String name, String app, String node, boolean ready) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .addToLabels("app", app)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .addNewContainer()
                .withName(app)
                .withNewResources()
                .addToLimits("cpu", new Quantity("1"))
                .endResources()
                .endContainer()
                .addNewContainer()
                .withName("istio-proxy")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .addNewCondition()
                .withType("Ready")
                .withStatus(ready ? "True" : "False")
                .endCondition()
                .endStatus()
                .build();
    }

    /** The exposition (Prometheus text format) at {@code t} seconds of counters' life. */
    public static String exposition(double t) {
        StringBuilder text = new StringBuilder();
        String family = "";
        for (Map.Entry<String, Double> sample :
                samples(t, node -> CPU_PER_REQUEST.get(node) * RPS_PER_POD * t).entrySet()) {
            String name = sample.getKey().substring(0, sample.getKey().indexOf('{'));
            String next = name.endsWith("_bucket") ? name.substring(0, name.length() - "_bucket".length()) : name;
            if (!next.equals(family)) {
                family = next;
                text.append("# TYPE ").append(family).append(name.endsWith("_bucket") ? " histogram\n" : " counter\n");
            }
            text.append(sample.getKey()).append(String.format(Locale.ROOT, " %.6f%n", sample.getValue()));
        }
        return text.toString();
    }

    /**
     * The same series as {@link #exposition} over a stretch of the past, in the OpenMetrics text
     * format with timestamps (for {@link PrometheusServer.Options#history()}), with a CPU cost per
     * request that may change over time — a node slowing down.
     *
     * @param startEpochSeconds when the history starts; counters start there at 100 s of life
     * @param seconds           its length
     * @param stepSeconds       seconds between samples (a scrape interval)
     * @param cpuPerRequest     (node, seconds since the start) → CPU seconds per request of an app
     *                          container on that node
     */
    public static String history(
            long startEpochSeconds, int seconds, int stepSeconds, ToDoubleBiFunction<String, Double> cpuPerRequest) {
        Map<String, StringBuilder> bySeries = new LinkedHashMap<>();
        Map<String, Double> cpuSeconds = new HashMap<>();
        double life = 100;
        for (String node : NODES) {
            cpuSeconds.put(node, CPU_PER_REQUEST.get(node) * RPS_PER_POD * life);
        }
        for (int at = 0; at <= seconds; at += stepSeconds) {
            if (at > 0) {
                for (String node : NODES) {
                    // The rate over the step just ended: what it was at the step's start.
                    double rate = cpuPerRequest.applyAsDouble(node, (double) (at - stepSeconds)) * RPS_PER_POD;
                    cpuSeconds.merge(node, rate * stepSeconds, Double::sum);
                }
            }
            long timestamp = startEpochSeconds + at;
            for (Map.Entry<String, Double> sample :
                    samples(life + at, cpuSeconds::get).entrySet()) {
                bySeries.computeIfAbsent(sample.getKey(), k -> new StringBuilder())
                        .append(sample.getKey())
                        .append(String.format(Locale.ROOT, " %.6f %d%n", sample.getValue(), timestamp));
            }
        }
        StringBuilder text = new StringBuilder();
        bySeries.values().forEach(text::append);
        return text.append("# EOF\n").toString();
    }

    /** What each app pod does over time, for {@link #history(long, int, int, Load)}. */
    public interface Load {

        /** Requests/s the pod of {@code component} on {@code node} serves at {@code t} s into the history. */
        double servedPerSecond(String component, String node, double t);

        /** CPU cores that pod's app container uses at {@code t} s into the history. */
        double cpuCores(String component, String node, double t);
    }

    /**
     * Like {@link #history(long, int, int, ToDoubleBiFunction)}, with each app pod's served rate and
     * CPU given over time: a request metric that dips for a round, a pod that idles. The calls
     * (ingress → frontend, frontend → cart) stay at {@link #RPS_PER_POD} per caller pod, so the
     * demand on each component is 3 × that; the delays are as in {@link #exposition}.
     */
    public static String history(long startEpochSeconds, int seconds, int stepSeconds, Load load) {
        Map<String, StringBuilder> bySeries = new LinkedHashMap<>();
        Map<String, Double> cpuSeconds = new HashMap<>();
        Map<String, Double> served = new HashMap<>();
        double life = 100;
        for (String node : NODES) {
            for (String component : List.of("frontend", "cart")) {
                cpuSeconds.put(component + "-" + node, load.cpuCores(component, node, 0) * life);
                served.put(component + "-" + node, load.servedPerSecond(component, node, 0) * life);
            }
        }
        for (int at = 0; at <= seconds; at += stepSeconds) {
            if (at > 0) {
                for (String node : NODES) {
                    for (String component : List.of("frontend", "cart")) {
                        // The rates over the step just ended: what they were at the step's start.
                        double t = at - stepSeconds;
                        cpuSeconds.merge(
                                component + "-" + node, load.cpuCores(component, node, t) * stepSeconds, Double::sum);
                        served.merge(
                                component + "-" + node,
                                load.servedPerSecond(component, node, t) * stepSeconds,
                                Double::sum);
                    }
                }
            }
            long timestamp = startEpochSeconds + at;
            for (Map.Entry<String, Double> sample :
                    samples(life + at, cpuSeconds::get, served::get).entrySet()) {
                bySeries.computeIfAbsent(sample.getKey(), k -> new StringBuilder())
                        .append(sample.getKey())
                        .append(String.format(Locale.ROOT, " %.6f %d%n", sample.getValue(), timestamp));
            }
        }
        StringBuilder text = new StringBuilder();
        bySeries.values().forEach(text::append);
        return text.append("# EOF\n").toString();
    }

    /** {@link #samples(double, Function)} with per-pod CPU and served counters ({@code component-node}). */
    private static Map<String, Double> samples(
            double t, Function<String, Double> cpuSecondsOfPod, Function<String, Double> servedOfPod) {
        Map<String, Double> samples = samples(t, node -> 0.0);
        for (String node : NODES) {
            for (String component : List.of("frontend", "cart")) {
                samples.put(
                        String.format(
                                Locale.ROOT,
                                "container_cpu_usage_seconds_total{namespace=\"shop\","
                                        + "pod=\"%s-%s\",container=\"%s\"}",
                                component,
                                node,
                                component),
                        cpuSecondsOfPod.apply(component + "-" + node));
                samples.put(
                        String.format(
                                Locale.ROOT,
                                "istio_requests_total{reporter=\"destination\"," + "namespace=\"shop\",pod=\"%s-%s\"}",
                                component,
                                node),
                        servedOfPod.apply(component + "-" + node));
            }
        }
        return samples;
    }

    /**
     * The series of the mesh at {@code t} seconds of counters' life, in exposition order: series
     * (name and labels) → value.
     *
     * @param cpuSecondsOnNode node → the CPU-seconds counter of an app container there
     */
    private static Map<String, Double> samples(double t, Function<String, Double> cpuSecondsOnNode) {
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String node : NODES) {
            for (String component : List.of("frontend", "cart")) {
                samples.put(
                        String.format(
                                Locale.ROOT,
                                "container_cpu_usage_seconds_total{namespace=\"shop\",pod=\"%s-%s\","
                                        + "container=\"%s\"}",
                                component,
                                node,
                                component),
                        cpuSecondsOnNode.apply(node));
                // The sidecar's CPU must not count.
                samples.put(
                        String.format(
                                Locale.ROOT,
                                "container_cpu_usage_seconds_total{namespace=\"shop\",pod=\"%s-%s\","
                                        + "container=\"istio-proxy\"}",
                                component,
                                node),
                        5 * t);
            }
        }
        for (String node : NODES) {
            for (String component : List.of("frontend", "cart")) {
                samples.put(
                        String.format(
                                Locale.ROOT,
                                "istio_requests_total{reporter=\"destination\",namespace=\"shop\"," + "pod=\"%s-%s\"}",
                                component,
                                node),
                        RPS_PER_POD * t);
            }
            samples.put(
                    String.format(
                            Locale.ROOT,
                            "istio_requests_total{reporter=\"source\",namespace=\"istio-system\","
                                    + "pod=\"ingress-%s\",destination_workload=\"frontend\",destination_workload_namespace=\"shop\"}",
                            node),
                    RPS_PER_POD * t);
            samples.put(
                    String.format(
                            Locale.ROOT,
                            "istio_requests_total{reporter=\"source\",namespace=\"shop\","
                                    + "pod=\"frontend-%s\",destination_workload=\"cart\",destination_workload_namespace=\"shop\"}",
                            node),
                    RPS_PER_POD * t);
        }
        for (String from : NODES) {
            for (String to : NODES) {
                if (from.equals(to)) {
                    continue;
                }
                // Every probe between two nodes takes between 1 and 2 ms (in the le="0.002" bucket).
                double probes = 2 * t;
                for (String le : List.of("0.001", "0.002", "0.005", "+Inf")) {
                    samples.put(
                            String.format(
                                    Locale.ROOT,
                                    "kubenurse_httpclient_request_duration_seconds_bucket{node=\"%s\","
                                            + "type=\"path_%s\",le=\"%s\"}",
                                    from,
                                    to,
                                    le),
                            le.equals("0.001") ? 0 : probes);
                }
            }
        }
        return samples;
    }

    /**
     * What an Istio mesh with the delay exporter adds to {@link #create}'s cluster: Istio's
     * DestinationRule CRD serving v1 (and v1beta1, v1alpha3), istiod {@code istio-system/istiod} at
     * image tag {@code istioVersion}, and the kubenurse DaemonSet ({@code kube-system/kubenurse}) with
     * a ready pod on every node.
     */
    public static void createMesh(KubernetesClient client, String istioVersion) {
        List<io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion> versions =
                new java.util.ArrayList<>();
        for (String version : List.of("v1", "v1beta1", "v1alpha3")) {
            versions.add(new io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersionBuilder()
                    .withName(version)
                    .withServed(true)
                    .withStorage(version.equals("v1"))
                    .build());
        }
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .resource(new io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder()
                        .withNewMetadata()
                        .withName("destinationrules.networking.istio.io")
                        .endMetadata()
                        .withNewSpec()
                        .withGroup("networking.istio.io")
                        .withScope("Namespaced")
                        .withNewNames()
                        .withKind("DestinationRule")
                        .withPlural("destinationrules")
                        .endNames()
                        .withVersions(versions)
                        .endSpec()
                        .build())
                .create();
        client.apps()
                .deployments()
                .inNamespace("istio-system")
                .resource(new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
                        .withNewMetadata()
                        .withName("istiod")
                        .withNamespace("istio-system")
                        .addToLabels("app", "istiod")
                        .endMetadata()
                        .withNewSpec()
                        .withNewTemplate()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("discovery")
                        .withImage("docker.io/istio/pilot:" + istioVersion)
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build())
                .create();
        client.apps()
                .daemonSets()
                .inNamespace("kube-system")
                .resource(new io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder()
                        .withNewMetadata()
                        .withName("kubenurse")
                        .withNamespace("kube-system")
                        .addToLabels("app.kubernetes.io/name", "kubenurse")
                        .endMetadata()
                        .withNewStatus()
                        .withDesiredNumberScheduled(NODES.size())
                        .withNumberReady(NODES.size())
                        .endStatus()
                        .build())
                .create();
    }
}
