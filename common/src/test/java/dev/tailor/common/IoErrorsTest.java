package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.AccessDeniedException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class IoErrorsTest {

    @Test
    void reasonsAreWordsNotExceptionNames() {
        assertThat(IoErrors.reason(new AccessDeniedException("/etc/shadow"))).isEqualTo("permission denied");
        assertThat(IoErrors.reason(new ConnectException())).isEqualTo("connection refused");
        assertThat(IoErrors.reason(new ConnectException("Connection timed out")))
                .isEqualTo("Connection timed out");
        assertThat(IoErrors.reason(new IOException())).isEqualTo("IOException");
    }

    /** A port nothing listens on: bound, then closed. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static Throwable httpGet(String url) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return catchThrowable(() ->
                http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding()));
    }

    @Test
    void aRefusedConnection_readsConnectionRefused_fromTheHttpClientAndFromASocket() throws IOException {
        int port = closedPort();

        Throwable http = httpGet("http://127.0.0.1:" + port + "/");
        Throwable socket = catchThrowable(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            }
        });

        assertThat(http).isInstanceOf(IOException.class);
        assertThat(IoErrors.connectionReason(http, null)).isEqualTo("connection refused");
        assertThat(IoErrors.reason((IOException) http)).isEqualTo("connection refused");
        assertThat(IoErrors.connectionReason(socket, null)).isEqualTo("connection refused");
    }

    @Test
    void aHostNameThatDoesNotResolve_readsSo_notConnectionRefused() {
        // The JDK's HTTP client reports it as a ConnectException without a message, the lookup's failure its cause.
        Throwable http = httpGet("http://nonexistent.invalid:9090/");
        Throwable socket = catchThrowable(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("nonexistent.invalid", 9090), 5_000);
            }
        });
        Throwable lookup = catchThrowable(() -> java.net.InetAddress.getByName("nonexistent.invalid"));

        assertThat(IoErrors.connectionReason(http, null)).isEqualTo("its host name does not resolve");
        assertThat(IoErrors.reason((IOException) http)).isEqualTo("its host name does not resolve");
        assertThat(IoErrors.connectionReason(socket, null)).isEqualTo("its host name does not resolve");
        assertThat(IoErrors.connectionReason(lookup, null)).isEqualTo("its host name does not resolve");
    }

    @Test
    void timeoutsAndTlsFailures_sayWhatHappened_andTheTimeoutWhenGiven() {
        assertThat(IoErrors.connectionReason(
                        new HttpConnectTimeoutException("HTTP connect timed out"), Duration.ofSeconds(2)))
                .isEqualTo("connection timed out after 2 s");
        assertThat(IoErrors.connectionReason(new HttpTimeoutException("request timed out"), Duration.ofMillis(1500)))
                .isEqualTo("no answer within 1.5 s");
        assertThat(IoErrors.connectionReason(new HttpTimeoutException("request timed out"), null))
                .isEqualTo("timed out");
        SSLHandshakeException tls = new SSLHandshakeException(
                "PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to"
                        + " find valid certification path to requested target");
        tls.initCause(new java.security.cert.CertificateException(
                "unable to find valid certification path to requested target"));
        assertThat(IoErrors.connectionReason(new IOException(tls), null))
                .isEqualTo("TLS failed (unable to find valid certification path to requested target)");
        assertThat(IoErrors.connectionReason(new IOException(new ConnectException("No route to host")), null))
                .isEqualTo("No route to host");
        assertThat(IoErrors.connectionReason(new IllegalStateException(), null)).isEqualTo("the connection failed");
    }
}
