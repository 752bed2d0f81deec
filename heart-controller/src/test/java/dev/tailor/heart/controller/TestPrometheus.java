package dev.tailor.heart.controller;

import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;

/**
 * Prometheus in the tests. {@link #shop()} answers from history loaded before the tests, not from
 * its scrapes, so what a query at an instant of it gives does not depend on when Prometheus
 * scraped. In the tests that are not about a query's timeout, how long a query may take (the
 * configuration's {@code prometheus.timeoutSeconds} and the client's) is a failure's bound only, so
 * a slow machine never turns an answer into "unreachable: no answer within ...", nor a refused
 * connection into one. A test about the timeout keeps its own, against a server that never answers.
 */
final class TestPrometheus {

    /** A query of a few minutes of metrics on loopback: a failure's bound, no timing target. */
    static final double TIMEOUT_SECONDS = 60;
    /** The history {@link #shop()} holds: from here (a multiple of 5 s, minutes ago) ... */
    static final long HISTORY_START_SECONDS = Instant.now().getEpochSecond() / 5 * 5 - 600;
    /** ... for this long, a sample a second, so a 5 s window always holds several. */
    static final int HISTORY_SECONDS = 300;
    /** An instant of the history with a minute of it before and four after: every window of a round. */
    static final Instant IN_HISTORY = Instant.ofEpochSecond(HISTORY_START_SECONDS + 60);

    private TestPrometheus() {}

    /**
     * A real Prometheus holding {@link ShopCluster}'s metrics over the history (its exporter serves
     * nothing), at a constant CPU cost per request: {@link ShopCluster#CPU_PER_REQUEST}.
     */
    static PrometheusServer shop() throws IOException, InterruptedException {
        return PrometheusServer.start(
                () -> "",
                new PrometheusServer.Options(
                        ShopCluster.history(
                                HISTORY_START_SECONDS,
                                HISTORY_SECONDS,
                                1,
                                (node, t) -> ShopCluster.CPU_PER_REQUEST.get(node)),
                        false));
    }

    /** A client of {@code url} with {@link #TIMEOUT_SECONDS}. */
    static PrometheusClient client(URI url) {
        return new PrometheusClient(url, Duration.ofMillis(Math.round(TIMEOUT_SECONDS * 1000)));
    }

    /** A client of {@code prometheus} with {@link #TIMEOUT_SECONDS}. */
    static PrometheusClient client(PrometheusServer prometheus) {
        return client(prometheus.url());
    }
}
