package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The scenario loader: bundled scenarios, and every kind of bad file named by its field. */
class StorageScenariosTest {

    @TempDir
    Path dir;

    /** The smallest valid scenario (docs/storage-simulator.md's minimal example); its tenant's fields on lines 6-8. */
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

    @Test
    void bundled_allLoadWithTheirSeeds() {
        for (String name : StorageScenarios.BUNDLED) {
            StorageScenario s = StorageScenarios.load(name);
            assertThat(s.name()).isEqualTo(name);
            assertThat(s.seed()).isNotNull();
            assertThat(s.problems()).isEmpty();
        }
        assertThat(StorageScenarios.load("burst-microbench").burstMultipliers()).containsExactly(2.0, 4.0, 8.0, 16.0);
        assertThat(StorageScenarios.load("deployed-like").backend().calibrateFrom())
                .isEqualTo("tencent");
    }

    @Test
    void familyMember_readsTheFamily_andRunsAsItsOneMix_underTheNameTheResultsGiveIt() {
        StorageScenario family = StorageScenarios.load("robustness");
        StorageScenarios.Loaded member = StorageScenarios.read("robustness-long-bursts");

        assertThat(member.scenario()).isEqualTo(family);
        assertThat(member.mix()).isEqualTo(3);
        assertThat(member.runsAs(family)).containsOnlyKeys(3);
        assertThat(member.runsAs(family).get(3)).isEqualTo(family.mixScenarios().get(3));
        assertThat(member.runsAs(family).get(3).name()).isEqualTo("robustness-long-bursts");
        // A seed or duration given on the command line reaches the member as it does the family's mixes.
        StorageScenario seeded = family.toBuilder().seed(2L).build().withDuration(3.0);
        assertThat(member.runsAs(seeded).get(3)).isEqualTo(seeded.mixScenarios().get(3));
        // The family itself still runs whole.
        assertThat(StorageScenarios.read("robustness").runsAs(family))
                .hasSize(family.mixes().size());
        assertThat(StorageScenarios.family("robustness-long-bursts")).isEqualTo("robustness");
        assertThat(StorageScenarios.family("robustness")).isNull();
        assertThat(StorageScenarios.family("robustness-")).isNull();
    }

    @Test
    void isBundled_namesAndKnownMixes_notPathsOrUnknownMixes() {
        assertThat(StorageScenarios.isBundled("mix50")).isTrue();
        assertThat(StorageScenarios.isBundled("robustness")).isTrue();
        assertThat(StorageScenarios.isBundled("robustness-mild")).isTrue();
        assertThat(StorageScenarios.isBundled("robustness-long-burst")).isFalse();
        assertThat(StorageScenarios.isBundled("./robustness-mild")).isFalse();
        assertThat(StorageScenarios.isBundled("mine.yaml")).isFalse();
    }

    @Test
    void familyMember_unknown_isNamed_withTheFamilysMixes() {
        assertThatThrownBy(() -> StorageScenarios.read("robustness-long-burst"))
                .isInstanceOf(dev.tailor.sim.ScenarioException.class)
                .hasMessage(
                        "robustness-long-burst: no mix \"long-burst\" in robustness (expected: robustness-<mix> with"
                                + " <mix> one of msn-small, mild, one-whale, long-bursts, spikes, many-small, tencent-heavy,"
                                + " busy, four-proxies)");
        assertThat(StorageScenarios.names())
                .isEqualTo(
                        "burst-microbench, deployed-like, underload, big-requests, mix50, mix-many, robustness, robustness-<mix> (<mix>: msn-small,"
                                + " mild, one-whale, long-bursts, spikes, many-small, tencent-heavy, busy, four-proxies)");
    }

    @Test
    void parse_unknownField_isNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "proxys: 2\n", "f.yaml"))
                .hasMessageStartingWith("f.yaml: proxys: unknown field (expected one of admission, backend, ")
                .hasMessageContaining("proxies")
                .hasMessageEndingWith(") at line 9");
        assertThatThrownBy(() -> StorageScenarios.parse("name: x\ntenants: [{name: a, rate: 3}]\n", "f.yaml"))
                .hasMessageContaining("tenants[0].rate: unknown field");
    }

    @Test
    void parse_wrongTypeOrSyntax_isNamed() {
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "proxies: two\n", "f.yaml"))
                .hasMessage("f.yaml: proxies: two (expected: a whole number) at line 9");
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "proxies: 1.5\n", "f.yaml"))
                .hasMessage("f.yaml: proxies: 1.5 (expected: a whole number) at line 9");
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "name: y\n", "f.yaml"))
                .hasMessage("f.yaml: name: duplicate key (expected: each key once per mapping; the first, at line 1,"
                        + " is the one checked) at line 9");
        assertThatThrownBy(() -> StorageScenarios.parse("", "f.yaml")).hasMessageContaining("f.yaml: empty");
    }

    @Test
    void read_aJsonFile_isReadAsStrictJson_andToldInJsonsWords() throws IOException {
        // Was read as YAML and told YAML's words (a list, each key once per mapping) for a .json file.
        Path json = Files.writeString(dir.resolve("s.json"), """
                {
                  "name": "j",
                  "seed": 1,
                  "backend": {"parallelism": 24, "readBaseMicros": 254, "readMicrosPerKiB": 26.98,
                              "writeBaseMicros": 50, "writeMicrosPerKiB": 0.80, "serviceSigma": 0.4},
                  "tenants": {"name": "a", "requestsPerSecond": 1000},
                  "seed": 2
                }
                """);
        assertThatThrownBy(() -> StorageScenarios.read(json.toString()))
                .hasMessage(json + ": 2 problems:\n"
                        + "  tenants: {name: a, requestsPerSecond: 1000} (expected: an array) at line 6\n"
                        + "  seed: duplicate key (expected: each key once per object; the first, at line 3, is the one"
                        + " checked) at line 7");
        Files.writeString(json, "{\"name\": \"j\", \"tenants\": [}");
        assertThatThrownBy(() -> StorageScenarios.read(json.toString()))
                .hasMessage(json + ": not valid JSON at line 1, field tenants[0]: found '}' (expected: ']' to close the"
                        + " array)");
        // Strict JSON: YAML's flow style is not JSON.
        Files.writeString(json, "{name: j}");
        assertThatThrownBy(() -> StorageScenarios.read(json.toString()))
                .hasMessageStartingWith(json + ": not valid JSON at line 1");
    }

    @Test
    void parse_yamlOnlyNumbers_nameTheField() {
        // .nan and .inf are YAML floats that Jackson's number parser refuses; the message says which field.
        // Each is told with what its field takes, as a value out of its range is.
        String yaml = MINIMAL.replace("requestsPerSecond: 1000", "requestsPerSecond: .nan");

        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage(
                        "f.yaml: tenants[0].requestsPerSecond: .nan (expected: a number in (0, 10000000]) at line 7");
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "intervalMillis: -.inf\n", "f.yaml"))
                .hasMessage("f.yaml: intervalMillis: -.inf (expected: a number in [0.1, 60000]) at line 9");
        // A whole-number field: not a number at all.
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "proxies: .inf\n", "f.yaml"))
                .hasMessage("f.yaml: proxies: .inf (expected: a whole number) at line 9");
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "intervalMillis: 0.01\n", "f.yaml"))
                .hasMessageContaining("intervalMillis: 0.01 (expected: a number in [0.1, 60000]; the policies run");
    }

    /** Every message for a field with a floor above 0 states the range it takes, whatever the value. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "intervalMillis: .nan | intervalMillis: .nan (expected: a number in [0.1, 60000]) at line 9",
                "intervalMillis: 0.05 | intervalMillis: 0.05 (expected: a number in [0.1, 60000]; the policies run",
                "intervalMillis: 0 | intervalMillis: 0 (expected: a number in [0.1, 60000]) at line 9",
                "intervalMillis: 60001 | intervalMillis: 60001 (expected: a number in [0.1, 60000]) at line 9",
            })
    void parse_intervalMillisOutOfRange_alwaysStatesTheRangeAccepted(String line, String message) {
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + line + "\n", "f.yaml"))
                .hasMessageContaining("f.yaml: " + message);
        assertThat(StorageScenarios.parse(MINIMAL + "intervalMillis: 0.1\n", "f.yaml")
                        .intervalMillis())
                .isEqualTo(0.1);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                ".nan | .nan",
                "20 | 20",
                "4000000 | 4000000",
            })
    void parse_burstMaxMillisOutOfRange_statesTheRangeFromMinMillis(String value, String written) {
        String yaml = MINIMAL + """
                  - name: b
                    requestsPerSecond: 10
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                    bursts: {meanGapSeconds: 1, minMillis: 50, maxMillis: %s, multiplier: 2}
                """.formatted(value);
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessageContaining("tenants[1].bursts.maxMillis: " + written
                        + " (expected: a number in [minMillis, 3600000] = [50, 3600000]) at line 12");
    }

    @Test
    void parse_ratesWithOneTenant_saysSeveralAreNeeded() {
        String yaml = StorageScenarios.bundledText("deployed-like");
        int tenants = yaml.indexOf("\ntenants:");
        assertThat(tenants).isPositive();
        String one = yaml.substring(0, tenants) + "\ntenants:\n  - name: only\n    traces: [msn]\n";

        assertThatThrownBy(() -> StorageScenarios.parse(one, "f.yaml"))
                .hasMessageContaining("rates: 1 tenant(s) (expected: at least 2");
    }

    @Test
    void parse_negativeDiskSize_isOneProblem_notOnePerRequestSize() {
        String yaml = StorageScenarios.bundledText("burst-microbench")
                .replace("diskSizeBytes: 1073741824", "diskSizeBytes: -5");

        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessageContaining("f.yaml: diskSizeBytes: -5 (expected: >= 4096) at line ")
                .hasMessageNotContaining("problem")
                .hasMessageNotContaining("sizeBytes[");
    }

    @Test
    void parse_unknownFieldOfATenant_isToldAtItsOwnLine_notAtTheEndOfTheTenant() {
        String yaml = MINIMAL.replace("    requestsPerSecond: 1000\n", "    requestsPerSecnd: 5\n    proxy: 0\n");
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  tenants[0].requestsPerSecond: missing (expected: a number in (0, 10000000]) at line 6\n"
                        + "  tenants[0].requestsPerSecnd: unknown field (expected one of baseline, bursts,"
                        + " commitmentRatio, count, name, proxy, requestsPerSecond, synthetic, traces) at line 7");
    }

    @Test
    void parse_duplicateKey_isWordedAsEveryOtherProblem() {
        assertThatThrownBy(() -> StorageScenarios.parse(MINIMAL + "seed: 2\n", "f.yaml"))
                .hasMessage("f.yaml: seed: duplicate key (expected: each key once per mapping; the first, at line 2,"
                        + " is the one checked) at line 9");
        // Nested: the second key's own line, not its mapping's; the first value is the one checked.
        String nested = MINIMAL.replace("backend: {parallelism: 24,", "backend: {parallelism: 0, parallelism: 24,");
        assertThatThrownBy(() -> StorageScenarios.parse(nested, "f.yaml"))
                .hasMessage("f.yaml: 2 problems:\n"
                        + "  backend.parallelism: duplicate key (expected: each key once per mapping; the first, at"
                        + " line 3, is the one checked) at line 3\n"
                        + "  backend.parallelism: 0 (expected: 1 .. 100000) at line 3");
    }

    @Test
    void parse_everyRangeProblemAtOnce() {
        String yaml = """
                name: bad name
                durationSeconds: 0
                intervalMillis: -1
                backend: {parallelism: 0, readBaseMicros: 1, readMicrosPerKiB: 1, writeBaseMicros: 1,
                          writeMicrosPerKiB: 1, serviceSigma: 5}
                segmentSizeBytes: 1000
                admission: {reserveFraction: 1.5}
                burstMultipliers: [0.5]
                tenants:
                  - {name: a, requestsPerSecond: -3, traces: [nowhere]}
                  - name: b
                    requestsPerSecond: 10
                    synthetic: {readFraction: 2, sizeBytes: [0]}
                    bursts: {meanGapSeconds: 1, minMillis: 50, maxMillis: 20, multiplier: 2}
                    proxy: 3
                """;
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "bad.yaml"))
                .hasMessageContaining("bad.yaml: 15 problems")
                .hasMessageContaining("name: \"bad name\" (expected: letters, digits, '-' or '_')")
                .hasMessageContaining("seed: missing (expected: an integer; fixed seeds make runs repeatable)\n")
                .hasMessageContaining("durationSeconds: 0 (expected: a number in (0, 86400]) at line 2")
                .hasMessageContaining("intervalMillis: -1 (expected: a number in [0.1, 60000]) at line 3")
                .hasMessageContaining("backend.parallelism: 0 (expected: 1 .. 100000)")
                .hasMessageContaining("backend.serviceSigma: 5 (expected: a number in [0, 2]) at line 5")
                .hasMessageContaining("segmentSizeBytes: 1000 (expected: a positive multiple of blockSizeBytes")
                .hasMessageContaining("admission.reserveFraction: 1.5 (expected: a number in [0, 1]) at line 7")
                .hasMessageContaining("burstMultipliers[0]: 0.5")
                .hasMessageContaining(
                        "tenants[0].requestsPerSecond: -3 (expected: a number in (0, 10000000]) at line 10")
                .hasMessageContaining(
                        "tenants[0].traces[0]: \"nowhere\" (expected: the name of a trace defined under traces"
                                + " (none is)) at line 10")
                .hasMessageContaining("tenants[1].synthetic.readFraction: 2 (expected: a number in [0, 1]) at line 13")
                .hasMessageContaining("tenants[1].synthetic.sizeBytes[0]: 0")
                .hasMessageContaining(
                        "tenants[1].bursts.maxMillis: 20 (expected: a number in [minMillis, 3600000] = [50,"
                                + " 3600000]) at line 14")
                .hasMessageContaining("tenants[1].proxy: 3 (expected: 0 .. proxies - 1 = 0)");
    }

    @Test
    void parse_backendCalibratedFromATraceWithoutLatencies_isNamed() {
        String yaml = """
                name: x
                seed: 1
                traces: {msn: {file: a.txt, format: msn-sectors}}
                backend: {calibrateFrom: msn}
                tenants: [{name: a, requestsPerSecond: 1, traces: [msn]}]
                """;
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessageContaining("backend.calibrateFrom: \"msn\" (expected: a trace in the tencent-replay format");
    }

    @Test
    void load_missingFileOrDirectory_saysWhatWasExpected() throws IOException {
        assertThatThrownBy(() -> StorageScenarios.load("nowhere.yaml"))
                .hasMessageContaining("nowhere.yaml: no such bundled scenario or file (expected: one of"
                        + " burst-microbench, deployed-like, underload, big-requests, mix50, mix-many, robustness, robustness-<mix> (<mix>: msn-small, mild, one-whale, long-bursts, spikes,"
                        + " many-small, tencent-heavy, busy, four-proxies), or a YAML scenario file)");
        assertThatThrownBy(() -> StorageScenarios.load(dir.toString())).hasMessageContaining("is a directory");
        Path file = Files.writeString(
                dir.resolve("s.yaml"), StorageScenarios.bundledText("underload").replace("seed: 20260303", "seed: 5"));
        assertThat(StorageScenarios.load(file.toString()).seed()).isEqualTo(5L);
    }
}
