package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class ControllerMetricsTest {

    private static Controller.Round failed(Controller.FailureReason reason) {
        return new Controller.Round(false, reason, "test", null, null, List.of(), List.of(), List.of(), List.of(), 0);
    }

    @Test
    void record_failures_areCountedByReason_andNotReady() {
        // A bad-input round must be visible in the metrics, not only in a log line.
        ControllerMetrics metrics = new ControllerMetrics(() -> 1_000);
        metrics.record(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE));
        metrics.record(failed(Controller.FailureReason.COMPONENT_WITHOUT_METRICS));
        metrics.record(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE));

        String text = metrics.scrape();
        assertThat(text)
                .contains("tailor_heart_rounds_total 3.0")
                .contains("tailor_heart_round_failures_total{reason=\"prometheus_unreachable\"} 2.0")
                .contains("tailor_heart_round_failures_total{reason=\"component_without_metrics\"} 1.0")
                .contains("tailor_heart_round_failures_total{reason=\"kubernetes_write\"} 0.0")
                .doesNotContain("tailor_heart_last_applied_plan_age_seconds ");
        assertThat(metrics.ready()).isFalse();
    }

    @Test
    void server_servesMetricsHealthAndReadiness() throws Exception {
        ControllerMetrics metrics = new ControllerMetrics(() -> 1_000);
        boolean[] alive = {true};
        String[] notReady = {"leading, but no round has planned yet"};
        try (ControllerServer server = new ControllerServer(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                metrics,
                () -> alive[0],
                () -> notReady[0])) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.port();
            HttpResponse<String> scrape = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("# TYPE tailor_heart_rounds_total counter");
            assertThat(status(http, base + "/healthz")).isEqualTo(200);
            HttpResponse<String> unready = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(unready.statusCode()).isEqualTo(503);
            assertThat(unready.body()).isEqualTo("leading, but no round has planned yet\n");
            notReady[0] = null;
            assertThat(status(http, base + "/readyz")).isEqualTo(200);
            alive[0] = false;
            assertThat(status(http, base + "/healthz")).isEqualTo(503);
        }
    }

    @Test
    void server_answersOnlyItsOwnPaths_andHeadWithoutAWarning() throws Exception {
        // A mistyped probe path must not look healthy, and a HEAD probe must not make the JDK's server
        // write a warning of its own to stderr each time.
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger jdkServer = Logger.getLogger("com.sun.net.httpserver");
        jdkServer.addHandler(handler);
        ControllerMetrics metrics = new ControllerMetrics(() -> 1_000);
        try (ControllerServer server = new ControllerServer(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), metrics, () -> true, () -> null)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.port();
            for (String path : List.of("/", "/healthzzz", "/healthz/x", "/readyz2", "/metrics.json", "/metrics/x")) {
                assertThat(status(http, base + path)).as(path).isEqualTo(404);
            }
            assertThat(status(http, base + "/healthz?verbose")).isEqualTo(200);
            for (String path : List.of("/healthz", "/readyz", "/metrics")) {
                HttpResponse<String> head = http.send(
                        HttpRequest.newBuilder(URI.create(base + path))
                                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(head.statusCode()).as(path).isEqualTo(200);
                assertThat(head.body()).as(path).isEmpty();
            }
        } finally {
            jdkServer.removeHandler(handler);
        }
        assertThat(warnings).extracting(LogRecord::getMessage).isEmpty();
    }

    @Test
    void server_answersOtherMethodsThanGetAndHead_405WithAllow() throws Exception {
        // Was: 200 to POST, PUT, DELETE and OPTIONS, as if they did something.
        ControllerMetrics metrics = new ControllerMetrics(() -> 1_000);
        try (ControllerServer server = new ControllerServer(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), metrics, () -> true, () -> null)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.port();
            for (String path : List.of("/healthz", "/readyz", "/metrics")) {
                for (String method : List.of("POST", "PUT", "DELETE", "OPTIONS")) {
                    HttpResponse<String> answer = http.send(
                            HttpRequest.newBuilder(URI.create(base + path))
                                    .method(method, HttpRequest.BodyPublishers.ofString("x"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(answer.statusCode()).as(method + " " + path).isEqualTo(405);
                    assertThat(answer.headers().firstValue("Allow"))
                            .as(method + " " + path)
                            .hasValue("GET, HEAD");
                    assertThat(answer.body())
                            .isEqualTo(method + " " + path + ": not allowed (expected: GET or HEAD)\n");
                }
                assertThat(status(http, base + path)).as("GET " + path).isEqualTo(200);
            }
        }
    }

    private static int status(HttpClient http, String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }
}
