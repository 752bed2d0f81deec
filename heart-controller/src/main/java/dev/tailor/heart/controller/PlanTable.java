package dev.tailor.heart.controller;

import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.GroupShare;
import dev.tailor.heart.Link;
import dev.tailor.heart.NodeRoute;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Route;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code tailor heart plan --format table}: the plan for people, with {@code --explain} the why. */
public final class PlanTable {

    private PlanTable() {}

    public static void print(Plan plan, String source, boolean explain, PrintWriter out) {
        print(plan, source, explain, true, out);
    }

    /** The replicas the plan shares traffic over: the ready ones (a replica not Ready is in no group). */
    public static int readyReplicas(Plan plan) {
        int replicas = 0;
        for (ComponentShares c : plan.allocation().shares()) {
            for (GroupShare g : c.groups()) {
                replicas += g.pods().size();
            }
        }
        return replicas;
    }

    /** Like {@link #print(Plan, String, boolean, PrintWriter)}; {@code hints} adds the line on --explain, --format. */
    public static void print(Plan plan, String source, boolean explain, boolean hints, PrintWriter out) {
        int replicas = readyReplicas(plan);
        out.printf(
                Locale.ROOT,
                "HEART plan, round %d: %s, %s, %s  (%s)%n%n",
                plan.state().rounds(),
                count(plan.allocation().shares().size(), "component"),
                count(replicas, "ready replica"),
                count(plan.allocation().routes().size(), "call edge"),
                source);

        out.println("Shares (ATPM): each group's share of its component's traffic");
        List<String[]> rows = new ArrayList<>();
        rows.add(
                explain
                        ? new String[] {
                            "component",
                            "group",
                            "replicas",
                            "measured CPU ms/req",
                            "load CPU ms/req",
                            "alpha",
                            "capacity req/s",
                            "share",
                            "basis"
                        }
                        : new String[] {"component", "group", "replicas", "load CPU ms/req", "capacity req/s", "share"
                        });
        for (ComponentShares c : plan.allocation().shares()) {
            boolean first = true;
            for (GroupShare g : c.groups()) {
                String component = first ? c.component() : "";
                first = false;
                if (explain) {
                    rows.add(new String[] {
                        component,
                        g.group(),
                        String.valueOf(g.pods().size()),
                        millis(g.observedLoadCpuSecondsPerRequest()),
                        millis(g.loadCpuSecondsPerRequest()),
                        g.alpha() == null ? "-" : fixed(g.alpha(), 2),
                        rate(g.capacityRequestsPerSecond()),
                        percent(g.share()),
                        g.basis().name().toLowerCase(Locale.ROOT).replace('_', ' ')
                    });
                } else {
                    rows.add(new String[] {
                        component,
                        g.group(),
                        String.valueOf(g.pods().size()),
                        millis(g.loadCpuSecondsPerRequest()),
                        rate(g.capacityRequestsPerSecond()),
                        percent(g.share())
                    });
                }
            }
        }
        printTable(rows, out);

        out.println();
        out.println("Routes (NTAM): where each caller node's calls go");
        for (Route route : plan.allocation().routes()) {
            out.printf(
                    Locale.ROOT,
                    "%s -> %s  %s req/s%s  mean link delay %s ms  pruned %d link(s)%n",
                    route.caller(),
                    route.callee(),
                    fixed(route.requestsPerSecond(), 1),
                    route.entryPoint() ? " (entry point, measured split)" : "",
                    fixed3(route.meanDelayMillis()),
                    route.prunedLinks().size());
            for (NodeRoute from : route.from()) {
                StringBuilder to = new StringBuilder();
                for (Map.Entry<String, Double> e : from.toNodes().entrySet()) {
                    if (to.length() > 0) {
                        to.append("  ");
                    }
                    to.append(e.getKey()).append(' ').append(percent(e.getValue()));
                }
                out.printf(
                        Locale.ROOT,
                        "  from %-10s %9s req/s  ->  %s%n",
                        from.fromNode(),
                        fixed(from.supplyRequestsPerSecond(), 1),
                        to);
            }
            if (explain) {
                for (String step : route.explain()) {
                    out.println("    . " + step);
                }
                if (!route.prunedLinks().isEmpty()) {
                    out.println("    pruned: "
                            + String.join(
                                    ", ",
                                    route.prunedLinks().stream()
                                            .map(Link::toString)
                                            .toList()));
                }
            }
        }
        if (!plan.allocation().notes().isEmpty()) {
            out.println();
            out.println("Notes");
            for (String note : plan.allocation().notes()) {
                out.println("  - " + note);
            }
        }
        if (!explain && hints) {
            out.println();
            out.println(
                    "(--explain adds loads, EWMA weights and the slow-link filter's steps; --format json|istio for machines)");
        }
        out.flush();
    }

    private static String count(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    private static void printTable(List<String[]> rows, PrintWriter out) {
        int columns = rows.get(0).length;
        int[] width = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder("  ");
            for (int i = 0; i < columns; i++) {
                // Names on the left, figures right-aligned; "basis" (explain only) is words.
                boolean numeric = i >= 2 && !rows.get(0)[i].equals("basis");
                String cell = row[i];
                String pad = " ".repeat(width[i] - cell.length());
                line.append(numeric ? pad + cell : cell + pad).append(i < columns - 1 ? "  " : "");
            }
            out.println(line.toString().stripTrailing());
        }
    }

    private static String millis(Double cpuSecondsPerRequest) {
        return cpuSecondsPerRequest == null ? "-" : fixed3(cpuSecondsPerRequest * 1000);
    }

    private static String rate(Double requestsPerSecond) {
        return requestsPerSecond == null ? "-" : fixed(requestsPerSecond, 1);
    }

    /** 12.3%; fractions under 0.1% keep two significant digits, so they never read as 0.0%. */
    static String percent(double fraction) {
        double p = fraction * 100;
        if (p > 0 && p < 0.1) {
            return String.format(Locale.ROOT, "%.2g%%", p);
        }
        return String.format(Locale.ROOT, "%.1f%%", p);
    }

    static String fixed(double value, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    static String fixed3(double value) {
        if (value == 0) {
            return "0";
        }
        return String.format(
                Locale.ROOT, Math.abs(value) >= 100 ? "%.0f" : Math.abs(value) >= 10 ? "%.1f" : "%.3g", value);
    }
}
