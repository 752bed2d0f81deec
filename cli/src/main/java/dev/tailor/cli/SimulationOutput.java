package dev.tailor.cli;

import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.RunResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Text tables and the progress bar of {@code tailor heart simulate} and {@code tailor demo}. */
final class SimulationOutput {

    private SimulationOutput() {
    }

    /** A progress bar on {@code err} when it is a terminal; silent otherwise. */
    static ClusterSweep.Progress progress(PrintWriter err, boolean terminal) {
        if (!terminal) {
            return null;
        }
        return (done, total, run, result) -> {
            int width = 30;
            int filled = (int) ((long) width * done / total);
            String bar = "#".repeat(filled) + ".".repeat(width - filled);
            String what = run.scenario().name() + " " + run.scenario().network() + " " + run.scenario().cpuModel().label()
                    + " " + fmt(run.rps()) + " RPS " + run.policy();
            err.print(String.format(Locale.ROOT, "\r[%s] %d/%d %-60s", bar, done, total, what));
            if (done == total) {
                err.print("\r" + " ".repeat(width + 75) + "\r");
            }
            err.flush();
        };
    }

    /** One table per (scenario, network, CPU model, rate), one row per policy. */
    static void table(PrintWriter out, List<RunResult> results) {
        Map<String, List<RunResult>> groups = new LinkedHashMap<>();
        for (RunResult r : results) {
            groups.computeIfAbsent(r.scenario() + " · network " + r.network() + " · CPU " + r.cpuModel() + " · "
                    + fmt(r.rps()) + " RPS", k -> new ArrayList<>()).add(r);
        }
        boolean first = true;
        for (Map.Entry<String, List<RunResult>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            out.println(group.getKey());
            out.println(String.format(Locale.ROOT, "  %-16s %9s %9s %9s %9s %7s %8s %8s", "policy", "P50 ms", "P99 ms",
                    "P99.9 ms", "timeouts", "CPU gap", "max CPU", "plan ms"));
            for (RunResult r : group.getValue()) {
                double maxCpu = r.replicas().stream().mapToDouble(RunResult.ReplicaStats::meanCpuUtilisationPercent)
                        .max().orElse(Double.NaN);
                out.println(String.format(Locale.ROOT, "  %-16s %9s %9s %9s %9d %6s %7s%% %8s", r.policy(),
                        fmt(r.p50Millis()), fmt(r.p99Millis()), fmt(r.p999Millis()), r.timeouts(),
                        fmt(r.cpuGapPercentPoints()) + "pp", fmt(maxCpu),
                        r.planning() == null ? "–" : fmt(r.planning().meanMillis())));
            }
        }
    }

    /**
     * The simulator's speed over {@code results}: simulated calls (requests served by a replica, as
     * {@code istio_requests_total} counts them) per second of one thread's wall time.
     */
    static String speed(List<RunResult> results) {
        long calls = 0;
        double wallMillis = 0;
        for (RunResult r : results) {
            calls += r.callsServed();
            wallMillis += r.wallMillis();
        }
        if (wallMillis <= 0) {
            return "";
        }
        return String.format(Locale.ROOT, "simulator speed: %.2f million simulated calls per second of one thread"
                + " (%,d calls in %.1f s of run time, HEART planning included)", calls / wallMillis / 1e3, calls,
                wallMillis / 1e3);
    }

    static String fmt(double value) {
        if (Double.isNaN(value)) {
            return "–";
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e12) {
            return String.valueOf((long) value);
        }
        double abs = Math.abs(value);
        return String.format(Locale.ROOT, abs >= 100 ? "%.0f" : abs >= 10 ? "%.1f" : "%.2f", value);
    }
}
