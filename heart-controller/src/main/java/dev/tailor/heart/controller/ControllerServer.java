package dev.tailor.heart.controller;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * The controller's HTTP endpoints: {@code /metrics} ({@link ControllerMetrics}), {@code /healthz}
 * (200 while the round loop is alive) and {@code /readyz} (200 when this replica does its job: a
 * leader once a round has planned, a standby while it waits for the lease), for Prometheus and the
 * kubelet's probes.
 */
public final class ControllerServer implements AutoCloseable {

    private final HttpServer server;

    /**
     * Starts serving on {@code address}.
     *
     * @param alive whether the round loop is alive
     * @param ready whether this replica is ready (see the class comment)
     * @throws IOException if the port cannot be bound
     */
    public ControllerServer(
            InetSocketAddress address, ControllerMetrics metrics, BooleanSupplier alive, BooleanSupplier ready)
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
                boolean ok = ready.getAsBoolean();
                send(exchange, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "leading, but no round has planned yet\n");
            }
        });
        server.start();
    }

    /** The bound port (useful when asked for port 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Whether the request is for its context's path itself; else it is answered 404 here. */
    private static boolean exact(HttpExchange exchange) throws IOException {
        if (exchange.getRequestURI().getPath().equals(exchange.getHttpContext().getPath())) {
            return true;
        }
        send(exchange, 404, "text/plain", "not found\n");
        return false;
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
