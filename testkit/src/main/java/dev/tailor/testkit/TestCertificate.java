package dev.tailor.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for a loopback test server, made by the JDK's {@code keytool} (EC
 * P-256, valid two days, for {@code 127.0.0.1} and {@code localhost}), written as PEM: the
 * certificate (also its own CA) and its PKCS#8 private key, as Prometheus's
 * {@code tls_server_config} reads them.
 *
 * @param certificatePem the certificate, PEM
 * @param privateKeyPem  its private key, PEM ({@code PRIVATE KEY})
 */
public record TestCertificate(Path certificatePem, Path privateKeyPem) {

    /** Makes one in {@code dir}. */
    public static TestCertificate create(Path dir) throws IOException, InterruptedException {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Path store = dir.resolve("server.p12");
        char[] password = "changeit".toCharArray();
        Process process = new ProcessBuilder(
                        keytool.toString(),
                        "-genkeypair",
                        "-alias",
                        "server",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=tailor-test-server",
                        "-ext",
                        "SAN=ip:127.0.0.1,dns:localhost",
                        "-validity",
                        "2",
                        "-keystore",
                        store.toString(),
                        "-storetype",
                        "PKCS12",
                        "-storepass",
                        "changeit",
                        "-keypass",
                        "changeit")
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + output);
        }
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(in, password);
            Key key = keys.getKey("server", password);
            Certificate certificate = keys.getCertificate("server");
            Path certificatePem = dir.resolve("server.crt");
            Path privateKeyPem = dir.resolve("server.key");
            Files.writeString(certificatePem, pem("CERTIFICATE", certificate.getEncoded()));
            Files.writeString(privateKeyPem, pem("PRIVATE KEY", key.getEncoded()));
            return new TestCertificate(certificatePem, privateKeyPem);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the key store keytool wrote", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
