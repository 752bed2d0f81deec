package dev.tailor.nbd.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** What one logger logs while a test runs (the server logs through java.util.logging). */
public final class LogRecords extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<String> messages = new ArrayList<>();

    private LogRecords(Logger logger) {
        this.logger = logger;
    }

    /** Starts recording what the logger of {@code type} logs. */
    public static LogRecords of(Class<?> type) {
        LogRecords records = new LogRecords(Logger.getLogger(type.getName()));
        records.logger.addHandler(records);
        return records;
    }

    @Override
    public synchronized void publish(LogRecord record) {
        messages.add(record.getLevel() + " " + record.getMessage());
    }

    /** The messages so far, each prefixed with its level. */
    public synchronized List<String> messages() {
        return List.copyOf(messages);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
