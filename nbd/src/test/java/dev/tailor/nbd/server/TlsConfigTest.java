package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.tailor.common.Problem;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.NbdConfigFiles;
import dev.tailor.nbd.config.TlsSettings;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.testkit.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateCrtKey;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code tls} section of the config: its modes, the certificate folder (relative to the config file),
 * and every problem with the credentials said at start, naming the file and what was expected: the fields
 * and the files' presence by the config's check, what the files hold by the server's loading them.
 */
class TlsConfigTest {

    @TempDir
    static Path dir;

    private static TestCertificates ca;
    private static Path good;

    @BeforeAll
    static void certificates() {
        ca = TestCertificates.newCa("config test CA");
        good = ca.writeAll(dir.resolve("good"));
    }

    private static NbdConfig parse(String yaml) {
        return NbdConfigFiles.parse("exports: [{name: disk, file: disk.img, size: 1GiB}]\n" + yaml, "test.yaml", dir);
    }

    /** The config's own check: the mode, the folder, the files there and readable. */
    private static java.util.List<String> problems(String mode, Path certificates, Boolean verifyPeer) {
        return new TlsSettings(mode, certificates, verifyPeer)
                .problems().stream().map(Problem::message).toList();
    }

    /** What the server says when it starts with these settings and cannot load the credentials. */
    private static String startFailure(String mode, Path certificates, Boolean verifyPeer) {
        Path image = dir.resolve("never-created.img");
        NbdConfig config =
                TestServers.config(Limits.DEFAULTS, ExportConfig.file("disk", "acme", 1 << 20, false, image))
                        .toBuilder()
                        .tls(new TlsSettings(mode, certificates, verifyPeer))
                        .build();
        Throwable failure = catchThrowable(() -> NbdServer.start(config).close());
        assertThat(failure).isInstanceOf(IllegalArgumentException.class);
        assertThat(image).doesNotExist();
        return failure.getMessage();
    }

    @Test
    void tlsSection_isRead_withTheFolderRelativeToTheConfig() {
        NbdConfig config = parse("tls: {mode: require, certificates: good, verifyPeer: true}");
        assertThat(config.tls()).isEqualTo(new TlsSettings("require", good, true));
        assertThat(config.tls().enabled()).isTrue();
        NbdConfig defaults = parse("");
        assertThat(defaults.tls().mode()).isEqualTo("off");
        assertThat(defaults.tls().enabled()).isFalse();
        assertThat(defaults.tls().verifyPeer()).isFalse();
        // YAML reads an unquoted on or off as a boolean: both still mean the mode.
        assertThat(parse("tls: {mode: off}").tls().mode()).isEqualTo("off");
        assertThat(parse("tls: {mode: on, certificates: good}").tls().mode()).isEqualTo("on");
        assertThat(parse("tls: {mode: \"on\", certificates: good}").tls().mode())
                .isEqualTo("on");
    }

    @Test
    void modesAndMissingFolders_areNamedByField() {
        assertThat(problems("yes", null, null)).containsExactly("tls.mode: \"yes\" (expected: off, on or require)");
        assertThat(problems("on", null, null))
                .containsExactly("tls.certificates: missing (expected: a folder with"
                        + " server-cert.pem and server-key.pem when tls.mode is on)");
        assertThat(problems("require", dir.resolve("nowhere"), null))
                .containsExactly("tls.certificates: "
                        + dir.resolve("nowhere") + " does not exist (expected: a folder with server-cert.pem and"
                        + " server-key.pem)");
        assertThat(problems("off", good, true))
                .containsExactly(
                        "tls.certificates: given, but tls.mode is off (expected: tls.mode on or require to serve TLS with"
                                + " them)",
                        "tls.verifyPeer: true, but tls.mode is off (expected: tls.mode on or require)");
        assertThat(problems("on", good, true)).isEmpty();
        assertThatThrownBy(() -> parse("tls: {mode: require, certificates: nowhere}"))
                .hasMessageContaining("tls.certificates: " + dir.resolve("nowhere") + " does not exist");
    }

    @Test
    void missingFiles_areNamedWithTheLayoutExpected() throws Exception {
        Path serverOnly = ca.writeServer(Files.createDirectories(dir.resolve("server-only")));
        assertThat(problems("on", serverOnly, false)).isEmpty();
        assertThat(problems("on", serverOnly, true))
                .singleElement()
                .asString()
                .startsWith("tls.certificates: " + serverOnly.resolve("ca-cert.pem") + " does not exist (expected:"
                        + " server-cert.pem, server-key.pem and, to verify clients, ca-cert.pem in the folder");
        Path noKey = ca.writeCa(Files.createDirectories(dir.resolve("no-key")));
        Files.copy(good.resolve("server-cert.pem"), noKey.resolve("server-cert.pem"));
        assertThat(problems("require", noKey, false))
                .singleElement()
                .asString()
                .startsWith("tls.certificates: " + noKey.resolve("server-key.pem") + " does not exist");
    }

    @Test
    void notPemOrAnotherCertificatesKey_isRefusedAtStartNamingTheFile() throws Exception {
        Path garbage = Files.createDirectories(dir.resolve("garbage"));
        Files.writeString(garbage.resolve("server-cert.pem"), "not a certificate\n");
        Files.copy(good.resolve("server-key.pem"), garbage.resolve("server-key.pem"));
        // The config checks the files are there; the server, loading them, what they hold.
        assertThat(problems("on", garbage, false)).isEmpty();
        assertThat(startFailure("on", garbage, false))
                .startsWith("tls.certificates: " + garbage.resolve("server-cert.pem") + " ");

        Path mismatched = Files.createDirectories(dir.resolve("mismatched"));
        Files.copy(good.resolve("server-cert.pem"), mismatched.resolve("server-cert.pem"));
        Files.writeString(
                mismatched.resolve("server-key.pem"),
                TestCertificates.pem(
                        "PRIVATE KEY", TestCertificates.ecKeys().getPrivate().getEncoded()));
        assertThat(problems("on", mismatched, false)).isEmpty();
        assertThat(startFailure("on", mismatched, false))
                .isEqualTo("tls.certificates: "
                        + mismatched.resolve("server-key.pem") + " is not the key of the certificate in "
                        + mismatched.resolve("server-cert.pem") + " (a signature made with the key does not verify;"
                        + " expected: the private key the certificate was issued for)");

        Path encrypted = Files.createDirectories(dir.resolve("encrypted"));
        Files.copy(good.resolve("server-cert.pem"), encrypted.resolve("server-cert.pem"));
        Files.writeString(
                encrypted.resolve("server-key.pem"),
                TestCertificates.pem("ENCRYPTED PRIVATE KEY", new byte[] {0x30, 0x00}));
        assertThat(startFailure("on", encrypted, false))
                .contains(encrypted.resolve("server-key.pem") + " is encrypted (expected: an unencrypted key")
                .contains("openssl pkcs8 -topk8 -nocrypt");
    }

    @Test
    void keyFormats_pkcs8AndRsaPkcs1AreRead_sec1IsRefusedWithTheConversion() throws Exception {
        // certtool and older openssl write RSA keys in PKCS#1 ("BEGIN RSA PRIVATE KEY"); the JDK reads PKCS#8.
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        RSAPrivateCrtKey key = (RSAPrivateCrtKey) rsa.generateKeyPair().getPrivate();
        byte[] pkcs1 = org.bouncycastle.asn1.pkcs.PrivateKeyInfo.getInstance(key.getEncoded())
                .parsePrivateKey()
                .toASN1Primitive()
                .getEncoded();
        Path file = Files.writeString(dir.resolve("rsa-pkcs1.pem"), TestCertificates.pem("RSA PRIVATE KEY", pkcs1));
        assertThat(ServerTls.privateKey("tls.certificates", file).getEncoded()).isEqualTo(key.getEncoded());
        assertThat(ServerTls.pkcs8OfRsa(pkcs1)).isEqualTo(key.getEncoded());

        Path sec1 = Files.writeString(
                dir.resolve("ec-sec1.pem"), TestCertificates.pem("EC PRIVATE KEY", new byte[] {0x30, 0x00}));
        assertThatThrownBy(() -> ServerTls.privateKey("tls.certificates", sec1))
                .hasMessage("tls.certificates: " + sec1 + " is an \"EC PRIVATE KEY\" (expected: a PKCS#8 \"PRIVATE"
                        + " KEY\"; convert it with: openssl pkcs8 -topk8 -nocrypt -in " + sec1 + " -out " + sec1
                        + ".new)");
        Path empty = Files.writeString(dir.resolve("empty.pem"), "");
        assertThatThrownBy(() -> ServerTls.privateKey("tls.certificates", empty))
                .hasMessageStartingWith("tls.certificates: " + empty + " holds no PEM private key");
    }

    @Test
    void serverStart_withBadCredentials_failsAsBadInputAndCreatesNothing() {
        Path image = dir.resolve("never-created.img");
        NbdConfig config =
                TestServers.config(Limits.DEFAULTS, ExportConfig.file("disk", "acme", 1 << 20, false, image))
                        .toBuilder()
                        .tls(new TlsSettings("require", dir.resolve("nowhere"), false))
                        .build();
        assertThatThrownBy(() -> NbdServer.start(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tls.certificates: " + dir.resolve("nowhere") + " does not exist");
        assertThat(image).doesNotExist();
    }
}
