package dev.tailor.cli;

import dev.tailor.datasets.DataFileException;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options that point a command at an application's data: a folder in the TraStrainer layout
 * ({@code <pod>_metric.csv} files, {@code dependency.csv}, a Jaeger span CSV; docs/datasets.md), the
 * trace, the entry component and the AWS pings for link delays. Without {@code --dataset} the bundled
 * OnlineBoutique day is read from the data folder ({@link DataDir}).
 *
 * <p>Every problem becomes a {@link CliException} (exit 2) naming the option, the value and what
 * was expected; a data file's problem also names its line and column.
 */
final class DatasetOptions {

    /** The bundled OnlineBoutique day, inside the data folder. */
    static final String METRICS = "microservices/trastrainer_onlineboutique/normal_2022-08-14";
    /** The AWS pings, inside the data folder. */
    static final String LATENCY = "network_latency/aws_ec2_52node_pings/latency.csv.gz";

    private static final String LAYOUT =
            "a folder of <pod>_metric.csv files, a dependency.csv and a Jaeger span" + " CSV (docs/datasets.md)";

    @Option(
            names = "--dataset",
            paramLabel = "DIR",
            description = "Application data in the TraStrainer layout (docs/datasets.md): a dependency.csv, a"
                    + " <pod>_metric.csv per pod and a Jaeger span CSV.")
    Path dataset;

    @Option(
            names = "--trace",
            paramLabel = "FILE",
            description = "Jaeger span CSV for the call mix, or 'none' for an equal split over callers (default: the"
                    + " folder's one CSV with TraceID,SpanID,ParentID,PodName; for the bundled data"
                    + " ../faulty_2022-08-22/trace_06_20.csv).")
    String trace;

    @Option(
            names = "--entry",
            paramLabel = "NAME",
            description = "The component user requests enter at (default: the one that recorded the trace's root"
                    + " spans, else the one no other component calls in dependency.csv).")
    String entry;

    @Option(
            names = "--latency",
            paramLabel = "FILE",
            description = "AWS ping CSV (gzip) for link delays (default: <data>/" + LATENCY + ").")
    Path latency;

    /** Whether any of these options was given. */
    boolean given() {
        return dataset != null || trace != null || entry != null || latency != null;
    }

    /** The first of these options that was given, for messages; {@code null} when none was. */
    String firstGiven() {
        return dataset != null
                ? "--dataset"
                : trace != null ? "--trace" : entry != null ? "--entry" : latency != null ? "--latency" : null;
    }

    /** The folder read: {@code --dataset}, checked, or the bundled day. */
    Path metricsDir() {
        if (dataset == null) {
            return DataDir.require(METRICS, "--dataset");
        }
        if (!Files.isDirectory(dataset)) {
            throw new CliException("--dataset: " + dataset + ": "
                    + (Files.exists(dataset) ? "not a folder" : "no such folder") + " (expected: " + LAYOUT + ")");
        }
        return dataset;
    }

    /** The builder's options with the data these options point at; the rest at their defaults. */
    OnlineBoutiqueSnapshot.Options options() {
        Path metrics = metricsDir();
        Path pings = latency != null
                ? latency
                : dataset != null && Files.exists(metrics.resolve(OnlineBoutiqueSnapshot.DEFAULT_LATENCY))
                        ? null
                        : DataDir.require(LATENCY, "--latency");
        try {
            OnlineBoutiqueSnapshot.Options options = OnlineBoutiqueSnapshot.Options.defaults(metrics).toBuilder()
                    .latencyFile(pings)
                    .entryComponent(entry)
                    .build();
            if ("none".equalsIgnoreCase(trace)) {
                return options.toBuilder().useTrace(false).build();
            }
            return trace == null
                    ? options
                    : options.toBuilder()
                            .traceFile(Path.of(trace))
                            .useTrace(true)
                            .build();
        } catch (IllegalArgumentException e) {
            throw new CliException(optionName(e.getMessage()), e);
        }
    }

    /**
     * A failure of building from the data, as the user's error: a data file's problem names the
     * option that chose the file; a builder's message its field's option. File-system failures exit 1.
     */
    CliException error(Exception e, OnlineBoutiqueSnapshot.Options options) {
        if (e instanceof DataFileException d) {
            return new CliException(optionOf(d.file(), options) + ": " + d.getMessage(), d);
        }
        if (e instanceof IllegalArgumentException) {
            return new CliException(optionName(e.getMessage()), e);
        }
        if (e instanceof IOException) {
            return new CliException("cannot read the dataset " + options.metricsDir() + " (" + e + ")", 1, e);
        }
        throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
    }

    /** Which option chose {@code file}: --trace, --latency, or --dataset for the folder's own files. */
    private String optionOf(Path file, OnlineBoutiqueSnapshot.Options options) {
        if (file == null) {
            return "--dataset";
        }
        Path f = file.toAbsolutePath().normalize();
        if (options.traceFile() != null
                && f.equals(options.traceFile().toAbsolutePath().normalize())) {
            return "--trace";
        }
        if (options.latencyFile() != null
                && f.equals(options.latencyFile().toAbsolutePath().normalize())) {
            return "--latency";
        }
        if (f.startsWith(options.metricsDir().toAbsolutePath().normalize())) {
            return "--dataset";
        }
        return f.getFileName().toString().endsWith(".gz") ? "--latency" : "--trace";
    }

    /**
     * Builder messages name the record field ({@code "minute : ..."}); users know the option, written
     * as every other message writes it ({@code "--minute: ..."}).
     */
    static String optionName(String message) {
        List<String[]> names = List.of(
                new String[] {"replicasPerComponent", "--replicas"}, new String[] {"nodeSpeeds", "--node-speeds"},
                new String[] {"cpuCoresPerNode", "--node-cores"}, new String[] {"cpuLimitCores", "--cpu-limit"},
                new String[] {"sameNodeDelayMillis", "--same-node-delay-millis"}, new String[] {"regions", "--regions"},
                new String[] {"nodes", "--nodes"}, new String[] {"minute", "--minute"},
                new String[] {"entryComponent", "--entry"}, new String[] {"traceFile", "--trace"});
        for (String[] n : names) {
            if (message.startsWith(n[0])
                    && message.length() > n[0].length()
                    && (message.charAt(n[0].length()) == ' ' || message.charAt(n[0].length()) == '[')) {
                // "regions : x" and "regions[1] : x" read "--regions: x" and "--regions[1]: x".
                String rest = message.substring(n[0].length()).replaceFirst("^(\\[\\d+])? :", "$1:");
                return n[1] + rest;
            }
        }
        return message;
    }
}
