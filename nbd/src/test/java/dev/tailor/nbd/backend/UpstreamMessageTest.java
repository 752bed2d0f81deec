package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class UpstreamMessageTest {

    @Test
    void theNativeTransportsSystemCallPrefixIsLeftOut() {
        assertThat(UpstreamBackend.message(
                        new IOException("io_uring connect(..) failed with error(-111): Connection refused")))
                .isEqualTo("Connection refused");
        assertThat(UpstreamBackend.message(new IOException("connect(..) failed: Connection refused")))
                .isEqualTo("Connection refused");
    }

    @Test
    void otherMessagesAreKept_andAMessagelessErrorIsNamed() {
        assertThat(UpstreamBackend.message(new IOException("the upstream closed the connection")))
                .isEqualTo("the upstream closed the connection");
        assertThat(UpstreamBackend.message(new ConnectException())).isEqualTo("connection refused");
        assertThat(UpstreamBackend.message(new IllegalStateException())).isEqualTo("java.lang.IllegalStateException");
    }
}
