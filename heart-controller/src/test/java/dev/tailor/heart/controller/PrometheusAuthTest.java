package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.tailor.heart.controller.PrometheusClient.PrometheusException;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import dev.tailor.testkit.TestCertificate;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus behind its own {@code --web.config.file}: TLS with a test certificate made in the test
 * and basic authentication, read by the controller's client as configured (CA file, password
 * inline or in a file, or no verification); a recording server shows the bearer token (re-read for
 * every query) and the extra headers on the wire.
 */
class PrometheusAuthTest {

    private static final String USER = "tailor";
    private static final String PASSWORD = "tailor-test-password";
    /** bcrypt (cost 4) of {@link #PASSWORD}, as Prometheus's basic_auth_users wants it. */
    private static final String PASSWORD_BCRYPT = "$2b$04$7lX/yA2ToPMMOG0m9f3rJerw3P76OeODZhKuzdopbM8wzucpA.eEG";

    private static final String CPU = "sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!=\"\","
            + " container!=\"POD\", container!=\"istio-proxy\"}[5s]))";

    @TempDir
    static Path dir;

    private static PrometheusServer prometheus;
    private static TestCertificate certificate;

    @BeforeAll
    static void start() throws Exception {
        certificate = TestCertificate.create(dir);
        String web = """
                tls_server_config:
                  cert_file: %s
                  key_file: %s
                basic_auth_users:
                  %s: %s
                """.formatted(certificate.certificatePem(), certificate.privateKeyPem(), USER, PASSWORD_BCRYPT);
        long started = System.nanoTime();
        prometheus = PrometheusServer.start(
                () -> ShopCluster.exposition((System.nanoTime() - started) / 1e9 + 100),
                new PrometheusServer.Options(
                        null,
                        false,
                        new PrometheusServer.Web(
                                web,
                                true,
                                "Basic "
                                        + Base64.getEncoder()
                                                .encodeToString(
                                                        (USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8)))));
        PrometheusClient client = PrometheusClient.of(config(
                new ControllerConfig.BasicAuth(USER, PASSWORD, null),
                new ControllerConfig.Tls(certificate.certificatePem().toString(), null),
                null,
                Map.of()));
        Await.until("Prometheus behind TLS and basic auth to answer with the shop's CPU", () -> {
            try {
                return client.query(CPU, Instant.now()).series().size() == 6;
            } catch (PrometheusException e) {
                prometheus.requireRunning();
                return false;
            }
        });
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    private static ControllerConfig.Prometheus config(
            ControllerConfig.BasicAuth basic,
            ControllerConfig.Tls tls,
            String bearerTokenFile,
            Map<String, String> headers) {
        return config(prometheus.url().toString(), basic, tls, bearerTokenFile, headers);
    }

    private static ControllerConfig.Prometheus config(
            String url,
            ControllerConfig.BasicAuth basic,
            ControllerConfig.Tls tls,
            String bearerTokenFile,
            Map<String, String> headers) {
        return ControllerConfig.Prometheus.builder()
                .url(url)
                .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                .windowSeconds(5.0)
                .delayWindowSeconds(5.0)
                .bearerTokenFile(bearerTokenFile)
                .basicAuth(basic)
                .tls(tls)
                .headers(headers)
                .build();
    }

    @Test
    void basicAuthAndCaFile_roundsReadTheMetrics() throws Exception {
        Path passwordFile = dir.resolve("password");
        Files.writeString(passwordFile, PASSWORD + "\n"); // as a mounted Secret often has it
        ControllerConfig.Prometheus settings = config(
                new ControllerConfig.BasicAuth(USER, null, passwordFile.toString()),
                new ControllerConfig.Tls(certificate.certificatePem().toString(), null),
                null,
                Map.of());
        ControllerConfig controllerConfig =
                ControllerConfig.builder().prometheus(settings).build();
        assertThat(controllerConfig.problems()).isEmpty();

        MetricsReader.Metrics metrics =
                new MetricsReader(PrometheusClient.of(settings), controllerConfig).read(Instant.now());

        assertThat(metrics.cpuCores()).hasSize(6).containsKey("shop/cart-w3");
        assertThat(metrics.servedRequestsPerSecond()).hasSize(6);
    }

    @Test
    void wrongPassword_isHttp401_namingTheSettings() {
        PrometheusClient client = PrometheusClient.of(config(
                new ControllerConfig.BasicAuth(USER, "wrong", null),
                new ControllerConfig.Tls(certificate.certificatePem().toString(), null),
                null,
                Map.of()));

        assertThatThrownBy(() -> client.query(CPU, Instant.now()))
                .isInstanceOfSatisfying(PrometheusException.class, e -> {
                    assertThat(e.failure()).isEqualTo(PrometheusClient.Failure.HTTP_STATUS);
                    assertThat(e.getMessage())
                            .contains("HTTP 401 (not authenticated)")
                            .contains("prometheus.basicAuth");
                });
    }

    @Test
    void withoutTheCa_tlsFails_andTheMessageNamesCaFile() {
        PrometheusClient client =
                PrometheusClient.of(config(new ControllerConfig.BasicAuth(USER, PASSWORD, null), null, null, Map.of()));

        assertThatThrownBy(() -> client.query(CPU, Instant.now()))
                .isInstanceOfSatisfying(PrometheusException.class, e -> {
                    assertThat(e.failure()).isEqualTo(PrometheusClient.Failure.UNREACHABLE);
                    assertThat(e.getMessage()).contains("TLS failed").contains("prometheus.tls.caFile");
                });
    }

    @Test
    void insecureSkipVerify_acceptsTheCertificateNoCaVouchesFor() throws Exception {
        // The same server and no CA: refused above with verification, read here without it.
        PrometheusClient client = PrometheusClient.of(config(
                new ControllerConfig.BasicAuth(USER, PASSWORD, null),
                new ControllerConfig.Tls(null, true),
                null,
                Map.of()));

        assertThat(client.query(CPU, Instant.now()).series()).hasSize(6);
    }

    @Test
    void bearerTokenFile_isReadForEveryQuery_andHeadersAreSent() throws Exception {
        List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
        HttpServer recorder = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        recorder.createContext("/api/v1/query", exchange -> {
            seen.add(Map.of(
                    "authorization",
                    String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")),
                    "tenant",
                    String.valueOf(exchange.getRequestHeaders().getFirst("X-Scope-OrgID"))));
            byte[] body = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        recorder.start();
        try {
            Path token = dir.resolve("token");
            Files.writeString(token, "first-token\n");
            PrometheusClient client = PrometheusClient.of(config(
                    "http://127.0.0.1:" + recorder.getAddress().getPort(),
                    null,
                    null,
                    token.toString(),
                    Map.of("X-Scope-OrgID", "tenant-1")));

            client.query("up", Instant.now());
            Files.writeString(token, "rotated-token\n"); // a projected service account token is renewed
            client.query("up", Instant.now());

            assertThat(seen)
                    .containsExactly(
                            Map.of("authorization", "Bearer first-token", "tenant", "tenant-1"),
                            Map.of("authorization", "Bearer rotated-token", "tenant", "tenant-1"));
        } finally {
            recorder.stop(0);
        }
    }
}
