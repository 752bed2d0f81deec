package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.Checks;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A client of the Prometheus HTTP API's instant queries ({@code GET /api/v1/query}), with Java's
 * HTTP client and Jackson. Sample values are parsed as Prometheus writes them — {@code "NaN"},
 * {@code "+Inf"}, {@code "-Inf"}, {@code "Inf"} and decimal or exponent forms — and returned as is;
 * deciding that a non-finite value means "no data" is the caller's business ({@link MetricsReader}).
 *
 * <p>Thread-safe. Source: Prometheus documentation, "HTTP API", sections "Format overview",
 * "Expression queries" and "Instant vectors".
 */
public final class PrometheusClient {

    /** One series of an instant vector: its labels (without {@code __name__} when absent) and value. */
    public record Series(Map<String, String> labels, double value) {
        public Series {
            labels = Collections.unmodifiableMap(new TreeMap<>(labels));
        }

        public String label(String name) {
            return labels.get(name);
        }
    }

    /**
     * An instant query's answer.
     *
     * @param series   the vector's series (a scalar answer is one series without labels)
     * @param warnings the warnings Prometheus attached; non-empty means the data may be partial
     */
    public record InstantVector(List<Series> series, List<String> warnings) {
        public InstantVector {
            series = List.copyOf(series);
            warnings = List.copyOf(warnings);
        }
    }

    /** Why a query failed; also the {@code reason} label of the controller's failure counter. */
    public enum Failure {
        /** No connection, timeout, or the server closed it. */
        UNREACHABLE,
        /** An HTTP status other than 200 without a Prometheus error body. */
        HTTP_STATUS,
        /** Prometheus answered {@code "status": "error"} (bad query, timeout, execution error). */
        QUERY_ERROR,
        /** A body that is not the documented JSON. */
        BAD_RESPONSE
    }

    /** A failed query; {@link #failure()} says why, the message names the query and the detail. */
    public static final class PrometheusException extends Exception {
        private final Failure failure;

        PrometheusException(Failure failure, String message, Throwable cause) {
            super(message, cause);
            this.failure = failure;
        }

        public Failure failure() {
            return failure;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The headers of a request, read anew for each (a token file may have been rotated). */
    @FunctionalInterface
    interface Headers {
        Map<String, String> get() throws IOException;
    }

    private final URI base;
    private final Duration timeout;
    private final HttpClient http;
    private final Headers headers;

    /**
     * @param base    the server, e.g. {@code http://prometheus.monitoring:9090} (a path prefix is kept)
     * @param timeout per request, also sent as the query's {@code timeout} parameter
     */
    public PrometheusClient(URI base, Duration timeout) {
        this(base, timeout, null, Map::of);
    }

    /**
     * A client of the configured Prometheus: its URL and timeout, its authentication (a bearer token
     * or basic authentication, files read for every query), its TLS settings and extra headers.
     *
     * @throws IllegalArgumentException naming the field when the CA file cannot be read or parsed, or
     *                                  the timeout is not a number &gt; 0 (with its value as written)
     */
    public static PrometheusClient of(ControllerConfig.Prometheus config) {
        double timeoutSeconds =
                Checks.requireAboveAtMost("prometheus.timeoutSeconds", config.timeoutSeconds(), 0, Double.MAX_VALUE);
        return new PrometheusClient(
                URI.create(config.url()),
                Duration.ofNanos(Math.round(timeoutSeconds * 1e9)),
                PrometheusTls.context(config.tls()),
                () -> PrometheusTls.headers(config));
    }

    private PrometheusClient(URI base, Duration timeout, javax.net.ssl.SSLContext tls, Headers headers) {
        if (base == null
                || base.getScheme() == null
                || !(base.getScheme().equals("http") || base.getScheme().equals("https"))) {
            throw new IllegalArgumentException("prometheus.url : " + base + " (expected: an http:// or https:// URL)");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException(
                    "prometheus.timeoutSeconds : " + (timeout == null ? null : Numbers.written(seconds(timeout)))
                            + " (expected: a finite number > 0)");
        }
        String text = base.toString();
        this.base = URI.create(text.endsWith("/") ? text : text + "/");
        this.timeout = timeout;
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(timeout);
        if (tls != null) {
            builder.sslContext(tls);
        }
        this.http = builder.build();
        this.headers = headers;
    }

    /** {@code duration} in seconds, as a configuration writes it. */
    static double seconds(Duration duration) {
        return java.math.BigDecimal.valueOf(duration.getSeconds())
                .add(java.math.BigDecimal.valueOf(duration.getNano(), 9))
                .doubleValue();
    }

    public URI base() {
        return base;
    }

    /**
     * Evaluates {@code promql} at {@code time}.
     *
     * @throws PrometheusException when the server is unreachable, answers an error, or answers
     *                             something that is not an instant vector or scalar
     */
    public InstantVector query(String promql, Instant time) throws PrometheusException {
        String url = base + "api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)
                + "&time=" + String.format(Locale.ROOT, "%.3f", time.toEpochMilli() / 1000.0)
                + "&timeout=" + Math.max(1, timeout.toMillis()) + "ms";
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().header("Accept", "application/json");
        try {
            headers.get().forEach(request::header);
        } catch (IOException e) {
            throw new PrometheusException(
                    Failure.UNREACHABLE, "cannot authenticate to Prometheus at " + base + ": " + e.getMessage(), e);
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (javax.net.ssl.SSLException e) {
            throw new PrometheusException(
                    Failure.UNREACHABLE,
                    "Prometheus at " + base + " unreachable: " + IoErrors.connectionReason(e, timeout)
                            + "; trust the CA that signed its certificate with prometheus.tls.caFile",
                    e);
        } catch (IOException e) {
            throw new PrometheusException(
                    Failure.UNREACHABLE,
                    "Prometheus at " + base + " unreachable: " + IoErrors.connectionReason(e, timeout),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PrometheusException(Failure.UNREACHABLE, "interrupted while querying " + base, e);
        }
        return parse(promql, response.statusCode(), response.body());
    }

    /** Parses an answer of {@code /api/v1/query}; package-private for tests of odd bodies. */
    static InstantVector parse(String promql, int status, String body) throws PrometheusException {
        if (status == 401 || status == 403) {
            throw new PrometheusException(
                    Failure.HTTP_STATUS,
                    "query " + promql + ": HTTP " + status + " ("
                            + (status == 401 ? "not authenticated" : "forbidden") + "): " + snippet(body)
                            + "; check prometheus.bearerTokenFile, prometheus.basicAuth or prometheus.headers",
                    null);
        }
        if (status == 404) {
            // Prometheus answers its API at <base>/api/v1/query only: a URL with /api/v1, or without the
            // route prefix Prometheus runs under, ends here (its own words are "404 page not found").
            throw new PrometheusException(
                    Failure.HTTP_STATUS,
                    "query " + promql + ": HTTP 404 (not found)"
                            + (snippet(body).isEmpty() ? "" : ": " + snippet(body))
                            + "; check that prometheus.url is the base URL of Prometheus, e.g."
                            + " http://prometheus.istio-system:9090 (with its route prefix if it runs under one,"
                            + " without /api/v1)",
                    null);
        }
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            throw new PrometheusException(
                    status == 200 ? Failure.BAD_RESPONSE : Failure.HTTP_STATUS,
                    "query " + promql + ": HTTP " + status + ", not JSON: " + snippet(body),
                    e);
        }
        if (root == null || !root.isObject()) {
            throw new PrometheusException(
                    status == 200 ? Failure.BAD_RESPONSE : Failure.HTTP_STATUS,
                    "query " + promql + ": HTTP " + status + ", not a JSON object"
                            + (snippet(body).isEmpty() ? " (an empty body)" : ": " + snippet(body)),
                    null);
        }
        String outcome = root.path("status").asText("");
        if ("error".equals(outcome)) {
            throw new PrometheusException(
                    Failure.QUERY_ERROR,
                    "query " + promql + ": " + root.path("errorType").asText("?") + ": "
                            + root.path("error").asText("(no message)"),
                    null);
        }
        if (status != 200 || !"success".equals(outcome)) {
            throw new PrometheusException(
                    status == 200 ? Failure.BAD_RESPONSE : Failure.HTTP_STATUS,
                    "query " + promql + ": HTTP " + status + ", status " + (outcome.isEmpty() ? "missing" : outcome),
                    null);
        }
        List<String> warnings = new ArrayList<>();
        root.path("warnings").forEach(w -> warnings.add(w.asText()));
        JsonNode data = root.path("data");
        String type = data.path("resultType").asText("");
        JsonNode result = data.path("result");
        List<Series> series = new ArrayList<>();
        try {
            switch (type) {
                case "vector" -> {
                    if (!result.isArray()) {
                        throw new IllegalArgumentException("data.result is not an array");
                    }
                    for (JsonNode item : result) {
                        Map<String, String> labels = new TreeMap<>();
                        item.path("metric")
                                .properties()
                                .forEach(
                                        e -> labels.put(e.getKey(), e.getValue().asText()));
                        series.add(new Series(labels, sampleValue(item.path("value"))));
                    }
                }
                case "scalar" -> series.add(new Series(Map.of(), sampleValue(result)));
                default ->
                    throw new IllegalArgumentException("resultType " + (type.isEmpty() ? "missing" : type)
                            + " (expected: vector or scalar; use an instant query)");
            }
        } catch (IllegalArgumentException e) {
            throw new PrometheusException(Failure.BAD_RESPONSE, "query " + promql + ": " + e.getMessage(), e);
        }
        return new InstantVector(series, warnings);
    }

    private static double sampleValue(JsonNode pair) {
        if (!pair.isArray() || pair.size() != 2 || !pair.get(1).isTextual()) {
            throw new IllegalArgumentException("sample " + pair + " (expected: [unixSeconds, \"value\"])");
        }
        return parseValue(pair.get(1).asText());
    }

    /**
     * A sample value as Prometheus writes it: {@code NaN}, {@code +Inf}, {@code -Inf}, {@code Inf},
     * or a Go float ({@code 1}, {@code 0.25}, {@code 1e-05}, {@code 1.5E+10}).
     *
     * @throws IllegalArgumentException for anything else
     */
    public static double parseValue(String text) {
        switch (text) {
            case "NaN":
                return Double.NaN;
            case "+Inf", "Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            default:
                break;
        }
        if (text.isEmpty() || !text.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?")) {
            throw new IllegalArgumentException("sample value \"" + text + "\" (expected: a number, NaN, +Inf or -Inf)");
        }
        return Double.parseDouble(text);
    }

    private static String snippet(String body) {
        String oneLine = body == null ? "" : body.replaceAll("\\s+", " ").strip();
        return oneLine.length() > 200 ? oneLine.substring(0, 200) + "…" : oneLine;
    }
}
