package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SnapshotAssemblerTest {

    @Test
    void assemble_callsOfAPodDiscoveryLeftOut_areNotedAsLeftOutWithIt_notAsAStranger() {
        ClusterView view = new ClusterView(
                Map.of("w1", "eu/eu-a/w1"),
                List.of(
                        new ClusterView.PodInfo("shop", "frontend-w2", "frontend", "w1", true, 1.0, false),
                        new ClusterView.PodInfo("shop", "cart-w1", "cart", "w1", true, 1.0, false)),
                List.of("shop/frontend-w1: not scheduled on a node yet"),
                List.of(),
                null);
        MetricsReader.Metrics metrics = new MetricsReader.Metrics(
                Map.of("shop/frontend-w2", 0.1, "shop/cart-w1", 0.1),
                Map.of("shop/frontend-w2", 10.0, "shop/cart-w1", 10.0),
                Map.of(
                        "shop/frontend-w1", Map.of("shop/cart", 5.0),
                        "shop/frontend-w2", Map.of("shop/cart", 10.0),
                        "shop/batch-job", Map.of("shop/cart", 1.0)),
                Map.of(),
                List.of());

        SnapshotAssembler.Result result = SnapshotAssembler.assemble(view, metrics, ControllerConfig.DEFAULTS);

        assertThat(result.notes())
                .contains(
                        "calls from shop/frontend-w1: left out with their pod",
                        "calls from shop/batch-job: not a pod of the application or of an entry point: left out");
        assertThat(result.snapshot().calls())
                .singleElement()
                .satisfies(call -> assertThat(call.requestsPerSecond()).isEqualTo(10.0));
    }

    @Test
    void assemble_aReadyPodMissingFromAnAnswer_isNotedAsNoData_onceAndNotForAPodAlreadyNoted() {
        // Was silent: a ready pod with CPU but no request series planned on its component's mean, unsaid.
        ClusterView view = new ClusterView(
                Map.of("w1", "eu/eu-a/w1", "w2", "eu/eu-a/w2"),
                List.of(
                        new ClusterView.PodInfo("shop", "cart-w1", "cart", "w1", true, 1.0, false),
                        new ClusterView.PodInfo("shop", "cart-w2", "cart", "w2", true, 1.0, false),
                        new ClusterView.PodInfo("shop", "cart-w3", "cart", "w2", true, 1.0, false),
                        new ClusterView.PodInfo("shop", "cart-w4", "cart", "w2", false, 1.0, false)),
                List.of(),
                List.of(),
                null);
        MetricsReader.Metrics metrics = new MetricsReader.Metrics(
                Map.of("shop/cart-w1", 0.1, "shop/cart-w2", 0.1),
                Map.of("shop/cart-w2", 10.0),
                Map.of(),
                Map.of(),
                List.of("servedRequestsPerSecond shop/cart-w3: NaN: no data, not zero"));

        SnapshotAssembler.Result result = SnapshotAssembler.assemble(view, metrics, ControllerConfig.DEFAULTS);

        assertThat(result.notes())
                .contains(
                        "cpuCores: no series of ready pod(s) [shop/cart-w3]: no data for them this round, not zero"
                                + " (is each scraped, with its namespace and pod labels?)",
                        "servedRequestsPerSecond: no series of ready pod(s) [shop/cart-w1]: no data for them this"
                                + " round, not zero (is each scraped, with its namespace and pod labels?)")
                .noneMatch(n -> n.contains("cart-w4"));
        assertThat(result.snapshot().replicas())
                .filteredOn(r -> r.pod().equals("cart-w1"))
                .singleElement()
                .satisfies(r -> assertThat(r.requestsPerSecond()).isNull());
    }
}
