package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.common.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigFilesTest {

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "kubernetes:\\n  namespaces: [~]\\n          | kubernetes: a value is missing (an empty list entry",
                "roundSeconds: abc\\n                          | roundSeconds: abc (expected: a number, e.g. 30 or 0.5) at line 1",
                "roundSeconds: 5\\nroundSeconds: 6\\n          | roundSeconds: duplicate key (expected: each key once per mapping; the"
                        + " first, at line 1, is the one checked) at line 2",
                "kubernetes:\\n  namespaces: [a]\\n\\troundSeconds: 30\\n | not valid YAML at line 3: found a tab"
                        + " character, which YAML does not allow for indentation (expected: spaces)",
                "roundSeconds: 30\\nprometheus: {url: 'http://p:9090',\\n | not valid YAML at line 3: the file ends too"
                        + " early (expected: a value)",
                "kubernetes:\\n  namespaces: default\\n     | kubernetes.namespaces: default (expected: a list, e.g. [a,"
                        + " b]) at line 2",
                "kubernetes: 3\\n                             | kubernetes: 3 (expected: a mapping of Kubernetes fields) at line 1",
                "maxShareMovePerRound: 0\\n                    | maxShareMovePerRound: 0 (expected: a number in (0, 1], 1 = no cap) at line 1",
                "prometheus:\\n  url: 'http://bad host:9090'\\n | prometheus.url: \"http://bad host:9090\" (expected: an http://",
                "roundSecs: 3\\n                              | roundSecs: unknown field",
                "capacityShortfall: wait\\n                   | capacityShortfall: \"wait\" (expected: proceed or hold)",
                "capacityShortfall: 3\\n                      | capacityShortfall: \"3\" (expected: proceed or hold)",
                "planner: {idleFitRounds: 2.5}\\n              | planner.idleFitRounds: 2.5 (expected: a whole number",
                "planner: {idleFitRounds: -1}\\n               | planner.idleFitRounds: -1 (expected: a whole number",
                "planner: {minShareOfEqualSplit: 1}\\n         | planner.minShareOfEqualSplit: 1 (expected: a fraction in [0, 1), 0 = off) at line 1",
                "planner: {spreadScale: -1}\\n                  | planner.spreadScale: -1 (expected: a number in [0, 100], 0 = off, min-cost flow) at line 1",
                "planner: {spreadScale: 101}\\n                 | planner.spreadScale: 101 (expected: a number in [0, 100], 0 = off, min-cost flow) at line 1",
                "planner: {queueAwareRouting: perhaps}\\n       | planner.queueAwareRouting: perhaps (expected: true or false; in YAML also yes, no, on or off,"
                        + " unquoted, each also Capitalized or in UPPER case) at line 1",
                "planner: {outlierFilter: maybe}\\n            | planner.outlierFilter: maybe (expected: true or false; in YAML also yes, no, on or off,"
                        + " unquoted, each also Capitalized or in UPPER case)",
                "planner: {outlierFilter: 1}\\n                | planner.outlierFilter: 1 (expected: true or false; in YAML also yes, no, on or off,"
                        + " unquoted, each also Capitalized or in UPPER case)",
                "planner: {outlierFilter: 'true'}\\n           | planner.outlierFilter: \"true\" (expected: true or false, unquoted: in quotes it is a"
                        + " text, not a boolean; in YAML also yes, no, on or off, unquoted, each also Capitalized or in UPPER case)",
                "roundSeconds: '30'\\n                       | roundSeconds: \"30\" (expected: a number, e.g. 30 or 0.5)",
                "maxShareMovePerRound: .nan\\n                 | maxShareMovePerRound: .nan (expected: a number in (0, 1], 1 = no"
                        + " cap) at line 1",
                "roundSeconds: -.inf\\n                        | roundSeconds: -.inf (expected: a number in [1, 3600]) at line 1",
                "planner: {floor: 0.1}\\n                      | planner.floor: unknown field",
                "prometheus: {bearerTokenFile: /no/such/token}\\n | prometheus.bearerTokenFile: \"/no/such/token\" (expected: a"
                        + " readable file)",
                "prometheus: {basicAuth: {username: u}}\\n      | prometheus.basicAuth: neither password nor passwordFile",
                "prometheus: {basicAuth: {username: u, password: p, passwordFile: /etc/hostname}}\\n"
                        + " | prometheus.basicAuth: both password and passwordFile",
                "prometheus: {basicAuth: {username: 'a:b', password: p}}\\n | prometheus.basicAuth.username: \"a:b\"",
                "prometheus: {tls: {insecureSkipVerify: true}}\\n | prometheus.tls: set for"
                        + " \"http://prometheus.istio-system:9090\" (expected: an https:// URL)",
                "prometheus: {url: 'https://p:9090', tls: {caFile: /etc/hostname, insecureSkipVerify: true}}\\n"
                        + " | prometheus.tls: caFile and insecureSkipVerify: true both set",
                "prometheus: {basicAuth: {username: u, password: p}, headers: {Authorization: x}}\\n"
                        + " | prometheus.headers.Authorization: set with bearerTokenFile or basicAuth",
                "prometheus: {headers: {'X Bad': x}}\\n          | prometheus.headers: \"X Bad\" (expected: an HTTP"
                        + " header name)",
                "prometheus: {basicAuth: {username: u, pass: p}}\\n | prometheus.basicAuth.pass: unknown field",
                "kubernetes: {entryPoints: [istio-system]}\\n   | kubernetes.entryPoints[0]: \"istio-system\" (expected:"
                        + " namespace/workload, or namespace/KEY=VALUE",
                "kubernetes: {entryPoints: ['gw/istio=']}\\n     | kubernetes.entryPoints[0]: \"gw/istio=\": label istio="
                        + " (expected: namespace/workload"
            })
    void parse_badInput_namesTheField(String yaml, String expected) {
        assertThatThrownBy(() -> ConfigFiles.parse(yaml.replace("\\n", "\n").replace("\\t", "\t"), "heart.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("heart.yaml: ")
                .hasMessageContaining(expected);
    }

    @Test
    void problems_carryThePathTheValueAsGivenAndWhatWasExpected() {
        ControllerConfig config = ControllerConfig.DEFAULTS.withPrometheusUrl("ftp://prometheus:9090");
        assertThat(config.problems())
                .containsExactly(new Problem(
                        "prometheus.url",
                        "\"ftp://prometheus:9090\"",
                        "an http:// or https:// URL with a host, e.g. http://prometheus.istio-system:9090"));
        assertThat(Problem.join(config.problems()))
                .isEqualTo("prometheus.url: \"ftp://prometheus:9090\" (expected: an http:// or https:// URL with a"
                        + " host, e.g. http://prometheus.istio-system:9090)");
    }

    @Test
    void parse_unknownFieldOrBadValue_isToldAtTheFieldsOwnLine() {
        assertThatThrownBy(() -> ConfigFiles.parse(
                        "planner:\n  idleFitRounds: 10\n  floor: 0.1\n  spreadScale: 0.5\n", "h.yaml"))
                .hasMessageStartingWith("h.yaml: planner.floor: unknown field (expected one of ")
                .hasMessageEndingWith(") at line 3");
        assertThatThrownBy(() -> ConfigFiles.parse("roundSeconds: 30\nplanner:\n  spreadScale: -1\n", "h.yaml"))
                .hasMessageStartingWith("h.yaml: planner.spreadScale: ")
                .hasMessageEndingWith(" at line 3");
    }

    @Test
    void parse_severalProblems_oneLineEach_atItsLine_valuesAsWritten() {
        // The layout of every reader: the count, then one indented line per problem in line order; -5 as typed.
        assertThatThrownBy(() -> ConfigFiles.parse(
                        "# controller settings\nroundSeconds: -5\nprometheus:\n  url: http://p:9090\n"
                                + "  timeoutSeconds: 0\n",
                        "h.yaml"))
                .hasMessage("h.yaml: 2 problems:\n"
                        + "  roundSeconds: -5 (expected: a number in [1, 3600]) at line 2\n"
                        + "  prometheus.timeoutSeconds: 0 (expected: a number in [0.1, 600]) at line 5");
    }

    @Test
    void parse_typeErrorsNonFiniteAndRangeProblems_allToldAtOnce_inLineOrder() {
        // A wrong type or a .nan used to stop the read there, hiding every other problem of the file.
        assertThatThrownBy(() -> ConfigFiles.parse(
                        "prometheus:\n  windowSeconds: -3\n  timeoutSeconds: soon\nroundSeconds: .nan\n"
                                + "roundSecs: 3\nplanner: {outlierFilter: maybe, spreadScale: 101}\n"
                                + "sameNodeDelayMillis: .inf\nsameNodeDelayMillis: 1\n",
                        "h.yaml"))
                .hasMessageStartingWith("h.yaml: 8 problems:\n"
                        + "  prometheus.windowSeconds: -3 (expected: a number in [1, 3600]) at line 2\n"
                        + "  prometheus.timeoutSeconds: soon (expected: a number, e.g. 30 or 0.5) at line 3\n"
                        + "  roundSeconds: .nan (expected: a number in [1, 3600]) at line 4\n"
                        + "  roundSecs: unknown field (expected one of ")
                .hasMessageContaining(") at line 5\n"
                        + "  planner.outlierFilter: maybe (expected: true or false; in YAML also yes, no, on or off,"
                        + " unquoted, each also Capitalized or in UPPER case) at line 6\n"
                        + "  planner.spreadScale: 101 (expected: a number in [0, 100], 0 = off, min-cost flow) at line 6\n"
                        + "  sameNodeDelayMillis: .inf (expected: a number in [0, 3600000]) at line 7\n"
                        + "  sameNodeDelayMillis: duplicate key (expected: each key once per mapping; the first, at"
                        + " line 7, is the one checked) at line 8");
    }

    @Test
    void parse_aListOrAMappingOfTheWrongType_isToldAsWritten() {
        assertThatThrownBy(() ->
                        ConfigFiles.parse("roundSeconds: [5]\nkubernetes:\n  namespaces: {shop: true}\n", "h.yaml"))
                .hasMessage("h.yaml: 2 problems:\n"
                        + "  roundSeconds: [5] (expected: a number, e.g. 30 or 0.5) at line 1\n"
                        + "  kubernetes.namespaces: {shop: true} (expected: a list, e.g. [a, b]) at line 3");
    }

    @Test
    void parse_aValueOfTheWrongTypeInsideAList_isToldWithTheRest() {
        assertThatThrownBy(() -> ConfigFiles.parse("kubernetes:\n  namespaces: [~]\nroundSeconds: 0\n", "h.yaml"))
                .hasMessageStartingWith("h.yaml: 2 problems:\n  kubernetes: a value is missing")
                .hasMessageEndingWith("\n  roundSeconds: 0 (expected: a number in [1, 3600]) at line 3");
    }

    @Test
    void parse_onlyComments_isTheDefaults_likeAnEmptyFile() {
        assertThat(ConfigFiles.parse("# nothing set yet\n", "heart.yaml")).isEqualTo(ControllerConfig.DEFAULTS);
        assertThat(ConfigFiles.parse("", "heart.yaml")).isEqualTo(ControllerConfig.DEFAULTS);
    }

    @Test
    void read_missingFileOrDirectory_saysWhich() {
        assertThatThrownBy(() -> ConfigFiles.read(dir.resolve("absent.yaml")))
                .hasMessageContaining("absent.yaml: no such" + " file (expected: a YAML or JSON file)");
        assertThatThrownBy(() -> ConfigFiles.read(dir))
                .hasMessageContaining(": a directory (expected: a YAML or JSON file)");
    }

    @Test
    void aJsonFile_isReadAsStrictJson_andToldInJsonsWords() throws Exception {
        // Was read as YAML and told YAML's words (a mapping, a list, yes, no, on or off) for a .json file.
        Path json = Files.writeString(dir.resolve("heart.json"), """
                {
                  "kubernetes": {"namespaces": "default"},
                  "prometheus": [1],
                  "planner": {"outlierFilter": "true", "queueAwareRouting": 1},
                  "roundSeconds": 5,
                  "roundSeconds": 6
                }
                """);
        assertThatThrownBy(() -> ConfigFiles.read(json))
                .hasMessage(json + ": 5 problems:\n"
                        + "  kubernetes.namespaces: default (expected: an array, e.g. [\"a\", \"b\"]) at line 2\n"
                        + "  prometheus: [1] (expected: an object of Prometheus fields) at line 3\n"
                        + "  planner.outlierFilter: \"true\" (expected: true or false, unquoted: in quotes it is a text,"
                        + " not a boolean) at line 4\n"
                        + "  planner.queueAwareRouting: 1 (expected: true or false) at line 4\n"
                        + "  roundSeconds: duplicate key (expected: each key once per object; the first, at line 5, is"
                        + " the one checked) at line 6");
        Files.writeString(json, "{\"kubernetes\": {\"namespaces\": [\"a\"}}");
        assertThatThrownBy(() -> ConfigFiles.read(json))
                .hasMessage(
                        json + ": not valid JSON at line 1, field kubernetes.namespaces[0]: found '}' (expected: ']'"
                                + " to close the array)");
        Files.writeString(json, "[1]");
        assertThatThrownBy(() -> ConfigFiles.read(json))
                .hasMessage(json + ": (top level): [1] (expected: an object of ControllerConfig fields) at line 1");
        // Strict JSON: what YAML would take is refused.
        Files.writeString(json, "{\"roundSeconds\": 30,}");
        assertThatThrownBy(() -> ConfigFiles.read(json))
                .hasMessageStartingWith(json + ": not valid JSON at line 1")
                .hasMessageEndingWith("found '}' (expected: a field name in double quotes)");
        Files.writeString(json, "{\"roundSeconds\": 30}");
        assertThat(ConfigFiles.read(json).roundSeconds()).isEqualTo(30);

        // The same text named .yaml is YAML, and told YAML's words, as before.
        Path yaml = Files.writeString(
                dir.resolve("heart.yaml"), "{\"kubernetes\": {\"namespaces\": \"default\"}, \"prometheus\": [1]}");
        assertThatThrownBy(() -> ConfigFiles.read(yaml))
                .hasMessage(yaml + ": 2 problems:\n"
                        + "  kubernetes.namespaces: default (expected: a list, e.g. [a, b]) at line 1\n"
                        + "  prometheus: [1] (expected: a mapping of Prometheus fields) at line 1");
    }

    @Test
    void parse_defaults_capOnProceedAndTheImprovedPlanner_paperReachable() {
        ControllerConfig defaults = ConfigFiles.parse("", "heart.yaml");
        assertThat(defaults.maxShareMovePerRound()).isEqualTo(0.2);
        assertThat(defaults.holdOnShortfall()).isFalse();
        assertThat(defaults.planner().heartConfig()).isEqualTo(dev.tailor.heart.HeartConfig.DEFAULTS);
        ControllerConfig paper = ConfigFiles.parse("""
                maxShareMovePerRound: 1
                capacityShortfall: hold
                planner: {outlierFilter: false, idleFitRounds: 0, minShareOfEqualSplit: 0, spreadScale: 0,
                          latencyOptimalShares: false, queueAwareRouting: false, loadHeadroom: 0,
                          slowLinkFilter: true}
                """, "heart.yaml");
        assertThat(paper.planner().heartConfig()).isEqualTo(dev.tailor.heart.HeartConfig.PAPER);
        assertThat(paper.planner()).isEqualTo(ControllerConfig.Planner.PAPER);
        assertThat(paper.holdOnShortfall()).isTrue();
    }

    @Test
    void read_aGoodFile() throws Exception {
        Path file = Files.writeString(dir.resolve("heart.yaml"), "roundSeconds: 15\nmaxShareMovePerRound: 0.2\n");
        ControllerConfig config = ConfigFiles.read(file);
        assertThat(config.roundSeconds()).isEqualTo(15.0);
        assertThat(config.maxShareMovePerRound()).isEqualTo(0.2);
    }

    @org.junit.jupiter.api.Test
    void examplesHeartYaml_isTheDefaults_andTheDocsShowTheSameFile() throws java.io.IOException {
        // examples/heart.yaml spells out every default; it must parse to them, and docs/controller.md's
        // Configuration block must be the same text, so neither drifts from the code or the other.
        Path root = Path.of("").toAbsolutePath().getParent();
        String example = java.nio.file.Files.readString(root.resolve("examples/heart.yaml"));
        org.assertj.core.api.Assertions.assertThat(ConfigFiles.parse(example, "examples/heart.yaml"))
                .isEqualTo(ControllerConfig.DEFAULTS);
        String docs = java.nio.file.Files.readString(root.resolve("docs/controller.md"));
        int start = docs.indexOf("```yaml\n", docs.indexOf("## Configuration")) + "```yaml\n".length();
        String block = docs.substring(start, docs.indexOf("```", start));
        org.assertj.core.api.Assertions.assertThat(example).endsWith(block);
    }

    @Test
    void labelsAndTls_unset_takeIstiosNamesAndTheJvmsTrust() {
        ControllerConfig.Prometheus read = ConfigFiles.parse("prometheus: {url: 'http://p:9090'}\n", "heart.yaml")
                .prometheus();
        assertThat(read.labels())
                .isEqualTo(ControllerConfig.Labels.builder().build())
                .isEqualTo(new ControllerConfig.Labels(
                        "namespace", "pod", "destination_workload", "destination_workload_namespace", "node", "type"));
        assertThat(read.tls()).isEqualTo(ControllerConfig.Tls.DEFAULTS);
        ControllerConfig.Labels renamed =
                read.labels().toBuilder().namespace("kubernetes_namespace").build();
        assertThat(renamed.namespace()).isEqualTo("kubernetes_namespace");
        assertThat(renamed.toBuilder().namespace(null).build()).isEqualTo(read.labels());
    }
}
