package dev.tailor.nbd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The configuration file: the bundled example, defaults, sizes, and every problem named at once. */
class NbdConfigTest {

    private static NbdConfig parse(String yaml) {
        return NbdConfigFiles.parse(yaml, "test.yaml", Path.of("/etc/tailor"));
    }

    @TempDir
    Path dir;

    @Test
    void bundledExample_parses() throws IOException {
        // Its golden image is a file of the machine it is written for: parsed, not read from the file system.
        Path example = Path.of(System.getProperty("tailor.projectDir", ".."), "examples", "nbd.yaml");
        NbdConfig config = NbdConfigFiles.parse(
                Files.readString(example),
                example.toString(),
                example.toAbsolutePath().getParent());
        assertThat(config.exports())
                .extracting(ExportConfig::name)
                .containsExactly("vm1-root", "golden-image", "scratch");
        assertThat(config.exports().get(0).file())
                .isEqualTo(example.toAbsolutePath().getParent().resolve("vm1-root.img"));
        assertThat(config.exports().get(0).size().bytes()).isEqualTo(20L << 30);
        assertThat(config.exports().get(1).readOnly()).isTrue();
        assertThat(config.exports().get(2).upstream())
                .isEqualTo(new ExportConfig.Upstream("10.0.0.7", 10809, "scratch", 4, 5.0, 30.0));
    }

    @Test
    void read_looksAtEveryExportsFile_allAtOnce_byFieldAndLine() throws IOException {
        Files.createDirectory(dir.resolve("folder"));
        Files.write(dir.resolve("small.img"), new byte[1024]);
        Files.createFile(dir.resolve("empty.img"));
        Path config = Files.writeString(dir.resolve("nbd.yaml"), """
                exports:
                  - {name: fine, file: new.img, size: 1MiB}
                  - name: nested
                    file: no-such-folder/one.img
                    size: 1MiB
                  - {name: missing, file: missing.img}
                  - {name: folder, file: folder}
                  - {name: golden, file: gone.raw, readOnly: true, size: 1MiB}
                  - {name: short, file: small.img, size: 2048}
                  - {name: empty, file: empty.img}
                """);

        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(config + ": 6 problems:\n"
                        + "  exports[1].file: " + dir.resolve("no-such-folder/one.img") + ": its folder "
                        + dir.resolve("no-such-folder") + " does not exist (expected: a path in an existing folder,"
                        + " where the file is created) at line 4\n"
                        + "  exports[2].file: " + dir.resolve("missing.img") + " does not exist (expected: an existing"
                        + " file, or a size for the export to create it sparse with) at line 6\n"
                        + "  exports[3].file: " + dir.resolve("folder") + " is a directory (expected: a file, or a"
                        + " path to create one) at line 7\n"
                        + "  exports[4].file: " + dir.resolve("gone.raw") + " does not exist (expected: an existing"
                        + " file: a read-only export does not create one) at line 8\n"
                        + "  exports[5].size: 2KiB (expected: at most the length of " + dir.resolve("small.img")
                        + ", 1024 bytes; or leave size out) at line 9\n"
                        + "  exports[6].file: " + dir.resolve("empty.img") + " is empty (expected: a file of at"
                        + " least 1 byte) at line 10");
        assertThat(dir.resolve("new.img")).as("reading creates nothing").doesNotExist();
    }

    @Test
    void read_twoExportsOfOneFile_isRefusedNamingBothFieldsAndTheFile() throws IOException {
        // Was: served both, writes through one changing the other's disk, the banner showing /x/cfg/../disk.raw.
        Path root = dir.toRealPath();
        Path folder = Files.createDirectory(root.resolve("cfg"));
        Path disk = Files.write(root.resolve("disk.raw"), new byte[4096]);
        Files.createSymbolicLink(root.resolve("link.raw"), disk);
        Path config = Files.writeString(folder.resolve("nbd.yaml"), """
                exports:
                  - {name: one, file: %s}
                  - {name: two, file: ../disk.raw}
                  - {name: three, file: ../link.raw, readOnly: true}
                  - {name: four, file: new.raw, size: 1MiB}
                  - {name: five, file: ./new.raw, size: 1MiB}
                  - {name: six, file: other.raw, size: 1MiB}
                  - {name: seven, file: %s}
                  - {name: up, upstream: {host: 127.0.0.1}}
                  - {name: up2, upstream: {host: 127.0.0.1}}
                """.formatted(disk, disk));

        String expected = " (expected: a file no other export serves: writes through one export would change the"
                + " other's disk under its clients)";
        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(config + ": 4 problems:\n"
                        + "  exports[1].file: " + folder.resolve("../disk.raw") + ", that is " + disk
                        + ", is exports[0].file too (export one)" + expected + " at line 3\n"
                        + "  exports[2].file: " + folder.resolve("../link.raw") + ", that is " + disk
                        + ", is exports[0].file too (export one)" + expected + " at line 4\n"
                        + "  exports[4].file: " + folder.resolve("./new.raw") + ", that is "
                        + folder.resolve("new.raw") + ", is exports[3].file too (export four)" + expected
                        + " at line 6\n"
                        + "  exports[6].file: " + disk + " is exports[0].file too (export one)" + expected
                        + " at line 8");
        assertThat(folder.resolve("new.raw")).as("reading creates nothing").doesNotExist();
    }

    @Test
    void read_reportsEveryProblemOfTheAdmissionBlock_allAtOnce() throws IOException {
        Path config = Files.writeString(dir.resolve("nbd.yaml"), """
                admission: {enabled: true, iops: -5, reserveFraction: -0.0001, queueCapacityPerSegment: -1}
                exports: [{name: disk, file: disk.img, size: 1MiB}]
                """);

        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(config + ": 3 problems:\n")
                .hasMessageContaining("  admission.reserveFraction: -0.0001 (expected: ")
                .hasMessageContaining("  admission.queueCapacityPerSegment: -1 (expected: ")
                .hasMessageContaining(
                        "  admission.iops: -5 (expected: 4 KiB I/Os per second, a number in [1, 100000000]) at line 1");
    }

    @Test
    void read_aDeviceIsNotServed_namedByField() throws IOException {
        Path config = Files.writeString(dir.resolve("nbd.yaml"), "exports: [{name: zero, file: /dev/zero}]\n");

        assertThatThrownBy(() -> NbdConfigFiles.read(config))
                .hasMessage(config + ": exports[0].file: /dev/zero is not a regular file (a block or character"
                        + " device?) (expected: a regular file, e.g. a raw disk image; block devices are not served"
                        + " yet) at line 1");
    }

    @Test
    void metricsListenWithoutAHost_isTheLoopbackAddress_asForTheListenOption() {
        // Was: loop.metricsListen: ":0" (expected: HOST:PORT, ...), while port: 0 was taken.
        NbdConfig config = parse("{loop: {metricsListen: ':0'}, exports: [{name: disk, file: disk.img, size: 1GiB}]}");
        assertThat(config.loop().metricsAddress()).isEqualTo(new java.net.InetSocketAddress("127.0.0.1", 0));
        assertThat(ServeOptions.parseListen(":0").getHostString()).isEqualTo("127.0.0.1");
        assertThat(ServeOptions.parseListen(":0").getPort()).isZero();
        assertThatThrownBy(
                        () -> parse("{loop: {metricsListen: '9810'}, exports: [{name: d, file: d.img, size: 1GiB}]}"))
                .hasMessageContaining("loop.metricsListen: \"9810\" (expected: HOST:PORT");
    }

    @Test
    void minimalConfig_takesTheDefaults() {
        NbdConfig config = parse("exports: [{name: disk, file: disk.img, size: 1GiB}]");
        assertThat(config.address()).isEqualTo("127.0.0.1");
        assertThat(config.port()).isEqualTo(10809);
        assertThat(config.limits()).isEqualTo(Limits.DEFAULTS);
        assertThat(config.limits().maxRequestBytes()).isEqualTo(32 << 20);
        assertThat(config.exports().get(0).tenant()).isEqualTo("default");
        assertThat(config.exports().get(0).readOnly()).isFalse();
        assertThat(config.exports().get(0).file()).isEqualTo(Path.of("/etc/tailor/disk.img"));
    }

    @Test
    void fileIo_defaultsToAuto_takesTheTwoPaths_andNamesABadValue() {
        assertThat(parse("exports: [{name: disk, file: disk.img, size: 1GiB}]").fileIo())
                .isEqualTo(NbdConfig.FILE_IO_AUTO);
        assertThat(parse("{fileIo: threads, exports: [{name: disk, file: disk.img, size: 1GiB}]}")
                        .fileIo())
                .isEqualTo(NbdConfig.FILE_IO_THREADS);
        assertThat(parse("{fileIo: io_uring, exports: [{name: disk, file: disk.img, size: 1GiB}]}")
                        .fileIo())
                .isEqualTo(NbdConfig.FILE_IO_URING);
        assertThatThrownBy(() -> parse("{fileIo: aio, exports: [{name: disk, file: disk.img, size: 1GiB}]}"))
                .hasMessageContaining("fileIo: \"aio\" (expected: auto, io_uring or threads)");
    }

    @Test
    void admissionAndLoopSections_areRead_andTheMetricsFileIsRelativeToTheConfig() {
        // They used to be parsed, checked and then dropped, so a config file could not set them.
        NbdConfig config = parse("""
                exports: [{name: disk, file: disk.img, size: 1GiB}]
                admission: {enabled: true, capacityCostUnitsPerSecond: 3.9e8, reserveFraction: 0.3,
                            segmentSize: 256MiB, queueCapacityPerSegment: 32}
                loop: {mode: fifo, metricsFile: metrics.prom, metricsPeriodMillis: 500, healthCheckPeriodMillis: 20,
                       maintenanceBusyMicros: 25, maintenanceTasks: 8, maintenancePeriodMicros: 2000}
                """);
        assertThat(config.admission().enabled()).isTrue();
        assertThat(config.admission().capacityCostUnitsPerSecond()).isEqualTo(3.9e8);
        assertThat(config.admission().reserveFraction()).isEqualTo(0.3);
        assertThat(config.admission().toAdmissionConfig().segmentSizeBytes()).isEqualTo(256L << 20);
        assertThat(config.admission().queueCapacityPerSegment()).isEqualTo(32);
        assertThat(config.loop().loopMode()).isEqualTo(dev.tailor.eventloop.LoopMode.FIFO);
        assertThat(config.loop().metricsFile()).isEqualTo(Path.of("/etc/tailor/metrics.prom"));
        assertThat(config.loop().background())
                .isEqualTo(new BackgroundSettings(1_000, 500, Path.of("/etc/tailor/metrics.prom"), 20, 2_000, 25, 8));
        assertThat(parse("""
                exports: [{name: disk, file: disk.img, size: 1GiB}]
                loop: {metricsFile: /var/lib/node_exporter/tailor.prom}
                """).loop().metricsFile()).isEqualTo(Path.of("/var/lib/node_exporter/tailor.prom"));
        assertThat(parse("exports: [{name: disk, file: disk.img, size: 1GiB}]")
                        .admission()
                        .enabled())
                .isFalse();
    }

    @Test
    void json_isAcceptedToo() {
        NbdConfig config = parse("{\"port\": 0, \"exports\": [{\"name\": \"d\", \"upstream\": {\"host\": \"h\"}}]}");
        assertThat(config.port()).isZero();
        assertThat(config.exports().get(0).upstream())
                .isEqualTo(new ExportConfig.Upstream("h", 10809, "", 4, 5.0, null));
    }

    @Test
    void sizes_acceptBytesAndBinaryUnits() {
        assertThat(ByteSize.parse("512").bytes()).isEqualTo(512);
        assertThat(ByteSize.parse("64KiB").bytes()).isEqualTo(64 << 10);
        assertThat(ByteSize.parse("32 MiB").bytes()).isEqualTo(32 << 20);
        assertThat(ByteSize.parse("1gib").bytes()).isEqualTo(1L << 30);
        assertThat(ByteSize.parse("2TiB").bytes()).isEqualTo(2L << 40);
        assertThat(ByteSize.parse("1G").bytes())
                .as("binary, as qemu-img reads it")
                .isEqualTo(1L << 30);
        assertThat(ByteSize.parse("32m").bytes()).isEqualTo(32L << 20);
        assertThat(ByteSize.parse("4K").bytes()).isEqualTo(4L << 10);
        assertThat(ByteSize.format(1L << 30)).isEqualTo("1GiB");
        assertThat(ByteSize.format(1536L << 10)).isEqualTo("1536KiB");
        assertThat(ByteSize.format(1000)).isEqualTo("1000B");
        assertThatThrownBy(() -> ByteSize.parse("1.5GiB")).hasMessageContaining("\"1.5GiB\" (expected: a size");
        assertThatThrownBy(() -> ByteSize.parse("1GB")).hasMessageContaining("\"1GB\" (expected: a size");
        assertThatThrownBy(() -> ByteSize.parse("9999999TiB")).hasMessageContaining("under 8 EiB");
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, size: -1}]"))
                .hasMessageContaining("exports[0].size");
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, size: [1]}]"))
                .hasMessageContaining("exports[0].size");
    }

    @Test
    void problems_areAllNamedByField() {
        assertThatThrownBy(() -> parse("""
                port: 70000
                limits: {maxRequestSize: 1KiB, maxInFlightRequestsPerConnection: 0, handshakeTimeoutSeconds: 0}
                exports:
                  - {name: "has space", file: a.img}
                  - {name: b, file: b.img, upstream: {host: h}}
                  - {name: c}
                  - {name: c, upstream: {host: "", port: 0, connections: 99, idleTimeoutSeconds: 0}}
                  - {name: d, file: d.img, backend: "shelf 3"}
                """))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("test.yaml: ")
                .hasMessageContaining("port: 70000 (expected: a whole number in [0, 65535])")
                .hasMessageContaining("limits.maxRequestSize: 1KiB (expected: a size in [4KiB, 1GiB])")
                .hasMessageContaining("limits.maxInFlightRequestsPerConnection: 0")
                .hasMessageContaining("limits.handshakeTimeoutSeconds: 0 (expected")
                .hasMessageContaining("exports[0].name: \"has space\"")
                .hasMessageContaining("exports[1]: two backends")
                .hasMessageContaining("exports[2]: no backend")
                .hasMessageContaining("exports[3].name: \"c\" is used twice")
                .hasMessageContaining("exports[3].upstream.host: missing")
                .hasMessageContaining("exports[3].upstream.port: 0")
                .hasMessageContaining("exports[3].upstream.connections: 99")
                .hasMessageContaining("exports[3].upstream.idleTimeoutSeconds: 0 (expected: a number in [0.01, 86400])")
                .hasMessageContaining("exports[4].backend: \"shelf 3\" (expected: a name for the backend");
    }

    @Test
    void backend_isReadAsGiven_andUnsetByDefault() {
        NbdConfig config = parse("exports: [{name: d, file: f, backend: shelf-3}, {name: e, file: g}]");
        assertThat(config.exports().get(0).backend()).isEqualTo("shelf-3");
        assertThat(config.exports().get(1).backend()).isNull();
    }

    @Test
    void handshakeLimit_defaultsTo64OrMaxConnections_andIsAtMostMaxConnections() {
        assertThat(parse("exports: [{name: d, file: f}]").limits().maxHandshakes())
                .isEqualTo(64);
        assertThat(parse("limits: {maxConnections: 8}\nexports: [{name: d, file: f}]")
                        .limits()
                        .maxHandshakes())
                .isEqualTo(8);
        assertThatThrownBy(() -> parse("limits: {maxConnections: 8, maxHandshakes: 9}\nexports: [{name: d, file: f}]"))
                .hasMessageContaining(
                        "limits.maxHandshakes: 9 (expected: a whole number in [1, 8], at most limits.maxConnections)");
    }

    @Test
    void inFlightBelowTheRequestSize_isRefused() {
        assertThatThrownBy(() -> parse("""
                limits: {maxRequestSize: 1MiB, maxInFlightPerConnection: 512KiB}
                exports: [{name: d, file: f}]
                """))
                .hasMessageContaining("limits.maxInFlightPerConnection: 512KiB (expected: at least"
                        + " limits.maxRequestSize, 1MiB)");
    }

    @Test
    void invalidRequestSize_isReportedOnce_andOtherLimitsStillChecked() {
        // A bad maxRequestSize is not measured against maxInFlightPerConnection's default, and a bad
        // maxConnections does not hide a bad maxHandshakes.
        String message = catchThrowable(() -> parse("""
                limits: {maxRequestSize: 2GiB, maxConnections: 0, maxHandshakes: 0}
                exports: [{name: d, file: f}]
                """)).getMessage();
        assertThat(message)
                .contains("limits.maxRequestSize: 2GiB (expected: a size in [4KiB, 1GiB])")
                .doesNotContain("maxInFlightPerConnection")
                .contains("limits.maxConnections: 0")
                .contains("limits.maxHandshakes: 0 (expected: a whole number >= 1)");
    }

    @Test
    void numbers_areEchoedAsWritten() {
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {host: h, idleTimeoutSeconds: -3}}]"))
                .hasMessageContaining(
                        "exports[0].upstream.idleTimeoutSeconds: -3 (expected: a number in [0.01, 86400])");
        assertThatThrownBy(() -> parse("limits: {handshakeTimeoutSeconds: 0}\nexports: [{name: d, file: f}]"))
                .hasMessageContaining("limits.handshakeTimeoutSeconds: 0 (expected");
    }

    @Test
    void upstreamRequestTimeout_defaultsTo30Seconds_0IsOff_andBadValuesNamedWithTheirRange() {
        ExportConfig.Upstream defaults = parse("exports: [{name: d, upstream: {host: h}}]")
                .exports()
                .get(0)
                .upstream();
        assertThat(defaults.requestTimeoutSeconds()).isEqualTo(30.0);
        assertThat(defaults.requestTimeoutNanos()).isEqualTo(30_000_000_000L);
        assertThat(parse("exports: [{name: d, upstream: {host: h, requestTimeoutSeconds: 0}}]")
                        .exports()
                        .get(0)
                        .upstream()
                        .requestTimeoutNanos())
                .as("0 is off")
                .isZero();
        assertThat(parse("exports: [{name: d, upstream: {host: h, requestTimeoutSeconds: 0.2}}]")
                        .exports()
                        .get(0)
                        .upstream()
                        .requestTimeoutNanos())
                .isEqualTo(200_000_000L);
        for (String bad : List.of("-1", "0.001", "86401")) {
            assertThatThrownBy(() ->
                            parse("exports: [{name: d, upstream: {host: h, requestTimeoutSeconds: " + bad + "}}]"))
                    .hasMessage("test.yaml: exports[0].upstream.requestTimeoutSeconds: " + bad
                            + " (expected: 0 for off, or a number in [0.01, 86400]) at line 1");
        }
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {host: h, requestTimeoutSeconds: off}}]"))
                .hasMessageContaining(
                        "exports[0].upstream.requestTimeoutSeconds: false (expected: a number, e.g. 10"
                                + " or 2.5; YAML reads an unquoted off or no as false: write 0 for off where the field takes 0)");
    }

    @Test
    void upstreamOnAUnixSocket_hasNoPort_andARelativePathIsTheConfigFilesFolders() {
        ExportConfig.Upstream absolute = parse("exports: [{name: d, upstream: {unix: /run/qemu-nbd.sock, export: x}}]")
                .exports()
                .get(0)
                .upstream();
        assertThat(absolute).isEqualTo(ExportConfig.Upstream.onUnixSocket("/run/qemu-nbd.sock", "x", null, null, null));
        assertThat(absolute.port()).as("no TCP port beside a socket").isNull();
        assertThat(absolute.uri()).isEqualTo("nbd+unix:///x?socket=/run/qemu-nbd.sock");
        assertThat(parse("exports: [{name: d, upstream: {unix: sockets/nbdkit.sock}}]")
                        .exports()
                        .get(0)
                        .upstream()
                        .unix())
                .isEqualTo("/etc/tailor/sockets/nbdkit.sock");
    }

    @Test
    void listeningUnixSocket_withANul_isNamed_notAnInvalidPathThrown() {
        // Was: Path.of threw InvalidPathException on the NUL, past the field's problems.
        assertThatThrownBy(() -> parse("unix: \"/run/x\\0y.sock\"\nexports: [{name: d, upstream: {host: h, port: 1}}]"))
                .hasMessageContaining("unix: contains NUL (expected: the path of a socket to create)");
    }

    @Test
    void upstreamOnAUnixSocket_andTcpBoth_orABadPath_areNamedWithTheirValues() {
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {host: h, port: 10809, unix: /run/x.sock}}]"))
                .hasMessageContaining("exports[0].upstream: host \"h\" and unix \"/run/x.sock\" (expected: exactly one"
                        + " of host (with port) or unix)")
                .as("the port goes with the host: one problem")
                .hasMessageNotContaining("upstream.port");
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {port: 10809, unix: /run/x.sock}}]"))
                .hasMessageContaining("exports[0].upstream.port: 10809 beside unix \"/run/x.sock\" (expected: no port"
                        + " for an upstream on a Unix socket; host and port for one on TCP)");
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {unix: ''}}]"))
                .hasMessageContaining("exports[0].upstream.unix: empty (expected: the path of the upstream NBD"
                        + " server's Unix socket)");
        String longPath = "/run/" + "x".repeat(110) + ".sock";
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {unix: " + longPath + "}}]"))
                .hasMessageContaining("exports[0].upstream.unix: \"" + longPath + "\" is 120 bytes long (expected: at"
                        + " most 107, the limit of a Unix socket address)");
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {export: x}}]"))
                .hasMessageContaining("exports[0].upstream.host: missing (expected: the upstream NBD server's host, or"
                        + " unix for its Unix socket)");
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {unix: \"/run/x\\0y.sock\"}}]"))
                .hasMessageContaining("exports[0].upstream.unix: contains NUL (expected: the path of the upstream NBD"
                        + " server's Unix socket)");
        // Whether anything listens on the path is found out at start, as whether a host answers.
        assertThat(parse("exports: [{name: d, upstream: {unix: /no/such/folder/x.sock}}]")
                        .problems())
                .isEmpty();
    }

    @Test
    void upstreamHost_badSyntaxIsAConfigError_namesResolveLater() {
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {host: 'bad host!'}}]"))
                .hasMessageContaining("exports[0].upstream.host: \"bad host!\" (expected: a host name");
        assertThatThrownBy(() -> parse("exports: [{name: d, upstream: {host: '-x.example'}}]"))
                .hasMessageContaining("exports[0].upstream.host");
        for (String host : new String[] {
            "localhost",
            "storage-0.storage.svc.cluster.local",
            "10.0.0.1",
            "::1",
            "[fe80::1]",
            "no-such-host.invalid",
            "my_host"
        }) {
            assertThat(parse("exports: [{name: d, upstream: {host: '" + host + "'}}]")
                            .exports()
                            .get(0)
                            .upstream()
                            .host())
                    .as(host)
                    .isEqualTo(host);
        }
    }

    @Test
    void syntaxErrors_nameTheLineAndTheField() {
        assertThatThrownBy(() -> parse("exports:\n  - name: d\n    file: f\n    file: g\n"))
                .hasMessage(
                        "test.yaml: exports[0].file: duplicate key (expected: each key once per mapping; the first, at"
                                + " line 3, is the one checked) at line 4");
    }

    @Test
    void aJsonFile_isReadAsStrictJson_andItsSyntaxErrorsSayLineAndColumn() throws Exception {
        // A trailing comma was accepted: the file was read as YAML, which allows it.
        String trailingComma =
                "{\"port\": 20812, \"exports\": [{\"name\": \"a\", \"size\": \"1GiB\"," + " \"file\": \"a.img\",}]}";
        Path json = Files.writeString(dir.resolve("nbd.json"), trailingComma);
        assertThatThrownBy(() -> NbdConfigFiles.read(json))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(json + ": not valid JSON at line 1, column 75: found '}' (expected: a field name in double"
                        + " quotes)");
        Path upper = Files.writeString(dir.resolve("NBD.JSON"), "{\"port\": 20812,\n  # a comment\n}");
        assertThatThrownBy(() -> NbdConfigFiles.read(upper))
                .hasMessageStartingWith(upper + ": not valid JSON at line 2,");
        Path twice = Files.writeString(dir.resolve("twice.json"), "{\"port\": 1,\n \"port\": 2}");
        assertThatThrownBy(() -> NbdConfigFiles.read(twice))
                .hasMessage(twice + ": 2 problems:\n"
                        + "  exports: missing (expected: at least one export)\n"
                        + "  port: duplicate key (expected: each key once per object; the first, at line 1, is the one"
                        + " checked) at line 2");

        Path good = Files.writeString(dir.resolve("good.json"), trailingComma.replace(",}", "}"));
        NbdConfig config = NbdConfigFiles.read(good);
        assertThat(config.port()).isEqualTo(20812);
        assertThat(config.exports().get(0).file()).isEqualTo(dir.resolve("a.img"));
        Path yaml = Files.writeString(dir.resolve("nbd.yaml"), trailingComma);
        assertThat(NbdConfigFiles.read(yaml).port())
                .as("the same text named .yaml is YAML, which allows the comma, as before")
                .isEqualTo(20812);
    }

    @Test
    void aJsonFile_isToldJsonsBooleans_notYamls() throws Exception {
        // Was YAML's words (yes, no, on or off) for a file read as strict JSON, which takes none of them.
        String export = "{\"exports\": [{\"name\": \"d\", \"file\": \"d.img\", \"size\": \"1MiB\", \"readOnly\": %s}]}";
        Path json = dir.resolve("nbd.json");
        for (String bad : List.of("\"maybe\"", "1", "\"yes\"", "\"True\"")) {
            Files.writeString(json, export.formatted(bad));
            assertThatThrownBy(() -> NbdConfigFiles.read(json))
                    .as(bad)
                    .hasMessage(json + ": exports[0].readOnly: " + bad + " (expected: true or false) at line 1, column"
                            + " 61");
        }
        Files.writeString(json, export.formatted("null"));
        assertThatThrownBy(() -> NbdConfigFiles.read(json))
                .hasMessageContaining("exports[0].readOnly: null (expected: true or false) at line 1");
        Files.writeString(json, export.formatted("\"true\""));
        assertThatThrownBy(() -> NbdConfigFiles.read(json))
                .hasMessage(json + ": exports[0].readOnly: \"true\" (expected: true or false, unquoted: in quotes it"
                        + " is a text, not a boolean) at line 1, column 61");
        // JSON's false is false: YAML's unquoted off is no reason for it.
        Files.writeString(
                json,
                "{\"exports\": [{\"name\": \"d\", \"upstream\": {\"host\": \"h\", \"requestTimeoutSeconds\": false}}]}");
        assertThatThrownBy(() -> NbdConfigFiles.read(json))
                .hasMessage(json + ": exports[0].upstream.requestTimeoutSeconds: false (expected: a number, e.g. 10 or"
                        + " 2.5) at line 1, column 54");

        // The same text named .yaml is YAML, and told YAML's words.
        Path yaml = dir.resolve("nbd.yaml");
        Files.writeString(yaml, export.formatted("\"maybe\""));
        assertThatThrownBy(() -> NbdConfigFiles.read(yaml))
                .hasMessage(
                        yaml + ": exports[0].readOnly: \"maybe\" (expected: " + StrictReader.BOOLEAN + ") at line 1");
    }

    @Test
    void unknownFieldsAndEmptyFiles_areRefused() {
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, sise: 1}]"))
                .hasMessage("test.yaml: exports[0].sise: unknown field (expected one of name, tenant, description,"
                        + " size, readOnly, file, upstream, baseline, backend) at line 1");
        assertThatThrownBy(() -> parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> parse("# only a comment\n")).hasMessageContaining("empty");
        assertThatThrownBy(() -> parse("exports: []"))
                .hasMessage("test.yaml: exports: [] (expected: at least one export) at line 1");
        assertThatThrownBy(() -> parse("exports: [")).hasMessageContaining("not valid YAML or JSON");
        assertThatThrownBy(() -> parse("port: 1\nport: 2\nexports: [{name: d, file: f}]"))
                .hasMessage("test.yaml: port: duplicate key (expected: each key once per mapping; the first, at line"
                        + " 1, is the one checked) at line 2");
    }

    @Test
    void idleTimeoutAndPerAddressLimit_defaults_offAndBadValues() {
        Limits defaults = parse("exports: [{name: d, file: f}]").limits();
        assertThat(defaults.idleTimeoutSeconds()).isEqualTo(Limits.DEFAULT_IDLE_TIMEOUT_SECONDS);
        assertThat(defaults.maxConnectionsPerAddress()).as("256 less a quarter").isEqualTo(192);
        assertThat(parse("limits: {maxConnections: 2}\nexports: [{name: d, file: f}]")
                        .limits()
                        .maxConnectionsPerAddress())
                .isEqualTo(2);
        Limits off = parse("limits: {idleTimeoutSeconds: 0, maxConnectionsPerAddress: 3}\n"
                        + "exports: [{name: d, file: f}]")
                .limits();
        assertThat(off.idleTimeoutNanos()).as("0 is off").isZero();
        assertThat(off.maxConnectionsPerAddress()).isEqualTo(3);
        assertThat(parse("limits: {idleTimeoutSeconds: 2.5}\nexports: [{name: d, file: f}]")
                        .limits()
                        .idleTimeoutNanos())
                .isEqualTo(2_500_000_000L);
        assertThatThrownBy(() -> parse("limits: {idleTimeoutSeconds: -1, maxConnections: 8,"
                        + " maxConnectionsPerAddress: 9}\nexports: [{name: d, file: f}]"))
                .hasMessageContaining(
                        "limits.idleTimeoutSeconds: -1 (expected: 0 for off, or a number in [0.01, 31536000] (a year))")
                .hasMessageContaining(
                        "limits.maxConnectionsPerAddress: 9 (expected: a whole number in [1, 8], at most limits.maxConnections)");
    }

    @Test
    void slowThresholdAndWindow_defaults_readInMillisAndSeconds_andBadValuesNamedAtTheirLine() {
        LoopSettings defaults = parse("exports: [{name: d, file: f}]").loop();
        assertThat(defaults.slowRequestThresholdNanos()).isEqualTo(50_000_000L);
        assertThat(defaults.slowTopWindowNanos()).isEqualTo(60_000_000_000L);
        LoopSettings set = parse(
                        "loop:\n  slowRequestThresholdMillis: 2.5\n  slowTopWindowSeconds: 300\nexports: [{name: d, file: f}]")
                .loop();
        assertThat(set.slowRequestThresholdNanos()).isEqualTo(2_500_000L);
        assertThat(set.slowTopWindowNanos()).isEqualTo(300_000_000_000L);
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f}]\nloop:\n  slowRequestThresholdMillis: 0\n"
                        + "  slowTopWindowSeconds: 1\n"))
                .hasMessageContaining(
                        "loop.slowRequestThresholdMillis: 0 (expected: milliseconds, a number in [0.001, 60000],"
                                + " e.g. 50) at line 3")
                .hasMessageContaining(
                        "loop.slowTopWindowSeconds: 1 (expected: a whole number in [2, 86400]) at line 4");
        assertThatThrownBy(() -> parse("loop: {slowRequestThresholdMillis: 90000}\nexports: [{name: d, file: f}]"))
                .hasMessage(
                        "test.yaml: loop.slowRequestThresholdMillis: 90000 (expected: milliseconds, a number in [0.001,"
                                + " 60000], e.g. 50) at line 1");
        assertThatThrownBy(() -> parse("loop: {slowRequestThresholdMillis: 50ms}\nexports: [{name: d, file: f}]"))
                .hasMessageStartingWith("test.yaml: loop.slowRequestThresholdMillis: \"50ms\" (expected: a number")
                .hasMessageEndingWith("at line 1");
    }

    @Test
    void yamlsNanInfinityAndOff_areNamedAsWhatTheUserWrote() {
        assertThatThrownBy(() -> parse("limits: {idleTimeoutSeconds: .nan}\nexports: [{name: d, file: f}]"))
                .hasMessage("test.yaml: limits.idleTimeoutSeconds: .nan (expected: 0 for off, or a number in [0.01,"
                        + " 31536000] (a year)) at line 1");
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f}]\nlimits:\n  handshakeTimeoutSeconds: -.Inf\n"))
                .hasMessageContaining(
                        "limits.handshakeTimeoutSeconds: -.Inf (expected: a number in (0, 86400]) at line 3");
        assertThatThrownBy(() -> parse("limits: {idleTimeoutSeconds: off}\nexports: [{name: d, file: f}]"))
                .hasMessageContaining(
                        "limits.idleTimeoutSeconds: false (expected: a number, e.g. 10 or 2.5;"
                                + " YAML reads an unquoted off or no as false: write 0 for off where the field takes 0) at line 1");
    }

    @Test
    void fairDispatch_followsAdmissionsVariantByDefault_itsDepthFromTheBackend_andBadValuesNamedAtTheirLine() {
        NbdConfig defaults = parse("exports: [{name: d, file: f}]");
        assertThat(defaults.fairDispatch().on(defaults.admission()))
                .as("admission off: no door")
                .isFalse();
        assertThat(defaults.fairDispatch().depthOf(defaults.exports(), defaults.fileIoThreads()))
                .isEqualTo(8);
        NbdConfig admitted = parse("admission: {enabled: true}\nexports: [{name: d, file: f}]");
        assertThat(admitted.fairDispatch().on(admitted.admission()))
                .as("behind Tailor's admission")
                .isTrue();
        NbdConfig paper = parse("admission: {enabled: true, variant: paper}\nexports: [{name: d, file: f}]");
        assertThat(paper.fairDispatch().on(paper.admission()))
                .as("behind the paper's")
                .isFalse();
        NbdConfig declined =
                parse("admission: {enabled: true}\nfairDispatch: {enabled: false}\nexports: [{name: d, file: f}]");
        assertThat(declined.fairDispatch().on(declined.admission())).isFalse();
        NbdConfig set = parse("fileIoThreads: 3\nfairDispatch: {enabled: true}\nexports: [{name: d, file: f}]");
        assertThat(set.fairDispatch().on(set.admission())).as("the door alone").isTrue();
        assertThat(set.fairDispatch().depthOf(set.exports(), set.fileIoThreads()))
                .as("the file threads")
                .isEqualTo(3);
        NbdConfig upstreams = parse("fileIoThreads: 3\nfairDispatch: {enabled: true}\nexports:\n"
                + "  - {name: d, file: f}\n"
                + "  - {name: u, upstream: {host: 10.0.0.7, port: 10809}}\n"
                + "  - {name: v, upstream: {host: 10.0.0.7, port: 10809, connections: 2}}\n");
        assertThat(upstreams.fairDispatch().depthOf(upstreams.exports().subList(1, 3), 3))
                .as("16 per upstream connection: the default pool of 4, and 2")
                .isEqualTo(16 * 4 + 16 * 2);
        assertThat(upstreams.fairDispatch().depthOf(upstreams.exports(), 3))
                .as("files and upstreams named one backend: the file threads and the connections")
                .isEqualTo(3 + 16 * 6);
        NbdConfig deep = parse("fairDispatch: {enabled: true, depth: 64}\nexports: [{name: d, file: f}]");
        assertThat(deep.fairDispatch().depthOf(deep.exports(), 8)).isEqualTo(64);
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f}]\nfairDispatch:\n  enabled: true\n  depth: 0\n"))
                .hasMessage(
                        "test.yaml: fairDispatch.depth: 0 (expected: requests at one backend at once, a whole number in [1, 65536])"
                                + " at line 4");
        String whileOff = ", but the door is off (expected: fairDispatch.enabled: true, or admission.enabled in"
                + " Tailor's variant, whose door it is (the paper's variant has none); or no depth)";
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f}]\nfairDispatch:\n  depth: 4\n"))
                .as("admission off, so no door")
                .hasMessage("test.yaml: fairDispatch.depth: 4" + whileOff + " at line 3");
        assertThatThrownBy(() -> parse("admission: {enabled: true}\nfairDispatch: {enabled: false, depth: 4}\n"
                        + "exports: [{name: d, file: f}]"))
                .hasMessage("test.yaml: fairDispatch.depth: 4" + whileOff + " at line 2");
        assertThatThrownBy(() -> parse("admission: {enabled: true, variant: paper}\nfairDispatch: {depth: 4}\n"
                        + "exports: [{name: d, file: f}]"))
                .hasMessageContaining("fairDispatch.depth: 4" + whileOff);
        NbdConfig behind = parse("admission: {enabled: true}\nfairDispatch: {depth: 4}\nexports: [{name: d, file: f}]");
        assertThat(behind.fairDispatch().depthOf(behind.exports(), 8))
                .as("behind Tailor's admission the door is on")
                .isEqualTo(4);
        assertThatThrownBy(() -> parse("fairDispatch: {enabled: true, depht: 4}\nexports: [{name: d, file: f}]"))
                .hasMessageContaining(
                        "fairDispatch.depht: unknown field (expected one of enabled, depth, finishTag) at line 1");
        assertThatThrownBy(() -> parse("fairDispatch: {enabled: true, depth: deep}\nexports: [{name: d, file: f}]"))
                .hasMessageStartingWith("test.yaml: fairDispatch.depth: \"deep\" (expected: a whole number");
    }

    @Test
    void unknownFields_areAllListedAtOnceWithTheValidOnes() {
        // A user who misspells three fields in three places fixes them in one go, not three runs.
        assertThatThrownBy(() -> parse("""
                adress: 0.0.0.0
                limits: {maxConnection: 10}
                exports:
                  - {name: d, file: f, sise: 1GiB, tenent: acme}
                  - {name: e, upstream: {host: h, conections: 2}}
                """))
                .hasMessageContaining(
                        "adress: unknown field (expected one of address, port, limits,"
                                + " eventLoopThreads, fileIoThreads, fileIo, exports, admission, loop, unix, tls, fairDispatch) at line 1")
                .hasMessageContaining("limits.maxConnection: unknown field (expected one of maxRequestSize,")
                .hasMessageContaining("maxConnections, maxHandshakes, handshakeTimeoutSeconds, idleTimeoutSeconds,"
                        + " maxConnectionsPerAddress) at line 2")
                .hasMessageContaining("exports[0].sise: unknown field (expected one of name,"
                        + " tenant, description, size, readOnly, file, upstream, baseline, backend) at line 4")
                .hasMessageContaining("exports[0].tenent: unknown field (expected one of name,")
                .hasMessageContaining(
                        "exports[1].upstream.conections: unknown field (expected one of"
                                + " host, port, unix, export, connections, idleTimeoutSeconds, requestTimeoutSeconds) at line 5");
    }

    @Test
    void aBoolean_takesWhatYamlReadsAsOne_andABadOneIsToldAllOfThat() {
        // YAML 1.1's booleans, unquoted, in the three cases the YAML reader knows.
        for (String yes : List.of("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON")) {
            assertThat(parse("exports: [{name: d, file: d.img, size: 1MiB, readOnly: " + yes + "}]")
                            .exports()
                            .get(0)
                            .readOnly())
                    .as(yes)
                    .isTrue();
        }
        for (String no : List.of("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF")) {
            assertThat(parse("exports: [{name: d, file: d.img, size: 1MiB, readOnly: " + no + "}]")
                            .exports()
                            .get(0)
                            .readOnly())
                    .as(no)
                    .isFalse();
        }
        // Was: "(expected: true or false)", though yes, no, on and off were taken as well.
        for (String bad : List.of("maybe", "y", "yEs", "1")) {
            assertThatThrownBy(() -> parse("exports: [{name: d, file: d.img, size: 1MiB, readOnly: " + bad + "}]"))
                    .as(bad)
                    .hasMessageContaining("exports[0].readOnly: ")
                    .hasMessageContaining(" (expected: true or false; in YAML also yes, no, on or off, unquoted, each"
                            + " also Capitalized or in UPPER case) at line 1");
        }
        // A boolean in quotes is a text: the message says so.
        for (String quoted : List.of("'yes'", "\"true\"", "'Off'")) {
            assertThatThrownBy(() -> parse("exports: [{name: d, file: d.img, size: 1MiB, readOnly: " + quoted + "}]"))
                    .as(quoted)
                    .hasMessageContaining("exports[0].readOnly: \"" + quoted.substring(1, quoted.length() - 1) + "\""
                            + " (expected: true or false, unquoted: in quotes it is a text, not a boolean; in YAML also"
                            + " yes, no, on or off, unquoted, each also Capitalized or in UPPER case) at line 1");
        }
    }

    @Test
    void wrongKindsOfValues_sayWhatTheFieldTakesInWords() {
        // Every value of the wrong kind at once, and never a Java type name.
        String message = catchThrowable(() -> parse("""
                port: http
                eventLoopThreads: 99999999999
                limits: {maxRequestSize: 1.5GiB, handshakeTimeoutSeconds: soon, maxConnections: 2.5}
                exports:
                  - {name: d, file: [a, b], size: [1], readOnly: maybe}
                  - {name: e, size: -1, file: e.img}
                  - 7
                """)).getMessage();
        assertThat(message)
                .contains("port: \"http\" (expected: a whole number)")
                .contains("eventLoopThreads: 99999999999 (expected: a whole number in [1, 1024])")
                .contains("limits.maxRequestSize: \"1.5GiB\" (expected: a size like 1GiB or a number of bytes, in B")
                .contains("limits.handshakeTimeoutSeconds: \"soon\" (expected: a number, e.g. 10 or 2.5)")
                .contains("limits.maxConnections: 2.5 (expected: a whole number)")
                .contains("exports[0].file: [\"a\", \"b\"] (expected: a file path)")
                .contains("exports[0].size: [1] (expected: a size like 1GiB or a number of bytes)")
                .contains("exports[0].readOnly: \"maybe\" (expected: " + StrictReader.BOOLEAN + ")")
                .contains("exports[1].size: -1 (expected: a size like 1GiB or a number of bytes)")
                .contains("exports[2]: 7 (expected: a mapping with the fields name, tenant,")
                .doesNotContain("java.")
                .doesNotContain("exports[0]: no backend");
    }

    @Test
    void aJsonFile_isToldJsonsObjectsAndArrays_notYamlsMappingsAndLists() throws Exception {
        // Was YAML's words (a mapping, a list) for a file read as strict JSON, which has objects and arrays.
        Path json = Files.writeString(dir.resolve("nbd.json"), """
                {
                  "limits": [1, 2],
                  "exports": [
                    {"name": "d", "upstream": "localhost:10809"},
                    7
                  ],
                  "loop": null
                }
                """);
        String message = catchThrowable(() -> NbdConfigFiles.read(json)).getMessage();
        assertThat(message)
                .startsWith(json + ": 4 problems:\n")
                .contains("\n  limits: [1, 2] (expected: an object with the fields maxRequestSize,")
                .contains("\n  exports[0].upstream: \"localhost:10809\" (expected: an object with the fields host,")
                .contains("\n  exports[1]: 7 (expected: an object with the fields name, tenant,")
                .contains("\n  loop: null (expected: an object with the fields mode,")
                .doesNotContain("mapping")
                .doesNotContain("a list");
        assertThat(message.lines().skip(1).map(line -> line.replaceAll(".*\\) at ", "at ")))
                .as("each at its line, as before")
                .containsExactly("at line 2", "at line 4", "at line 5", "at line 7");

        Files.writeString(json, "{\"exports\": {\"name\": \"d\", \"file\": \"d.img\"}}");
        assertThat(catchThrowable(() -> NbdConfigFiles.read(json)))
                .hasMessageStartingWith(json + ": exports: {\"name\": \"d\", \"file\": \"d.img\"} (expected: an array,"
                        + " each entry an object with the fields name, tenant,")
                .hasMessageEndingWith(") at line 1, column 2");
        Files.writeString(
                json, "{\"exports\": [{\"name\": \"d\", \"size\": \"1MiB\", \"file\": \"d.img\", \"name\": \"e\"}]}");
        assertThat(catchThrowable(() -> NbdConfigFiles.read(json)))
                .hasMessage(json + ": exports[0].name: duplicate key (expected: each key once per object; the first, at"
                        + " line 1, column 15, is the one checked) at line 1, column 61");
        Files.writeString(json, "{\"exports\": [}");
        assertThat(catchThrowable(() -> NbdConfigFiles.read(json)))
                .hasMessage(json + ": not valid JSON at line 1, column 14: found '}' (expected: ']' to close the"
                        + " array)");
        Files.writeString(json, " ");
        assertThat(catchThrowable(() -> NbdConfigFiles.read(json)))
                .hasMessage(json + ": empty (expected: at least an exports array)");

        // The same text named .yaml is YAML, and told YAML's words, as before.
        Path yaml = Files.writeString(dir.resolve("nbd.yaml"), "{\"exports\": {\"name\": \"d\"}, \"loop\": 3}");
        assertThat(catchThrowable(() -> NbdConfigFiles.read(yaml)).getMessage())
                .contains("exports: {\"name\": \"d\"} (expected: a list, each entry a mapping with the fields name,")
                .contains("loop: 3 (expected: a mapping with the fields mode,")
                .doesNotContain("an object")
                .doesNotContain("array");
    }

    @Test
    void shapeAndValueProblems_areReportedInTheSameRun() {
        assertThatThrownBy(() -> parse("""
                port: 70000
                exports: [{name: d, file: f, sise: 1}]
                """))
                .hasMessageContaining("exports[0].sise: unknown field")
                .hasMessageContaining("port: 70000 (expected: a whole number in [0, 65535])");
    }

    @Test
    void sizeNotAMultipleOf512_isRefusedNamingTheField() {
        // Clients count 512-byte sectors: the kernel would show a 1000-byte disk as 512 bytes, qemu as 1024.
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, size: 1000}]"))
                .hasMessageContaining(
                        "exports[0].size: 1000B (expected: a multiple of 512 bytes, such as 512B or 1KiB");
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, size: 100}]"))
                .hasMessageContaining("exports[0].size: 100B (expected: a multiple of 512 bytes, such as 512B:");
        assertThat(parse("exports: [{name: d, file: f, size: 1536}]")
                        .exports()
                        .get(0)
                        .size()
                        .bytes())
                .isEqualTo(1536);
    }

    @Test
    void aWholeNumberTooLarge_isToldWithItsFieldsOwnRange_elsePlainly() {
        assertThat(catchThrowable(() -> parse("""
                        port: 99999999999999999999
                        exports: [{name: d, size: 1MiB, file: d.img}]
                        """)).getMessage())
                .endsWith("port: 99999999999999999999 (expected: a whole number in [0, 65535]) at line 1");
        assertThat(catchThrowable(() -> parse("""
                        port: 10809
                        eventLoopThreads: -99999999999
                        exports: [{name: d, size: 1MiB, file: d.img}]
                        """)).getMessage())
                .endsWith("eventLoopThreads: -99999999999 (expected: a whole number in [1, 1024]) at line 2");
    }
}
