package dev.tailor.cli;

import dev.tailor.common.Problem;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.FieldProblem;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.InvalidSnapshotException;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import dev.tailor.heart.controller.IstioRules;
import dev.tailor.heart.controller.PlanJson;
import dev.tailor.heart.controller.PlanTable;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor heart plan}: one HEART round on a snapshot file. With {@code --state} consecutive
 * runs behave as consecutive rounds. Nothing is written and nothing printed when the input is bad;
 * the state is saved before the plan is printed, so a plan that was applied was also remembered.
 */
@Command(
        name = "plan",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        sortOptions = false,
        usageHelpWidth = 110,
        description = {
            "Plans one HEART round: ATPM shares per component, NTAM routes per call edge. Without --snapshot it"
                    + " plans the bundled example of the paper's setting (five heterogeneous workers, two of them"
                    + " behind slow links).",
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart plan --explain",
            "  tailor heart plan --snapshot cluster.json --state state.json --format istio | kubectl apply -f -",
            "  tailor heart snapshot dataset --out ob.json",
            "  tailor heart plan --snapshot ob.json --format json",
            "",
            "Snapshot format: docs/snapshot-format.md. Algorithm: docs/heart.md.",
            "Exit codes: 0 done, 1 failed, 2 bad input (nothing written).",
        })
final class PlanCommand implements Callable<Integer> {

    enum Format {
        table,
        json,
        istio
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ArgGroup(exclusive = true)
    Input input = new Input();

    static final class Input {
        @Option(names = "--snapshot", paramLabel = "FILE", description = "Cluster snapshot (JSON).")
        Path snapshot;

        @Option(
                names = "--example",
                paramLabel = "NAME",
                completionCandidates = Examples.Names.class,
                description = "A bundled example instead of a file: ${COMPLETION-CANDIDATES} (default: "
                        + Examples.DEFAULT + ").")
        String example;
    }

    @Option(
            names = "--state",
            paramLabel = "FILE",
            description = "ATPM state: read if it exists (else this is round 1), replaced after a successful plan."
                    + " It records the application's services; a state of another application is refused.")
    Path state;

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            defaultValue = "table",
            description = "Output: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    @Option(
            names = "--explain",
            description = "Say why: loads, EWMA weights, the 2-means split, each pruned link and"
                    + " max-flow check (as comments in istio output).")
    boolean explain;

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            defaultValue = "default",
            description = "istio: namespace of the rules and of the callee hosts (default: ${DEFAULT-VALUE}).")
    String namespace;

    @Option(
            names = "--selector-label",
            paramLabel = "KEY",
            defaultValue = "app",
            description = "istio: pod label whose value is the caller's name (default: ${DEFAULT-VALUE}).")
    String selectorLabel;

    @Option(
            names = "--ingress-gateway",
            paramLabel = "NAMESPACE/SELECTOR",
            description = "istio: the rules of entry points (callers without replicas, e.g. ingress) go to the"
                    + " gateway's namespace and select its pods by these labels, e.g."
                    + " istio-system/istio=ingressgateway (several: app=gw,istio=ingressgateway). Default: like any"
                    + " caller's, in --namespace selecting --selector-label=<entry point>.")
    String ingressGateway;

    @Option(
            names = "--cluster-domain",
            paramLabel = "DOMAIN",
            defaultValue = "cluster.local",
            description = "istio: cluster DNS domain of the callee hosts (default: ${DEFAULT-VALUE}).")
    String clusterDomain;

    @CommandLine.ArgGroup(exclusive = false, heading = "%nPlanner settings (defaults of docs/heart.md):%n")
    Tuning tuning = new Tuning();

    static final class Tuning {
        @Option(
                names = "--alpha-min",
                paramLabel = "A",
                defaultValue = "0.2",
                description = "Lower clamp of the adaptive EWMA weight (default: ${DEFAULT-VALUE}).")
        double alphaMin;

        @Option(
                names = "--alpha-max",
                paramLabel = "A",
                defaultValue = "0.8",
                description = "Upper clamp of the adaptive EWMA weight (default: ${DEFAULT-VALUE}). "
                        + "--alpha-min 1 --alpha-max 1 turns the trend off: only the latest measurement counts.")
        double alphaMax;

        @Option(
                names = "--tracking-smoothing",
                paramLabel = "B",
                defaultValue = "0.2",
                description = "Smoothing of the Trigg-Leach tracking signal (default: ${DEFAULT-VALUE}).")
        double trackingSmoothing;

        @Option(
                names = "--slow-link-filter",
                negatable = true,
                defaultValue = "false",
                fallbackValue = "true",
                description = "Prune slow links before the flow (default: off; on = the paper). It runs on a"
                        + " callee planned the paper's way: with --no-queue-aware-routing, or where the queue-aware"
                        + " plan falls back (--explain says where).")
        boolean slowLinkFilter;

        @Option(
                names = "--batch-removal-max-fraction",
                paramLabel = "F",
                defaultValue = "0.3",
                description = "Remove the slow cluster at once when it is at most this fraction of the links"
                        + " (default: ${DEFAULT-VALUE}).")
        double batchRemovalMaxFraction;

        @Option(
                names = "--slow-cluster-min-gap-millis",
                paramLabel = "MS",
                defaultValue = "0",
                description = "Prune only when the slow cluster is on average at least this much slower"
                        + " (default: ${DEFAULT-VALUE}, as in the paper).")
        double slowClusterMinGapMillis;

        @Option(
                names = "--unmeasured-link-penalty-millis",
                paramLabel = "MS",
                defaultValue = "1",
                description = "An unmeasured node pair counts as the largest measured delay plus this"
                        + " (default: ${DEFAULT-VALUE}).")
        double unmeasuredLinkPenaltyMillis;

        @Option(
                names = "--flow-units",
                paramLabel = "N",
                defaultValue = "1000000",
                description = "Integer units each edge's rate is quantised into (default: ${DEFAULT-VALUE}).")
        int flowUnits;

        @Option(
                names = "--outlier-filter",
                negatable = true,
                defaultValue = "true",
                fallbackValue = "true",
                description = "Feed the EWMA the median of a group's last three measurements (default: on;"
                        + " off = the paper).")
        boolean outlierFilter;

        @Option(
                names = "--idle-fit-rounds",
                paramLabel = "N",
                defaultValue = "10",
                description = "Measured rounds kept to fit CPU = idle + cost × rate and subtract the idle CPU"
                        + " (default: ${DEFAULT-VALUE}; 0 = the paper's ratio).")
        int idleFitRounds;

        @Option(
                names = "--idle-fit-min-rate-ratio",
                paramLabel = "R",
                defaultValue = "2",
                description = "Two rounds enter the idle fit when one served at least R times the other's requests"
                        + " (default: ${DEFAULT-VALUE}).")
        double idleFitMinRateRatio;

        @Option(
                names = "--idle-max-cpu-fraction",
                paramLabel = "F",
                defaultValue = "0.9",
                description = "At most this fraction of a round's CPU is taken as idle (default: ${DEFAULT-VALUE}).")
        double idleMaxCpuFraction;

        @Option(
                names = "--min-share-of-equal-split",
                paramLabel = "F",
                defaultValue = "0.05",
                description = "Share floor as a fraction of an equal split per replica, capped by capacity"
                        + " (default: ${DEFAULT-VALUE}; 0 = the paper).")
        double minShareOfEqualSplit;

        @Option(
                names = "--spread-scale",
                paramLabel = "S",
                description = "Entropic transport in NTAM: the temperature is S times the callee's expected sojourn"
                        + " (default: sqrt(6) / pi, about 0.78; 0 = min-cost flow, the paper).")
        Double spreadScale;

        @Option(
                names = "--latency-optimal-shares",
                negatable = true,
                defaultValue = "false",
                fallbackValue = "true",
                description = "ATPM splits demand by the square-root rule of latency-optimal routing (default: off ="
                        + " in proportion to capacity, as in the paper).")
        boolean latencyOptimalShares;

        @Option(
                names = "--queue-aware-routing",
                negatable = true,
                defaultValue = "true",
                fallbackValue = "true",
                description = "Plan all calls into a callee at once with a queueing cost per group (default: on;"
                        + " off = every edge meets the ATPM shares, the paper).")
        boolean queueAwareRouting;

        @Option(
                names = "--load-headroom",
                paramLabel = "FRACTION",
                description = "Plan the queue-aware split for (1 + FRACTION) times the measured calls, so it stays"
                        + " within capacity if the load grows that much before the next round (default: 0.5;"
                        + " 0 = the measured load only).")
        Double loadHeadroom;

        /** HeartConfig's field names, as the options users typed. */
        private static final Map<String, String> OPTION_OF = Map.ofEntries(
                Map.entry("alphaMin", "--alpha-min"),
                Map.entry("alphaMax", "--alpha-max"),
                Map.entry("trackingSmoothing", "--tracking-smoothing"),
                Map.entry("batchRemovalMaxFraction", "--batch-removal-max-fraction"),
                Map.entry("slowClusterMinGapMillis", "--slow-cluster-min-gap-millis"),
                Map.entry("unmeasuredLinkPenaltyMillis", "--unmeasured-link-penalty-millis"),
                Map.entry("flowUnits", "--flow-units"),
                Map.entry("idleFitRounds", "--idle-fit-rounds"),
                Map.entry("idleFitMinRateRatio", "--idle-fit-min-rate-ratio"),
                Map.entry("idleMaxCpuFraction", "--idle-max-cpu-fraction"),
                Map.entry("minShareOfEqualSplit", "--min-share-of-equal-split"),
                Map.entry("spreadScale", "--spread-scale"),
                Map.entry("loadHeadroom", "--load-headroom"));

        HeartConfig config() {
            try {
                return HeartConfig.DEFAULTS.toBuilder()
                        .alphaMin(alphaMin)
                        .alphaMax(alphaMax)
                        .trackingSmoothing(trackingSmoothing)
                        .slowLinkFilter(slowLinkFilter)
                        .batchRemovalMaxFraction(batchRemovalMaxFraction)
                        .slowClusterMinGapMillis(slowClusterMinGapMillis)
                        .unmeasuredLinkPenaltyMillis(unmeasuredLinkPenaltyMillis)
                        .flowUnits(flowUnits)
                        .outlierFilter(outlierFilter)
                        .idleFitRounds(idleFitRounds)
                        .idleFitMinRateRatio(idleFitMinRateRatio)
                        .idleMaxCpuFraction(idleMaxCpuFraction)
                        .minShareOfEqualSplit(minShareOfEqualSplit)
                        .spreadScale(spreadScale == null ? HeartConfig.DEFAULTS.spreadScale() : spreadScale)
                        .latencyOptimalShares(latencyOptimalShares)
                        .queueAwareRouting(queueAwareRouting)
                        .loadHeadroom(loadHeadroom == null ? HeartConfig.DEFAULTS.loadHeadroom() : loadHeadroom)
                        .build();
            } catch (IllegalArgumentException e) {
                String message = e.getMessage();
                for (Map.Entry<String, String> name : OPTION_OF.entrySet()) {
                    if (message.startsWith(name.getKey() + " ")) {
                        message = name.getValue()
                                + message.substring(name.getKey().length()).replace(" : ", ": ");
                        break;
                    }
                }
                throw new CliException(message.replace("alphaMax, ", "--alpha-max, "));
            }
        }
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        HeartConfig config = tuning.config();
        IstioRules.Options istio;
        try {
            istio = format == Format.istio
                    ? IstioRules.Options.checked(namespace, selectorLabel, clusterDomain, ingressGateway)
                    : null;
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage(), e);
        }
        if (format != Format.istio) {
            // The rules' options say nothing to a table or JSON: refused, not silently dropped.
            for (String option : List.of("--namespace", "--selector-label", "--cluster-domain", "--ingress-gateway")) {
                if (spec.commandLine().getParseResult().hasMatchedOption(option)) {
                    throw new CliException(option + ": only with --format istio");
                }
            }
        }
        if (tuning.loadHeadroom != null && !config.queueAwareRouting()) {
            err.println("tailor: note: --load-headroom has no effect with --no-queue-aware-routing (the headroom is"
                    + " the queue-aware split's)");
        } else if (tuning.loadHeadroom != null && config.spreadScale() == 0) {
            err.println("tailor: note: --load-headroom has no effect with --spread-scale 0 (queue-aware routing needs"
                    + " the spread; the headroom is the queue-aware split's)");
        }

        String source;
        Snapshot snapshot;
        Json.Document<Snapshot> document = null;
        if (input.snapshot != null) {
            source = input.snapshot.toString();
            // Every problem at once: unknown fields with the others, each at its line, numbers as written.
            document = read(
                    input.snapshot,
                    Snapshot.class,
                    "snapshot",
                    FileKinds.Kind.SNAPSHOT,
                    SNAPSHOT_FIELDS,
                    SnapshotValidator::check);
            snapshot = document.value();
        } else {
            String example = input.example == null ? Examples.DEFAULT : input.example;
            source = "bundled example " + example;
            if (input.example == null) {
                err.println("tailor: no --snapshot given, planning the " + source + ": " + Examples.describe(example));
            }
            snapshot = Examples.load(example);
        }

        AtpmState previous = AtpmState.EMPTY;
        boolean firstRound = false;
        if (state != null && Files.exists(state)) {
            previous = read(
                            state,
                            AtpmState.class,
                            "state",
                            FileKinds.Kind.STATE,
                            "the state file heart plan --state writes",
                            AtpmState::fieldProblems)
                    .value();
        } else if (state != null) {
            firstRound = true;
        }

        Plan plan;
        try {
            plan = new Heart(config).plan(snapshot, previous);
        } catch (InvalidSnapshotException e) {
            // Each problem at its line in the file, its number as written (-4, not -4.0).
            throw new CliException(
                    document != null ? document.report(e.fieldProblems()) : Problem.report(source, e.problems()));
        }
        // The snapshot is valid here, so its services are what the plan records in the state.
        SortedSet<String> gone = new TreeSet<>();
        if (state != null && !firstRound) {
            checkWrittenFor(previous, Heart.services(snapshot), source, err);
            gone.addAll(previous.groups().keySet());
            gone.removeAll(Heart.services(snapshot));
        }

        // Render fully before writing anything: a rendering error must not leave a saved state
        // behind, and a failed state write must not leave a printed (and maybe applied) plan.
        StringWriter rendered = new StringWriter();
        PrintWriter buffer = new PrintWriter(rendered);
        switch (format) {
            case table -> PlanTable.print(plan, source, explain, buffer);
            case json -> buffer.println(Json.write(PlanJson.of(plan, source, explain)));
            case istio -> {
                try {
                    IstioRules.print(plan, snapshot, istio, explain, buffer);
                } catch (IllegalArgumentException e) {
                    throw new CliException(e.getMessage(), e);
                }
            }
        }
        buffer.flush();
        if (state != null) {
            Json.writeAtomically("--state", state, plan.state());
            if (firstRound) {
                err.println("tailor: state " + state + " did not exist: this was round 1, state saved");
            }
            if (!gone.isEmpty()) {
                // Not a reason to refuse (a component may be scaled away for a while), but not silent either.
                err.println("tailor: note: state " + state + " has estimates for "
                        + (gone.size() == 1 ? "component " : "components ")
                        + names(gone) + ", which " + source + " does not have; the state saved now leaves "
                        + (gone.size() == 1 ? "it" : "them") + " out");
            }
        }
        if (format == Format.istio) {
            for (String entry :
                    IstioRules.entryPointsWithoutGateway(plan.allocation().routes(), istio)) {
                err.println("tailor: the rules of entry point " + entry + " select pods labelled " + selectorLabel + "="
                        + entry + " in namespace " + namespace + "; to aim them at your ingress gateway, add"
                        + " --ingress-gateway NAMESPACE/SELECTOR (e.g. istio-system/istio=ingressgateway)");
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(rendered);
        out.flush();
        return 0;
    }

    /**
     * Refuses a state written for another application: its services and this snapshot's differ both ways (a
     * service added or gone is the same application growing or shrinking). A state that does not name its
     * services (written before states recorded them) is taken for this application's, with a warning; the
     * state saved after this round names them.
     */
    private void checkWrittenFor(AtpmState previous, SortedSet<String> services, String source, PrintWriter err) {
        if (previous.services() == null) {
            if (!previous.groups().isEmpty()) {
                err.println("tailor: warning: state " + state + " does not say which application it was written for"
                        + " (written by an older tailor): taking it for " + source + "'s; the state saved now"
                        + " records its services");
            }
            return;
        }
        if (previous.writtenForAnother(services)) {
            throw new CliException("--state " + state + ": written for another application (round "
                    + previous.rounds() + " of services " + names(previous.services()) + "), this run plans "
                    + source + " (services " + names(services) + "); use --state with another file for this"
                    + " application, or delete " + state + " to start it over at round 1");
        }
    }

    /** Up to eight names, then how many more. */
    private static String names(Collection<String> names) {
        List<String> sorted = new TreeSet<>(names).stream().toList();
        int shown = Math.min(8, sorted.size());
        return String.join(", ", sorted.subList(0, shown))
                + (sorted.size() > shown ? " and " + (sorted.size() - shown) + " more" : "");
    }

    /** What --snapshot takes, in words. */
    private static final String SNAPSHOT_FIELDS = "a snapshot: windowSeconds, nodes, replicas, calls, delays";

    /**
     * {@link Json#read(Path, Class, String, Function)}; a file it refuses that looks like another
     * kind of file (a state file given as the snapshot) is said to be one, with the option that takes it, instead
     * of its fields.
     */
    private static <T> Json.Document<T> read(
            Path file,
            Class<T> type,
            String what,
            FileKinds.Kind kind,
            String expected,
            Function<T, List<FieldProblem>> check) {
        try {
            return Json.read(file, type, what, check);
        } catch (CliException e) {
            String wrong = Files.isRegularFile(file) ? FileKinds.wrongKind(file, kind, expected) : null;
            if (wrong == null) {
                throw e;
            }
            throw new CliException(what + " " + file + ": " + wrong, e);
        }
    }
}
