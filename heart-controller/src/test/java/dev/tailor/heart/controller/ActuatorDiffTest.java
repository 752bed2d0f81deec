package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ActuatorDiffTest {

    @Test
    void diff_replacedWeights_showTheOldLineInItsPlace_beforeTheNewOnes() {
        String before = """
                distribute:
                - from: eu/eu-a/w1
                  to:
                    eu/eu-a/w1: 100
                """;
        String after = """
                distribute:
                - from: eu/eu-a/w1
                  to:
                    eu/eu-a/w1: 73
                    eu/eu-a/w2: 27
                outlierDetection:
                  interval: 10s
                """;

        assertThat(Actuator.diff(new Actuator.Change(Actuator.Action.UPDATE, "shop", "r", before, after)))
                .containsExactly(
                        "  distribute:",
                        "  - from: eu/eu-a/w1",
                        "    to:",
                        "-     eu/eu-a/w1: 100",
                        "+     eu/eu-a/w1: 73",
                        "+     eu/eu-a/w2: 27",
                        "+ outlierDetection:",
                        "+   interval: 10s");
    }

    @Test
    void diff_createAndDelete_areAllPlusOrAllMinus() {
        assertThat(Actuator.diff(new Actuator.Change(Actuator.Action.CREATE, "shop", "r", "", "a: 1\nb: 2\n")))
                .containsExactly("+ a: 1", "+ b: 2");
        assertThat(Actuator.diff(new Actuator.Change(Actuator.Action.DELETE, "shop", "r", "a: 1\n", "")))
                .containsExactly("- a: 1");
    }

    @Test
    void canonical_keyOrderAndNumbersWrittenAlike_areEqual() throws Exception {
        var yaml = new YAMLMapper();
        var asTailorWrites = yaml.readTree("spec: {host: cart, to: {eu/eu-a/w1: 73, eu/eu-a/w2: 27}}");
        var asTheApiServerReturns = yaml.readTree("spec: {to: {eu/eu-a/w2: 27.0, eu/eu-a/w1: 73}, host: cart}");

        assertThat(Actuator.canonical(asTheApiServerReturns)).isEqualTo(Actuator.canonical(asTailorWrites));
        assertThat(Actuator.canonical(yaml.readTree("to: {eu/eu-a/w1: 72}")))
                .isNotEqualTo(Actuator.canonical(yaml.readTree("to: {eu/eu-a/w1: 73}")));
    }

    @Test
    void plan_ownedRuleWithSortedKeys_unchangedWhenEqual_andItsDiffShowsTheMovedWeightsOnly() throws Exception {
        var yaml = new YAMLMapper();
        String wanted = """
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: r, namespace: shop, labels: {app.kubernetes.io/managed-by: tailor-heart}}
                spec:
                  trafficPolicy:
                    loadBalancer:
                      localityLbSetting:
                        distribute:
                          - {from: eu/w1, to: {eu/w2: %d, eu/w1: %d}}
                  host: cart
                """;
        // As the API server returns it: every key sorted.
        String owned = """
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {labels: {app.kubernetes.io/managed-by: tailor-heart}, name: r, namespace: shop}
                spec:
                  host: cart
                  trafficPolicy:
                    loadBalancer:
                      localityLbSetting:
                        distribute:
                          - {from: eu/w1, to: {eu/w1: 70, eu/w2: 30}}
                """;
        var rule = yaml.readValue(owned, GenericKubernetesResource.class);
        Actuator actuator = new Actuator(
                new ClusterReader() {
                    @Override
                    public List<Node> nodes() {
                        return List.of();
                    }

                    @Override
                    public List<Pod> podsWithLabel(String n, String k) {
                        return List.of();
                    }

                    @Override
                    public List<Pod> podsWithLabels(String n, Map<String, String> l) {
                        return List.of();
                    }

                    @Override
                    public List<GenericKubernetesResource> ownedRules(String namespace) {
                        return List.of(rule);
                    }

                    @Override
                    public String address() {
                        return "test";
                    }
                },
                null,
                "tailor-heart");

        var same = actuator.plan(List.of((ObjectNode) yaml.readTree(wanted.formatted(30, 70))), List.of("shop"));
        var moved = actuator.plan(List.of((ObjectNode) yaml.readTree(wanted.formatted(27, 73))), List.of("shop"));

        assertThat(same).extracting(Actuator.Change::action).containsExactly(Actuator.Action.UNCHANGED);
        assertThat(moved).extracting(Actuator.Change::action).containsExactly(Actuator.Action.UPDATE);
        assertThat(Actuator.diff(moved.get(0)))
                .filteredOn(line -> !line.startsWith("  "))
                .containsExactly(
                        "-             eu/w2: 30",
                        "-             eu/w1: 70",
                        "+             eu/w2: 27",
                        "+             eu/w1: 73");
    }
}
