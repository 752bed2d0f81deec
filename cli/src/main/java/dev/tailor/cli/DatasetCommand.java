package dev.tailor.cli;

import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor heart snapshot dataset} (also {@code onlineboutique}): a HEART snapshot from an
 * application's data in the TraStrainer layout (by default the public OnlineBoutique dataset,
 * TraStrainer, FSE'24) and AWS EC2 ping times, on heterogeneous nodes of your choosing. The mapping
 * is documented in {@link OnlineBoutiqueSnapshot}, docs/onlineboutique.md and docs/datasets.md.
 */
@Command(
        name = "dataset",
        aliases = "onlineboutique",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Builds a snapshot from an application's data: per-pod CPU and request rates of one sample, the call"
                    + " graph, the call mix of a Jaeger trace, and measured AWS EC2 ping times for the links, spread"
                    + " over heterogeneous nodes as you ask. --dataset takes any folder in the TraStrainer layout"
                    + " (docs/datasets.md); the default is the bundled OnlineBoutique day. The entry component is"
                    + " found from the trace's root spans unless --entry names it. Every assumption is printed on"
                    + " stderr as a note.",
            "",
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart snapshot dataset --out ob.json",
            "  tailor heart snapshot dataset --nodes 5 --regions EU,EU,EU,US,US --out geo.json",
            "  tailor heart snapshot dataset --dataset my-app/ --entry web-gateway --out my-app.json",
            "",
            "Data: TAILOR_DATA_DIR, or ../shared/data next to the checkout, or --dataset and --latency.",
            "Exit codes: 0 written, 1 the file system failed, 2 bad input (the message names the option or field).",
        })
final class DatasetCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    DatasetOptions data;

    @Option(
            names = "--replicas",
            paramLabel = "R",
            defaultValue = "3",
            description = "Replicas per component (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(
            names = "--nodes",
            paramLabel = "N",
            defaultValue = "5",
            description = "Nodes, named w1..wN; per region of --regions at most the AWS nodes the ping data has"
                    + " there (the public data: 18 in EU, 17 in US and in AP) (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(
            names = "--node-speeds",
            paramLabel = "S",
            split = ",",
            defaultValue = "1.0,0.9,0.7,0.5,0.4",
            description = "Per-core speed factors, cycled over the nodes (default: the paper's ${DEFAULT-VALUE}).")
    List<Double> nodeSpeeds;

    @Option(
            names = "--node-cores",
            paramLabel = "CORES",
            defaultValue = "4",
            description = "Cores per node (default: ${DEFAULT-VALUE}).")
    double nodeCores;

    @Option(
            names = "--cpu-limit",
            paramLabel = "CORES",
            description = "CPU limit of every replica in cores (default: none).")
    Double cpuLimit;

    @Option(
            names = "--minute",
            paramLabel = "WHEN",
            defaultValue = "busiest",
            description = "Which sample: 'busiest' (largest request rate of the entry component), an index from 0,"
                    + " or Unix seconds (default: ${DEFAULT-VALUE}).")
    String minute;

    @Option(
            names = "--regions",
            paramLabel = "R",
            split = ",",
            defaultValue = "EU",
            description = "AWS regions (EU, US, AP) cycled over the nodes; e.g. EU,EU,EU,US,US puts w4 and w5"
                    + " across the Atlantic (default: ${DEFAULT-VALUE}).")
    List<String> regions;

    @Option(
            names = "--same-node-delay-millis",
            paramLabel = "MS",
            defaultValue = "0.05",
            description = "One-way delay of a node to itself (default: ${DEFAULT-VALUE}).")
    double sameNodeDelayMillis;

    @Option(
            names = "--out",
            paramLabel = "FILE",
            description = "Write the snapshot here, in an existing folder, replacing the file if there is one; checked"
                    + " before the data is read (default: stdout).")
    Path out;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        if (out != null) {
            // Up front: building reads the whole dataset first.
            Json.checkWritable("--out", out);
        }
        OnlineBoutiqueSnapshot.Options options = data.options();
        try {
            options = options.toBuilder()
                    .replicasPerComponent(replicas)
                    .nodes(nodes)
                    .nodeSpeeds(nodeSpeeds)
                    .cpuCoresPerNode(nodeCores)
                    .cpuLimitCores(cpuLimit)
                    .minute(OnlineBoutiqueSnapshot.Minute.parse(minute))
                    .regions(regions)
                    .sameNodeDelayMillis(sameNodeDelayMillis)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new CliException(DatasetOptions.optionName(e.getMessage()), e);
        }

        OnlineBoutiqueSnapshot.Result result;
        try {
            result = OnlineBoutiqueSnapshot.build(options);
        } catch (IllegalArgumentException | IOException e) {
            throw data.error(e, options);
        }
        for (String note : result.notes()) {
            err.println("note: " + note);
        }
        if (out == null) {
            spec.commandLine().getOut().println(Json.write(result.snapshot()));
        } else {
            Json.writeAtomically("--out", out, result.snapshot());
            err.printf(
                    "tailor: wrote %s: %d nodes, %d replicas, %d calls, %d delays%n",
                    out,
                    result.snapshot().nodes().size(),
                    result.snapshot().replicas().size(),
                    result.snapshot().calls().size(),
                    result.snapshot().delays().size());
        }
        return 0;
    }
}
