package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetConnectedException;
import org.junit.jupiter.api.Test;

class UpstreamMessageTest {

    @Test
    void theNativeTransportsSystemCallPrefixIsLeftOut() {
        assertThat(UpstreamBackend.message(
                        new IOException("io_uring connect(..) failed with error(-111): Connection refused")))
                .isEqualTo("connection refused");
        assertThat(UpstreamBackend.message(new IOException("connect(..) failed: Connection refused")))
                .isEqualTo("connection refused");
    }

    @Test
    void theAddressTheTransportAppends_isLeftOut_forTheMessageNamesTheUpstream() {
        assertThat(UpstreamBackend.message(new IOException("Connection refused: /127.0.0.1:20810")))
                .isEqualTo("connection refused");
        assertThat(UpstreamBackend.message(
                        new IOException("finishConnect(..) failed: Connection refused: localhost/[::1]:20810")))
                .isEqualTo("connection refused");
    }

    @Test
    void aUnixSocketsPath_isLeftOut_andAMissingOneIsToldInWords() {
        assertThat(UpstreamBackend.message(new IOException(
                        "connect(..) failed with error(-111): Connection refused: /run/nbd/upstream.sock")))
                .isEqualTo("connection refused");
        assertThat(UpstreamBackend.message(new java.io.FileNotFoundException())).isEqualTo("no such file or directory");
        assertThat(UpstreamBackend.message(new IOException("No such file or directory")))
                .isEqualTo("no such file or directory");
        assertThat(UpstreamBackend.message(new IOException("connect(..) failed: Permission denied: /run/x.sock")))
                .isEqualTo("permission denied");
    }

    @Test
    void aDroppedConnectionIsToldInWords_notInTheSystemsOrAsAnExceptionName() {
        assertThat(UpstreamBackend.message(new IOException("Connection reset by peer")))
                .isEqualTo("the connection was reset");
        assertThat(UpstreamBackend.message(
                        new IOException("recvAddress(..) failed with error(-104): Connection reset")))
                .isEqualTo("the connection was reset");
        assertThat(UpstreamBackend.message(new IOException("writev(..) failed: Broken pipe")))
                .isEqualTo("the connection closed");
        assertThat(UpstreamBackend.message(new NotYetConnectedException())).isEqualTo("the connection closed");
        assertThat(UpstreamBackend.message(new ClosedChannelException())).isEqualTo("the connection closed");
    }

    @Test
    void nettysConnectTimeout_isToldInSecondsLikeEveryOtherTimeout() {
        assertThat(UpstreamBackend.message(
                        new ConnectTimeoutException("connection timed out after 10000 ms: /10.0.0.7:10809")))
                .isEqualTo("no connection within 10 s");
    }

    @Test
    void otherMessagesAreKept_andAMessagelessErrorIsNamed() {
        assertThat(UpstreamBackend.message(new IOException("the upstream closed the connection")))
                .isEqualTo("the upstream closed the connection");
        assertThat(UpstreamBackend.message(new ConnectException())).isEqualTo("connection refused");
        assertThat(UpstreamBackend.message(new IllegalStateException())).isEqualTo("the connection failed");
    }
}
