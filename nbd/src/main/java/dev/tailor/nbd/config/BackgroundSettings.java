package dev.tailor.nbd.config;

import java.nio.file.Path;

/**
 * The proxy's background work on its event loops, as the server runs it: the tasks' periods and the
 * synthetic maintenance load ({@link LoopSettings#background()} builds it from the config).
 *
 * @param statisticsPeriodMicros  per-segment statistics (admission tick), µs, {@code >= 1}
 * @param metricsPeriodMillis     metrics export, ms, {@code >= 1}
 * @param metricsFile             where to write the metrics, or {@code null} to keep them in memory
 * @param healthCheckPeriodMillis health check, ms, {@code >= 1}
 * @param maintenancePeriodMicros synthetic maintenance period, µs, {@code >= 1}
 * @param maintenanceBusyMicros   CPU time of each maintenance task, µs; 0 turns maintenance off
 * @param maintenanceTasks        maintenance tasks submitted at each run, each its own unrelated task
 *                                (many small tasks queued at once, as per-segment upkeep would be)
 */
public record BackgroundSettings(
        long statisticsPeriodMicros,
        long metricsPeriodMillis,
        Path metricsFile,
        long healthCheckPeriodMillis,
        long maintenancePeriodMicros,
        long maintenanceBusyMicros,
        int maintenanceTasks) {

    /** The defaults: statistics every 1 ms, metrics every 1 s, health every 100 ms, no maintenance. */
    public static final BackgroundSettings DEFAULTS = new BackgroundSettings(1_000, 1_000, null, 100, 1_000, 0, 1);

    public BackgroundSettings {
        requireAtLeast("statisticsPeriodMicros", statisticsPeriodMicros, 1);
        requireAtLeast("metricsPeriodMillis", metricsPeriodMillis, 1);
        requireAtLeast("healthCheckPeriodMillis", healthCheckPeriodMillis, 1);
        requireAtLeast("maintenancePeriodMicros", maintenancePeriodMicros, 1);
        requireAtLeast("maintenanceBusyMicros", maintenanceBusyMicros, 0);
        requireAtLeast("maintenanceTasks", maintenanceTasks, 1);
    }

    private static void requireAtLeast(String field, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(field + ": " + value + " (expected: at least " + min + ")");
        }
    }
}
