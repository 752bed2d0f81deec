package dev.tailor.cli;

import dev.tailor.common.Numbers;
import dev.tailor.lab.ClusterRuns;
import dev.tailor.lab.StorageOutput;
import dev.tailor.lab.StorageRuns;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageScenario;
import dev.tailor.sim.storage.StorageScenarios;
import dev.tailor.sim.storage.StorageSimulation;
import dev.tailor.sim.storage.StorageSweep;
import dev.tailor.sim.storage.SweepSummary;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor storage simulate}: segment admission against the baselines, in the storage simulator. */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Runs the storage simulator: tenants' block requests (real trace excerpts or synthetic, with bursts)"
                    + " through one or more proxies to one shared backend calibrated from the Tencent replay, once per"
                    + " admission policy, and reports steady and hot tenants' latency percentiles, throughput,"
                    + " backend utilisation and the capacity left unused while work waited.",
            "",
            "Policies: fifo (no admission), static-cap (per-tenant cap at its commitment), token-bucket (one shared"
                    + " bucket), mclock (dmClock-style per segment), mclock-per-client (one client per tenant),"
                    + " segment-admission (ours; with several proxies each adapts its budget from the backend's"
                    + " latency), segment-admission-paper (the paper's mechanism as first built),"
                    + " fair-dispatch (ours: fair queueing over tenants at the backend's door, no budget); ablations"
                    + " of ours no-reserve,"
                    + " no-borrow, no-repay, no-lending (the strict reserve: never lent to hot segments),"
                    + " no-baseline-guarantee, paced-release, fixed-reserve, round-robin-hot, round-robin-within-disk,"
                    + " bounded-overdraft, virtual-clock-hot, fifo-deadline, late-first-hot, late-first-clock-hot,"
                    + " bounded-lag-hot, unscaled-baselines, tick-refilled-baselines, no-fair-dispatch,"
                    + " no-oversize-advance, overlapping-advances, credit-gated-advances, finish-tag-door (the door"
                    + " alone, ordered by finish tag), start-tag-door-admission (the door behind admission ordered by"
                    + " start tag), spare-exchange (proxies pass on"
                    + " unused fixed shares), fixed-shares (each proxy budgets a fixed share),"
                    + " measured-base-latency (proxies adapt from the least latency seen, not the known service time),"
                    + " no-disk-order (a request within its disk's baseline goes at once, ahead of its disk's waiting ones).",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor storage simulate --scenario burst-microbench --policies fifo,segment-admission",
            "  tailor storage simulate --scenario robustness --seeds 1,2,3 \\",
            "      --policies fifo,mclock,segment-admission-paper,segment-admission   # the robustness sweep",
            "  tailor storage simulate --scenario robustness-long-bursts --seed 2 --per-tenant   # one cell of it",
            "",
            "Scenarios: burst-microbench, underload, big-requests, mix50, mix-many (synthetic), deployed-like and"
                    + " robustness[-<mix>] (need the shared data; TAILOR_DATA_DIR), or a YAML file"
                    + " (docs/storage-simulator.md).",
            "Exit codes: 0 done, 1 failed while running, 2 bad input, 130/143 stopped by Ctrl-C/SIGTERM."
        })
final class StorageSimulateCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--scenario",
            paramLabel = "NAME|FILE",
            defaultValue = "burst-microbench",
            description = "Bundled scenario (burst-microbench, deployed-like, underload; big-requests, mix50 and"
                    + " mix-many, on several proxies; robustness, a family of tenant mixes), one mix of the family alone, robustness-<mix> (<mix>: msn-small, mild, one-whale,"
                    + " long-bursts, spikes, many-small, tencent-heavy, busy, four-proxies; the name the results give it), or a YAML"
                    + " scenario file (run whole). Default: ${DEFAULT-VALUE}.")
    String scenario;

    @Option(
            names = "--policies",
            paramLabel = "P",
            split = ",",
            splitSynopsisLabel = ",",
            description = "Policies to compare. Default: every policy and ablation above.")
    List<String> policies;

    @CommandLine.Mixin
    SharedOptions.SeedOption seedOption;

    @Option(
            names = "--seeds",
            paramLabel = "N",
            split = ",",
            splitSynopsisLabel = ",",
            description = "Run every scenario variant once per seed and print the sweep's summary (per policy, worst"
                    + " and median of steady tenants' P99.999 against fifo and mclock). Not with --seed.")
    List<Long> seeds;

    @Option(
            names = "--warmup-seconds",
            paramLabel = "S",
            description = "Simulated warm-up, not measured. Default: the" + " scenario's.")
    Double warmupSeconds;

    @Option(
            names = "--duration-seconds",
            paramLabel = "S",
            description = "Simulated time whose arrivals are measured." + " Default: the scenario's.")
    Double durationSeconds;

    @Option(
            names = "--per-tenant",
            description = "Also print, per scenario variant, each tenant's class, baseline, offered rate, share within"
                    + " baseline and latency percentiles under each policy (JSON and the report always have them).")
    boolean perTenant;

    @CommandLine.Mixin
    SharedOptions.FormatOption format;

    @CommandLine.Mixin
    SharedOptions.ReportOption reportOption;

    @CommandLine.Mixin
    SharedOptions.ThreadsOption threads;

    /** Where a relative --scenario file is read from: the working directory. */
    Path workingDir = Path.of("");

    /** The shared data folder's files, as {@link DataDir} finds them. */
    static final java.util.function.Function<String, Path> DATA_DIR = relative -> DataDir.require(relative, null);

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<String> policyNames = policies(policies);
        int workers = threads.workers();
        Long seed = seedOption.seed;
        if (spec.commandLine().getParseResult().hasMatchedOption("--scenario")) {
            String note = BundledOrFile.note("--scenario", scenario, StorageScenarios.isBundled(scenario), workingDir);
            if (note != null) {
                err.println(note);
            }
        }
        StorageScenarios.Loaded base = StorageRuns.load(scenario, DATA_DIR);
        if (seeds != null && seed != null) {
            throw new CliException(
                    "--seeds: " + seeds.stream().map(String::valueOf).collect(Collectors.joining(",")) + " with --seed "
                            + seed + " (expected: one of them)");
        }
        // A seed given twice is run once, as a policy named twice is.
        List<Long> seedList = seeds == null
                ? java.util.Collections.singletonList(seed)
                : List.copyOf(new java.util.LinkedHashSet<>(seeds));
        StorageRuns.Sweep planned =
                StorageRuns.sweep(base, seedList, warmupSeconds, durationSeconds, policyNames, DATA_DIR);
        StorageScenario variant = planned.variant();
        List<StorageSweep.Run> runs = planned.runs();
        Path createdFrom = ClusterRuns.Stopping.firstMissing(reportOption.report);
        Path report = reportOption.checked();
        List<String> setupNotes = StorageRuns.notes(
                planned.setups(),
                runs.stream().map(StorageSweep.Run::policy).distinct().toList());
        setupNotes.forEach(note -> err.println("note: " + note));
        workers = Math.min(workers, runs.size()); // a run is one thread's work
        // A stop (Ctrl-C, SIGTERM) says how far the command got and removes the report folder it created; the
        // results go out whole or not at all, and the report's pages together.
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(err, runs.size(), report, createdFrom)) {
            err.println("tailor: simulating " + runs.size() + " run" + (runs.size() == 1 ? "" : "s") + " of "
                    + variant.name() + " (" + Numbers.written(variant.warmupSeconds()) + " s warm-up + "
                    + StorageRuns.measured(runs) + ") on " + workers + " thread"
                    + (workers == 1 ? "" : "s"));
            List<StorageRunResult> results = StorageRuns.execute(runs, workers, err, stopping);
            stopping.during("printing its results");
            SweepSummary summary = SweepSummary.of(results);
            boolean sweep = summary.cells() > 1;
            StringWriter text = new StringWriter();
            PrintWriter printed = new PrintWriter(text);
            if (format.json()) {
                // Results first, then the summary, in every run: a LinkedHashMap keeps the order (Map.of does not).
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("results", results);
                if (sweep) {
                    json.put("summary", summary);
                }
                printed.println(Json.write(json));
            } else {
                StorageOutput.table(printed, results, perTenant);
                printed.println();
                if (sweep) {
                    StorageOutput.summary(printed, summary);
                    printed.println();
                }
                printed.println(StorageOutput.speed(results));
            }
            printed.flush();
            if (!stopping.publish("the results printed", () -> {
                out.print(text);
                out.flush();
            })) {
                return 1; // the stop said so
            }
            List<String> warnings = StorageOutput.warnings(results);
            warnings.forEach(w -> err.println("tailor: warning: " + w));
            if (report != null) {
                stopping.during("writing the report");
                // The report says what the command warned of, beside the setup's notes.
                List<String> notes = new ArrayList<>(setupNotes);
                warnings.forEach(w -> notes.add("warning: " + w));
                Path file = stopping.writeReport(
                        report,
                        pages -> StorageRuns.writeReport(
                                pages,
                                "Tailor storage simulation: " + variant.name(),
                                List.of(variant.description()),
                                notes,
                                results));
                if (file != null) {
                    err.println("tailor: report written to " + file);
                }
            }
        }
        return 0;
    }

    /** The policy list, checked; a {@link CliException} naming every unknown one. */
    static List<String> policies(List<String> policies) {
        return policies == null
                ? StorageSimulation.policyNames()
                : ClusterRuns.checkNames("--policies", policies, StorageSimulation.policyNames());
    }
}
