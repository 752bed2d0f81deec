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
        assertThat(scenario.nodes())
                .extracting(ClusterScenario.NodeSpec::speedFactor)
                .containsExactly(1.0, 0.9, 0.7, 0.5, 0.4);
        assertThat(scenario.rps()).containsExactly(50.0, 100.0, 200.0, 400.0);
        assertThat(scenario.networks()).containsOnlyKeys("A", "B");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "dyn-load-step",
                "dyn-load-ramp",
                "dyn-noisy-neighbour",
                "dyn-replica-crash",
                "dyn-cold-restart",
                "dyn-antagonist",
                "dyn-metrics-undercount",
                "dyn-calls-overcount",
                "dyn-background-cpu"
            })
    void bundledDynamic_areValid_onPaperDagsCluster_withALoadChangeOrAnEvent(String name) {
        ClusterScenario scenario = Scenarios.load(name);
        ClusterScenario dag = Scenarios.load("paper-dag");
        assertThat(scenario.problems()).isEmpty();
        assertThat(scenario.nodes()).isEqualTo(dag.nodes());
        assertThat(scenario.components()).isEqualTo(dag.components());
        assertThat(scenario.networks()).isEqualTo(dag.networks());
        assertThat(scenario.rpsProfile() != null || !scenario.events().isEmpty())
                .isTrue();
        assertThat(Scenarios.DYNAMIC).contains(name);
    }

    @Test
    void changesFrom_namesTheEventsAndTheRateChangeARunEndingThereNeverSees() {
        ClusterScenario crash = Scenarios.load("dyn-replica-crash");
        assertThat(crash.changesFrom(90)).containsExactly("events[0] (replica-crash at 247.5 s)");
        assertThat(crash.changesFrom(247.5)).containsExactly("events[0] (replica-crash at 247.5 s)");
        assertThat(crash.changesFrom(248)).isEmpty();

        ClusterScenario step = Scenarios.load("dyn-load-step");
        assertThat(step.changesFrom(90)).containsExactly("rpsProfile[2] (factor 1 at 247.5 s)");
        assertThat(step.changesFrom(720)).isEmpty();
        // A ramp the run enters but does not finish: the factor it never reaches is named.
        assertThat(Scenarios.load("dyn-load-ramp").changesFrom(300))
                .containsExactly("rpsProfile[2] (factor 1 at 427.5 s)");
        // Events from the start, and a scenario without either, have nothing a run could miss.
        assertThat(Scenarios.load("dyn-antagonist").changesFrom(30)).isEmpty();
        assertThat(Scenarios.load("paper-dag").changesFrom(30)).isEmpty();
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
                .hasMessageContaining("t.yaml: warmup: unknown field")
                .hasMessageContaining("warmupSeconds");
    }

    @Test
    void parse_wrongType_namesThePath() {
        assertThatThrownBy(() -> Scenarios.parse(VALID.replace("cores: 2", "cores: two"), "t.yaml"))
                .hasMessageContaining("nodes[0].cores")
                .hasMessageContaining("two")
                .hasMessageContaining("a number");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "cpuModel: cfs\n", "t.yaml"))
                .hasMessageContaining("cpuModel")
                .hasMessageContaining("fluid, cfs-quota");
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
                .hasMessageContaining("rps[1]: -5 (expected")
                .hasMessageContaining("nodes[0].cores: 0 (expected")
                .hasMessageContaining("nodes[0].speedFactor: -1 (expected")
                .hasMessageContaining("nodes[1].name: \"n1\" (expected: unique")
                .hasMessageContaining("components[0].cpuMillisPerCall: -1 (expected")
                .hasMessageContaining("components[0].calls[0][1]: \"q\"")
                .hasMessageContaining("entry: \"z\"")
                .hasMessageContaining("networks.flat.otherMillis: [3, 1] (expected")
                .hasMessageContaining("networks.slow.remoteNodes[0]: \"n9\"")
                .hasMessageContaining("networks.slow.remoteMillis: missing");
    }

    @Test
    void parse_measuredDelays_completeOrWithARange() {
        String twoNodes = VALID.replace(
                "nodes: [{name: n1, cores: 2, speedFactor: 1}]",
                "nodes: [{name: n1, cores: 2, speedFactor: 1}, {name: n2, cores: 2, speedFactor: 1}]");
        ClusterScenario measured = Scenarios.parse(
                twoNodes.replace("{flat: {otherMillis: [0.1, 0.2]}}", "{aws: {delaysMillis: {n1: {n2: 12.5}}}}"),
                "t.yaml");
        assertThat(measured.networks().get("aws").measuredMillis("n2", "n1")).isEqualTo(12.5);

        String noRange = twoNodes.replace("{flat: {otherMillis: [0.1, 0.2]}}", "{aws: {delaysMillis: {n1: {n3: 1}}}}");
        assertThatThrownBy(() -> Scenarios.parse(noRange, "t.yaml"))
                .hasMessageContaining("networks.aws.delaysMillis.n1: \"n3\" (expected: one of the nodes")
                .hasMessageContaining("networks.aws.otherMillis: missing");
    }

    @Test
    void parse_strictTypes_wholeNumbersAndNoDuplicateKeys() {
        assertThatThrownBy(() -> Scenarios.parse(VALID.replace("seed: 1", "seed: 1.5"), "t.yaml"))
                .hasMessageContaining("seed")
                .hasMessageContaining("a whole number");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "seed: 2\n", "t.yaml"))
                .hasMessage("t.yaml: seed: duplicate key (expected: each key once per mapping; the first, at line 2,"
                        + " is the one checked) at line 7");
    }

    @Test
    void load_directoryOrBinary_saysSo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        assertThatThrownBy(() -> Scenarios.load(dir.toString())).hasMessageContaining("is a directory");
        java.nio.file.Path binary = dir.resolve("x.yaml");
        java.nio.file.Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, 2});
        assertThatThrownBy(() -> Scenarios.load(binary.toString())).hasMessageContaining("not UTF-8 text");
    }

    @Test
    void load_aJsonFile_isReadAsStrictJson_andToldInJsonsWords(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // Was read as YAML and told YAML's words (a list, each key once per mapping) for a .json file.
        java.nio.file.Path json = java.nio.file.Files.writeString(dir.resolve("t.json"), """
                {
                  "name": "t",
                  "seed": 1,
                  "nodes": {"name": "n1", "cores": 2, "speedFactor": 1},
                  "entry": "a",
                  "components": [{"name": "a", "cpuMillisPerCall": 1, "calls": "b"}, {"name": "b", "cpuMillisPerCall": 2}],
                  "networks": {"flat": {"otherMillis": [0.1, 0.2]}},
                  "seed": 2
                }
                """);
        assertThatThrownBy(() -> Scenarios.load(json.toString()))
                .hasMessage(json + ": 3 problems:\n"
                        + "  nodes: {name: n1, cores: 2, speedFactor: 1} (expected: an array) at line 4\n"
                        + "  components[0].calls: b (expected: an array) at line 6\n"
                        + "  seed: duplicate key (expected: each key once per object; the first, at line 3, is the one"
                        + " checked) at line 8");
        java.nio.file.Files.writeString(json, "{\"name\": \"t\", \"nodes\": [}");
        assertThatThrownBy(() -> Scenarios.load(json.toString()))
                .hasMessage(json + ": not valid JSON at line 1, field nodes[0]: found '}' (expected: ']' to close the"
                        + " array)");

        // The same text named .yaml is YAML, and told YAML's words, as before.
        java.nio.file.Path yaml = java.nio.file.Files.writeString(
                dir.resolve("t.yaml"), "{\"name\": \"t\", \"nodes\": {\"name\": \"n1\"}, \"seed\": 1, \"seed\": 2}");
        assertThatThrownBy(() -> Scenarios.load(yaml.toString()))
                .hasMessageContaining("nodes: {name: n1} (expected: a list) at line 1")
                .hasMessageContaining("(expected: each key once per mapping;");
    }

    @Test
    void parse_cycle_isRejected() {
        String cyclic = VALID.replace("{name: b, cpuMillisPerCall: 2}", "{name: b, cpuMillisPerCall: 2, calls: [[a]]}");
        assertThatThrownBy(() -> Scenarios.parse(cyclic, "t.yaml")).hasMessageContaining("cycle a -> b -> a");
    }

    @Test
    void parse_callCounts() {
        ClusterScenario scenario = Scenarios.parse(VALID.replace("[[b]]", "[[b*2.5]]"), "t.yaml");
        assertThat(ClusterScenario.CallSpec.parse(
                        scenario.components().get(0).calls().get(0).get(0)))
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

    @Test
    void parse_tab_isToldAtItsLine_inWords() {
        assertThatThrownBy(() -> Scenarios.parse("name: t\nseed: 1\n\ttenants: []\n", "t.yaml"))
                .hasMessage("t.yaml: not valid YAML at line 3: found a tab character, which YAML does not allow for"
                        + " indentation (expected: spaces)");
    }

    private static final String NODES_2 = VALID.replace(
            "nodes: [{name: n1, cores: 2, speedFactor: 1}]",
            "nodes: [{name: n1, cores: 2, speedFactor: 1}, {name: n2, cores: 4, speedFactor: 0.5}]");

    @Test
    void parse_rpsProfileAndEvents_areRead() {
        ClusterScenario scenario = Scenarios.parse(NODES_2 + """
                rpsProfile: [{atSeconds: 0, factor: 0.5}, {atSeconds: 100, factor: 0.5}, {atSeconds: 100, factor: 1}]
                events:
                  - {kind: node-slowdown, node: n2, atSeconds: 10, durationSeconds: 120, speedMultiplier: 0.5}
                  - {kind: cpu-antagonist, node: n2, atSeconds: 0, durationSeconds: 60, cores: 3, burstSeconds: 2,
                     meanGapSeconds: 20}
                  - {kind: replica-crash, node: n1, component: b, atSeconds: 50, durationSeconds: 60}
                  - {kind: replica-restart, node: n1, component: a, atSeconds: 50, durationSeconds: 20,
                     coldSeconds: 60, coldFactor: 3}
                """, "t.yaml");
        assertThat(scenario.rpsProfile())
                .extracting(ClusterScenario.RatePoint::factor)
                .containsExactly(0.5, 0.5, 1.0);
        assertThat(scenario.events())
                .extracting(ClusterScenario.EventSpec::kind)
                .containsExactly(
                        ClusterScenario.EventKind.NODE_SLOWDOWN, ClusterScenario.EventKind.CPU_ANTAGONIST,
                        ClusterScenario.EventKind.REPLICA_CRASH, ClusterScenario.EventKind.REPLICA_RESTART);
        ClusterScenario.EventSpec crash = scenario.events().get(2);
        assertThat(crash.notReadyAfterSecondsOrDefault()).isEqualTo(30);
        assertThat(crash.readyAfterSecondsOrDefault()).isEqualTo(10);
        assertThat(crash.replicaOnNodeOrDefault()).isEqualTo(1);
    }

    @Test
    void parse_rangeProblem_hasTheLine_andTheValueAsWritten() {
        assertThatThrownBy(() -> Scenarios.parse(VALID + "rps: [100, -5]\n", "t.yaml"))
                .hasMessage("t.yaml: rps[1]: -5 (expected: a number in (0, 1000000]) at line 7");
    }

    @Test
    void parse_unknownFieldOfANode_isToldAtItsOwnLine() {
        String yaml = VALID.replace(
                "nodes: [{name: n1, cores: 2, speedFactor: 1}]",
                "nodes:\n  - name: n1\n    cors: 2\n    speedFactor: 1\n");
        // With the misspelt field's, the problem it leaves: the node's cores are missing.
        assertThatThrownBy(() -> Scenarios.parse(yaml, "t.yaml"))
                .hasMessage(
                        "t.yaml: 2 problems:\n"
                                + "  nodes[0].cores: missing (expected: a number in (0, 1024]) at line 4\n"
                                + "  nodes[0].cors: unknown field (expected one of cores, locality, name, speedFactor) at line 5");
    }

    @Test
    void parse_rpsProfileProblems_areNamed() {
        assertThatThrownBy(() -> Scenarios.parse(VALID + """
                rpsProfile: [{atSeconds: 10, factor: 1}, {atSeconds: 5, factor: -1}, {atSeconds: 20}]
                """, "t.yaml"))
                .hasMessageContaining("rpsProfile[1].atSeconds: 5 (expected: not before the point above, 10)")
                .hasMessageContaining("rpsProfile[1].factor: -1 (expected: a number in [0, 1000])")
                .hasMessageContaining("rpsProfile[2].factor: null");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "rpsProfile: [{atSeconds: 0, factor: 0}]\n", "t.yaml"))
                .hasMessageContaining("rpsProfile: every factor is 0 (expected: at least one factor > 0)");
        assertThatThrownBy(() -> Scenarios.parse(VALID + """
                rpsProfile: [{atSeconds: 5, factor: 1}, {atSeconds: 5, factor: 2}, {atSeconds: 5, factor: 3}]
                """, "t.yaml"))
                .hasMessageContaining("rpsProfile[2].atSeconds: 5 (expected: at most two points at one instant");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "rpsProfile: []\n", "t.yaml"))
                .hasMessageContaining("rpsProfile: empty");
        assertThatThrownBy(() -> Scenarios.parse(VALID + "rpsProfile: [{atSeconds: 0, rate: 1}]\n", "t.yaml"))
                .hasMessageContaining("rpsProfile[0].rate: unknown field (expected one of atSeconds, factor)");
    }

    @Test
    void parse_eventProblems_everyOneNamed() {
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events:
                  - {kind: node-slowdown, node: n9, atSeconds: -1, durationSeconds: 0, speedMultiplier: 2, cores: 1}
                  - {kind: cpu-antagonist, node: n2, atSeconds: 0, durationSeconds: 60, cores: 4, burstSeconds: 0}
                  - {kind: replica-crash, node: n1, component: z, atSeconds: 5, durationSeconds: 10, replicaOnNode: 2,
                     coldFactor: 0.5, speedMultiplier: 0.5}
                  - {kind: replica-restart, node: n1, component: a, atSeconds: 5, durationSeconds: 10,
                     notReadyAfterSeconds: 3}
                  - {node: n1, atSeconds: 5, durationSeconds: 1}
                """, "t.yaml"))
                .hasMessageContaining("events[0].node: \"n9\" (expected: one of the nodes")
                .hasMessageContaining("events[0].atSeconds: -1 (expected")
                .hasMessageContaining("events[0].durationSeconds: 0 (expected: a number in (0, 86400])")
                .hasMessageContaining("events[0].speedMultiplier: 2 (expected: a number in (0, 1]")
                .hasMessageContaining("events[0].cores: 1 (expected: absent for kind node-slowdown)")
                .hasMessageContaining("events[1].cores: 4 (expected: more than 0 and fewer than the node's 4 cores)")
                .hasMessageContaining("events[1].burstSeconds: 0 (expected")
                .hasMessageContaining("events[1].meanGapSeconds: missing (expected: a number in (0, ")
                .hasMessageContaining("events[2].component: \"z\" (expected: one of the components [a, b])")
                .hasMessageContaining("events[2].replicaOnNode: 2 (expected: 1 .. 1")
                .hasMessageContaining("events[2].coldFactor: 0.5 (expected: a number in [1, 100]")
                .hasMessageContaining("events[2].speedMultiplier: 0.5 (expected: absent for kind replica-crash)")
                .hasMessageContaining("events[3].notReadyAfterSeconds: 3 (expected: absent for kind replica-restart)")
                .hasMessageContaining("events[4].kind: missing (expected: one of node-slowdown, cpu-antagonist,"
                        + " replica-crash, replica-restart, metrics-undercount, calls-overcount, background-cpu)");
    }

    @Test
    void parse_metricsUndercountProblems_areNamed() {
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events:
                  - {kind: metrics-undercount, node: n1, component: b, atSeconds: 5, durationSeconds: 30}
                  - {kind: metrics-undercount, node: n2, component: b, atSeconds: 5, durationSeconds: 30,
                     countedFraction: 1}
                  - {kind: node-slowdown, node: n2, atSeconds: 50, durationSeconds: 10, speedMultiplier: 0.5,
                     countedFraction: 0.1}
                  - {kind: metrics-undercount, node: n1, component: b, atSeconds: 20, durationSeconds: 30,
                     countedFraction: 0.1, coldFactor: 2}
                """, "t.yaml"))
                .hasMessageContaining("events[0].countedFraction: missing (expected: a number in [0, 1)")
                .hasMessageContaining("events[1].countedFraction: 1 (expected: a number in [0, 1)")
                .hasMessageContaining("events[2].countedFraction: 0.1 (expected: absent for kind node-slowdown)")
                .hasMessageContaining("events[3].coldFactor: 2 (expected: absent for kind metrics-undercount)");
        assertThat(Scenarios.parse(NODES_2 + """
                events:
                  - {kind: metrics-undercount, node: n1, component: b, atSeconds: 5, durationSeconds: 30,
                     countedFraction: 0}
                """, "t.yaml").problems()).isEmpty();
    }

    @Test
    void parse_callsOvercountProblems_areNamed() {
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events:
                  - {kind: calls-overcount, node: n1, atSeconds: 5, durationSeconds: 30}
                  - {kind: calls-overcount, node: n2, atSeconds: 5, durationSeconds: 30, countedFactor: 1}
                  - {kind: calls-overcount, node: n2, component: z, atSeconds: 50, durationSeconds: 10,
                     countedFactor: 2}
                  - {kind: calls-overcount, node: n1, atSeconds: 50, durationSeconds: 10, countedFactor: 2,
                     replicaOnNode: 1}
                  - {kind: metrics-undercount, node: n1, component: b, atSeconds: 20, durationSeconds: 30,
                     countedFraction: 0.1, countedFactor: 2}
                """, "t.yaml"))
                .hasMessageContaining("events[0].countedFactor: missing (expected: a number in (1, 100]")
                .hasMessageContaining("events[1].countedFactor: 1 (expected: a number in (1, 100]")
                .hasMessageContaining("events[2].component: \"z\" (expected: one of the components [a, b])")
                .hasMessageContaining("events[3].replicaOnNode: 1 (expected: absent for kind calls-overcount)")
                .hasMessageContaining("events[4].countedFactor: 2 (expected: absent for kind metrics-undercount)");
        assertThat(Scenarios.parse(NODES_2 + """
                events:
                  - {kind: calls-overcount, node: n1, atSeconds: 5, durationSeconds: 30, countedFactor: 10}
                  - {kind: calls-overcount, node: n1, component: a, atSeconds: 5, durationSeconds: 30,
                     countedFactor: 10}
                """, "t.yaml").problems()).isEmpty();
    }

    @Test
    void parse_backgroundCpuProblems_areNamed() {
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events:
                  - {kind: background-cpu, node: n1, atSeconds: 0, durationSeconds: 30}
                  - {kind: background-cpu, node: n2, atSeconds: 0, durationSeconds: 30, cores: 1}
                  - {kind: background-cpu, node: n1, atSeconds: 50, durationSeconds: 10, cores: 0.1, component: b}
                """, "t.yaml"))
                .hasMessageContaining("events[0].cores: missing (expected: more than 0 and less than a replica's CPU"
                        + " limit, 1 cores)")
                .hasMessageContaining("events[1].cores: 1 (expected: more than 0 and less than a replica's")
                .hasMessageContaining("events[2].component: b (expected: absent for kind background-cpu)");
        assertThat(Scenarios.parse(NODES_2 + """
                events: [{kind: background-cpu, node: n1, atSeconds: 0, durationSeconds: 30, cores: 0.03}]
                """, "t.yaml").problems()).isEmpty();
    }

    @Test
    void parse_eventKindUnknown_listsTheKinds() {
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events: [{kind: node-crash, node: n1, atSeconds: 5, durationSeconds: 1}]
                """, "t.yaml"))
                .hasMessageContaining("events[0].kind: node-crash (expected: one of node-slowdown, cpu-antagonist,"
                        + " replica-crash, replica-restart, metrics-undercount, calls-overcount, background-cpu)");
    }

    @Test
    void parse_overlappingFaultsOnOneReplica_areRejected() {
        // A crash keeps the replica busy until it is Ready again (60 + 10 s): a restart at 100 s overlaps.
        assertThatThrownBy(() -> Scenarios.parse(NODES_2 + """
                events:
                  - {kind: replica-crash, node: n1, component: b, atSeconds: 50, durationSeconds: 60}
                  - {kind: replica-restart, node: n1, component: b, atSeconds: 100, durationSeconds: 5}
                  - {kind: replica-restart, node: n2, component: b, atSeconds: 100, durationSeconds: 5}
                """, "t.yaml"))
                .hasMessageContaining("events[1]: overlaps events[0] (replica b #1 on n1, 100-105 s against 50-120 s)"
                        + " (expected: one at a time) at line 9")
                .message()
                .doesNotContain("events[2]");
    }
}
