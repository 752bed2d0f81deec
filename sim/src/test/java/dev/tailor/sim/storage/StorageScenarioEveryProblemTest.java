package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.cluster.Scenarios;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** No problem of a scenario file hides another: every one is told at once, one line each, by line. */
class StorageScenarioEveryProblemTest {

    /** A valid scenario: its tenant's fields on lines 6 to 8. */
    private static final String MINIMAL = """
            name: minimal
            seed: 1
            backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                      writeMicrosPerKiB: 0.80, serviceSigma: 0.4}
            tenants:
              - name: a
                requestsPerSecond: 1000
                synthetic: {readFraction: 0.7, sizeBytes: [4096]}
            """;

    private static String tenant(String requestsPerSecond, String readFraction) {
        return MINIMAL.replace("requestsPerSecond: 1000", "requestsPerSecond: " + requestsPerSecond)
                .replace("readFraction: 0.7", "readFraction: " + readFraction);
    }

    @Test
    void twoNonFiniteValues_areBothTold_eachWithWhatItsFieldTakes() {
        assertThatThrownBy(() -> StorageScenarios.parse(tenant(".nan", ".inf"), "f.yaml"))
                .isInstanceOf(ScenarioException.class)
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  tenants[0].requestsPerSecond: .nan (expected: a number in (0, 10000000]) at line 7\n"
                        + "  tenants[0].synthetic.readFraction: .inf (expected: a number in [0, 1]) at line 8");
    }

    @Test
    void aWrongType_andARangeProblem_areBothTold() {
        String yaml = tenant("fast", "2") + "proxies: [1, 2]\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 3 problems:\n"
                        + "  tenants[0].requestsPerSecond: fast (expected: a number) at line 7\n"
                        + "  tenants[0].synthetic.readFraction: 2 (expected: a number in [0, 1]) at line 8\n"
                        + "  proxies: [1, 2] (expected: a whole number) at line 9");
    }

    @Test
    void aListWhereANumberBelongs_isToldAsWritten() {
        String yaml = MINIMAL + "durationSeconds: [1]\nwarmupSeconds: {a: 1}\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  durationSeconds: [1] (expected: a number) at line 9\n"
                        + "  warmupSeconds: {a: 1} (expected: a number) at line 10");
    }

    @Test
    void aListWhereAMappingBelongs_isTold_andNotAgainAsTheMissingValueItLeaves() {
        String yaml = MINIMAL.replace("synthetic: {readFraction: 0.7, sizeBytes: [4096]}", "synthetic: [0.7, 4096]")
                + "warmupSeconds: -1\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  tenants[0].synthetic: [0.7, 4096] (expected: an object) at line 8\n"
                        + "  warmupSeconds: -1 (expected: a number in [0, 86400]) at line 9");
    }

    @Test
    void anUnknownField_andABadValue_areBothTold() {
        String yaml = tenant("-5", "0.7").replace("    requestsPerSecond:", "    burst: yes\n    requestsPerSecond:");
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  tenants[0].burst: unknown field (expected one of baseline, bursts, commitmentRatio, count,"
                        + " name, proxy, requestsPerSecond, synthetic, traces) at line 7\n"
                        + "  tenants[0].requestsPerSecond: -5 (expected: a number in (0, 10000000]) at line 8");
    }

    @Test
    void aDuplicateKey_isToldWithTheOthers() {
        String yaml = tenant(".nan", "0.7") + "seed: 2\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  tenants[0].requestsPerSecond: .nan (expected: a number in (0, 10000000]) at line 7\n"
                        + "  seed: duplicate key (expected: each key once per mapping; the first, at line 2, is the"
                        + " one checked) at line 9");
    }

    @Test
    void aNonFiniteValueThatItsFieldsOwnCheckWouldPass_isStillRefused() {
        // A trace's granularity is checked in [0, 3600000]; .inf is out of it, and named as written.
        String yaml = MINIMAL + "traces: {t: {file: x.csv, format: msr-bytes, timestampGranularityMillis: .inf}}\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: traces.t.timestampGranularityMillis: .inf (expected: a number in [0, 3600000])"
                        + " at line 9");
    }

    @Test
    void aFileThatCannotBeParsed_stopsAtItsSyntaxError() {
        String yaml = tenant(".nan", ".inf") + "proxies: [1, 2\n";
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessageStartingWith("f.yaml: not valid YAML at line ")
                .hasMessageNotContaining("problems")
                .hasMessageNotContaining(".nan");
    }

    @Test
    void aValidFile_loadsAsAStrictReadGivesIt() {
        StorageScenario scenario = StorageScenarios.parse(MINIMAL, "f.yaml");
        assertThat(scenario.tenants().get(0).requestsPerSecond()).isEqualTo(1000.0);
        assertThat(scenario.tenants().get(0).synthetic().readFraction()).isEqualTo(0.7);
        assertThat(scenario.proxies()).isEqualTo(1);
    }

    @Test
    void everyNumberOfTheBundledScenarios_writtenAsNan_isToldAsWritten_atItsLine_neverACrash() throws Exception {
        List<String> untold = new ArrayList<>();
        for (String name : List.of("burst-microbench", "robustness")) {
            untold.addAll(untoldNans(name, StorageScenarios.bundledText(name), StorageScenarios::parse));
        }
        try (var in = Scenarios.class.getResourceAsStream("/dev/tailor/sim/scenarios/paper-dag.yaml")) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            untold.addAll(untoldNans("paper-dag", text, Scenarios::parse));
        }
        assertThat(untold).isEmpty();
    }

    /**
     * Each number of {@code text} (outside comments and descriptions) written {@code .nan} in turn, read with
     * {@code parse}: each whose message does not name it at its line.
     */
    private static List<String> untoldNans(String name, String text, BiConsumer<String, String> parse) {
        Pattern number = Pattern.compile("(?<=[:\\[,] )-?[0-9][0-9_.]*(?=[,\\]} ]|$)");
        String[] lines = text.split("\n", -1);
        List<String> untold = new ArrayList<>();
        int tried = 0;
        for (int i = 0; i < lines.length; i++) {
            int comment = lines[i].indexOf('#');
            String code = lines[i].strip().startsWith("description:")
                    ? ""
                    : comment < 0 ? lines[i] : lines[i].substring(0, comment);
            Matcher m = number.matcher(code);
            while (m.find()) {
                String[] changed = lines.clone();
                changed[i] = lines[i].substring(0, m.start()) + ".nan" + lines[i].substring(m.end());
                Throwable thrown = catchThrowable(() -> parse.accept(String.join("\n", changed), "f.yaml"));
                if (!(thrown instanceof ScenarioException)
                        || !thrown.getMessage().contains(": .nan (expected: ")
                        || !thrown.getMessage().contains(" at line " + (i + 1))) {
                    untold.add(name + " line " + (i + 1) + ": " + changed[i].strip() + " -> " + thrown);
                }
                tried++;
            }
        }
        assertThat(tried).as(name).isGreaterThan(10);
        return untold;
    }

    @Test
    void clusterScenarios_tellEveryProblemAtOnce_too() {
        String yaml = """
                name: t
                seed: one
                nodes: [{name: n1, cores: .nan, speedFactor: 1}]
                entry: a
                components: [{name: a, cpuMillisPerCall: 1}]
                networks: {flat: {otherMillis: [0.1, 0.2]}}
                """;
        assertThatThrownBy(() -> Scenarios.parse(yaml, "t.yaml"))
                .hasMessage("t.yaml: 2 problems:\n"
                        + "  seed: one (expected: a whole number) at line 2\n"
                        + "  nodes[0].cores: .nan (expected: a number in (0, 1024]) at line 3");
    }
}
