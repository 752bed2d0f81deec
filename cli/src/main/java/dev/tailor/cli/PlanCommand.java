package dev.tailor.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.InvalidSnapshotException;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Snapshot;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor heart plan}: one HEART round on a snapshot file. With {@code --state} consecutive
 * runs behave as consecutive rounds. Nothing is written when the input is bad.
 */
@Command(
        name = "plan",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Plans one HEART round: ATPM shares per component, NTAM routes per call edge.",
            "Without --snapshot, plans the bundled example of the paper's setting (five heterogeneous",
            "workers, two of them behind slow links).",
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart plan --explain",
            "  tailor heart plan --snapshot cluster.json --state heart-state.json --format istio | kubectl apply -f -",
            "  tailor heart snapshot onlineboutique --out ob.json && tailor heart plan --snapshot ob.json",
            "",
            "Snapshot format: docs/snapshot-format.md. Exit codes: 0 done, 1 failed, 2 bad input.",
        })
final class PlanCommand implements Callable<Integer> {

    enum Format { table, json, istio }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ArgGroup(exclusive = true)
    Input input = new Input();

    static final class Input {
        @Option(names = "--snapshot", paramLabel = "FILE", description = "Cluster snapshot (JSON).")
        Path snapshot;

        @Option(names = "--example", paramLabel = "NAME", completionCandidates = Examples.Names.class,
                description = "A bundled example instead of a file: ${COMPLETION-CANDIDATES} (default: "
                        + Examples.DEFAULT + ").")
        String example;
    }

    @Option(names = "--state", paramLabel = "FILE",
            description = "ATPM state: read if it exists (else this is round 1), written after a successful plan.")
    Path state;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "Output: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    @Option(names = "--explain", description = "Say why: loads, EWMA weights, the 2-means split, each pruned link and"
            + " max-flow check.")
    boolean explain;

    @Option(names = "--namespace", paramLabel = "NS", defaultValue = "default",
            description = "Istio output: namespace of the rules and the callee hosts (default: ${DEFAULT-VALUE}).")
    String namespace;

    @Option(names = "--selector-label", paramLabel = "KEY", defaultValue = "app",
            description = "Istio output: pod label whose value is the caller's name (default: ${DEFAULT-VALUE}).")
    String selectorLabel;

    @Option(names = "--cluster-domain", paramLabel = "DOMAIN", defaultValue = "cluster.local",
            description = "Istio output: cluster DNS domain of the callee hosts (default: ${DEFAULT-VALUE}).")
    String clusterDomain;

    @CommandLine.ArgGroup(exclusive = false, heading = "%nPlanner settings (DESIGN.md defaults):%n")
    Tuning tuning = new Tuning();

    static final class Tuning {
        @Option(names = "--alpha-min", paramLabel = "A", defaultValue = "0.2",
                description = "Lower clamp of the adaptive EWMA weight (default: ${DEFAULT-VALUE}).")
        double alphaMin;

        @Option(names = "--alpha-max", paramLabel = "A", defaultValue = "0.8",
                description = "Upper clamp of the adaptive EWMA weight; 1 and 1 turn the trend off (default: ${DEFAULT-VALUE}).")
        double alphaMax;

        @Option(names = "--tracking-smoothing", paramLabel = "B", defaultValue = "0.2",
                description = "Smoothing of the Trigg-Leach tracking signal (default: ${DEFAULT-VALUE}).")
        double trackingSmoothing;

        @Option(names = "--slow-link-filter", negatable = true, defaultValue = "true", fallbackValue = "true",
                description = "Prune slow links before min-cost flow (default: on).")
        boolean slowLinkFilter;

        @Option(names = "--batch-removal-max-fraction", paramLabel = "F", defaultValue = "0.3",
                description = "Remove the slow cluster at once when it is at most this fraction of the links (default: ${DEFAULT-VALUE}).")
        double batchRemovalMaxFraction;

        @Option(names = "--flow-units", paramLabel = "N", defaultValue = "1000000",
                description = "Integer units each edge's rate is quantised into (default: ${DEFAULT-VALUE}).")
        int flowUnits;

        HeartConfig config() {
            try {
                return HeartConfig.DEFAULTS
                        .withAlphaRange(alphaMin, alphaMax)
                        .withTrackingSmoothing(trackingSmoothing)
                        .withSlowLinkFilter(slowLinkFilter)
                        .withBatchRemovalMaxFraction(batchRemovalMaxFraction)
                        .withFlowUnits(flowUnits);
            } catch (IllegalArgumentException e) {
                throw new CliException("planner setting " + e.getMessage());
            }
        }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        HeartConfig config = tuning.config();

        String source;
        Snapshot snapshot;
        if (input.snapshot != null) {
            source = input.snapshot.toString();
            snapshot = Json.read(input.snapshot, Snapshot.class, "snapshot");
        } else {
            String example = input.example == null ? Examples.DEFAULT : input.example;
            source = "bundled example " + example;
            if (input.example == null) {
                err.println("tailor: no --snapshot given, planning the " + source + ": " + Examples.describe(example));
            }
            snapshot = Examples.load(example);
        }

        AtpmState previous = AtpmState.EMPTY;
        if (state != null && Files.exists(state)) {
            previous = Json.read(state, AtpmState.class, "state");
            List<String> problems = previous.problems();
            if (!problems.isEmpty()) {
                throw new CliException("state " + state + ": " + String.join("; ", problems));
            }
        } else if (state != null) {
            err.println("tailor: state " + state + " does not exist yet: this is round 1");
        }

        Plan plan;
        try {
            plan = new Heart(config).plan(snapshot, previous);
        } catch (InvalidSnapshotException e) {
            throw new CliException("snapshot " + source + " is invalid, nothing was written:\n  "
                    + String.join("\n  ", e.problems()));
        }

        switch (format) {
            case table -> PlanTable.print(plan, source, explain, out);
            case json -> out.println(Json.write(PlanJson.of(plan, source, explain)));
            case istio -> printIstio(plan, snapshot, out);
        }
        out.flush();
        if (state != null) {
            Json.writeAtomically(state, plan.state());
        }
        return 0;
    }

    private void printIstio(Plan plan, Snapshot snapshot, PrintWriter out) {
        List<ObjectNode> rules = IstioRules.of(plan.allocation().routes(), snapshot,
                new IstioRules.Options(namespace, selectorLabel, clusterDomain));
        YAMLMapper yaml = new YAMLMapper(new YAMLFactory()
                .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));
        out.println("# Generated by tailor heart plan (round " + plan.state().rounds() + "). One DestinationRule per"
                + " (caller, callee).");
        for (int i = 0; i < rules.size(); i++) {
            if (i > 0) {
                out.println("---");
            }
            try {
                out.print(yaml.writeValueAsString(rules.get(i)));
            } catch (IOException e) {
                throw new IllegalStateException("cannot write YAML", e);
            }
        }
    }
}
