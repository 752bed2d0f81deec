package dev.tailor.lab;

import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.storage.StorageRunResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The closing {@code Summary} of {@code tailor demo}: for each mechanism, Tailor against its best peer
 * and against the paper, and a verdict, in at most {@value #MAX_LINES} lines. The verdicts are our
 * reading of what a reader can act on: a figure on a busy machine is called unreliable, not met.
 */
final class DemoSummary {

    /** The most lines the section has, heading included. */
    static final int MAX_LINES = 12;

    /**
     * Tailor and the best peer within this fraction of each other's steady P99.999 are called level, not
     * one better than the other: that percentile of one run rests on its slowest few requests (our reading).
     */
    static final double TIE_FRACTION = 0.05;

    private DemoSummary() {}

    /** What {@link Verdict#verdict} says. */
    static final String MET = "met";

    static final String MISSED = "missed";
    static final String UNRELIABLE = "unreliable";
    static final String NO_DATA = "no data";

    /**
     * One comparison of the Summary as the demo's JSON gives it ({@code verdicts}).
     *
     * @param mechanism {@code heart}, {@code segment-admission} or {@code nbd-proxy}
     * @param name      what is compared, as the tables word it
     * @param figure    the figure judged, or {@code null} without data
     * @param unit      the figure's: {@code ratio}, {@code %} or {@code cells}
     * @param target    what it is judged against, as the tables word it
     * @param verdict   {@value #MET}, {@value #MISSED}, {@value #UNRELIABLE} (the machine was too busy for the
     *                  figure to say either) or {@value #NO_DATA}
     * @param reason    why, in words
     */
    public record Verdict(
            String mechanism, String name, Double figure, String unit, String target, String verdict, String reason) {}

    /** The section's lines and its comparisons' verdicts, from the same figures. */
    record Summary(List<String> lines, List<Verdict> verdicts) {}

    /**
     * The section.
     *
     * @param cluster          the cluster simulator's runs (Tailor's {@code heart}, {@code heart-paper} and the
     *                         peers of {@link ClusterSimulation#COMPARISON})
     * @param timeoutMillis    each cluster scenario's user-request timeout, ms, by scenario name
     * @param storage          the storage simulator's runs
     * @param lowLoad          the low-load NBD experiment, or {@code null} when it did not run
     * @param burst            the burst NBD experiment, or {@code null} when it did not run
     * @param experimentsWhyNot why the NBD experiments did not run (e.g. "skipped: --no-experiments"), or
     *                         {@code null} when they ran
     */
    static List<String> lines(
            List<RunResult> cluster,
            Map<String, Double> timeoutMillis,
            List<StorageRunResult> storage,
            LowLoadExperiment.Result lowLoad,
            BurstExperiment.Result burst,
            String experimentsWhyNot) {
        return of(cluster, timeoutMillis, storage, lowLoad, burst, experimentsWhyNot)
                .lines();
    }

    /** The section ({@link #lines}) with its comparisons' verdicts. */
    static Summary of(
            List<RunResult> cluster,
            Map<String, Double> timeoutMillis,
            List<StorageRunResult> storage,
            LowLoadExperiment.Result lowLoad,
            BurstExperiment.Result burst,
            String experimentsWhyNot) {
        List<String> lines = new ArrayList<>();
        List<Verdict> verdicts = new ArrayList<>();
        lines.add("Summary");
        heart(lines, verdicts, cluster, timeoutMillis);
        segmentAdmission(lines, verdicts, storage);
        experiments(lines, verdicts, lowLoad, burst, experimentsWhyNot);
        return new Summary(List.copyOf(lines), List.copyOf(verdicts));
    }

    /** HEART: cells where {@code heart} has the lowest P99 among Tailor's and the peers', and the paper's ratios. */
    private static void heart(
            List<String> lines, List<Verdict> verdicts, List<RunResult> cluster, Map<String, Double> timeoutMillis) {
        List<String> peers = ClusterSimulation.COMPARISON.stream()
                .filter(p -> !p.equals("heart"))
                .toList();
        List<String> cells = cluster.stream().map(DemoSummary::cell).distinct().toList();
        int wins = 0;
        int judged = 0;
        List<String> lost = new ArrayList<>();
        for (String cell : cells) {
            List<RunResult> runs =
                    cluster.stream().filter(r -> cell(r).equals(cell)).toList();
            RunResult heart = runs.stream()
                    .filter(r -> r.policy().equals("heart"))
                    .findFirst()
                    .orElse(null);
            RunResult best = runs.stream()
                    .filter(r -> peers.contains(r.policy()) && r.p99Millis() != null)
                    .min(Comparator.comparingDouble(RunResult::p99Millis))
                    .orElse(null);
            if (heart == null || heart.p99Millis() == null || best == null) {
                continue;
            }
            judged++;
            if (heart.p99Millis() <= best.p99Millis()) {
                wins++;
            } else {
                double timeout = timeoutMillis.getOrDefault(heart.scenario(), Double.NaN);
                String peer = SimulationOutput.latency(best.p99Millis(), timeout);
                String ours = SimulationOutput.latency(heart.p99Millis(), timeout);
                if (peer.equals(ours)) { // apart by less than the table shows
                    peer = String.format(Locale.ROOT, "%.2f", best.p99Millis());
                    ours = String.format(Locale.ROOT, "%.2f", heart.p99Millis());
                }
                lost.add(cell + " " + best.policy() + " " + peer + " vs " + ours);
            }
        }
        lines.add("  HEART routing, cluster simulator (P99 ms in " + cells.size() + " cells: "
                + String.join(
                        ", ",
                        cluster.stream().map(RunResult::scenario).distinct().toList())
                + "; 100 and 400 RPS; fluid and cfs-quota CPU limits):");
        lines.add("    Tailor's heart against the best of " + peers.size() + " peers: lowest P99 in " + wins + " of "
                + cells.size() + " cells" + (lost.isEmpty() ? "." : "; a peer wins " + String.join("; ", lost) + "."));
        verdicts.add(new Verdict(
                "heart",
                "Tailor's heart against the best of " + peers.size() + " peers, cells with the lowest P99",
                judged == 0 ? null : (double) wins,
                "cells",
                "lowest P99 in all " + cells.size() + " cells",
                judged == 0 ? NO_DATA : wins == cells.size() ? MET : MISSED,
                judged == 0
                        ? "no cell has both heart's P99 and a peer's"
                        : (lost.isEmpty() ? "the lowest P99 in every cell" : "a peer wins " + String.join("; ", lost))
                                + (judged < cells.size() ? "; " + (cells.size() - judged) + " cells without data" : "")
                                + SIMULATED));
        List<String> ratios = new ArrayList<>();
        int below = 0;
        int asStrong = 0;
        int compared = 0;
        double[][] figures = {
            {Demo.PAPER_PAIRWISE_HEART, Demo.PAPER_PAIRWISE_LR, 100}, {Demo.PAPER_DAG_HEART, Demo.PAPER_DAG_LR, 400}
        };
        String[] scenarios = {"paper-pairwise", "paper-dag"};
        for (int i = 0; i < figures.length; i++) {
            double paper = figures[i][0] / figures[i][1];
            List<String> ours = new ArrayList<>();
            for (String model : List.of("fluid", "cfs-quota")) {
                RunResult a = find(cluster, scenarios[i], model, figures[i][2], "heart-paper");
                RunResult b = find(cluster, scenarios[i], model, figures[i][2], "least-request");
                String name = "the paper's HEART (heart-paper) over least-request, P99, "
                        + (scenarios[i].equals("paper-dag") ? "DAG " : "pairwise ")
                        + SimulationOutput.fmt(figures[i][2]) + " RPS, " + model + " CPU limit";
                String target = String.format(Locale.ROOT, "<= %.2f", paper) + " (the paper's: "
                        + SimulationOutput.fmt(figures[i][0]) + " vs " + SimulationOutput.fmt(figures[i][1]) + " ms)";
                if (a == null || b == null || a.p99Millis() == null || b.p99Millis() == null) {
                    ours.add("–");
                    verdicts.add(new Verdict(
                            "heart",
                            name,
                            null,
                            "ratio",
                            target,
                            NO_DATA,
                            "a P99 missing (no run, or too few requests)"));
                    continue;
                }
                double ratio = a.p99Millis() / b.p99Millis();
                ours.add(String.format(Locale.ROOT, "%.2f", ratio));
                verdicts.add(new Verdict(
                        "heart",
                        name,
                        ratio,
                        "ratio",
                        target,
                        ratio <= paper ? MET : MISSED,
                        (ratio <= paper
                                        ? "as strongly as the paper says"
                                        : ratio < 1
                                                ? "beats least-request, less strongly than the paper says"
                                                : "does not beat least-request")
                                + " (" + SimulationOutput.fmt(a.p99Millis()) + " vs "
                                + SimulationOutput.fmt(b.p99Millis()) + " ms)" + SIMULATED));
                compared++;
                below += ratio < 1 ? 1 : 0;
                asStrong += ratio <= paper ? 1 : 0;
            }
            ratios.add((scenarios[i].equals("paper-dag") ? "DAG " : "pairwise ") + SimulationOutput.fmt(figures[i][2])
                    + " RPS " + String.format(Locale.ROOT, "%.2f", paper) + " in the paper, "
                    + String.join(" / ", ours));
        }
        lines.add("    The paper's HEART (heart-paper) over least-request, fluid / cfs-quota: "
                + String.join("; ", ratios)
                + ".");
        lines.add("    Verdict: "
                + (compared == 0
                        ? "no data."
                        : "HEART beats least-request in " + below + " of " + compared
                                + " of the paper's comparisons, as"
                                + " strongly as the paper says in " + asStrong
                                + "; Tailor's heart is the best policy in " + wins
                                + " of " + cells.size()
                                + " cells (simulated time: the machine's load does not change these)."));
    }

    /** Why the simulators' verdicts never read unreliable. */
    private static final String SIMULATED = "; simulated time: the machine's load does not change these";

    private static String cell(RunResult r) {
        return (r.scenario().equals("paper-dag")
                        ? "DAG"
                        : r.scenario().equals("paper-pairwise") ? "pairwise" : r.scenario())
                + " " + SimulationOutput.fmt(r.rps()) + " " + r.cpuModel();
    }

    private static RunResult find(List<RunResult> results, String scenario, String model, double rps, String policy) {
        return results.stream()
                .filter(r -> r.scenario().equals(scenario)
                        && r.cpuModel().equals(model)
                        && r.rps() == rps
                        && r.policy().equals(policy))
                .findFirst()
                .orElse(null);
    }

    /** Segment admission at the largest burst: change of the steady tenants' P99.999 against fifo. */
    private static void segmentAdmission(List<String> lines, List<Verdict> verdicts, List<StorageRunResult> storage) {
        double largest = storage.stream()
                .map(StorageRunResult::burstMultiplier)
                .filter(m -> m != null)
                .mapToDouble(Double::doubleValue)
                .max()
                .orElse(Double.NaN);
        StorageRunResult fifo = findStorage(storage, largest, "fifo");
        lines.add("  Segment admission, storage simulator (" + Demo.STORAGE_SCENARIO + " ×"
                + SimulationOutput.fmt(largest) + "; steady tenants' P99.999 against fifo):");
        String variant = Demo.STORAGE_SCENARIO + " ×" + SimulationOutput.fmt(largest);
        String againstPeersName = "Tailor's segment-admission against the best of static-cap and mclock, steady"
                + " tenants' P99.999 change against fifo, " + variant;
        String againstPeersTarget =
                "lower than the best peer's by more than " + Math.round(100 * TIE_FRACTION) + " % of it";
        String againstPaperName = "Tailor's segment-admission, steady tenants' P99.999 change against fifo, " + variant;
        String againstPaperTarget = "<= " + SimulationOutput.fmt(-Demo.PAPER_BURST_REDUCTION_PERCENT / 2)
                + " % (of the order of the paper's up to -" + SimulationOutput.fmt(Demo.PAPER_BURST_REDUCTION_PERCENT)
                + " %)";
        if (fifo == null || fifo.steady() == null || fifo.steady().p99999Millis() == null) {
            lines.add("    no data: the fifo run has no steady tenants' P99.999.");
            String reason = "the fifo run has no steady tenants' P99.999";
            verdicts.add(
                    new Verdict("segment-admission", againstPeersName, null, "%", againstPeersTarget, NO_DATA, reason));
            verdicts.add(
                    new Verdict("segment-admission", againstPaperName, null, "%", againstPaperTarget, NO_DATA, reason));
            return;
        }
        double baseline = fifo.steady().p99999Millis();
        StorageRunResult tailor = findStorage(storage, largest, "segment-admission");
        Double ours = change(tailor, baseline);
        Double paperMechanism = change(findStorage(storage, largest, "segment-admission-paper"), baseline);
        String bestPeer = null;
        StorageRunResult bestPeerRun = null;
        Double bestPeerChange = null;
        for (String peer : List.of("static-cap", "mclock")) {
            StorageRunResult run = findStorage(storage, largest, peer);
            Double c = change(run, baseline);
            if (c != null && (bestPeerChange == null || c < bestPeerChange)) {
                bestPeer = peer;
                bestPeerRun = run;
                bestPeerChange = c;
            }
        }
        lines.add("    Tailor's segment-admission " + percent(ours) + millis(ours, tailor) + ", best peer "
                + (bestPeer == null
                        ? "–"
                        : bestPeer + " " + percent(bestPeerChange) + millis(bestPeerChange, bestPeerRun))
                + ", the paper's mechanism " + percent(paperMechanism)
                + "; the paper: up to -" + SimulationOutput.fmt(Demo.PAPER_BURST_REDUCTION_PERCENT) + " %.");
        String verdict;
        if (ours == null) {
            verdict = "no data.";
            String reason = "Tailor's segment-admission run has no steady tenants' P99.999";
            verdicts.add(
                    new Verdict("segment-admission", againstPeersName, null, "%", againstPeersTarget, NO_DATA, reason));
            verdicts.add(
                    new Verdict("segment-admission", againstPaperName, null, "%", againstPaperTarget, NO_DATA, reason));
        } else {
            String againstPeers;
            if (bestPeerChange == null) {
                againstPeers = "better than every peer";
            } else {
                double ratio = (100 + ours) / (100 + bestPeerChange);
                againstPeers = ratio < 1 - TIE_FRACTION
                        ? "better than every peer"
                        : ratio <= 1 + TIE_FRACTION
                                ? "level with " + bestPeer + " (within " + Math.round(100 * TIE_FRACTION) + " %)"
                                : "behind " + bestPeer;
            }
            boolean paperLike = ours <= -Demo.PAPER_BURST_REDUCTION_PERCENT / 2;
            verdict = againstPeers + "; "
                    + (paperLike ? "of the paper's order" : "well short of the paper's reduction")
                    + " (simulated time).";
            verdicts.add(new Verdict(
                    "segment-admission",
                    againstPeersName,
                    ours,
                    "%",
                    againstPeersTarget,
                    againstPeers.equals("better than every peer") ? MET : MISSED,
                    againstPeers
                            + (bestPeer == null
                                    ? ": no peer's figure"
                                    : ": " + bestPeer + " " + percent(bestPeerChange)
                                            + millis(bestPeerChange, bestPeerRun) + ", Tailor's " + percent(ours)
                                            + millis(ours, tailor))
                            + SIMULATED));
            verdicts.add(new Verdict(
                    "segment-admission",
                    againstPaperName,
                    ours,
                    "%",
                    againstPaperTarget,
                    paperLike ? MET : MISSED,
                    (paperLike ? "of the paper's order" : "well short of the paper's reduction") + SIMULATED));
        }
        lines.add("    Verdict: " + verdict);
    }

    private static Double change(StorageRunResult run, double baseline) {
        if (run == null || run.steady() == null || run.steady().p99999Millis() == null || baseline <= 0) {
            return null;
        }
        return 100 * (run.steady().p99999Millis() / baseline - 1);
    }

    /** " (3.32 ms)": the steady P99.999 of {@code run}, whose change is {@code change}; empty without data. */
    private static String millis(Double change, StorageRunResult run) {
        return change == null ? "" : " (" + SimulationOutput.fmt(run.steady().p99999Millis()) + " ms)";
    }

    private static String percent(Double change) {
        return change == null ? "–" : String.format(Locale.ROOT, "%+.0f %%", change);
    }

    private static StorageRunResult findStorage(List<StorageRunResult> results, double multiplier, String policy) {
        return results.stream()
                .filter(r -> r.burstMultiplier() != null
                        && r.burstMultiplier() == multiplier
                        && r.policy().equals(policy))
                .findFirst()
                .orElse(null);
    }

    /**
     * The NBD experiments in two lines: the low-load figure, the burst test's door alone and segment
     * admission each against admission off, their targets, and whether to trust them.
     */
    private static void experiments(
            List<String> lines,
            List<Verdict> verdicts,
            LowLoadExperiment.Result lowLoad,
            BurstExperiment.Result burst,
            String whyNot) {
        String lowLoadName = "I/O-priority loop against a FIFO loop at low load, P99.9 change";
        String lowLoadTarget =
                "<= " + SimulationOutput.fmt(Demo.PAPER_LOW_LOAD_P999_CHANGE_PERCENT) + " % (paper," + " deployed)";
        String burstTarget = "<= " + SimulationOutput.fmt(Demo.CLEARLY_LOWER_PERCENT) + " % (clearly lower)";
        if (lowLoad == null || burst == null) {
            lines.add("  NBD proxy with real clients: " + (whyNot == null ? "did not run." : whyNot));
            String reason = "the experiments " + (whyNot == null ? "did not run" : whyNot.replaceAll("\\.$", ""));
            verdicts.add(new Verdict("nbd-proxy", lowLoadName, null, "%", lowLoadTarget, NO_DATA, reason));
            verdicts.add(new Verdict("nbd-proxy", burstName("door alone"), null, "%", burstTarget, NO_DATA, reason));
            verdicts.add(
                    new Verdict("nbd-proxy", burstName("segment admission"), null, "%", burstTarget, NO_DATA, reason));
            return;
        }
        FioLatency fifo = lowLoad.pooled("fifo");
        FioLatency priority = lowLoad.pooled("priority");
        double lowLoadChange = Demo.changePercent(priority.percentileMicros(99.9), fifo.percentileMicros(99.9));
        double burstPercent = Demo.burstPercent(burst);
        double offTail =
                Double.isNaN(burstPercent) ? Double.NaN : burst.steady("off").percentileMicros(burstPercent);
        double doorChange = Double.isNaN(burstPercent)
                ? Double.NaN
                : Demo.changePercent(burst.steady("door").percentileMicros(burstPercent), offTail);
        double admissionChange = Double.isNaN(burstPercent)
                ? Double.NaN
                : Demo.changePercent(burst.steady("on").percentileMicros(burstPercent), offTail);
        boolean busy = Demo.busy(lowLoad, burst);
        lines.add("  NBD proxy with real clients (fio, nbdkit; one short round): I/O-priority loop at low load, P99.9"
                + " against a FIFO loop " + percent(nanToNull(lowLoadChange)) + " (paper: "
                + SimulationOutput.fmt(Demo.PAPER_LOW_LOAD_P999_CHANGE_PERCENT) + " %); under a burst, steady"
                + " " + Demo.percentileName(burstPercent) + " against admission off: the fair dispatch door alone "
                + percent(nanToNull(doorChange))
                + ", segment admission " + percent(nanToNull(admissionChange)) + " (target: <= "
                + SimulationOutput.fmt(Demo.CLEARLY_LOWER_PERCENT) + " % each).");
        String pressure = String.format(
                Locale.ROOT,
                "CPU pressure up to %.0f %% at low load, %.0f %% in the burst" + " test",
                nanToZero(lowLoad.maxCpuPressurePercent()),
                nanToZero(burst.maxCpuPressurePercent()));
        String reason = busy
                ? "the machine was busy (" + pressure + "); rerun on a quiet machine with tailor nbd experiment"
                        + " low-load --rounds 3 and ... burst --rounds 3"
                : pressure + ": quiet enough; one short round moves from run to run";
        verdicts.add(new Verdict(
                "nbd-proxy",
                lowLoadName,
                nanToNull(lowLoadChange),
                "%",
                lowLoadTarget,
                verdict(lowLoadChange <= Demo.PAPER_LOW_LOAD_P999_CHANGE_PERCENT, lowLoadChange, busy),
                reason));
        String burstReason = (Double.isNaN(burstPercent)
                        ? ""
                        : "on the steady tenants' " + Demo.percentileName(burstPercent)
                                + ", the highest percentile every run's samples resolve; ")
                + reason;
        verdicts.add(new Verdict(
                "nbd-proxy",
                burstName("door alone"),
                nanToNull(doorChange),
                "%",
                burstTarget,
                verdict(doorChange <= Demo.CLEARLY_LOWER_PERCENT, doorChange, busy),
                burstReason));
        verdicts.add(new Verdict(
                "nbd-proxy",
                burstName("segment admission"),
                nanToNull(admissionChange),
                "%",
                burstTarget,
                verdict(admissionChange <= Demo.CLEARLY_LOWER_PERCENT, admissionChange, busy),
                burstReason));
        if (busy) {
            lines.add("    Verdict: unreliable, the machine was busy (" + pressure + "); rerun on a quiet machine with"
                    + " tailor nbd experiment low-load --rounds 3 and ... burst --rounds 3.");
        } else {
            lines.add("    Verdict: low load "
                    + met(lowLoadChange <= Demo.PAPER_LOW_LOAD_P999_CHANGE_PERCENT, lowLoadChange)
                    + ", burst: door alone " + met(doorChange <= Demo.CLEARLY_LOWER_PERCENT, doorChange)
                    + ", admission " + met(admissionChange <= Demo.CLEARLY_LOWER_PERCENT, admissionChange)
                    + " (" + pressure + ": quiet enough; one short round moves from run to run).");
        }
    }

    /**
     * A burst comparison's name, {@code configuration} against admission off: the same with and without data
     * (the percentile judged, which depends on the samples, is in the reason), so a script can match on it.
     */
    private static String burstName(String configuration) {
        return "under a burst, " + configuration + " against admission off, steady tenants' tail change";
    }

    /** {@link #met}, or {@value #UNRELIABLE} on a busy machine (as the tables' verdict column). */
    private static String verdict(boolean met, double value, boolean busy) {
        return Double.isNaN(value) ? NO_DATA : busy ? UNRELIABLE : met ? MET : MISSED;
    }

    private static String met(boolean met, double value) {
        return Double.isNaN(value) ? "no data" : met ? "met" : "missed";
    }

    private static Double nanToNull(double x) {
        return Double.isNaN(x) ? null : x;
    }

    private static double nanToZero(double x) {
        return Double.isNaN(x) ? 0 : x;
    }
}
