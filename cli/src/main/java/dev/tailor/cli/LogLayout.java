package dev.tailor.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tailor.heart.controller.KubernetesErrors;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * One log line per event, as text ({@code 2026-12-01T21:58:00.123Z INFO  tailor: message}) or as a
 * JSON object ({@code {"time":...,"level":...,"logger":...,"thread":...,"message":...}}). An
 * exception is one line after the message ({@code error} in JSON): a Kubernetes error as its verb,
 * resource, code and message ({@link KubernetesErrors}), fabric8's failure to reach the API server as
 * {@code no API server reachable: <why>}, any other as its chain of types and messages. The stack trace follows only with {@link #setStackTraces} (the {@code debug} level),
 * in JSON as {@code stack}.
 */
public final class LogLayout extends LayoutBase<ILoggingEvent> {

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final ObjectMapper JSON = new ObjectMapper();

    private boolean json;
    private boolean stackTraces;

    /** JSON lines instead of text (logback.xml: {@code <json>true</json>}). */
    public void setJson(boolean json) {
        this.json = json;
    }

    /** Stack traces after the one-line error (logback.xml: {@code <stackTraces>true</stackTraces>}). */
    public void setStackTraces(boolean stackTraces) {
        this.stackTraces = stackTraces;
    }

    @Override
    public String doLayout(ILoggingEvent event) {
        return doLayout(event, event.getLevel());
    }

    /** The line of {@code event}, written at {@code level} (a library's error as a warning: {@link Logs}). */
    String doLayout(ILoggingEvent event, Level level) {
        String time = TIME.format(Instant.ofEpochMilli(event.getTimeStamp()));
        String message = event.getFormattedMessage() == null ? "" : event.getFormattedMessage();
        Throwable error = throwable(event.getThrowableProxy());
        String errorLine = error != null
                ? event.getLoggerName().startsWith("io.fabric8.") && KubernetesErrors.unreachable(error)
                        ? "no API server reachable: " + KubernetesErrors.why(error)
                        : oneLine(error)
                : event.getThrowableProxy() == null ? null : proxyLine(event.getThrowableProxy());
        if (json) {
            ObjectNode line = JSON.createObjectNode();
            line.put("time", time);
            line.put("level", level.toString());
            line.put("logger", event.getLoggerName());
            line.put("thread", event.getThreadName());
            line.put("message", message);
            if (errorLine != null) {
                line.put("error", errorLine);
                if (stackTraces && error != null) {
                    line.put("stack", stack(error));
                }
            }
            try {
                return JSON.writeValueAsString(line) + "\n";
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot write a log line as JSON", e);
            }
        }
        String logger = event.getLoggerName();
        StringBuilder text = new StringBuilder(time)
                .append(' ')
                .append(String.format("%-5s", level))
                .append(' ')
                .append(logger.substring(logger.lastIndexOf('.') + 1))
                .append(": ")
                .append(message.replace("\n", " | "));
        if (errorLine != null) {
            text.append(" (").append(errorLine).append(')');
        }
        text.append('\n');
        if (stackTraces && error != null) {
            text.append(stack(error));
        }
        return text.toString();
    }

    /**
     * One line for {@code error}: the first Kubernetes error in its chain as {@link KubernetesErrors}
     * renders it, else each cause's type and message, outermost first.
     */
    static String oneLine(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof KubernetesClientException kubernetes) {
                return KubernetesErrors.describe(kubernetes, "the API server");
            }
        }
        StringBuilder line = new StringBuilder();
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (!line.isEmpty()) {
                line.append("; caused by ");
            }
            line.append(cause.getClass().getName());
            if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
                line.append(": ")
                        .append(cause.getMessage().replaceAll("\\s+", " ").strip());
            }
        }
        return line.toString();
    }

    private static Throwable throwable(IThrowableProxy proxy) {
        return proxy instanceof ThrowableProxy real ? real.getThrowable() : null;
    }

    private static String proxyLine(IThrowableProxy proxy) {
        String message = proxy.getMessage();
        return proxy.getClassName()
                + (message == null ? "" : ": " + message.replaceAll("\\s+", " ").strip());
    }

    private static String stack(Throwable error) {
        StringWriter trace = new StringWriter();
        error.printStackTrace(new PrintWriter(trace));
        return trace.toString();
    }
}
