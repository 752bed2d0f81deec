package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.AccessDeniedException;
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
}
