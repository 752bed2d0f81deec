package dev.tailor.nbd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A config file's problems are all listed in one run: none hides another, an empty value is a problem of its
 * field, and each is told at its line (and on a one-line file, its column).
 */
class NbdConfigEveryProblemTest {

    @TempDir
    Path dir;

    private static String problemsOf(String yaml) {
        return catchThrowable(() -> NbdConfigFiles.parse(yaml, "test.yaml", Path.of("/etc/tailor")))
                .getMessage();
    }

    private String problemsOfFile(String name, String text) throws IOException {
        Path file = Files.writeString(dir.resolve(name), text);
        return catchThrowable(() -> NbdConfigFiles.read(file)).getMessage().replace(file + ": ", "");
    }

    @Test
    void aDuplicateKey_isListedWithTheOtherProblems_andTheFirstValueChecked() {
        assertThat(problemsOf("""
                        port: 70000
                        port: 2
                        eventLoopThreads: 0
                        exports:
                          - {name: d, file: f, file: g}
                        """))
                .isEqualTo("test.yaml: 4 problems:\n"
                        + "  port: 70000 (expected: a whole number in [0, 65535]) at line 1\n"
                        + "  port: duplicate key (expected: each key once per mapping; the first, at line 1, is the"
                        + " one checked) at line 2\n"
                        + "  eventLoopThreads: 0 (expected: a whole number in [1, 1024]) at line 3\n"
                        + "  exports[0].file: duplicate key (expected: each key once per mapping; the first, at line"
                        + " 5, is the one checked) at line 5");
    }

    @Test
    void aSegmentSizeThatIsNoMultipleOfTheBlockSize_isToldOnce_asWritten() {
        assertThat(problemsOf("""
                        admission:
                          enabled: true
                          segmentSize: 1B
                          blockSize: 3MiB
                          reserveFraction: 2
                        exports:
                          - {name: d, file: f, size: 1MiB}
                        """))
                .isEqualTo("test.yaml: 2 problems:\n"
                        + "  admission.segmentSize: 1B (expected: a multiple of blockSize, 3MiB, at least blockSize)"
                        + " at line 3\n"
                        + "  admission.reserveFraction: 2 (expected: a number in [0, 1]) at line 5");
    }

    @Test
    void aDuplicateKeyInJson_isListedWithTheOtherProblems() throws IOException {
        assertThat(problemsOfFile("twice.json", """
                        {
                          "port": 1,
                          "port": 2,
                          "fileIoThreads": 0,
                          "exports": [{"name": "d", "file": "f"}]
                        }
                        """))
                .contains("port: duplicate key (expected: each key once per object; the first, at line 2, is the"
                        + " one checked) at line 3")
                .contains("fileIoThreads: 0 (expected: a whole number in [1, 1024]) at line 4");
    }

    @Test
    void aMetricsFileInAFolderThatDoesNotExist_isAProblemAtStart_notAWarningEverySecond() throws IOException {
        Files.createDirectory(dir.resolve("metrics.prom.d"));
        assertThat(problemsOfFile("metrics.yaml", """
                        loop: {metricsFile: missing/tailor.prom}
                        exports: [{name: d, file: d.img, size: 1MiB}]
                        """))
                .isEqualTo("loop.metricsFile: " + dir.resolve("missing/tailor.prom") + ": the folder "
                        + dir.resolve("missing") + " does not exist (expected: a file path in an existing folder,"
                        + " e.g. /var/lib/node_exporter/textfile/tailor-nbd.prom) at line 1");
        assertThat(problemsOfFile("metrics.yaml", """
                        loop: {metricsFile: metrics.prom.d}
                        exports: [{name: d, file: d.img, size: 1MiB}]
                        """))
                .startsWith("loop.metricsFile: " + dir.resolve("metrics.prom.d") + " is a directory (expected:");
        // In an existing folder, the file itself need not exist yet: the export creates it.
        assertThat(NbdConfigFiles.read(Files.writeString(dir.resolve("fine.yaml"), """
                                loop: {metricsFile: tailor.prom}
                                exports: [{name: d, file: d.img, size: 1MiB}]
                                """))
                        .loop()
                        .metricsFile())
                .isEqualTo(dir.resolve("tailor.prom"));
    }

    @Test
    void twoBackends_areSaid_whateverIsWrongWithTheirValues() throws IOException {
        assertThat(problemsOfFile("two.yaml", """
                        exports:
                          - name: d
                            file: missing.img
                            upstream: localhost:10809
                          - name: e
                            file: missing.img
                            size: lots
                            upstream: {host: localhost}
                          - name: f
                            size: 1MiB
                            tenant: ""
                        """))
                .contains("exports[0]: two backends (expected: exactly one of file or upstream) at line 2")
                .contains("exports[0].upstream: \"localhost:10809\" (expected: a mapping with the fields")
                .contains("exports[0].file: " + dir.resolve("missing.img") + " does not exist")
                .contains("exports[1]: two backends (expected: exactly one of file or upstream) at line 5")
                .contains("exports[1].size: \"lots\"")
                .contains("exports[2]: no backend (expected: exactly one of file or upstream) at line 9")
                .contains("exports[2].tenant: \"\"");
    }

    @Test
    void aBadTlsMode_doesNotHideAMissingCertificateFolder() {
        assertThat(problemsOf("""
                        tls:
                          mode: requre
                          certificates: /no/such/folder
                        exports: [{name: d, file: f}]
                        """))
                .isEqualTo("test.yaml: 2 problems:\n"
                        + "  tls.mode: \"requre\" (expected: off, on or require) at line 2\n"
                        + "  tls.certificates: /no/such/folder does not exist (expected: a folder with"
                        + " server-cert.pem and server-key.pem) at line 3");
    }

    @Test
    void anEmptyValue_isAProblemOfItsField_neverTheDefault() {
        assertThat(problemsOf("""
                        port:
                        limits:
                          handshakeTimeoutSeconds: ~
                          maxRequestSize:
                        tls: {mode: null}
                        loop:
                        exports:
                          - name: d
                            readOnly:
                            upstream:
                              host: localhost
                              requestTimeoutSeconds:
                        """))
                .isEqualTo("test.yaml: 7 problems:\n"
                        + "  port: empty (expected: a whole number in [0, 65535]) at line 1\n"
                        + "  limits.handshakeTimeoutSeconds: ~ (expected: a number in (0, 86400]) at line 3\n"
                        + "  limits.maxRequestSize: empty (expected: a size in [4KiB, 1GiB]) at line 4\n"
                        + "  tls.mode: null (expected: off, on or require) at line 5\n"
                        + "  loop: empty (expected: a mapping with the fields mode, statisticsPeriodMicros,"
                        + " metricsPeriodMillis, metricsFile, healthCheckPeriodMillis, maintenancePeriodMicros,"
                        + " maintenanceBusyMicros, maintenanceTasks, metricsListen, slowRequestThresholdMillis,"
                        + " slowTopWindowSeconds) at line 6\n"
                        + "  exports[0].readOnly: empty (expected: true or false; in YAML also yes, no, on or off,"
                        + " unquoted, each also Capitalized or in UPPER case) at line 9\n"
                        + "  exports[0].upstream.requestTimeoutSeconds: empty (expected: 0 for off, or a number in"
                        + " [0.01, 86400]) at line 12");
    }

    @Test
    void anEmptyExportsList_saysWhatItTakes() {
        assertThat(problemsOf("exports:\n"))
                .isEqualTo("test.yaml: exports: empty (expected: at least one export) at line 1");
        assertThat(problemsOf("exports: []\n"))
                .isEqualTo("test.yaml: exports: [] (expected: at least one export) at line 1");
        assertThat(problemsOf("{\"exports\": []}"))
                .isEqualTo("test.yaml: exports: [] (expected: at least one export) at line 1");
        assertThat(problemsOf("port: 10809\n"))
                .as("no exports key at all")
                .isEqualTo("test.yaml: exports: missing (expected: at least one export)");
        assertThat(NbdConfig.builder().build().problems())
                .extracting(dev.tailor.common.Problem::message)
                .contains("exports: [] (expected: at least one export)");
    }

    @Test
    void yamlsNanAndInfinities_areEachAProblemOfTheirField_besideTheOthers() {
        assertThat(problemsOf("""
                        eventLoopThreads: .nan
                        fileIoThreads: 0
                        limits:
                          handshakeTimeoutSeconds: .NaN
                          maxRequestSize: .inf
                        exports:
                          - name: d
                            upstream:
                              host: localhost
                              requestTimeoutSeconds: .inf
                              idleTimeoutSeconds: -.Inf
                        """))
                .isEqualTo("test.yaml: 6 problems:\n"
                        + "  eventLoopThreads: .nan (expected: a whole number) at line 1\n"
                        + "  fileIoThreads: 0 (expected: a whole number in [1, 1024]) at line 2\n"
                        + "  limits.handshakeTimeoutSeconds: .NaN (expected: a number in (0, 86400]) at line 4\n"
                        + "  limits.maxRequestSize: .inf (expected: " + ByteSize.EXPECTED + ") at line 5\n"
                        + "  exports[0].upstream.requestTimeoutSeconds: .inf (expected: 0 for off, or a number in"
                        + " [0.01, 86400]) at line 10\n"
                        + "  exports[0].upstream.idleTimeoutSeconds: -.Inf (expected: a number in [0.01, 86400]) at"
                        + " line 11");
    }

    @Test
    void aSyntaxErrorAfterANan_isTheErrorTold_aloneAsEverySyntaxError() {
        assertThat(problemsOf("eventLoopThreads: .nan\nexports: [\n"))
                .startsWith("test.yaml: not valid YAML or JSON at line 3")
                .doesNotContain(".nan");
    }

    @Test
    void aPrettyPrintedJsonFile_tellsEachProblemAtItsLine() throws IOException {
        assertThat(problemsOfFile("pretty.json", """
                        {
                          "port": 70000,
                          "exports": [
                            {
                              "name": "d",
                              "upstream": {
                                "host": "localhost",
                                "requestTimeoutSeconds": -1
                              }
                            }
                          ]
                        }
                        """))
                .isEqualTo("2 problems:\n"
                        + "  port: 70000 (expected: a whole number in [0, 65535]) at line 2\n"
                        + "  exports[0].upstream.requestTimeoutSeconds: -1 (expected: 0 for off, or a number in"
                        + " [0.01, 86400]) at line 8");
    }

    @Test
    void aOneLineJsonFile_tellsEachProblemsColumnToo() throws IOException {
        assertThat(problemsOfFile(
                        "one.json",
                        "{\"port\": 70000, \"exports\": [{\"name\": \"d\", \"upstream\": {\"host\": \"localhost\","
                                + " \"requestTimeoutSeconds\": -1}}]}\n"))
                .isEqualTo("2 problems:\n"
                        + "  port: 70000 (expected: a whole number in [0, 65535]) at line 1, column 2\n"
                        + "  exports[0].upstream.requestTimeoutSeconds: -1 (expected: 0 for off, or a number in"
                        + " [0.01, 86400]) at line 1, column 77");
    }
}
