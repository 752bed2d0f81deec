package dev.tailor.nbd.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The proxy's HTTP endpoint for Prometheus and probes ({@code loop.metricsListen}, {@code tailor nbd
 * serve --metrics-listen}):
 *
 * <ul>
 *   <li>{@code GET /metrics}: {@link ProxyBackgroundWork#renderMetrics()}, the Prometheus text format
 *       0.0.4, read at scrape time (the same metrics the metrics file gets);</li>
 *   <li>{@code GET /healthz}: 200 while every event loop has run a health check within
 *       {@link #stalenessNanos(long)} (ten health-check periods, at least 1 s), 503 naming the first
 *       loop that has not, e.g. a loop stuck in a task (our reading: the loop's health check is the
 *       proxy's liveness).</li>
 * </ul>
 *
 * <p>Threads: the JDK's HTTP server on one daemon thread of its own; a scrape never runs on an event
 * loop, and reading the metrics takes admission's lock once. {@link #close} stops it at once.
 */
public final class MetricsEndpoint implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsEndpoint(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Starts serving on {@code address}.
     *
     * @param background              whose metrics and health-check ages are served
     * @param healthCheckPeriodMillis the loops' health-check period, for {@code /healthz}
     * @throws IOException when the address cannot be bound (the message names it)
     */
    public static MetricsEndpoint start(
            InetSocketAddress address, ProxyBackgroundWork background, long healthCheckPeriodMillis)
            throws IOException {
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (IOException e) {
            throw new IOException(
                    "cannot serve metrics on " + address.getHostString() + ":" + address.getPort() + " ("
                            + e.getMessage() + ")",
                    e);
        }
        long stalenessNanos = stalenessNanos(healthCheckPeriodMillis);
        server.createContext("/metrics", exchange -> {
            if (refused(exchange, "/metrics")) {
                return;
            }
            send(exchange, 200, ProxyBackgroundWork.metricsContentType(), background.renderMetrics());
        });
        server.createContext("/healthz", exchange -> {
            if (refused(exchange, "/healthz")) {
                return;
            }
            int stale = background.staleLoop(stalenessNanos);
            send(
                    exchange,
                    stale < 0 ? 200 : 503,
                    "text/plain; charset=utf-8",
                    stale < 0
                            ? "ok\n"
                            : "event loop " + stale + " has run no health check for over " + stalenessNanos / 1_000_000
                                    + " ms\n");
        });
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "tailor-nbd-metrics-http");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.start();
        return new MetricsEndpoint(server, executor);
    }

    /** How old a loop's last health check may be before {@code /healthz} fails: 10 periods, at least 1 s. */
    static long stalenessNanos(long healthCheckPeriodMillis) {
        return Math.max(1_000_000_000L, Math.multiplyExact(healthCheckPeriodMillis, 10_000_000L));
    }

    /** The bound address (with the actual port when port 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /**
     * Answers a request that is not {@code GET} or {@code HEAD} of exactly {@code path} (the JDK's server hands a
     * context every path it prefixes: {@code /metricsx}, {@code /healthz/a}): 404 for another path, 405 with
     * {@code Allow: GET, HEAD} for another method. Returns whether it answered.
     */
    private static boolean refused(HttpExchange exchange, String path) throws IOException {
        String method = exchange.getRequestMethod();
        if (!path.equals(exchange.getRequestURI().getPath())) {
            send(exchange, 404, "text/plain; charset=utf-8", "not found (expected: /metrics or /healthz)\n");
            return true;
        }
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            exchange.getResponseHeaders().set("Allow", "GET, HEAD");
            send(
                    exchange,
                    405,
                    "text/plain; charset=utf-8",
                    method + " " + path + ": not allowed (expected: GET or HEAD)\n");
            return true;
        }
        return false;
    }

    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        boolean head = "HEAD".equals(exchange.getRequestMethod());
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            if (!head) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
