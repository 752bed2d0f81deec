package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.common.Problem;
import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.LoopSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The proxy's {@code /metrics} and {@code /healthz} endpoint, read by a client and by a real Prometheus. */
class MetricsEndpointTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private NbdConfig config(boolean admission, String metricsListen) {
        return NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .eventLoopThreads(2)
                .fileIoThreads(2)
                .exports(ExportConfig.file("disk", "acme", 1L << 20, false, dir.resolve("disk.img")))
                .admission(AdmissionSettings.builder().enabled(admission).build())
                .loop(LoopSettings.builder()
                        .metricsPeriodMillis(100)
                        .healthCheckPeriodMillis(20)
                        .metricsListen(metricsListen)
                        .build())
                .build();
    }

    private static HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metrics_servedInTheTextFormat_withLoopAndAdmissionFamilies() throws Exception {
        try (NbdServer server = NbdServer.start(config(true, "127.0.0.1:0"))) {
            URI base = URI.create("http://127.0.0.1:" + server.metricsAddress().getPort());

            HttpResponse<String> metrics = get(base.resolve("/metrics"));

            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(
                            type -> assertThat(type).startsWith("text/plain").contains("version=0.0.4"));
            assertThat(metrics.body())
                    .contains("# TYPE tailor_nbd_loop_health_check_age_seconds gauge")
                    .contains("tailor_nbd_loop_unrelated_tasks_total{loop=\"1\"}")
                    .contains("# TYPE tailor_nbd_admission_admitted_total counter")
                    .contains("tailor_nbd_admission_export_requests_total{export=\"disk\"}");
            // The dispatch-delay bound as a histogram per loop, to read over a window (the _max_ gauge is since
            // the start), in the loop-tracing buckets.
            assertThat(metrics.body())
                    .contains("# TYPE tailor_nbd_loop_io_dispatch_delay_seconds histogram")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_bucket{loop=\"0\",le=\"1.0E-6\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_bucket{loop=\"1\",le=\"0.25\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_bucket{loop=\"1\",le=\"1.0\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_bucket{loop=\"1\",le=\"+Inf\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_count{loop=\"1\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_seconds_sum{loop=\"1\"} ")
                    .contains("tailor_nbd_loop_io_dispatch_delay_max_seconds{loop=\"1\"} ");
            assertThat(get(base.resolve("/healthz")).body()).isEqualTo("ok\n");
            assertThat(HTTP.send(
                                    HttpRequest.newBuilder(base.resolve("/metrics"))
                                            .POST(HttpRequest.BodyPublishers.noBody())
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(405);
        }
    }

    @Test
    void endpoints_answerTheirOwnPathOnly_andOtherMethods405WithAllow() throws Exception {
        try (NbdServer server = NbdServer.start(config(true, "127.0.0.1:0"))) {
            URI base = URI.create("http://127.0.0.1:" + server.metricsAddress().getPort());
            // Was: 200 for any path a context prefixes, and /healthz for any method, with no Allow header.
            for (String path : new String[] {"/healthzzz", "/healthz/x", "/metricsx", "/metrics/x"}) {
                assertThat(get(base.resolve(path)).statusCode()).as(path).isEqualTo(404);
            }
            for (String path : new String[] {"/healthz", "/metrics"}) {
                for (String method : new String[] {"POST", "PUT", "DELETE", "OPTIONS"}) {
                    HttpResponse<String> response = HTTP.send(
                            HttpRequest.newBuilder(base.resolve(path))
                                    .method(method, HttpRequest.BodyPublishers.noBody())
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(response.statusCode()).as(method + " " + path).isEqualTo(405);
                    assertThat(response.headers().firstValue("Allow"))
                            .as(method + " " + path)
                            .hasValue("GET, HEAD");
                }
                HttpResponse<Void> head = HTTP.send(
                        HttpRequest.newBuilder(base.resolve(path))
                                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                assertThat(head.statusCode()).as("HEAD " + path).isEqualTo(200);
            }
        }
    }

    @Test
    void everyHelpLine_standsOnItsOwn() throws Exception {
        // Prometheus shows a family's HELP alone, and the exposition sorts families by name: "Of them, ..." would
        // refer to whatever family came before.
        try (NbdServer server = NbdServer.start(config(true, "127.0.0.1:0"))) {
            String body = get(URI.create(
                            "http://127.0.0.1:" + server.metricsAddress().getPort() + "/metrics"))
                    .body();
            List<String> help =
                    body.lines().filter(l -> l.startsWith("# HELP tailor_")).toList();
            assertThat(help)
                    .contains(
                            "# HELP tailor_nbd_connections_handshaking Client connections open now that are still in"
                                    + " the handshake",
                            "# HELP tailor_nbd_admission_export_queued_total READs and WRITEs that waited in a segment"
                                    + " queue of admission",
                            "# HELP tailor_nbd_fair_dispatch_export_waited_total READs and WRITEs that waited at the"
                                    + " door")
                    .noneMatch(l -> l.matches("# HELP \\S+ Of them.*"));
        }
    }

    @Test
    void banner_showsTheMetricsAddressAsGiven() throws Exception {
        // An IPv6 loopback, as an operator writes it: the banner's URL is what tailor nbd top --metrics is given.
        org.assertj.core.api.Assumptions.assumeThat(ipv6Loopback()).isTrue();
        NbdConfig config = config(false, "[::1]:0");
        try (NbdServer server = NbdServer.start(config)) {
            java.io.StringWriter out = new java.io.StringWriter();
            ServeSummary.print(
                    server,
                    config,
                    null,
                    new java.io.PrintWriter(out),
                    new java.io.PrintWriter(new java.io.StringWriter()));
            assertThat(out.toString())
                    .contains("  metrics: http://[::1]:"
                            + server.metricsAddress().getPort() + "/metrics, health: /healthz")
                    .doesNotContain("0:0:0:0:0:0:0:1");
        }
    }

    private static boolean ipv6Loopback() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("::1"))) {
            return socket.getLocalPort() > 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void noListenAddress_noEndpoint() throws Exception {
        try (NbdServer server = NbdServer.start(config(false, null))) {
            assertThat(server.metricsAddress()).isNull();
        }
    }

    @Test
    void healthz_failsWhileALoopIsStuck_andRecovers() throws Exception {
        try (NbdServer server = NbdServer.start(config(false, "127.0.0.1:0"))) {
            URI healthz =
                    URI.create("http://127.0.0.1:" + server.metricsAddress().getPort() + "/healthz");
            IoPriorityEventLoop loop = server.eventLoops().loops().get(1);
            CountDownLatch release = new CountDownLatch(1);
            loop.execute(() -> {
                try {
                    release.await(); // a task that never yields: no health check can run on this loop
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                // Health checks every 20 ms: stale after 1 s (at least 1 s, 10 periods).
                awaitHealthz(healthz, 503);
                assertThat(get(healthz).body()).startsWith("event loop 1 has run no health check for over 1000 ms");
            } finally {
                release.countDown();
            }
            awaitHealthz(healthz, 200);
        }
    }

    /** Polls {@code /healthz} until it answers {@code status} (the server's loops run on real time). */
    private static void awaitHealthz(URI healthz, int status) {
        int[] last = {-1};
        Await.until(
                "/healthz to answer " + status,
                () -> {
                    try {
                        last[0] = get(healthz).statusCode();
                    } catch (IOException | InterruptedException e) {
                        throw new AssertionError("GET " + healthz, e);
                    }
                    return last[0] == status;
                },
                () -> "last answer " + last[0]);
    }

    @Test
    void realPrometheus_scrapesTheEndpoint() throws Exception {
        try (NbdServer server = NbdServer.start(config(true, "127.0.0.1:0"));
                PrometheusServer prometheus = PrometheusServer.scraping(
                        "127.0.0.1:" + server.metricsAddress().getPort())) {
            Await.until(
                    "Prometheus to read the proxy's loop and admission counters",
                    () -> prometheus.value("tailor_nbd_loop_unrelated_tasks_total{loop=\"0\"}") > 0
                            && prometheus.value("up") == 1
                            && prometheus.value("tailor_nbd_admission_intervals_total") > 0);
        }
    }

    @Test
    void badListenAddress_isAConfigProblem_andABusyPortAnIoError() throws Exception {
        assertThat(config(false, "nowhere").problems())
                .extracting(Problem::message)
                .anySatisfy(p -> assertThat(p).startsWith("loop.metricsListen: \"nowhere\" (expected: HOST:PORT"));
        assertThat(config(false, "127.0.0.1:70000").problems())
                .extracting(Problem::path)
                .anySatisfy(p -> assertThat(p).contains("loop.metricsListen"));
        NbdConfig samePort =
                config(false, "127.0.0.1:10809").toBuilder().port(10809).build();
        assertThat(samePort.listenerProblems())
                .extracting(Problem::message)
                .anySatisfy(p -> assertThat(p).startsWith("loop.metricsListen: \"127.0.0.1:10809\" is the NBD port"));
        assertThatThrownBy(() -> NbdServer.start(samePort))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("loop.metricsListen: \"127.0.0.1:10809\" is the NBD port");
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> NbdServer.start(config(false, "127.0.0.1:" + taken.getLocalPort())))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("cannot serve metrics on 127.0.0.1:" + taken.getLocalPort());
        }
    }
}
