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
}
