package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ScenariosTest {

    private static final String VALID = """
            name: t
            seed: 1
            nodes: [{name: n1, cores: 2, speedFactor: 1}]
            entry: a
            components: [{name: a, cpuMillisPerCall: 1, calls: [[b]]}, {name: b, cpuMillisPerCall: 2}]
            networks: {flat: {otherMillis: [0.1, 0.2]}}
            """;

    @ParameterizedTest
    @ValueSource(strings = {"paper-pairwise", "paper-dag"})
    void bundled_loadAndAreValid(String name) {
        ClusterScenario scenario = Scenarios.load(name);
        assertThat(scenario.problems()).isEmpty();
        assertThat(scenario.nodes()).extracting(ClusterScenario.NodeSpec::speedFactor)
                .containsExactly(1.0, 0.9, 0.7, 0.5, 0.4);
        assertThat(scenario.rps()).containsExactly(50.0, 100.0, 200.0, 400.0);
        assertThat(scenario.networks()).containsOnlyKeys("A", "B");
    }

    @Test
    void parse_defaultsFillOptionalFields() {
        ClusterScenario scenario = Scenarios.parse(VALID, "t.yaml");
        assertThat(scenario.warmupSeconds()).isEqualTo(120.0);
        assertThat(scenario.cpuModel()).isEqualTo(ClusterScenario.CpuModel.FLUID);
        assertThat(scenario.network()).isEqualTo("flat");
        assertThat(scenario.replicaCostVariation()).isEqualTo(0.12);
    }

    @Test
    void parse_unknownField_namesItAndTheKnownOnes() {
        assertThatThrownBy(() -> Scenarios.parse(VALID + "warmup: 3\n", "t.yaml"))
                .hasMessageContaining("t.yaml: warmup: unknown field").hasMessageContaining("warmupSeconds");
    }

    @Test
    void parse_wrongType_namesThePath() {
        assertThatThrownBy(() -> Scenarios.parse(VALID.replace("cores: 2", "cores: two"), "t.yaml"))
                .hasMessageContaining("nodes[0].cores").hasMessageContaining("two")
                .hasMessageContaining("a number");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "cpuModel: cfs\n", "t.yaml"))
                .hasMessageContaining("cpuModel").hasMessageContaining("fluid, cfs-quota");
    }

    @Test
    void parse_everyProblemAtOnce() {
        String bad = """
                name: t
                nodes: [{name: n1, cores: 0, speedFactor: -1}, {name: n1, cores: 1, speedFactor: 1}]
                entry: z
                components: [{name: a, cpuMillisPerCall: -1, calls: [[b, q]]}, {name: b, cpuMillisPerCall: 2}]
                rps: [100, -5]
                networks: {flat: {otherMillis: [3, 1]}, slow: {otherMillis: [1, 2], remoteNodes: [n9]}}
                """;
        assertThatThrownBy(() -> Scenarios.parse(bad, "bad.yaml"))
                .hasMessageContaining("seed: missing")
                .hasMessageContaining("rps[1]: -5.0")
                .hasMessageContaining("nodes[0].cores: 0.0")
                .hasMessageContaining("nodes[0].speedFactor: -1.0")
                .hasMessageContaining("nodes[1].name: \"n1\" (expected: unique")
                .hasMessageContaining("components[0].cpuMillisPerCall: -1.0")
                .hasMessageContaining("components[0].calls[0][1]: \"q\"")
                .hasMessageContaining("entry: \"z\"")
                .hasMessageContaining("networks.flat.otherMillis: [3.0, 1.0]")
                .hasMessageContaining("networks.slow.remoteNodes[0]: \"n9\"")
                .hasMessageContaining("networks.slow.remoteMillis: missing");
    }

    @Test
    void parse_measuredDelays_completeOrWithARange() {
        String twoNodes = VALID.replace("nodes: [{name: n1, cores: 2, speedFactor: 1}]",
                "nodes: [{name: n1, cores: 2, speedFactor: 1}, {name: n2, cores: 2, speedFactor: 1}]");
        ClusterScenario measured = Scenarios.parse(twoNodes.replace("{flat: {otherMillis: [0.1, 0.2]}}",
                "{aws: {delaysMillis: {n1: {n2: 12.5}}}}"), "t.yaml");
        assertThat(measured.networks().get("aws").measuredMillis("n2", "n1")).isEqualTo(12.5);

        String noRange = twoNodes.replace("{flat: {otherMillis: [0.1, 0.2]}}", "{aws: {delaysMillis: {n1: {n3: 1}}}}");
        assertThatThrownBy(() -> Scenarios.parse(noRange, "t.yaml"))
                .hasMessageContaining("networks.aws.delaysMillis.n1: \"n3\" (expected: one of the nodes")
                .hasMessageContaining("networks.aws.otherMillis: missing");
    }

    @Test
    void parse_strictTypes_wholeNumbersAndNoDuplicateKeys() {
        assertThatThrownBy(() -> Scenarios.parse(VALID.replace("seed: 1", "seed: 1.5"), "t.yaml"))
                .hasMessageContaining("seed").hasMessageContaining("a whole number");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "seed: 2\n", "t.yaml"))
                .hasMessageContaining("Duplicate field 'seed'");
    }

    @Test
    void load_directoryOrBinary_saysSo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        assertThatThrownBy(() -> Scenarios.load(dir.toString())).hasMessageContaining("is a directory");
        java.nio.file.Path binary = dir.resolve("x.yaml");
        java.nio.file.Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, 2});
        assertThatThrownBy(() -> Scenarios.load(binary.toString())).hasMessageContaining("not UTF-8 text");
    }

    @Test
    void parse_cycle_isRejected() {
        String cyclic = VALID.replace("{name: b, cpuMillisPerCall: 2}", "{name: b, cpuMillisPerCall: 2, calls: [[a]]}");
        assertThatThrownBy(() -> Scenarios.parse(cyclic, "t.yaml")).hasMessageContaining("cycle a -> b -> a");
    }

    @Test
    void parse_callCounts() {
        ClusterScenario scenario = Scenarios.parse(VALID.replace("[[b]]", "[[b*2.5]]"), "t.yaml");
        assertThat(ClusterScenario.CallSpec.parse(scenario.components().get(0).calls().get(0).get(0)))
                .isEqualTo(new ClusterScenario.CallSpec("b", 2.5));
        assertThatThrownBy(() -> Scenarios.parse(VALID.replace("[[b]]", "[[b*x]]"), "t.yaml"))
                .hasMessageContaining("\"b*x\" (expected: name or name*count");
    }

    @Test
    void load_missingFile_saysWhatIsAccepted() {
        assertThatThrownBy(() -> Scenarios.load("no-such-scenario"))
                .hasMessageContaining("no-such-scenario: no such bundled scenario or file")
                .hasMessageContaining("paper-dag");
    }

    @Test
    void parse_notYaml_saysWhere() {
        assertThatThrownBy(() -> Scenarios.parse("name: t\nseed: 1: 2\n", "t.yaml"))
                .hasMessageContaining("t.yaml: not valid YAML at line 2");
    }
}
