package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Instant;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class LineFormatterTest {

    private static String format(Level level, String message, Throwable thrown, Object... parameters) {
        LogRecord record = new LogRecord(level, message);
        record.setLoggerName("dev.tailor.nbd.server.HandshakeHandler");
        record.setInstant(Instant.parse("2026-12-01T21:58:00.123456Z"));
        record.setParameters(parameters.length == 0 ? null : parameters);
        record.setThrown(thrown);
        return new LineFormatter().format(record);
    }

    @Test
    void record_isOneLineWithUtcTimeLevelAndTheLoggersSimpleName() {
        assertThat(format(Level.INFO, "NBD_OPT_GO refused before STARTTLS", null))
                .isEqualTo("2026-12-01T21:58:00.123Z INFO  HandshakeHandler: NBD_OPT_GO refused before STARTTLS\n");
    }

    @Test
    void parametersAndLineBreaks_areFormattedOnTheSameLine() {
        assertThat(format(Level.WARNING, "closed {0}\nafter {1} s", null, "conn", 3))
                .isEqualTo("2026-12-01T21:58:00.123Z WARN  HandshakeHandler: closed conn | after 3 s\n");
    }

    @Test
    void exception_isItsChainOfTypesAndMessagesInParentheses() {
        IOException cause = new IOException("Connection reset\n by peer");
        assertThat(format(Level.SEVERE, "closed", new IllegalStateException("broken", cause)))
                .isEqualTo("2026-12-01T21:58:00.123Z ERROR HandshakeHandler: closed (java.lang.IllegalStateException:"
                        + " broken; caused by java.io.IOException: Connection reset by peer)\n");
    }

    @Test
    void levels_useTheNamesOfTheOtherCommandsLogs() {
        assertThat(LineFormatter.level(Level.SEVERE)).isEqualTo("ERROR");
        assertThat(LineFormatter.level(Level.WARNING)).isEqualTo("WARN");
        assertThat(LineFormatter.level(Level.INFO)).isEqualTo("INFO");
        assertThat(LineFormatter.level(Level.CONFIG)).isEqualTo("DEBUG");
        assertThat(LineFormatter.level(Level.FINE)).isEqualTo("DEBUG");
        assertThat(LineFormatter.level(Level.FINEST)).isEqualTo("TRACE");
    }
}
