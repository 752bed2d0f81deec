package dev.tailor.cli;

import dev.tailor.sim.data.DataFileException;
import dev.tailor.sim.heart.OnlineBoutiqueSnapshot;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor heart snapshot onlineboutique}: a HEART snapshot from the public OnlineBoutique
 * dataset (TraStrainer, FSE'24) and AWS EC2 ping times, on heterogeneous nodes of your choosing.
 * The mapping is documented in {@link OnlineBoutiqueSnapshot} and docs/onlineboutique.md.
 */
@Command(
        name = "onlineboutique",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Builds a snapshot from the public OnlineBoutique dataset: per-pod CPU and request rates of one minute,"
                    + " the call mix of a Jaeger trace, and measured AWS EC2 ping times for the links, spread over"
                    + " heterogeneous nodes as you ask. Every assumption is printed on stderr (docs/onlineboutique.md).",
            "",
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart snapshot onlineboutique --out ob.json",
            "  tailor heart snapshot onlineboutique --nodes 5 --regions EU,EU,EU,US,US --out geo.json",
            "",
            "Data: TAILOR_DATA_DIR, or ../shared/data next to the checkout, or --dataset and --latency.",
        })
final class OnlineBoutiqueCommand implements Callable<Integer> {

    static final String METRICS = "microservices/trastrainer_onlineboutique/normal_2022-08-14";
    static final String LATENCY = "network_latency/aws_ec2_52node_pings/latency.csv.gz";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--dataset", paramLabel = "DIR",
            description = "Folder of <pod>_metric.csv and dependency.csv (default: <data>/" + METRICS + ").")
    Path dataset;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "Jaeger span CSV for the call mix, or 'none' for an equal split over callers"
                    + " (default: ../faulty_2022-08-22/trace_06_20.csv next to the dataset).")
    String trace;

    @Option(names = "--latency", paramLabel = "FILE",
            description = "AWS ping CSV (gzip) for link delays (default: <data>/" + LATENCY + ").")
    Path latency;

    @Option(names = "--replicas", paramLabel = "R", defaultValue = "3",
            description = "Replicas per component (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "5",
            description = "Nodes, named w1..wN; at most 18 per AWS region of --regions (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--node-speeds", paramLabel = "S", split = ",", defaultValue = "1.0,0.9,0.7,0.5,0.4",
            description = "Per-core speed factors, cycled over the nodes (default: the paper's ${DEFAULT-VALUE}).")
    List<Double> nodeSpeeds;

    @Option(names = "--node-cores", paramLabel = "CORES", defaultValue = "4",
            description = "Cores per node (default: ${DEFAULT-VALUE}).")
    double nodeCores;

    @Option(names = "--cpu-limit", paramLabel = "CORES",
            description = "CPU limit of every replica in cores (default: none).")
    Double cpuLimit;

    @Option(names = "--minute", paramLabel = "WHEN", defaultValue = "busiest",
            description = "Which one-minute sample: 'busiest' (largest frontend rate), an index from 0, or Unix"
                    + " seconds (default: ${DEFAULT-VALUE}).")
    String minute;

    @Option(names = "--regions", paramLabel = "R", split = ",", defaultValue = "EU",
            description = "AWS regions (EU, US, AP) cycled over the nodes; e.g. EU,EU,EU,US,US puts w4 and w5"
                    + " across the Atlantic (default: ${DEFAULT-VALUE}).")
    List<String> regions;

    @Option(names = "--same-node-delay-millis", paramLabel = "MS", defaultValue = "0.05",
            description = "One-way delay of a node to itself (default: ${DEFAULT-VALUE}).")
    double sameNodeDelayMillis;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the snapshot here (default: stdout).")
    Path out;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        Path metrics = dataset != null ? dataset : DataDir.require(METRICS, "--dataset");
        OnlineBoutiqueSnapshot.Options options;
        try {
            options = OnlineBoutiqueSnapshot.Options.defaults(metrics)
                    .withReplicasPerComponent(replicas)
                    .withNodes(nodes)
                    .withNodeSpeeds(nodeSpeeds)
                    .withCpuCoresPerNode(nodeCores)
                    .withCpuLimitCores(cpuLimit)
                    .withMinute(OnlineBoutiqueSnapshot.Minute.parse(minute))
                    .withRegions(regions)
                    .withSameNodeDelayMillis(sameNodeDelayMillis)
                    .withLatencyFile(latency != null ? latency
                            : dataset != null && Files.exists(metrics.resolve(OnlineBoutiqueSnapshot.DEFAULT_LATENCY))
                                    ? null : DataDir.require(LATENCY, "--latency"));
            if ("none".equalsIgnoreCase(trace)) {
                options = options.withoutTrace();
            } else if (trace != null) {
                options = options.withTraceFile(Path.of(trace));
            }
        } catch (IllegalArgumentException e) {
            throw new CliException(optionName(e.getMessage()));
        }

        OnlineBoutiqueSnapshot.Result result;
        try {
            result = OnlineBoutiqueSnapshot.build(options);
        } catch (DataFileException e) {
            throw new CliException(e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new CliException(optionName(e.getMessage()), e);
        } catch (IOException e) {
            throw new CliException("cannot read the dataset (" + e + ")", 1, e);
        }
        for (String note : result.notes()) {
            err.println("note: " + note);
        }
        if (out == null) {
            spec.commandLine().getOut().println(Json.write(result.snapshot()));
        } else {
            Json.writeAtomically(out, result.snapshot());
            err.printf("tailor: wrote %s: %d nodes, %d replicas, %d calls, %d delays%n", out,
                    result.snapshot().nodes().size(), result.snapshot().replicas().size(),
                    result.snapshot().calls().size(), result.snapshot().delays().size());
        }
        return 0;
    }

    /** Builder messages name the record field; users know the option. */
    private static String optionName(String message) {
        List<String[]> names = new ArrayList<>(List.of(
                new String[] {"replicasPerComponent", "--replicas"}, new String[] {"nodeSpeeds", "--node-speeds"},
                new String[] {"cpuCoresPerNode", "--node-cores"}, new String[] {"cpuLimitCores", "--cpu-limit"},
                new String[] {"sameNodeDelayMillis", "--same-node-delay-millis"}, new String[] {"regions", "--regions"},
                new String[] {"nodes", "--nodes"}, new String[] {"minute", "--minute"}));
        for (String[] n : names) {
            if (message.startsWith(n[0])) {
                return n[1] + message.substring(n[0].length());
            }
        }
        return message;
    }
}
