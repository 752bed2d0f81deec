package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.heart.controller.PrometheusClient.Failure;
import dev.tailor.heart.controller.PrometheusClient.InstantVector;
import dev.tailor.heart.controller.PrometheusClient.PrometheusException;
import dev.tailor.heart.controller.PrometheusClient.Series;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PrometheusClientTest {

    private static PrometheusServer server;
    private static PrometheusClient client;
    private static final long STARTED_NANOS = System.nanoTime();
    /** The wall instant at {@link #STARTED_NANOS}: the counter's samples are stamped from here on. */
    private static final long STARTED_MILLIS = System.currentTimeMillis();

    @BeforeAll
    static void startPrometheus() throws Exception {
        server = PrometheusServer.start(() -> {
            // The counter's sample carries the instant it was counted at, so its rate is 2/s
            // however late a loaded machine serves or stores the scrape.
            long nanos = System.nanoTime() - STARTED_NANOS;
            long millis = STARTED_MILLIS + TimeUnit.NANOSECONDS.toMillis(nanos);
            return """
                    # TYPE test_requests_total counter
                    test_requests_total{pod="a-1"} %s %d
                    # TYPE test_gauge gauge
                    test_gauge{pod="nan"} NaN
                    test_gauge{pod="inf"} +Inf
                    test_gauge{pod="neginf"} -Inf
                    test_gauge{pod="exp"} 1.5e-3
                    """.formatted(2 * (TimeUnit.NANOSECONDS.toMillis(nanos) / 1000.0), millis);
        });
        client = TestPrometheus.client(server);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static Map<String, Double> byPod(InstantVector vector) {
        return vector.series().stream().collect(Collectors.toMap(s -> s.label("pod"), Series::value));
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "-1.5, -1.5", "0.0004, 0.0004", "NaN, NaN"})
    void of_timeout_isCheckedAsWritten(double seconds, String written) {
        ControllerConfig.Prometheus config = ControllerConfig.Prometheus.builder()
                .url("http://prometheus:9090")
                .timeoutSeconds(seconds)
                .build();
        if (seconds > 0) {
            assertThat(PrometheusClient.of(config).base()).hasToString("http://prometheus:9090/");
            return;
        }
        assertThatThrownBy(() -> PrometheusClient.of(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("prometheus.timeoutSeconds : " + written + " (expected: a finite number > 0)");
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "-1500, -1.5", "-1, -0.001"})
    void constructor_timeoutNotPositive_isEchoedInSeconds(long millis, String written) {
        assertThatThrownBy(() -> new PrometheusClient(URI.create("http://prometheus:9090"), Duration.ofMillis(millis)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("prometheus.timeoutSeconds : " + written + " (expected: a finite number > 0)");
    }

    @Test
    void query_realServer_nonFiniteValuesComeBackAsTheyAre() throws Exception {
        // The exporter's NaN and infinities must survive the round trip, so the reader can call them
        // "no data" instead of mistaking them for numbers or zero.
        Await.until("four test_gauge series", () -> count("test_gauge") == 4);
        Map<String, Double> values = byPod(client.query("test_gauge", Instant.now()));
        assertThat(values.get("nan")).isNaN();
        assertThat(values.get("inf")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(values.get("neginf")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(values.get("exp")).isEqualTo(0.0015);
    }

    @Test
    void query_realServer_rateOfACounter() throws Exception {
        // rate() divides by the window, so wait until scrapes cover all of it.
        Await.until("scrapes covering the 5 s window", () -> value("count_over_time(test_requests_total[5s])") >= 5);
        InstantVector vector = client.query("rate(test_requests_total[5s])", Instant.now());
        assertThat(vector.series().get(0).value()).isCloseTo(2.0, within(0.2));
        assertThat(vector.series().get(0).labels()).containsEntry("pod", "a-1").doesNotContainKey("__name__");
        assertThat(vector.warnings()).isEmpty();
    }

    @Test
    void query_realServer_unknownMetricIsAnEmptyVector() throws Exception {
        assertThat(client.query("no_such_metric_total", Instant.now()).series()).isEmpty();
    }

    @Test
    void query_realServer_badPromqlIsAQueryError() {
        assertThatThrownBy(() -> client.query("rate(test_requests_total[", Instant.now()))
                .isInstanceOf(PrometheusException.class)
                .satisfies(e -> assertThat(((PrometheusException) e).failure()).isEqualTo(Failure.QUERY_ERROR))
                .hasMessageContaining("bad_data");
    }

    @Test
    void query_nothingListening_isUnreachable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        PrometheusClient down = TestPrometheus.client(URI.create("http://127.0.0.1:" + port));
        assertThatThrownBy(() -> down.query("up", Instant.now()))
                .satisfies(e -> assertThat(((PrometheusException) e).failure()).isEqualTo(Failure.UNREACHABLE))
                .hasMessage("Prometheus at http://127.0.0.1:" + port + "/ unreachable: connection refused");
    }

    @Test
    void query_hostNameDoesNotResolve_saysSo() {
        // The timeout leaves a slow resolver time to answer: what is asserted is its answer, not a timeout.
        PrometheusClient nowhere = TestPrometheus.client(URI.create("http://nonexistent.invalid:9090"));
        assertThatThrownBy(() -> nowhere.query("up", Instant.now()))
                .satisfies(e -> assertThat(((PrometheusException) e).failure()).isEqualTo(Failure.UNREACHABLE))
                .hasMessage("Prometheus at http://nonexistent.invalid:9090/ unreachable: its host name does not"
                        + " resolve");
    }

    @Test
    void query_noAnswer_saysItTimedOutAfterTheTimeout() throws Exception {
        // The kernel accepts the connection into the backlog; nothing ever reads or answers.
        try (ServerSocket silent = new ServerSocket(0)) {
            PrometheusClient mute = new PrometheusClient(
                    URI.create("http://127.0.0.1:" + silent.getLocalPort()), Duration.ofMillis(200));
            assertThatThrownBy(() -> mute.query("up", Instant.now()))
                    .satisfies(
                            e -> assertThat(((PrometheusException) e).failure()).isEqualTo(Failure.UNREACHABLE))
                    .hasMessage("Prometheus at http://127.0.0.1:" + silent.getLocalPort()
                            + "/ unreachable: no answer within 0.2 s");
        }
    }

    @Test
    void parse_warningsAreKept() throws Exception {
        InstantVector vector = PrometheusClient.parse("q", 200, """
                {"status":"success","warnings":["partial response: store 2 down"],
                 "data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1.5,"3"]}]}}""");
        assertThat(vector.warnings()).containsExactly("partial response: store 2 down");
        assertThat(vector.series()).extracting(Series::value).containsExactly(3.0);
    }

    @Test
    void parse_scalar() throws Exception {
        assertThat(PrometheusClient.parse("q", 200, """
                {"status":"success","data":{"resultType":"scalar","result":[1.5,"-Inf"]}}""").series())
                .extracting(Series::value)
                .containsExactly(Double.NEGATIVE_INFINITY);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "503, upstream down | HTTP_STATUS | not JSON",
                "200, <html> | BAD_RESPONSE | not JSON",
                "200, [] | BAD_RESPONSE | not a JSON object: []",
                "404, | HTTP_STATUS | query q: HTTP 404 (not found); check that prometheus.url is the base URL of Prometheus",
                // Was "HTTP 404, not a JSON object: 404 page not found", with no word of the URL.
                "404, 404 page not found | HTTP_STATUS | HTTP 404 (not found): 404 page not found; check that"
                        + " prometheus.url is the base URL of Prometheus, e.g. http://prometheus.istio-system:9090 (with its"
                        + " route prefix if it runs under one, without /api/v1)",
                "200, {\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}} | BAD_RESPONSE | resultType matrix",
                "200, {\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,\"x1\"]}]}} | BAD_RESPONSE | sample value \"x1\"",
                "200, {\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,2]}]}} | BAD_RESPONSE | expected: [unixSeconds",
                "422, {\"status\":\"error\",\"errorType\":\"execution\",\"error\":\"too many samples\"} | QUERY_ERROR | too many samples"
            })
    void parse_oddAnswers_areNamedFailures(String answer, Failure failure, String message) {
        int comma = answer.indexOf(',');
        int status = Integer.parseInt(answer.substring(0, comma).strip());
        String body = answer.substring(comma + 1).strip();
        assertThatThrownBy(() -> PrometheusClient.parse("q", status, body))
                .satisfies(e -> assertThat(((PrometheusException) e).failure()).isEqualTo(failure))
                .hasMessageContaining(message);
    }

    @ParameterizedTest
    @CsvSource({"1, 1.0", "-0.5, -0.5", "1e-05, 0.00001", "1.5E+10, 1.5e10", ".5, 0.5", "+3, 3.0"})
    void parseValue_goFloats(String text, double expected) {
        assertThat(PrometheusClient.parseValue(text)).isEqualTo(expected);
    }

    private static double value(String promql) {
        try {
            InstantVector vector = client.query(promql, Instant.now());
            return vector.series().isEmpty() ? -1 : vector.series().get(0).value();
        } catch (PrometheusException e) {
            server.requireRunning();
            return -1;
        }
    }

    private static int count(String promql) {
        try {
            return client.query(promql, Instant.now()).series().size();
        } catch (PrometheusException e) {
            server.requireRunning();
            return -1;
        }
    }
}
