package dev.tailor.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.joran.spi.JoranException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * The log of a long-running command ({@code tailor heart run}): SLF4J to logback, one line per
 * event on the command's stderr, as text or JSON ({@link LogLayout}). Tailor's own lines are logged
 * by the logger {@code tailor} at the chosen level; other libraries' (fabric8, the JDK's HTTP
 * client) at warnings and errors, or at info with {@code debug}: their errors at WARN and each line once
 * per run, every one at debug ({@link WriterAppender}). Stack traces only at debug.
 * Commands that do not call {@link #configure} log through {@code logback.xml}: warnings and
 * errors as text, without stack traces.
 */
final class Logs {

    /** The output format of {@code --log-format}. */
    enum Format {
        text,
        json
    }

    /** The levels of {@code --log-level}. */
    enum Threshold {
        error,
        warn,
        info,
        debug
    }

    /** Tailor's own log lines. */
    static final org.slf4j.Logger TAILOR = LoggerFactory.getLogger("tailor");

    private Logs() {}

    /**
     * Writes each event to {@code err} through its layout; logback serialises the calls. Another library's
     * line (any logger but {@code tailor}) is detail beside Tailor's own, which says what a failure means
     * and what happens next: its errors are written at WARN (fabric8's {@code listSyncAndWatch failed ...,
     * will stop} of a watch that could not start, which the controller retries before every round and says
     * once), and each of its lines once per run (logger and message; the last {@link #REMEMBERED} of them),
     * every time with {@code everyLine} (the {@code debug} level).
     */
    static final class WriterAppender extends AppenderBase<ILoggingEvent> {
        /** How many library lines are remembered as said. */
        static final int REMEMBERED = 256;

        private final PrintWriter err;
        private final LogLayout layout;
        private final boolean everyLine;
        private final Map<String, Boolean> said = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > REMEMBERED;
            }
        };

        WriterAppender(PrintWriter err, LogLayout layout, boolean everyLine) {
            this.err = err;
            this.layout = layout;
            this.everyLine = everyLine;
        }

        @Override
        protected void append(ILoggingEvent event) {
            Level level = event.getLevel();
            String logger = event.getLoggerName();
            if (!"tailor".equals(logger)) {
                if (level.isGreaterOrEqual(Level.ERROR)) {
                    level = Level.WARN;
                }
                if (!everyLine && said.put(logger + "\n" + event.getFormattedMessage(), Boolean.TRUE) != null) {
                    return;
                }
            }
            err.print(layout.doLayout(event, level));
            err.flush();
        }
    }

    /** From now on, every log line goes to {@code err} in {@code format}, filtered by {@code threshold}. */
    static void configure(Format format, Threshold threshold, PrintWriter err) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        LogLayout layout = new LogLayout();
        layout.setContext(context);
        layout.setJson(format == Format.json);
        layout.setStackTraces(threshold == Threshold.debug);
        layout.start();
        WriterAppender appender = new WriterAppender(err, layout, threshold == Threshold.debug);
        appender.setContext(context);
        appender.setName("stderr");
        appender.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(appender);
        root.setLevel(threshold == Threshold.debug ? Level.INFO : Level.WARN);
        context.getLogger("tailor").setLevel(Level.toLevel(threshold.name()));
    }

    /** Back to {@code logback.xml} (after a command that configured its own log, e.g. in tests). */
    static void reset() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        try {
            new ContextInitializer(context).autoConfig();
        } catch (JoranException e) {
            throw new IllegalStateException("logback.xml: " + e.getMessage(), e);
        }
    }
}
