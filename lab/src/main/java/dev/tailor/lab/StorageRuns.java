package dev.tailor.lab;

import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.lab.report.StorageReport;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageScenario;
import dev.tailor.sim.storage.StorageScenarios;
import dev.tailor.sim.storage.StorageSetup;
import dev.tailor.sim.storage.StorageSweep;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The storage simulator's runs as the commands and the demo make them: a scenario loaded, varied and
 * set up with errors named by the options that caused them, a sweep run with progress on standard
 * error, and the HTML report. Every failure is a {@link LabException}.
 */
public final class StorageRuns {

    private StorageRuns() {}

    /**
     * A bundled scenario ({@link StorageScenarios#BUNDLED}), one member of a bundled family
     * ({@code robustness-long-bursts}) or a YAML file, with where its fields are, so that
     * {@link #sweep} tells the problems it finds building it at their lines too.
     *
     * @throws LabException (exit 2) naming {@code --scenario} for an unknown name or member, or every problem of the
     *     file
     */
    public static StorageScenarios.Loaded load(String nameOrFile) {
        return load(nameOrFile, null);
    }

    /**
     * {@link #load(String)}, and whether the data files it names are there, by {@code dataDir} (null: not looked
     * at), told with the file's other problems.
     *
     * @param dataDir resolves a path relative to the shared data folder, or throws saying where it looked
     * @throws LabException (exit 2) naming {@code --scenario} for an unknown name, or every problem of the file
     */
    public static StorageScenarios.Loaded load(String nameOrFile, Function<String, Path> dataDir) {
        if (nameOrFile.isBlank()) {
            // Path.of("") is the working directory, which exists: it would be told as a directory.
            throw new LabException("--scenario: \"" + nameOrFile + "\" (expected: one of " + StorageScenarios.names()
                    + ", or a YAML scenario file)");
        }
        boolean member = StorageScenarios.family(nameOrFile) != null;
        if (!StorageScenarios.BUNDLED.contains(nameOrFile) && !member && !Files.exists(Path.of(nameOrFile))) {
            throw new LabException("--scenario: " + nameOrFile + ": no such scenario or file (expected: one of "
                    + StorageScenarios.names() + ", or a YAML scenario file)");
        }
        try {
            return StorageScenarios.read(nameOrFile, dataDir == null ? null : dataDir::apply);
        } catch (ScenarioException e) {
            if (member && e.getMessage().startsWith(nameOrFile + ": no mix ")) {
                throw new LabException("--scenario: " + e.getMessage());
            }
            throw new LabException("scenario " + e.getMessage());
        }
    }

    /**
     * {@code base} with the run's options ({@code null}: the scenario's), checked.
     *
     * @throws LabException (exit 2) with every problem, named by its option ({@code --warmup-seconds})
     */
    public static StorageScenario variant(
            StorageScenario base, Long seed, Double warmupSeconds, Double durationSeconds) {
        StorageScenario.Builder builder = base.toBuilder();
        if (seed != null) {
            builder.seed(seed);
        }
        if (warmupSeconds != null) {
            builder.warmupSeconds(warmupSeconds);
        }
        StorageScenario variant = builder.build();
        return checked(durationSeconds == null ? variant : variant.withDuration(durationSeconds));
    }

    /**
     * {@code scenario}, checked.
     *
     * @throws LabException (exit 2) with every problem, named by its option ({@code --warmup-seconds})
     */
    public static StorageScenario checked(StorageScenario variant) {
        List<Problem> problems = variant.problems();
        if (!problems.isEmpty()) {
            throw new LabException(
                    Problem.join(problems.stream().map(ClusterRuns::asOption).toList()));
        }
        return variant;
    }

    /**
     * Reads the scenario's data and fits its backend.
     *
     * @param dataDir resolves a path relative to the shared data folder, or throws saying where it looked
     * @throws LabException (exit 2) naming the scenario and every problem, by field
     */
    public static StorageSetup setup(StorageScenario scenario, Function<String, Path> dataDir) {
        try {
            return StorageSetup.build(scenario, dataDir::apply);
        } catch (IllegalArgumentException e) {
            throw new LabException("scenario " + e.getMessage(), e);
        }
    }

    /** Runs the sweep on {@code threads} threads, with a progress bar on {@code err} when it is a terminal. */
    public static List<StorageRunResult> execute(List<StorageSweep.Run> runs, int threads, PrintWriter err) {
        return execute(runs, threads, err, null);
    }

    /**
     * As {@link #execute(List, int, PrintWriter)}, counting the finished runs in {@code stopping} (may be
     * null), which tells them if the command is stopped.
     */
    public static List<StorageRunResult> execute(
            List<StorageSweep.Run> runs, int threads, PrintWriter err, ClusterRuns.Stopping stopping) {
        StorageSweep.Progress shown = StorageOutput.progress(err, Terminal.stderrIsTerminal());
        return StorageSweep.run(runs, threads, System::nanoTime, (done, total, run, result) -> {
            if (stopping != null) {
                stopping.done(done);
            }
            shown.finished(done, total, run, result);
        });
    }

    /**
     * The report.
     *
     * @return the index.html written
     * @throws LabException (exit 1) naming the folder and the system's reason
     */
    public static Path writeReport(
            Path dir, String title, List<String> intro, List<String> notes, List<StorageRunResult> results) {
        try {
            return StorageReport.write(dir, title, intro, notes, results);
        } catch (IOException e) {
            throw new LabException("cannot write the report to " + dir + ": " + IoErrors.reason(e), 1, e);
        }
    }

    /**
     * The notes of a sweep's setups, as the command prints them and the report lists them: a note every
     * traffic mix shares (the backend's origin) once, as it is; each other note once per mix, headed by
     * the mix's name ({@code robustness-mild: offered load: 35.0 % ...}), in the order of the mixes. A
     * note that differs between the seeds of a mix (the rates drawn for each seed give each its own load
     * with bursts) is told for each seed, headed by both ({@code robustness-busy seed 2: ...}). A
     * scenario with one mix and one seed has its notes as they are. Only the notes that concern a run of
     * {@code policies} ({@link StorageSetup#notes(java.util.Collection)}).
     */
    public static List<String> notes(List<StorageSetup> setups, List<String> policies) {
        Map<String, Map<Long, List<String>>> byMix = new LinkedHashMap<>();
        for (StorageSetup setup : setups) {
            byMix.computeIfAbsent(setup.scenario().name(), k -> new LinkedHashMap<>())
                    .merge(setup.scenario().seed(), new ArrayList<>(setup.notes(policies)), (a, b) -> a);
        }
        // Per mix: the notes of all its seeds, then each seed's own.
        Map<String, List<String>> common = new LinkedHashMap<>();
        byMix.forEach((mix, seeds) -> {
            List<String> all = new ArrayList<>(seeds.values().iterator().next());
            seeds.values().forEach(all::retainAll);
            common.put(mix, all);
        });
        List<String> shared = new ArrayList<>(
                common.isEmpty() ? List.of() : common.values().iterator().next());
        if (byMix.size() > 1) {
            common.values().forEach(shared::retainAll);
        }
        List<String> notes = new ArrayList<>(shared);
        byMix.forEach((mix, seeds) -> {
            String head = byMix.size() > 1 ? mix + ": " : "";
            for (String note : common.get(mix)) {
                if (!shared.contains(note)) {
                    notes.add(head + note);
                }
            }
            seeds.forEach((seed, seedNotes) -> {
                for (String note : seedNotes) {
                    if (!common.get(mix).contains(note)) {
                        notes.add(mix + " seed " + seed + ": " + note);
                    }
                }
            });
        });
        return notes;
    }

    /**
     * A sweep's setups and runs.
     *
     * @param variant the scenario with the first seed's options, as the report describes it
     * @param setups  one per seed and traffic mix, in order
     * @param runs    every setup's variants × policies
     */
    public record Sweep(StorageScenario variant, List<StorageSetup> setups, List<StorageSweep.Run> runs) {}

    /**
     * How long the runs measure, for the progress line: {@code 20 s measured each} when every run measures
     * as long, else the duration most of the scenarios run as measure and the others by name, {@code 20 s
     * measured each, 30 s for robustness-one-whale} (a mix may measure longer than its family).
     */
    public static String measured(List<StorageSweep.Run> runs) {
        Map<String, Double> byScenario = new LinkedHashMap<>();
        for (StorageSweep.Run run : runs) {
            StorageScenario scenario = run.setup().scenario();
            byScenario.putIfAbsent(scenario.name(), scenario.durationSeconds());
        }
        Map<Double, List<String>> byDuration = new LinkedHashMap<>();
        byScenario.forEach((name, seconds) ->
                byDuration.computeIfAbsent(seconds, k -> new ArrayList<>()).add(name));
        Double most = null;
        for (Map.Entry<Double, List<String>> e : byDuration.entrySet()) {
            if (most == null || e.getValue().size() > byDuration.get(most).size()) {
                most = e.getKey();
            }
        }
        Double common = most;
        StringBuilder text = new StringBuilder(Numbers.written(common) + " s measured each");
        byDuration.forEach((seconds, names) -> {
            if (!seconds.equals(common)) {
                text.append(", ")
                        .append(Numbers.written(seconds))
                        .append(" s for ")
                        .append(String.join(", ", names));
            }
        });
        return text.toString();
    }

    /**
     * The runs of {@code base} for each seed (null: the scenario's), each of its traffic mixes and
     * variants, and each policy, with the run options ({@code null}: the scenario's) checked.
     *
     * @throws LabException (exit 2) as {@link #variant} does; with every problem found building the scenario's
     *     traffic mixes (a data file missing or unreadable, a baseline above the backend's capacity), each named by
     *     its field and line in the scenario's file
     */
    public static Sweep sweep(
            StorageScenarios.Loaded loaded,
            List<Long> seeds,
            Double warmupSeconds,
            Double durationSeconds,
            List<String> policies,
            Function<String, Path> dataDir) {
        StorageScenario base = loaded.scenario();
        StorageScenario variant = variant(base, seeds.get(0), warmupSeconds, durationSeconds);
        if (loaded.mix() >= 0) {
            variant = loaded.runsAs(variant).values().iterator().next();
        }
        List<StorageSetup> setups = new ArrayList<>();
        for (Long s : seeds) {
            Set<Problem> problems = new LinkedHashSet<>();
            IllegalArgumentException first = null;
            Map<Integer, StorageScenario> mixes = loaded.runsAs(variant(base, s, warmupSeconds, durationSeconds));
            for (int k : mixes.keySet()) {
                try {
                    setups.add(StorageSetup.build(mixes.get(k), dataDir::apply));
                } catch (ScenarioException e) {
                    if (e.problems().isEmpty()) {
                        throw new LabException("scenario " + e.getMessage(), e);
                    }
                    first = first == null ? e : first;
                    for (Problem p : e.problems()) {
                        problems.add(base.asInFile(k, p));
                    }
                }
            }
            if (!problems.isEmpty()) {
                throw new LabException("scenario " + loaded.report(List.copyOf(problems)), first);
            }
        }
        List<StorageSweep.Run> runs = new ArrayList<>();
        for (StorageSetup mixSetup : setups) {
            for (StorageSetup v : mixSetup.variants()) {
                for (String policy : policies) {
                    runs.add(new StorageSweep.Run(v, policy));
                }
            }
        }
        return new Sweep(variant, setups, runs);
    }
}
