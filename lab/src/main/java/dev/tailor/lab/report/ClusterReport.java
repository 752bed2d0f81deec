package dev.tailor.lab.report;

import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.SeedCells;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes a self-contained HTML report of cluster-simulator runs: one file, {@code index.html},
 * with the results table and inline PNG plots made with XChart — latency CDF per policy (tail
 * stretched), P99 against the request rate, and CPU utilisation per component and replica over time. Opens in
 * any browser, no network needed.
 */
public final class ClusterReport {

    private ClusterReport() {}

    /**
     * Writes {@code dir/index.html} (creating {@code dir} if needed), replacing an earlier report.
     *
     * @param title   the page's title
     * @param intro   paragraphs of plain text shown above the results (e.g. the paper's figures)
     * @param results the runs, in table order
     * @return the written file
     * @throws IOException if the directory or file cannot be written
     */
    public static Path write(Path dir, String title, List<String> intro, List<RunResult> results) throws IOException {
        return write(dir, title, intro, results, (List<SeedCells.Cell>) null);
    }

    /**
     * As {@link #write(Path, String, List, List)}, for a comparison run over several seeds: the table has
     * a row per cell with the medians over the seeds and the P99's spread, the latency CDFs pool the
     * seeds' requests, P99 against the rate plots the medians, and the CPU plots show the first seed.
     *
     * @param cells {@code results} gathered per cell ({@link SeedCells#of}), or {@code null} for runs of
     *              one seed each (the report of {@link #write(Path, String, List, List)})
     */
    public static Path write(
            Path dir, String title, List<String> intro, List<RunResult> results, List<SeedCells.Cell> cells)
            throws IOException {
        return write(dir, HtmlPages.Frame.of(title, intro), results, cells);
    }

    /**
     * As {@link #write(Path, String, List, List, List)}, in a frame with a summary at the top and the
     * commands that reproduce the figures at the end.
     */
    public static Path write(Path dir, HtmlPages.Frame frame, List<RunResult> results, List<SeedCells.Cell> cells)
            throws IOException {
        return write(dir, frame, results, cells, List.of());
    }

    /**
     * As {@link #write(Path, HtmlPages.Frame, List, List)}, with what the scenarios tell: the user-request
     * timeout drawn on the latency CDFs, the CPU panels' replicas coloured by their node's speed.
     *
     * @param scenarios the runs' scenarios (by name); a run whose scenario is not among them gets no
     *                  timeout line and its nodes one colour each
     */
    public static Path write(
            Path dir,
            HtmlPages.Frame frame,
            List<RunResult> results,
            List<SeedCells.Cell> cells,
            List<ClusterScenario> scenarios)
            throws IOException {
        Map<String, ClusterScenario> byName = new LinkedHashMap<>();
        scenarios.forEach(s -> byName.put(s.name(), s));
        if (cells != null) {
            List<RunResult> pooled = new ArrayList<>();
            for (SeedCells.Cell cell : cells) {
                pooled.add(pooled(cell));
            }
            return page(dir, frame, pooled, cellTable(cells), cells, byName);
        }
        return page(dir, frame, results, table(results), null, byName);
    }

    /** A cell as one run for the charts: pooled latencies, median P99, the first seed's CPU series. */
    private static RunResult pooled(SeedCells.Cell cell) {
        RunResult first = cell.runs().get(0);
        return new RunResult(
                cell.scenario(),
                cell.network(),
                cell.cpuModel(),
                cell.policy(),
                cell.rps(),
                first.seed(),
                cell.requests(),
                cell.completed(),
                cell.timeouts(),
                cell.errors(),
                cell.unfinished(),
                cell.p50Millis(),
                cell.p99Millis(),
                cell.p999Millis(),
                cell.meanMillis(),
                cell.cpuGapPercentPoints(),
                first.replicas(),
                first.planning(),
                first.callsServed(),
                first.eventsFired(),
                first.wallMillis(),
                cell.latency(),
                first.cpuUtilisationSeries());
    }

    /**
     * Policy colours, the same in every chart of a report: the report's policies in the order of
     * {@link dev.tailor.sim.cluster.ClusterSimulation#policyNames()} (unknown names after them) take the
     * series colours in turn, so a report of up to twelve policies has twelve distinct colours.
     */
    static Map<String, Color> colours(List<String> policies) {
        List<String> order = dev.tailor.sim.cluster.ClusterSimulation.policyNames();
        List<String> sorted = policies.stream()
                .distinct()
                .sorted(java.util.Comparator.comparingInt(
                        (String p) -> order.indexOf(p) < 0 ? order.size() : order.indexOf(p)))
                .toList();
        Map<String, Color> colours = new LinkedHashMap<>();
        for (int i = 0; i < sorted.size(); i++) {
            colours.put(sorted.get(i), ReportCharts.seriesColour(i));
        }
        return colours;
    }

    /** "network A · CPU fluid · 400 RPS": a chart's cell within its scenario. */
    private static String cell(RunResult run) {
        return "network " + run.network() + " · CPU " + run.cpuModel() + " · " + format(run.rps()) + " RPS";
    }

    private static Path page(
            Path dir,
            HtmlPages.Frame frame,
            List<RunResult> results,
            String table,
            List<SeedCells.Cell> seedsSpread,
            Map<String, ClusterScenario> scenarios)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        Map<String, Color> colours =
                colours(results.stream().map(RunResult::policy).toList());
        StringBuilder html = new StringBuilder(HtmlPages.start(frame));
        html.append(table);
        if (seedsSpread != null) {
            html.append(seedSpread(seedsSpread));
        }

        Map<String, List<RunResult>> bySetting = new LinkedHashMap<>();
        for (RunResult result : results) {
            bySetting
                    .computeIfAbsent(
                            result.scenario() + " · network " + result.network() + " · CPU " + result.cpuModel(),
                            k -> new ArrayList<>())
                    .add(result);
        }
        for (Map.Entry<String, List<RunResult>> setting : bySetting.entrySet()) {
            List<RunResult> runs = setting.getValue();
            html.append("<h2>").append(escape(setting.getKey())).append("</h2>\n<div class=\"charts\">\n");
            TreeSet<Double> rates = new TreeSet<>();
            runs.forEach(r -> rates.add(r.rps()));
            RunResult first = runs.get(0);
            String place = "network " + first.network() + " · CPU " + first.cpuModel();
            if (rates.size() > 1) {
                html.append(ReportCharts.inlinePng(
                        p99ByRate(runs, "P99 latency against load · " + place, colours),
                        "P99 latency against load: " + setting.getKey()));
            }
            for (double rps : rates) {
                List<RunResult> atRate =
                        runs.stream().filter(r -> r.rps() == rps).toList();
                String what = "End-to-end latency CDF";
                if (atRate.stream()
                        .allMatch(r -> r.latency() == null || r.latency().getTotalCount() == 0)) {
                    // An empty chart drew its axis from nothing (-900 % .. 90 %): said in words instead.
                    html.append("<p class=\"note\">")
                            .append(escape(what + " · " + cell(atRate.get(0))))
                            .append(": no request was measured in these runs, nothing to plot (run longer).</p>\n");
                    continue;
                }
                html.append(ReportCharts.inlinePng(
                        latencyCdf(
                                atRate,
                                what + " · " + cell(atRate.get(0)),
                                colours,
                                timeoutMillis(scenarios.get(first.scenario()))),
                        what + ": " + first.scenario() + " · " + cell(atRate.get(0))));
            }
            html.append("</div>\n<h3>CPU utilisation per component at ")
                    .append(format(rates.last()))
                    .append(" RPS (10-s means in % of the CPU limit; one panel per component, one line per replica,"
                            + " coloured by its node's speed: blue fastest, orange slowest)</h3>\n");
            ClusterScenario scenario = scenarios.get(runs.get(0).scenario());
            Map<String, Double> speeds = new LinkedHashMap<>();
            if (scenario != null && scenario.nodes() != null) {
                scenario.nodes().forEach(n -> speeds.put(n.name(), n.speedFactor() == null ? 1.0 : n.speedFactor()));
            }
            for (RunResult run : runs) {
                if (run.rps() == rates.last() && run.cpuUtilisationSeries() != null) {
                    html.append("<h4>").append(escape(run.policy())).append("</h4>\n<div class=\"charts\">\n");
                    for (XYChart panel : cpuPerComponent(run, speeds)) {
                        html.append(ReportCharts.inlinePng(
                                panel,
                                "CPU utilisation, " + run.policy() + ": " + panel.getTitle() + ": " + run.scenario()
                                        + " · " + cell(run)));
                    }
                    html.append("</div>\n");
                }
            }
        }
        html.append("<p class=\"note\">Latency CDF: the vertical axis is stretched towards the tail (it shows "
                + "−log10(1 − F)), so P90, P99 and P99.9 are evenly spaced. Requests slower than the timeout are "
                + "plotted at the timeout (the grey dashed line). CPU utilisation is in % of the replica's CPU "
                + "limit.</p>\n");
        html.append(HtmlPages.end(frame));
        return HtmlPages.write(dir, "index.html", html);
    }

    /**
     * How each policy's P99 spreads over the seeds: one box plot per (scenario, network, CPU model, rate),
     * a box per policy (quartiles, whiskers to the extremes, over the seeds' P99s). The title
     * names the cell, the alt text the scenario as well; policy names are slanted when they would overlap.
     */
    private static String seedSpread(List<SeedCells.Cell> cells) throws IOException {
        Map<String, List<SeedCells.Cell>> groups = new LinkedHashMap<>();
        for (SeedCells.Cell c : cells) {
            groups.computeIfAbsent(
                            c.scenario() + " · network " + c.network() + " · CPU " + c.cpuModel() + " · "
                                    + format(c.rps()) + " RPS",
                            k -> new ArrayList<>())
                    .add(c);
        }
        StringBuilder html = new StringBuilder("<h2>P99 over the seeds</h2>\n<div class=\"charts\">\n");
        boolean plottedAny = false;
        for (Map.Entry<String, List<SeedCells.Cell>> group : groups.entrySet()) {
            SeedCells.Cell head = group.getValue().get(0);
            String what = "P99 over " + head.seeds().size() + " seeds";
            List<SeedCells.Cell> plotted = group.getValue().stream()
                    .filter(c -> c.runs().stream().anyMatch(r -> r.p99Millis() != null))
                    .toList();
            if (plotted.isEmpty()) {
                continue;
            }
            List<String> policies = plotted.stream().map(SeedCells.Cell::policy).toList();
            org.knowm.xchart.BoxChart chart = boxChart(
                    what + " · network " + head.network() + " · CPU " + head.cpuModel() + " · " + format(head.rps())
                            + " RPS",
                    policies);
            for (SeedCells.Cell c : plotted) {
                // Log scale: a policy that times out (P99 at 30 s) would flatten the others' boxes.
                chart.addSeries(
                        c.policy(),
                        c.runs().stream()
                                .map(RunResult::p99Millis)
                                .filter(v -> v != null)
                                .map(v -> Math.log10(Math.max(0.01, v)))
                                .toList());
            }
            html.append(ReportCharts.inlinePng(chart, what + ": " + group.getKey()));
            plottedAny = true;
        }
        // No seed of any cell measured a P99: no heading over nothing.
        return plottedAny ? html.append("</div>\n").toString() : "";
    }

    /**
     * An empty box chart, 620 px wide, a box per policy of {@code policies}; add series of log10(ms). The
     * names run horizontally when each fits its box's width, else slanted 45° with the chart made taller by
     * what they take. The y axis is linear in log10(ms), its ticks labelled with the ms they stand for (3
     * significant digits): XChart's box chart ignores a set axis range, so its own log axis would label no
     * tick when the values lie within one decade (powers of ten only, {@link ReportCharts#logAxisRange}).
     */
    private static org.knowm.xchart.BoxChart boxChart(String title, List<String> policies) {
        java.awt.Font labelFont = new org.knowm.xchart.style.BoxStyler().getAxisTickLabelsFont();
        double widest = policies.stream()
                .mapToDouble(p -> ReportCharts.textWidth(p, labelFont))
                .max()
                .orElse(0);
        // About 90 px go to the y axis's title and labels; each box gets an equal share of the rest.
        boolean slant = widest > (620 - 90) / (double) policies.size() - 8;
        int height = 360 + (slant ? (int) Math.ceil(widest * Math.sqrt(0.5)) : 0);
        org.knowm.xchart.BoxChart chart = new org.knowm.xchart.BoxChartBuilder()
                .width(620)
                .height(height)
                .title(title)
                .yAxisTitle("P99 (ms, log scale)")
                .build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setLocale(Locale.ROOT);
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setyAxisTickLabelsFormattingFunction(ReportCharts::powerOfTenLabel);
        if (slant) {
            chart.getStyler().setXAxisLabelRotation(45);
        }
        ReportCharts.fitTitle(chart);
        return chart;
    }

    private static String cellTable(List<SeedCells.Cell> cells) {
        StringBuilder t = new StringBuilder("<div class=\"scroll\"><table><tr><th class=\"l\">scenario</th>"
                + "<th class=\"l\">network</th>"
                + "<th class=\"l\">CPU</th><th>RPS</th><th class=\"l\">policy</th><th>seeds</th><th>P50 ms</th>"
                + "<th>P99 ms</th><th>P99 min–max ms</th><th>P99 mean ms</th><th>P99.9 ms</th><th>timeouts</th>"
                + "<th>errors</th><th>unfinished</th><th>CPU gap pp</th><th>plan ms/round (median)</th></tr>\n");
        TreeSet<Double> unresolved = new TreeSet<>();
        for (SeedCells.Cell c : cells) {
            Double plan = SeedCells.planMillis(c);
            t.append("<tr><td class=\"l\">")
                    .append(escape(c.scenario()))
                    .append("</td><td class=\"l\">")
                    .append(escape(c.network()))
                    .append("</td><td class=\"l\">")
                    .append(escape(c.cpuModel()))
                    .append("</td><td>")
                    .append(format(c.rps()))
                    .append("</td><td class=\"l\">")
                    .append(escape(c.policy()))
                    .append("</td><td>")
                    .append(c.seeds().size())
                    .append("</td><td>")
                    .append(percentile(c.p50Millis(), c.requests(), 50, unresolved))
                    .append("</td><td>")
                    .append(percentile(c.p99Millis(), c.requests(), 99, unresolved))
                    .append("</td><td>")
                    .append(
                            c.p99Spread().minMillis() == null || c.p99Spread().maxMillis() == null
                                    ? percentile(null, c.requests(), 99, unresolved)
                                    : format(c.p99Spread().minMillis()) + "–"
                                            + format(c.p99Spread().maxMillis()))
                    .append("</td><td>")
                    .append(percentile(c.p99Spread().meanMillis(), c.requests(), 99, unresolved))
                    .append("</td><td>")
                    .append(percentile(c.p999Millis(), c.requests(), 99.9, unresolved))
                    .append("</td><td>")
                    .append(c.timeouts())
                    .append("</td><td>")
                    .append(c.errors())
                    .append("</td><td>")
                    .append(c.unfinished())
                    .append("</td><td>")
                    .append(format(c.cpuGapPercentPoints()))
                    .append("</td><td>")
                    .append(plan == null ? "" : format(plan))
                    .append("</td></tr>\n");
        }
        return t.append("</table></div>\n").append(legend(unresolved)).toString();
    }

    private static String table(List<RunResult> results) {
        StringBuilder t = new StringBuilder("<div class=\"scroll\"><table><tr><th class=\"l\">scenario</th>"
                + "<th class=\"l\">network</th>"
                + "<th class=\"l\">CPU</th><th>RPS</th><th class=\"l\">policy</th><th>P50 ms</th><th>P99 ms</th>"
                + "<th>P99.9 ms</th><th>timeouts</th><th>unfinished</th><th>CPU gap pp</th><th>plan ms/round (median)</th>"
                + "</tr>\n");
        TreeSet<Double> unresolved = new TreeSet<>();
        for (RunResult r : results) {
            t.append("<tr><td class=\"l\">")
                    .append(escape(r.scenario()))
                    .append("</td><td class=\"l\">")
                    .append(escape(r.network()))
                    .append("</td><td class=\"l\">")
                    .append(escape(r.cpuModel()))
                    .append("</td><td>")
                    .append(format(r.rps()))
                    .append("</td><td class=\"l\">")
                    .append(escape(r.policy()))
                    .append("</td><td>")
                    .append(percentile(r.p50Millis(), r.requests(), 50, unresolved))
                    .append("</td><td>")
                    .append(percentile(r.p99Millis(), r.requests(), 99, unresolved))
                    .append("</td><td>")
                    .append(percentile(r.p999Millis(), r.requests(), 99.9, unresolved))
                    .append("</td><td>")
                    .append(r.timeouts())
                    .append("</td><td>")
                    .append(r.unfinished())
                    .append("</td><td>")
                    .append(format(r.cpuGapPercentPoints()))
                    .append("</td><td>")
                    .append(r.planning() == null ? "" : format(r.planning().medianMillis()))
                    .append("</td></tr>\n");
        }
        return t.append("</table></div>\n").append(legend(unresolved)).toString();
    }

    /**
     * A percentile's cell: its ms; {@link StorageFigures#NOT_RESOLVABLE} when it is {@code null} although
     * requests were measured (too few for it; the level joins {@code unresolved}); {@code –} with none.
     */
    private static String percentile(Double millis, long requests, double levelPercent, TreeSet<Double> unresolved) {
        if (millis == null && requests > 0) {
            unresolved.add(levelPercent);
            return StorageFigures.NOT_RESOLVABLE;
        }
        return format(millis);
    }

    /** The line under a table that says what not resolvable means, when a cell of it was; else nothing. */
    private static String legend(TreeSet<Double> unresolved) {
        return unresolved.isEmpty()
                ? ""
                : "<p>"
                        + escape(StorageFigures.notResolvable(unresolved.stream()
                                .mapToDouble(Double::doubleValue)
                                .toArray()))
                        + "</p>\n";
    }

    private static XYChart latencyCdf(
            List<RunResult> runs, String title, Map<String, Color> colours, Double timeoutMillis) {
        XYChart chart = ReportCharts.tailChart(title, 400);
        List<String> order = dev.tailor.sim.cluster.ClusterSimulation.policyNames();
        double topNines = 0;
        List<Double> latencies = new ArrayList<>();
        for (RunResult run : runs) {
            if (run.latency() == null || run.latency().getTotalCount() == 0) {
                continue;
            }
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (HistogramIterationValue v : run.latency().percentiles(5)) {
                double fraction = v.getPercentileLevelIteratedTo() / 100;
                if (fraction >= 1 - 1e-5) {
                    fraction = 1 - 1e-5;
                }
                x.add(Math.max(0.01, v.getValueIteratedTo() / 1_000.0));
                y.add(-Math.log10(1 - fraction));
            }
            latencies.addAll(x);
            XYSeries series = chart.addSeries(run.policy(), x, y);
            series.setMarker(SeriesMarkers.NONE);
            series.setLineColor(colours.get(run.policy()));
            // Curves coincide (heart and mcf-no-filter at low load): a line pattern per policy keeps each visible.
            int index = order.indexOf(run.policy());
            series.setLineStyle(ReportCharts.dash(Math.max(0, index)));
            topNines = Math.max(topNines, y.get(y.size() - 1));
        }
        if (timeoutMillis != null && topNines > 0) {
            ReportCharts.timeoutLine(chart, timeoutMillis, topNines);
            latencies.add(timeoutMillis);
        }
        ReportCharts.logXAxis(chart.getStyler(), latencies);
        return chart;
    }

    private static XYChart p99ByRate(List<RunResult> runs, String title, Map<String, Color> colours) {
        XYChart chart = new XYChartBuilder()
                .width(620)
                .height(400)
                .title(title)
                .xAxisTitle("user requests per second")
                .yAxisTitle("P99 (ms, log scale)")
                .build();
        ReportCharts.style(chart);
        ReportCharts.fitTitle(chart);
        // No custom tick labels here: XChart places them linearly on a log axis (knowm/XChart#834).
        ReportCharts.logYAxis(
                chart.getStyler(),
                runs.stream()
                        .map(RunResult::p99Millis)
                        .map(v -> v == null ? null : Math.max(0.01, v))
                        .toList());
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        Map<String, List<RunResult>> byPolicy = new LinkedHashMap<>();
        runs.forEach(r ->
                byPolicy.computeIfAbsent(r.policy(), k -> new ArrayList<>()).add(r));
        byPolicy.forEach((policy, list) -> {
            List<RunResult> sorted = list.stream()
                    .filter(r -> r.p99Millis() != null)
                    .sorted(java.util.Comparator.comparingDouble(RunResult::rps))
                    .toList();
            if (sorted.isEmpty()) {
                return;
            }
            XYSeries series = chart.addSeries(
                    policy,
                    sorted.stream().map(RunResult::rps).toList(),
                    sorted.stream().map(r -> Math.max(0.01, r.p99Millis())).toList());
            series.setLineColor(colours.get(policy));
            series.setMarkerColor(colours.get(policy));
            series.setMarker(SeriesMarkers.CIRCLE);
        });
        return chart;
    }

    private static Double timeoutMillis(ClusterScenario scenario) {
        return scenario == null || scenario.timeoutSeconds() == null ? null : scenario.timeoutSeconds() * 1000;
    }

    /** From blue (the fastest node) to orange (the slowest), Okabe–Ito's ends. */
    private static Color speedColour(double speed, double slowest, double fastest) {
        double t = fastest > slowest ? (fastest - speed) / (fastest - slowest) : 0;
        Color fast = new Color(0x00, 0x72, 0xB2);
        Color slow = new Color(0xE6, 0x9F, 0x00);
        return new Color(
                (int) Math.round(fast.getRed() + t * (slow.getRed() - fast.getRed())),
                (int) Math.round(fast.getGreen() + t * (slow.getGreen() - fast.getGreen())),
                (int) Math.round(fast.getBlue() + t * (slow.getBlue() - fast.getBlue())));
    }

    /** Width of a CPU panel, pixels; the first, which carries the node legend, is {@link #LEGEND_PIXELS} wider. */
    static final int PANEL_PIXELS = 230;

    /** What the node legend right of the first CPU panel takes, pixels, at least (it is widened to fit). */
    static final int LEGEND_PIXELS = 100;

    /**
     * What a CPU panel's title may take, pixels: about the width of the plot, right of the "CPU %" axis (its
     * tick labels and title take some 70 px of a panel). A longer component name widens its panel.
     */
    static final int TITLE_ROOM_PIXELS = PANEL_PIXELS - 70;

    /**
     * Small multiples of a run's CPU utilisation: one panel per component, one line per replica (10-s
     * means, plotted at the middle of their ten seconds), coloured by its node's speed factor ({@code speeds},
     * node → factor; nodes not in it get the fastest colour). The first panel's legend names the nodes. A
     * panel's title is its component (the policy heads the row), at 11 pt, else 10 pt, else in a panel wide
     * enough for it. The time axis runs from 0 to the end of the last ten seconds, with a few round ticks,
     * the same in every panel ({@link #sameTimeTicks}); the first panel is widened by what its legend takes,
     * so that its plot is as wide as the others'.
     */
    static List<XYChart> cpuPerComponent(RunResult run, Map<String, Double> speeds) {
        List<double[]> series = run.cpuUtilisationSeries();
        Map<String, List<Integer>> byComponent = new LinkedHashMap<>();
        for (int i = 0; i < series.size() && i < run.replicas().size(); i++) {
            byComponent
                    .computeIfAbsent(run.replicas().get(i).component(), k -> new ArrayList<>())
                    .add(i);
        }
        double end = 0;
        for (List<Integer> replicas : byComponent.values()) {
            for (int i : replicas) {
                end = Math.max(end, Math.floor(series.get(i).length / 10.0) * 10);
            }
        }
        List<XYChart> panels = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> component : byComponent.entrySet()) {
            boolean legend = panels.isEmpty();
            XYChart chart = cpuPanel(component.getKey(), legend, 0);
            cpuLines(chart, run, component.getValue(), speeds, end);
            if (legend && end > 0) {
                // The legend takes its width from the plot: widened by what it took, the panel's plot is as
                // wide as the others', its ticks as many.
                XYChart bare = cpuPanel(component.getKey(), false, 0);
                cpuLines(bare, run, component.getValue(), speeds, end);
                double taken = plotPixels(bare, end) - plotPixels(chart, end);
                if (taken >= 1) {
                    chart = cpuPanel(component.getKey(), true, (int) Math.ceil(taken));
                    cpuLines(chart, run, component.getValue(), speeds, end);
                }
            }
            panels.add(chart);
        }
        if (end > 0) {
            sameTimeTicks(panels, end);
        }
        return panels;
    }

    /**
     * Draws the 10-s means of {@code replicas} (indices into the run's replicas) in {@code chart}, one line
     * each, coloured by the node's speed factor ({@code speeds}; nodes not in it get the fastest colour), the
     * first of a node named in the legend; the time axis from 0 to {@code end} s, the end of the last ten
     * seconds. With the means at their middles (5, 15, ...), the axis's values are not evenly spaced, so
     * XChart picks round ticks at least the spacing hint apart; on evenly spaced values it labels data points
     * instead, as many as fit edge to edge (10 130250370490610).
     */
    private static void cpuLines(
            XYChart chart, RunResult run, List<Integer> replicas, Map<String, Double> speeds, double end) {
        double fastest =
                speeds.values().stream().mapToDouble(Double::doubleValue).max().orElse(1);
        double slowest =
                speeds.values().stream().mapToDouble(Double::doubleValue).min().orElse(1);
        java.util.Set<String> named = new java.util.HashSet<>();
        for (int i : replicas) {
            RunResult.ReplicaStats replica = run.replicas().get(i);
            double[] perSecond = run.cpuUtilisationSeries().get(i);
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (int start = 0; start + 10 <= perSecond.length; start += 10) {
                double sum = 0;
                for (int k = start; k < start + 10; k++) {
                    sum += perSecond[k];
                }
                x.add(start + 5.0);
                y.add(sum / 10);
            }
            if (x.isEmpty()) {
                continue;
            }
            double speed = speeds.getOrDefault(replica.node(), fastest);
            boolean first = named.add(replica.node());
            XYSeries line = chart.addSeries(first ? replica.node() + " ×" + format(speed) : replica.pod(), x, y);
            line.setMarker(SeriesMarkers.NONE);
            line.setLineColor(speedColour(speed, slowest, fastest));
            line.setLineStyle(new BasicStroke(1.2f));
            line.setShowInLegend(first);
        }
        if (end > 0) {
            chart.getStyler().setXAxisMin(0.0);
            chart.getStyler().setXAxisMax(end);
        }
    }

    /** The width of {@code panel}'s time axis from 0 to {@code end}, pixels, as drawn (it draws it aside). */
    private static double plotPixels(XYChart panel, double end) {
        BitmapEncoder.getBufferedImage(panel); // lays the panel out
        return panel.getScreenXFromChart(end) - panel.getScreenXFromChart(0);
    }

    /** The least room between two time ticks' labels, pixels, in the narrowest plot of a row of CPU panels. */
    static final int TIME_TICK_GAP_PIXELS = 10;

    /**
     * Gives {@code panels}, whose time axes run from 0 to {@code end} s, the same ticks. XChart picks a
     * panel's tick step from its plot's width and the spacing hint, so the panel beside the legend,
     * narrower by it, and a panel widened for its title picked other steps than the rest (0, 500 beside 0,
     * 200, 400, 600). Here the row's step is the smallest of 1, 2 and 5 × 10ⁿ s whose labels fit the
     * narrowest plot ({@link #ticksFit}; at most {@code end} ÷ 1.3, so that every panel has at least two
     * ticks), and each panel's hint is set so that XChart picks that step in its
     * plot: the hint in the middle of the range XChart rounds to the step (it rounds a step hint of
     * 1.5-3.5 × 10ⁿ to 2 × 10ⁿ, for example). Each panel is drawn once, aside, to measure its plot.
     */
    static void sameTimeTicks(List<XYChart> panels, double end) {
        double[] plotPixels = new double[panels.size()];
        double narrowest = Double.MAX_VALUE;
        for (int i = 0; i < panels.size(); i++) {
            plotPixels[i] = plotPixels(panels.get(i), end);
            narrowest = Math.min(narrowest, plotPixels[i]);
        }
        if (!(narrowest > 0)) {
            return;
        }
        java.awt.Font font = panels.get(0).getStyler().getAxisTickLabelsFont();
        int exponent = (int) Math.floor(Math.log10(end)) - 2;
        int mantissa = 1;
        double step = Math.pow(10, exponent);
        double largest = step; // the largest step at most end ÷ 1.3
        while (step <= end / 1.3) {
            largest = step;
            if (ticksFit(step, end, narrowest, font)) {
                break;
            }
            mantissa = mantissa == 1 ? 2 : mantissa == 2 ? 5 : 1;
            exponent += mantissa == 1 ? 1 : 0;
            step = mantissa * Math.pow(10, exponent);
        }
        step = Math.min(step, largest);
        double m = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
        // XChart's rounding of a step hint s × 10ⁿ: s <= 1.5 to 1, <= 3.5 to 2, <= 7.5 to 5 (× 10ⁿ).
        double hint = step * (m < 1.5 ? 1.2 : m < 3.5 ? 1.25 : 1.1);
        for (int i = 0; i < panels.size(); i++) {
            panels.get(i).getStyler().setXAxisTickMarkSpacingHint((int) Math.round(hint / end * plotPixels[i]));
        }
    }

    /**
     * Whether time ticks {@code step} s apart fit a plot {@code pixels} wide for {@code end} s: by XChart's
     * own test, or it widens the step (its widest label, counting those it computes beyond both ends of the
     * axis, times 1.1, below the whole pixels between two ticks), and with {@value #TIME_TICK_GAP_PIXELS} px
     * between the labels drawn.
     */
    private static boolean ticksFit(double step, double end, double pixels, java.awt.Font font) {
        double spacing = step / end * pixels;
        if (spacing < 2 * TIME_TICK_GAP_PIXELS) {
            return false; // no label is that narrow; saves measuring thousands of them
        }
        java.text.DecimalFormat format =
                new java.text.DecimalFormat("#,##0.###", java.text.DecimalFormatSymbols.getInstance(Locale.ROOT));
        double widest = 0;
        double widestDrawn = 0;
        for (int k = -1; k * step < end + 2 * step; k++) {
            double width = ReportCharts.textWidth(format.format(k * step), font);
            widest = Math.max(widest, width);
            if (k >= 0 && k * step <= end) {
                widestDrawn = Math.max(widestDrawn, width);
            }
        }
        return widest * 1.1 + 1 < Math.floor(spacing) && widestDrawn + TIME_TICK_GAP_PIXELS <= spacing;
    }

    /** An empty CPU panel titled {@code component}, its title fitted ({@link #cpuPerComponent}). */
    private static XYChart cpuPanel(String component, boolean legend, int extraPixels) {
        int width = PANEL_PIXELS + (legend ? LEGEND_PIXELS : 0) + extraPixels;
        XYChart chart = panel(component, legend, width);
        java.awt.Font font = chart.getStyler().getChartTitleFont();
        for (float points : new float[] {11f, 10f}) {
            font = font.deriveFont(points);
            if (ReportCharts.textWidth(component, font) <= TITLE_ROOM_PIXELS) {
                break;
            }
        }
        double overflow = ReportCharts.textWidth(component, font) - TITLE_ROOM_PIXELS;
        if (overflow > 0) {
            chart = panel(component, legend, width + (int) Math.ceil(overflow) + 4);
        }
        chart.getStyler().setChartTitleFont(font);
        return chart;
    }

    private static XYChart panel(String title, boolean legend, int width) {
        XYChart chart = new XYChartBuilder()
                .width(width)
                .height(200)
                .title(title)
                .xAxisTitle("simulated s")
                .yAxisTitle("CPU %")
                .build();
        ReportCharts.style(chart);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(110.0);
        chart.getStyler().setLegendVisible(legend);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setXAxisTickMarkSpacingHint(60); // a small panel: a few round time ticks
        return chart;
    }

    private static String format(Double value) {
        if (value == null || Double.isNaN(value)) {
            return "–";
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e12) {
            return String.valueOf(value.longValue());
        }
        return String.format(
                Locale.ROOT, Math.abs(value) >= 100 ? "%.0f" : Math.abs(value) >= 10 ? "%.1f" : "%.2f", value);
    }

    private static String escape(String text) {
        return HtmlPages.escape(text);
    }
}
