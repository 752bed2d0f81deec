package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

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
        var yaml = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper();
        var asTailorWrites = yaml.readTree("spec: {host: cart, to: {eu/eu-a/w1: 73, eu/eu-a/w2: 27}}");
        var asTheApiServerReturns = yaml.readTree("spec: {to: {eu/eu-a/w2: 27.0, eu/eu-a/w1: 73}, host: cart}");

        assertThat(Actuator.canonical(asTheApiServerReturns)).isEqualTo(Actuator.canonical(asTailorWrites));
        assertThat(Actuator.canonical(yaml.readTree("to: {eu/eu-a/w1: 72}")))
                .isNotEqualTo(Actuator.canonical(yaml.readTree("to: {eu/eu-a/w1: 73}")));
    }
}
