package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@link Tailor}: how a command's unexpected failure is told. */
class TailorTest {

    @Test
    void failed_outOfMemoryWrappedInAnother_isOneLineWithAHint_exit1() {
        StringWriter err = new StringWriter();
        int code = Tailor.failed(
                new IllegalStateException(new OutOfMemoryError("Java heap space")), new PrintWriter(err, true));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString().lines()).hasSize(1);
        assertThat(err.toString())
                .startsWith("tailor: out of memory (Java heap space, at most ")
                .contains("smaller rate")
                .contains("TAILOR_JAVA_OPTS=-Xmx")
                .doesNotContain("internal error")
                .doesNotContain("\tat ");
    }

    @Test
    void failed_anyOtherError_isAnInternalErrorWithItsStackTrace() {
        StringWriter err = new StringWriter();
        int code = Tailor.failed(new IllegalStateException("broken"), new PrintWriter(err, true));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString())
                .startsWith("tailor: internal error: java.lang.IllegalStateException: broken")
                .contains("\tat ");
    }
}
