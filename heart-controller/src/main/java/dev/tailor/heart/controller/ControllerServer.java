package dev.tailor.heart.controller;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The controller's HTTP endpoints: {@code /metrics} ({@link ControllerMetrics}), {@code /healthz}
 * (200 while the round loop is alive) and {@code /readyz} (200 when this replica can do its job, else
 * 503 saying why: {@link ControllerLoop#notReady}), for Prometheus and the kubelet's probes; each
 * answers GET and HEAD, and any other method 405 with {@code Allow: GET, HEAD}.
 */
public final class ControllerServer implements AutoCloseable {

    private final HttpServer server;

    /**
     * Starts serving on {@code address}.
     *
     * @param alive    whether the round loop is alive
     * @param notReady why this replica is not ready, in one line, or {@code null} when it is
     * @throws IOException if the port cannot be bound
     */
    public ControllerServer(
            InetSocketAddress address, ControllerMetrics metrics, BooleanSupplier alive, Supplier<String> notReady)
            throws IOException {
        server = HttpServer.create(address, 0);
        // A context answers every path it is a prefix of (/healthzzz, /metrics/x): each path answers
        // only itself, the rest 404, as a mistyped probe or scrape path must not look healthy.
        server.createContext("/", exchange -> send(exchange, 404, "text/plain", "not found\n"));
        server.createContext("/metrics", exchange -> {
            if (exact(exchange)) {
                send(exchange, 200, metrics.contentType(), metrics.scrape());
            }
        });
        server.createContext("/healthz", exchange -> {
            if (exact(exchange)) {
                boolean ok = alive.getAsBoolean();
                send(exchange, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "round loop stopped\n");
            }
        });
        server.createContext("/readyz", exchange -> {
            if (exact(exchange)) {
                String why = notReady.get();
                send(exchange, why == null ? 200 : 503, "text/plain", (why == null ? "ok" : why) + "\n");
            }
        });
        server.start();
    }

    /** The bound port (useful when asked for port 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * Whether the request is a GET or HEAD for its context's path itself; else it is answered here: 404 for
     * another path, 405 with {@code Allow: GET, HEAD} for another method (a probe or a scrape only reads).
     */
    private static boolean exact(HttpExchange exchange) throws IOException {
        String path = exchange.getHttpContext().getPath();
        if (!exchange.getRequestURI().getPath().equals(path)) {
            send(exchange, 404, "text/plain", "not found\n");
            return false;
        }
        String method = exchange.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            exchange.getResponseHeaders().set("Allow", "GET, HEAD");
            send(exchange, 405, "text/plain", method + " " + path + ": not allowed (expected: GET or HEAD)\n");
            return false;
        }
        return true;
    }

    /**
     * Answers with {@code body}; a HEAD request gets the headers alone (announcing a length for HEAD
     * made the JDK's server log a warning of its own on stderr for every such probe).
     */
    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
            return;
        }
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
