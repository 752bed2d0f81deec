package dev.tailor.heart.controller;

import dev.tailor.common.IoErrors;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How {@link PrometheusClient} reaches a Prometheus that wants credentials or has its own CA: the
 * request headers of {@link ControllerConfig.Prometheus} (a bearer token or basic authentication,
 * their files read for every request; extra headers), and the TLS context of
 * {@link ControllerConfig.Tls} (a PEM CA file, or no verification at all).
 */
final class PrometheusTls {

    private PrometheusTls() {}

    /** The headers of one request: authentication first, then the configured extra headers. */
    static Map<String, String> headers(ControllerConfig.Prometheus config) throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        if (config.bearerTokenFile() != null) {
            String token =
                    read("prometheus.bearerTokenFile", config.bearerTokenFile()).strip();
            if (token.isEmpty()) {
                throw new IOException("prometheus.bearerTokenFile: " + config.bearerTokenFile() + " is empty");
            }
            headers.put("Authorization", "Bearer " + token);
        }
        ControllerConfig.BasicAuth basic = config.basicAuth();
        if (basic != null) {
            String password = basic.password() != null
                    ? basic.password()
                    : stripNewline(read("prometheus.basicAuth.passwordFile", basic.passwordFile()));
            headers.put(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString(
                                            (basic.username() + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        headers.putAll(config.headers());
        return headers;
    }

    /**
     * The TLS context for {@code tls}, or {@code null} for the JVM's default (its trusted CAs, host
     * names checked).
     *
     * @throws IllegalArgumentException naming {@code prometheus.tls.caFile} when it cannot be used
     */
    static SSLContext context(ControllerConfig.Tls tls) {
        try {
            if (tls.insecureSkipVerify()) {
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, new TrustManager[] {new TrustingEveryone()}, null);
                return context;
            }
            if (tls.caFile() == null) {
                return null;
            }
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            Collection<? extends Certificate> certificates;
            try (InputStream in = Files.newInputStream(Path.of(tls.caFile()))) {
                certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
            }
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("prometheus.tls.caFile: \"" + tls.caFile() + "\" holds no"
                        + " certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
            }
            int i = 0;
            for (Certificate certificate : certificates) {
                trusted.setCertificateEntry("ca-" + i++, certificate);
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(
                    "prometheus.tls.caFile: \"" + tls.caFile() + "\": cannot use it (" + e.getMessage()
                            + "; expected: PEM CA certificates)",
                    e);
        }
    }

    private static String read(String field, String file) throws IOException {
        try {
            return Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException(field + ": cannot read " + file + " (" + IoErrors.reason(e) + ")", e);
        }
    }

    private static String stripNewline(String text) {
        return text.endsWith("\r\n")
                ? text.substring(0, text.length() - 2)
                : text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }

    /**
     * {@code insecureSkipVerify}: accepts every certificate chain. Being an extended trust manager,
     * it is also where the JDK checks the host name, so that check is skipped too.
     */
    private static final class TrustingEveryone extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
