package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The configuration file: the bundled example, defaults, sizes, and every problem named at once. */
class NbdConfigTest {

    private static NbdConfig parse(String yaml) {
        return NbdConfigFiles.parse(yaml, "test.yaml", Path.of("/etc/tailor"));
    }

    @Test
    void bundledExample_parses() {
        Path example = Path.of(System.getProperty("tailor.projectDir", ".."), "examples", "nbd.yaml");
        NbdConfig config = NbdConfigFiles.read(example);
        assertThat(config.exports()).extracting(NbdConfig.ExportConfig::name)
                .containsExactly("vm1-root", "golden-image", "scratch");
        assertThat(config.exports().get(0).file()).isEqualTo(example.toAbsolutePath().getParent().resolve(
                "vm1-root.img"));
        assertThat(config.exports().get(0).size().bytes()).isEqualTo(20L << 30);
        assertThat(config.exports().get(1).readOnly()).isTrue();
        assertThat(config.exports().get(2).upstream()).isEqualTo(new NbdConfig.Upstream("10.0.0.7", 10809, "scratch",
                4));
    }

    @Test
    void minimalConfig_takesTheDefaults() {
        NbdConfig config = parse("exports: [{name: disk, file: disk.img, size: 1GiB}]");
        assertThat(config.address()).isEqualTo("127.0.0.1");
        assertThat(config.port()).isEqualTo(10809);
        assertThat(config.limits()).isEqualTo(NbdConfig.Limits.DEFAULTS);
        assertThat(config.limits().maxRequestBytes()).isEqualTo(32 << 20);
        assertThat(config.exports().get(0).tenant()).isEqualTo("default");
        assertThat(config.exports().get(0).readOnly()).isFalse();
        assertThat(config.exports().get(0).file()).isEqualTo(Path.of("/etc/tailor/disk.img"));
    }

    @Test
    void json_isAcceptedToo() {
        NbdConfig config = parse("{\"port\": 0, \"exports\": [{\"name\": \"d\", \"upstream\": {\"host\": \"h\"}}]}");
        assertThat(config.port()).isZero();
        assertThat(config.exports().get(0).upstream()).isEqualTo(new NbdConfig.Upstream("h", 10809, "", 4));
    }

    @Test
    void sizes_acceptBytesAndBinaryUnits() {
        assertThat(ByteSize.parse("512").bytes()).isEqualTo(512);
        assertThat(ByteSize.parse("64KiB").bytes()).isEqualTo(64 << 10);
        assertThat(ByteSize.parse("32 MiB").bytes()).isEqualTo(32 << 20);
        assertThat(ByteSize.parse("1gib").bytes()).isEqualTo(1L << 30);
        assertThat(ByteSize.parse("2TiB").bytes()).isEqualTo(2L << 40);
        assertThat(ByteSize.format(1L << 30)).isEqualTo("1GiB");
        assertThat(ByteSize.format(1536L << 10)).isEqualTo("1536KiB");
        assertThat(ByteSize.format(1000)).isEqualTo("1000B");
        assertThatThrownBy(() -> ByteSize.parse("1.5GiB")).hasMessageContaining("not a size");
        assertThatThrownBy(() -> ByteSize.parse("1GB")).hasMessageContaining("not a size");
        assertThatThrownBy(() -> ByteSize.parse("9999999TiB")).hasMessageContaining("too large");
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
                  - {name: c, upstream: {host: "", port: 0, connections: 99}}
                """))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("test.yaml: ")
                .hasMessageContaining("port: 70000 (expected: 0 to 65535)")
                .hasMessageContaining("limits.maxRequestSize: 1KiB (expected: 4KiB to 1GiB)")
                .hasMessageContaining("limits.maxInFlightRequestsPerConnection: 0")
                .hasMessageContaining("limits.handshakeTimeoutSeconds: 0.0")
                .hasMessageContaining("exports[0].name: \"has space\"")
                .hasMessageContaining("exports[1]: two backends")
                .hasMessageContaining("exports[2]: no backend")
                .hasMessageContaining("exports[3].name: \"c\" is used twice")
                .hasMessageContaining("exports[3].upstream.host: missing")
                .hasMessageContaining("exports[3].upstream.port: 0")
                .hasMessageContaining("exports[3].upstream.connections: 99");
    }

    @Test
    void inFlightBelowTheRequestSize_isRefused() {
        assertThatThrownBy(() -> parse("""
                limits: {maxRequestSize: 1MiB, maxInFlightPerConnection: 512KiB}
                exports: [{name: d, file: f}]
                """)).hasMessageContaining("limits.maxInFlightPerConnection: 512KiB (expected: at least"
                + " limits.maxRequestSize, 1MiB)");
    }

    @Test
    void unknownFieldsAndEmptyFiles_areRefused() {
        assertThatThrownBy(() -> parse("exports: [{name: d, file: f, sise: 1}]"))
                .hasMessageContaining("exports[0].sise: unknown field (expected one of");
        assertThatThrownBy(() -> parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> parse("exports: []")).hasMessageContaining("exports: none");
        assertThatThrownBy(() -> parse("exports: [")).hasMessageContaining("not valid YAML or JSON");
    }
}
