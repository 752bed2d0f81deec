package dev.tailor.cli;

import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * java.util.logging's records (the NBD server's and Netty's) as one line each, in {@link LogLayout}'s text format:
 * {@code 2026-12-01T21:58:00.123Z INFO  HandshakeHandler: message}, an exception as its chain of types and messages in
 * parentheses on the same line. Levels use the names the other commands' logs use: {@code SEVERE} is {@code ERROR},
 * {@code WARNING} is {@code WARN}, {@code CONFIG} and {@code FINE} are {@code DEBUG}, finer ones {@code TRACE}.
 */
final class LineFormatter extends Formatter {

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** Gives the root logger's console handlers (java.util.logging's default: standard error) this format. */
    static void install() {
        for (Handler handler : Logger.getLogger("").getHandlers()) {
            if (handler instanceof ConsoleHandler) {
                handler.setFormatter(new LineFormatter());
            }
        }
    }

    @Override
    public String format(LogRecord record) {
        String logger = record.getLoggerName() == null ? "" : record.getLoggerName();
        String message = formatMessage(record);
        StringBuilder line = new StringBuilder(TIME.format(record.getInstant()))
                .append(' ')
                .append(String.format("%-5s", level(record.getLevel())))
                .append(' ')
                .append(logger.substring(logger.lastIndexOf('.') + 1))
                .append(": ")
                .append(message == null ? "" : message.replace("\n", " | "));
        if (record.getThrown() != null) {
            line.append(" (").append(LogLayout.oneLine(record.getThrown())).append(')');
        }
        return line.append('\n').toString();
    }

    /** {@code level} under the name logback gives the same severity. */
    static String level(Level level) {
        int value = level.intValue();
        if (value >= Level.SEVERE.intValue()) {
            return "ERROR";
        }
        if (value >= Level.WARNING.intValue()) {
            return "WARN";
        }
        if (value >= Level.INFO.intValue()) {
            return "INFO";
        }
        if (value >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }
}
