package dev.tailor.testkit;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * A real Prometheus server (the Debian package's {@code prometheus} binary) on a loopback port,
 * scraping a test exporter every second. The exporter serves whatever text exposition the test's
 * supplier returns at scrape time. Start with {@link #start}; close to stop both and delete the
 * TSDB. Skips the test when Prometheus is not installed (see {@link Tools}).
 *
 * <p>Prometheus scrapes on wall-clock time, so tests that need samples wait for them with
 * {@link #await} (polling with a deadline), never with a fixed sleep.
 */
public final class PrometheusServer implements AutoCloseable {

    private final Process process;
    private final HttpServer exporter;
    private final Path dir;
    private final URI url;

    private PrometheusServer(Process process, HttpServer exporter, Path dir, URI url) {
        this.process = process;
        this.exporter = exporter;
        this.dir = dir;
        this.url = url;
    }

    /**
     * How to start: history to load before the server starts, and whether every query should come
     * back with a warning.
     *
     * @param history         samples of the past in the OpenMetrics text format ({@code name{labels}
     *                        value timestamp-in-seconds}, ending with {@code # EOF}), turned into
     *                        TSDB blocks by {@code promtool tsdb create-blocks-from openmetrics} so
     *                        queries at past instants see them at once; {@code null} for none
     * @param failingRemoteRead configure a remote-read endpoint (served by the exporter) that always
     *                        answers HTTP 503: Prometheus then answers every query from its local
     *                        data with a warning about the failed remote read, its way of saying the
     *                        answer may be partial
     */
    public record Options(String history, boolean failingRemoteRead, Web web) {

        /** No history, no failing remote read. */
        public static final Options DEFAULT = new Options(null, false, null);

        /** Without a web configuration (plain HTTP, no authentication). */
        public Options(String history, boolean failingRemoteRead) {
            this(history, failingRemoteRead, null);
        }
    }

    /**
     * Prometheus's own {@code --web.config.file}, for a server behind TLS and authentication.
     *
     * @param configYaml    its content ({@code tls_server_config}, {@code basic_auth_users}; files by
     *                      absolute path)
     * @param tls           whether it serves HTTPS (then {@link #url()} is {@code https://})
     * @param authorization the {@code Authorization} header the readiness check sends, or {@code null}
     */
    public record Web(String configYaml, boolean tls, String authorization) {}

    /**
     * Starts the exporter and Prometheus and waits until Prometheus is ready.
     *
     * @param exposition the exporter's body (Prometheus text format 0.0.4), asked at every scrape
     */
    public static PrometheusServer start(Supplier<String> exposition) throws IOException, InterruptedException {
        return start(exposition, Options.DEFAULT);
    }

    /**
     * Starts the exporter and Prometheus with {@code options} and waits until Prometheus is ready.
     *
     * @param exposition the exporter's body (Prometheus text format 0.0.4), asked at every scrape
     * @throws IllegalStateException when promtool rejects the history (its output attached)
     */
    public static PrometheusServer start(Supplier<String> exposition, Options options)
            throws IOException, InterruptedException {
        return start(exposition, options, null);
    }

    /**
     * Starts Prometheus scraping {@code target} ({@code HOST:PORT}, path {@code /metrics}) every second
     * instead of a test exporter: for code under test that serves its own endpoint.
     */
    public static PrometheusServer scraping(String target) throws IOException, InterruptedException {
        return start(() -> "", Options.DEFAULT, target);
    }

    private static PrometheusServer start(Supplier<String> exposition, Options options, String target)
            throws IOException, InterruptedException {
        Path binary = Tools.require("prometheus", "prometheus");
        HttpServer exporter = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        exporter.createContext("/metrics", exchange -> {
            byte[] body = exposition.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        exporter.createContext("/remote-read", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] body = "remote storage unavailable (test)".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(503, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        exporter.start();
        Path dir = Files.createTempDirectory("tailor-prometheus");
        int port = freePort();
        String remoteRead = !options.failingRemoteRead()
                ? ""
                : """
                remote_read:
                  - url: http://127.0.0.1:%d/remote-read
                    read_recent: true
                    remote_timeout: 5s
                """.formatted(exporter.getAddress().getPort());
        Files.writeString(
                dir.resolve("prometheus.yml"),
                """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                scrape_configs:
                  - job_name: test
                    honor_labels: true
                    static_configs:
                      - targets: ['%s']
                """.formatted(
                                target != null
                                        ? target
                                        : "127.0.0.1:" + exporter.getAddress().getPort())
                        + remoteRead);
        if (options.history() != null) {
            try {
                backfill(options.history(), dir);
            } catch (IOException | RuntimeException | InterruptedException e) {
                exporter.stop(0);
                throw e;
            }
        }
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
                binary.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn"));
        Web web = options.web();
        if (web != null) {
            Files.writeString(dir.resolve("web.yml"), web.configYaml());
            command.add("--web.config.file=" + dir.resolve("web.yml"));
        }
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile())
                .start();
        String scheme = web != null && web.tls() ? "https" : "http";
        PrometheusServer server =
                new PrometheusServer(process, exporter, dir, URI.create(scheme + "://127.0.0.1:" + port));
        HttpClient http = web != null && web.tls()
                ? HttpClient.newBuilder().sslContext(trustingEveryone()).build()
                : HttpClient.newHttpClient();
        boolean ready = Await.holds(Duration.ofSeconds(30), () -> {
            if (!process.isAlive()) {
                return false;
            }
            try {
                HttpRequest.Builder probe = HttpRequest.newBuilder(server.url.resolve("/-/ready"));
                if (web != null && web.authorization() != null) {
                    probe.header("Authorization", web.authorization());
                }
                return http.send(probe.build(), HttpResponse.BodyHandlers.discarding())
                                .statusCode()
                        == 200;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        if (!ready) {
            String log =
                    Files.exists(dir.resolve("prometheus.log")) ? Files.readString(dir.resolve("prometheus.log")) : "";
            server.close();
            throw new IllegalStateException("Prometheus did not become ready in 30 s; its log:\n" + log);
        }
        return server;
    }

    /**
     * The value of the first series of an instant query now, or {@code NaN} when there is none or
     * the query fails.
     *
     * @throws IllegalStateException when the Prometheus process has exited ({@link #requireRunning()})
     */
    public double value(String promql) {
        requireRunning();
        try {
            String body = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(url.resolve("/api/v1/query?query="
                                            + java.net.URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"value\":\\[[^,]+,\"([^\"]+)\"\\]")
                    .matcher(body);
            return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
        } catch (IOException | NumberFormatException e) {
            return Double.NaN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Double.NaN;
        }
    }

    /** The server's base URL, e.g. {@code http://127.0.0.1:40123}. */
    public URI url() {
        return url;
    }

    /**
     * Throws when the Prometheus process has exited, with its log: a condition polled with
     * {@link Await} calls it (as {@link #value} does), so a wait for a dead server ends at once.
     *
     * @throws IllegalStateException naming the exit code and the log when the process has exited
     */
    public void requireRunning() {
        if (!process.isAlive()) {
            String log;
            try {
                Path file = dir.resolve("prometheus.log");
                log = Files.exists(file) ? Files.readString(file) : "";
            } catch (IOException e) {
                log = "(unreadable: " + e.getMessage() + ")";
            }
            throw new IllegalStateException("Prometheus exited with " + process.exitValue() + "; its log:\n" + log);
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        exporter.stop(0);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory; best effort
        }
    }

    /** Accepts any certificate for any host: the readiness check of a server with a test certificate. */
    private static javax.net.ssl.SSLContext trustingEveryone() {
        javax.net.ssl.X509ExtendedTrustManager everyone = new javax.net.ssl.X509ExtendedTrustManager() {
            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a, java.net.Socket s) {}

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a, java.net.Socket s) {}

            @Override
            public void checkClientTrusted(
                    java.security.cert.X509Certificate[] c, String a, javax.net.ssl.SSLEngine e) {}

            @Override
            public void checkServerTrusted(
                    java.security.cert.X509Certificate[] c, String a, javax.net.ssl.SSLEngine e) {}

            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a) {}

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a) {}

            @Override
            public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                return new java.security.cert.X509Certificate[0];
            }
        };
        try {
            javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
            context.init(null, new javax.net.ssl.TrustManager[] {everyone}, null);
            return context;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@code history} as TSDB blocks into {@code dir/data} with promtool. */
    private static void backfill(String history, Path dir) throws IOException, InterruptedException {
        Path promtool = Tools.require("promtool", "prometheus");
        Path input = dir.resolve("history.om");
        Files.writeString(input, history);
        Process process = new ProcessBuilder(
                        promtool.toString(),
                        "tsdb",
                        "create-blocks-from",
                        "openmetrics",
                        "--quiet",
                        input.toString(),
                        dir.resolve("data").toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException("promtool rejected the history: " + output);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
