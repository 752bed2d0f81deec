package dev.tailor.lab.report;

import dev.tailor.sim.storage.IntervalSeries;
import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageSimulation;
import dev.tailor.sim.storage.SweepSummary;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes a self-contained HTML report of storage-simulator runs: one file, {@code index.html}, with
 * a sweep's summary (more than one scenario variant or seed), the results tables (every figure of the
 * text table, the same strings) and inline PNG plots made with XChart — per scenario variant, the latency
 * CDF of steady and of hot tenants under every policy (tail stretched, each policy in its own colour),
 * and for the segment-admission policies the token pools interval by interval around the first measured
 * burst; a plot with nothing to draw (a class with no measured request, no burst) is a line saying why.
 * Opens in any browser, no network needed.
 */
public final class StorageReport {

    /** More notes and warnings than this are folded under one line, so the tables stay in view. */
    static final int FOLDED_NOTES = 12;

    /** More policies in a latency plot than this put its legend beside the plot instead of inside it. */
    static final int LEGEND_INSIDE_MAX = 8;

    /**
     * The pool plots' series and their colours, in legend order. None is a policy's or an ablation's colour
     * (each is at least 15 CIEDE2000 from every one of those and from each other), so that a pool line
     * is never read as a policy of the latency plots: greys, dashed, for the cost arriving (what the pools
     * are drawn against); dark teal, lavender, violet, dark olive and crimson for the pools.
     */
    static final Map<String, Color> POOL_COLOURS = poolColours();

    private static Map<String, Color> poolColours() {
        Map<String, Color> colours = new LinkedHashMap<>();
        colours.put("hot in", new Color(0x55, 0x55, 0x55));
        colours.put("steady in", new Color(0x99, 0x99, 0x99));
        colours.put("main", new Color(0x00, 0x66, 0x66));
        colours.put("reserve", new Color(0x88, 0x88, 0xCC));
        colours.put("borrowed", new Color(0xAA, 0x22, 0xFF));
        colours.put("repaid", new Color(0x66, 0x55, 0x00));
        colours.put("debt", new Color(0xDD, 0x00, 0x22));
        return Collections.unmodifiableMap(colours);
    }

    /**
     * Each policy's colour, fixed by its name so that it is the same in every plot and every report, whatever
     * else ran: the Okabe–Ito colours (readable by colour-blind readers), the pairs compared most far apart
     * in hue and lightness (mclock blue, segment-admission vermillion, fair-dispatch reddish purple, fifo
     * black); dark brown for token-bucket, where Okabe–Ito's yellow would be too faint a line on white, a
     * dark grey too close to fifo's black and a mid grey would look like bluish green or reddish purple to
     * a deuteranope. Every two are at least 20 CIEDE2000 apart.
     */
    private static final Map<String, Color> POLICY_COLOURS = Map.of(
            "fifo", new Color(0x00, 0x00, 0x00),
            "static-cap", new Color(0x00, 0x9E, 0x73),
            "token-bucket", new Color(0x77, 0x22, 0x00),
            "mclock", new Color(0x00, 0x72, 0xB2),
            "mclock-per-client", new Color(0x56, 0xB4, 0xE9),
            "segment-admission", new Color(0xD5, 0x5E, 0x00),
            "segment-admission-paper", new Color(0xE6, 0x9F, 0x00),
            "fair-dispatch", new Color(0xCC, 0x79, 0xA7));

    /**
     * The ablations' colours (Paul Tol's muted scheme, colour-blind-safe, none an Okabe–Ito colour); an
     * ablation's line is dashed, dotted or dash-dotted, so that colour and pattern together tell every
     * ablation apart (there are more ablations than distinguishable colours).
     */
    private static final Color[] ABLATION_COLOURS = {
        new Color(0xCC, 0x66, 0x77), new Color(0x33, 0x22, 0x88), new Color(0x11, 0x77, 0x33),
        new Color(0x88, 0xCC, 0xEE), new Color(0x88, 0x22, 0x55), new Color(0x44, 0xAA, 0x99),
        new Color(0x99, 0x99, 0x33), new Color(0xDD, 0xCC, 0x77)
    };

    /** The ablations' line patterns: dashed, dotted, dash-dot, dash-dot-dot (8 colours × 4: 32 ablations). */
    private static final float[][] ABLATION_DASHES = {{7f, 4f}, {2f, 3f}, {9f, 3f, 2f, 3f}, {9f, 3f, 2f, 3f, 2f, 3f}};

    /** A policy's line colour in every plot: fixed by its name, not by which policies a report holds. */
    public static Color colour(String policy) {
        Color fixed = POLICY_COLOURS.get(policy);
        if (fixed != null) {
            return fixed;
        }
        int ablation = StorageSimulation.ABLATIONS.indexOf(policy);
        return ablation < 0 ? new Color(0x55, 0x55, 0x55) : ABLATION_COLOURS[ablation % ABLATION_COLOURS.length];
    }

    /**
     * A policy's line pattern: solid for the policies, for the ablations of segment admission a dash
     * pattern that with {@link #colour} tells each apart; null for solid.
     */
    static float[] dashes(String policy) {
        int ablation = StorageSimulation.ABLATIONS.indexOf(policy);
        return ablation < 0 ? null : ABLATION_DASHES[(ablation / ABLATION_COLOURS.length) % ABLATION_DASHES.length];
    }

    /** Shown before and after the first measured burst in the pool plots, ms. */
    static final int BEFORE_BURST_MILLIS = 100;

    static final int AFTER_BURST_MILLIS = 400;

    private StorageReport() {}

    /**
     * Writes {@code dir/index.html} (creating {@code dir} if needed), replacing an earlier report.
     *
     * @param title   the page's title
     * @param intro   paragraphs of plain text above the results
     * @param notes   the scenario's assumptions, listed under the intro
     * @param results the runs, in table order
     * @return the written file
     * @throws IOException if the directory or file cannot be written
     */
    public static Path write(
            Path dir, String title, List<String> intro, List<String> notes, List<StorageRunResult> results)
            throws IOException {
        return write(dir, "index.html", title, intro, notes, results);
    }

    /**
     * Writes {@code dir/fileName} (creating {@code dir} if needed), replacing an earlier one; see
     * {@link #write(Path, String, List, List, List)}.
     */
    public static Path write(
            Path dir,
            String fileName,
            String title,
            List<String> intro,
            List<String> notes,
            List<StorageRunResult> results)
            throws IOException {
        return write(dir, fileName, HtmlPages.Frame.of(title, intro), notes, results);
    }

    /**
     * As {@link #write(Path, String, String, List, List, List)}, in a frame with a summary at the top and
     * the commands that reproduce the figures at the end.
     */
    public static Path write(
            Path dir, String fileName, HtmlPages.Frame frame, List<String> notes, List<StorageRunResult> results)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        StringBuilder html = new StringBuilder(HtmlPages.start(frame));
        // A sweep (more than one scenario variant or seed) is summarised first, as the text output does after
        // its tables: the same figures, from the same code.
        SweepSummary summary = SweepSummary.of(results);
        if (summary.cells() > 1) {
            html.append("<h2>Sweep summary</h2>\n").append(sweepTable(summary));
        }
        if (!notes.isEmpty()) {
            // A long sweep's notes and warnings (one per run at worst) fold away, so the tables stay in view.
            boolean fold = notes.size() > FOLDED_NOTES;
            if (fold) {
                html.append("<details><summary>").append(notes.size()).append(" notes and warnings</summary>");
            }
            html.append("<ul class=\"note\">");
            notes.forEach(n -> html.append("<li>").append(escape(n)).append("</li>"));
            html.append("</ul>");
            html.append(fold ? "</details>\n" : "\n");
        }
        html.append("<h2>Results</h2>\n").append(tables(results));
        html.append("<ul class=\"note\">");
        StorageFigures.legend(results)
                .forEach(n -> html.append("<li>").append(escape(n)).append("</li>"));
        html.append("</ul>\n");
        // A class of tenants the scenario does not have: every one of its latency cells is n/r, for that reason.
        String nr = StorageFigures.NOT_RESOLVABLE;
        Set<String> emptyColumns = new LinkedHashSet<>();
        for (StorageRunResult r : results) {
            String steady = unmeasured(r, true);
            String hot = unmeasured(r, false);
            if (steady != null && steady.equals(hot)) {
                emptyColumns.add(r.label() + ": " + steady + " (its latency columns are " + nr + ").");
            } else {
                if (steady != null) {
                    emptyColumns.add(r.label() + ": " + steady + " (its steady tenants' columns are " + nr + ").");
                }
                if (hot != null) {
                    emptyColumns.add(r.label() + ": " + hot + " (its hot tenants' columns are " + nr + ").");
                }
            }
        }
        for (StorageRunResult r : results) {
            for (boolean steady : new boolean[] {true, false}) {
                String segments = unmeasuredSegments(r, steady);
                if (segments != null) {
                    emptyColumns.add(r.label() + ": " + segments + " (its " + (steady ? "steady" : "hot")
                            + " segments' columns are " + nr + ").");
                }
            }
        }
        emptyColumns.forEach(
                n -> html.append("<p class=\"note\">").append(escape(n)).append("</p>\n"));

        // One section per scenario variant, and per seed when the runs are of several seeds (a sweep): a
        // chart has one curve per policy.
        boolean seeds = severalSeeds(results);
        Map<String, List<StorageRunResult>> byVariant = new LinkedHashMap<>();
        results.forEach(r -> byVariant
                .computeIfAbsent(variant(r, seeds), k -> new ArrayList<>())
                .add(r));
        for (Map.Entry<String, List<StorageRunResult>> variant : byVariant.entrySet()) {
            List<StorageRunResult> runs = variant.getValue();
            html.append("<h2>").append(escape(variant.getKey())).append("</h2>\n");
            html.append(tenantTable(runs));
            // A class no run measured a request of has no curve: a line says why instead of an empty plot.
            StringBuilder charts = new StringBuilder();
            for (boolean steady : new boolean[] {true, false}) {
                if (runs.stream().anyMatch(r -> unmeasured(r, steady) == null)) {
                    charts.append(ReportCharts.inlinePng(cdf(
                            runs,
                            steady,
                            steady ? "Steady tenants: latency CDF" : "Hot (bursty) tenants: latency CDF")));
                } else {
                    html.append("<p class=\"note\">No latency CDF of ")
                            .append(steady ? "steady" : "hot")
                            .append(" tenants: ")
                            .append(escape(unmeasured(runs.get(0), steady)))
                            .append(".</p>\n");
                }
            }
            if (!charts.isEmpty()) {
                html.append("<div class=\"charts\">\n").append(charts).append("</div>\n");
            }
            List<StorageRunResult> pooled = runs.stream()
                    .filter(r -> r.series() != null
                            && r.series().hasPools()
                            && r.series().firstBurstNanos() >= 0)
                    .toList();
            if (!pooled.isEmpty()) {
                html.append("<h3>Token pools around the first measured burst (proxy ")
                        .append(pooled.get(0).series().proxy())
                        .append(", per 10 ms interval, in % of the budget C)</h3>\n<div class=\"charts\">\n");
                for (StorageRunResult r : pooled) {
                    html.append(ReportCharts.inlinePng(pools(r)));
                }
                html.append("</div>\n");
            } else {
                runs.stream()
                        .filter(r -> r.series() != null && r.series().hasPools())
                        .findFirst()
                        .ifPresent(r -> html.append("<p class=\"note\">No token-pool plot: no burst began at proxy ")
                                .append(r.series().proxy())
                                .append(" in the measured period.</p>\n"));
            }
        }
        html.append(
                "<p class=\"note\">Steady segments are the paper's measure: admission serves this class first,"
                        + " so it shows what the mechanism protects, not every tenant's experience. A policy whose queues grow"
                        + " without bound has unfinished requests; its percentiles are then lower bounds (the command warns)."
                        + " Each policy has one colour in every plot; ablations of segment admission are dashed or dotted.</p>\n");
        html.append("<p class=\"note\">Latency CDF: the vertical axis is stretched towards the tail (it shows "
                + "−log10(1 − F)), so P90, P99, P99.9, P99.99 and P99.999 are evenly spaced. Pool plots: arriving "
                + "cost of hot and steady tenants, what the main pool and the reserve gave, what was borrowed and "
                + "repaid, and the debt; time 0 is the first burst request's arrival.</p>\n");
        html.append(HtmlPages.end(frame));
        return HtmlPages.write(dir, fileName, html);
    }

    /** Whether {@code results} are of more than one seed (a sweep), so that a run is named with its seed. */
    public static boolean severalSeeds(List<StorageRunResult> results) {
        return results.stream().mapToLong(StorageRunResult::seed).distinct().count() > 1;
    }

    /** A run's scenario variant, with its seed when the results are of several. */
    private static String variant(StorageRunResult r, boolean severalSeeds) {
        return severalSeeds ? r.label() + ", seed " + r.seed() : r.label();
    }

    /**
     * Why no request of a class was measured in {@code run} — of steady tenants (those without bursts)
     * when {@code steady}, else of hot ones — or null when some was. The classes are the scenario's
     * (ground truth), so the reason is the scenario's; the text table gives the same.
     */
    public static String unmeasured(StorageRunResult run, boolean steady) {
        if ((steady ? run.steady() : run.hot()).requests() > 0) {
            return null;
        }
        if (run.offeredRequests() == 0) {
            return "no request arrived in the " + StorageFigures.number(run.measuredSeconds()) + " s measured";
        }
        return steady
                ? "no steady tenant's request was measured: every tenant of this scenario has bursts"
                : "no hot tenant's request was measured: no tenant of this scenario has bursts";
    }

    /**
     * Why no request of a segment class was measured in {@code run}, or null when one was (or when no request arrived
     * at all, which {@link #unmeasured} tells). The classes are the classifier's, on arrivals, the same under every
     * policy of a variant: a scenario whose bursts stay within the hot threshold has no hot segment.
     */
    public static String unmeasuredSegments(StorageRunResult run, boolean steady) {
        if ((steady ? run.steadySegments() : run.hotSegments()).requests() > 0 || run.offeredRequests() == 0) {
            return null;
        }
        return steady
                ? "no request on steady segments only was measured: every request touched a hot segment"
                : "no request on a hot segment was measured: in the measured period no segment's cost in a window"
                        + " went above admission.hotThresholdRatio × its baseline";
    }

    /**
     * The results as the text prints them, in four tables: latency by tenant class, latency by segment
     * class, latency of requests within their tenant's baseline, then throughput, capacity and admission;
     * every cell is the text table's ({@link StorageFigures}).
     */
    static String tables(List<StorageRunResult> results) {
        boolean seeds = severalSeeds(results);
        StringBuilder t = new StringBuilder();
        String[][] classes = {
            {"steady tenants", "hot tenants"},
            {"steady segments", "hot segments"},
            {"steady tenants within baseline", "all within baseline"}
        };
        String[] captions = {
            "Latency by tenant class, ms",
            "Latency by segment class, ms",
            "Latency of requests within their tenant's baseline, ms"
        };
        for (int table = 0; table < classes.length; table++) {
            t.append("<div class=\"scroll\"><table><caption>")
                    .append(captions[table])
                    .append("</caption>\n<tr><th class=\"l\" rowspan=\"2\">scenario</th>")
                    .append("<th class=\"l\" rowspan=\"2\">policy</th>");
            for (String name : classes[table]) {
                t.append("<th class=\"group\" colspan=\"")
                        .append(1 + StorageFigures.PERCENTILES.size())
                        .append("\">")
                        .append(name)
                        .append("</th>");
            }
            t.append("</tr>\n<tr>");
            for (int c = 0; c < 2; c++) {
                t.append("<th>requests</th>");
                StorageFigures.PERCENTILES.forEach(
                        p -> t.append("<th>").append(p).append("</th>"));
            }
            t.append("</tr>\n");
            for (StorageRunResult r : results) {
                row(t, variant(r, seeds), r.policy());
                List<LatencySummary> latencies = switch (table) {
                    case 0 -> List.of(r.steady(), r.hot());
                    case 1 -> List.of(r.steadySegments(), r.hotSegments());
                    default -> List.of(r.steadyWithinBaseline(), r.allWithinBaseline());
                };
                for (LatencySummary s : latencies) {
                    t.append("<td>").append(s.requests()).append("</td>");
                    StorageFigures.percentiles(s)
                            .forEach(v -> t.append("<td>").append(v).append("</td>"));
                }
                t.append("</tr>\n");
            }
            t.append("</table></div>\n");
        }
        t.append("<div class=\"scroll\"><table><caption>Throughput, capacity and admission</caption>\n")
                .append("<tr><th class=\"l\">scenario</th><th class=\"l\">policy</th>");
        StorageFigures.COUNTERS.forEach(c -> t.append("<th>").append(escape(c)).append("</th>"));
        t.append("</tr>\n");
        for (StorageRunResult r : results) {
            row(t, variant(r, seeds), r.policy());
            StorageFigures.counters(r)
                    .forEach(v -> t.append("<td>").append(escape(v)).append("</td>"));
            t.append("</tr>\n");
        }
        return t.append("</table></div>\n").toString();
    }

    /**
     * One variant's runs per tenant: the tenant's columns ({@link StorageFigures#tenant}), then its P99 and its
     * P99.999 under each policy side by side; empty when the runs have no per-tenant figures.
     */
    public static String tenantTable(List<StorageRunResult> runs) {
        List<StorageRunResult.TenantResult> tenants = runs.get(0).tenants();
        if (tenants.isEmpty()) {
            return "";
        }
        StringBuilder t =
                new StringBuilder("<div class=\"scroll\"><table><caption>Per tenant, latency ms</caption>\n<tr>");
        for (String c : StorageFigures.TENANT_COLUMNS) {
            t.append("<th")
                    .append(c.equals("tenant") || c.equals("class") ? " class=\"l\"" : "")
                    .append(" rowspan=\"2\">")
                    .append(c)
                    .append("</th>");
        }
        for (String p : List.of("P99", "P99.999")) {
            t.append("<th class=\"group\" colspan=\"")
                    .append(runs.size())
                    .append("\">")
                    .append(p)
                    .append("</th>");
        }
        t.append("</tr>\n<tr>");
        for (int k = 0; k < 2; k++) {
            runs.forEach(r -> t.append("<th>").append(escape(r.policy())).append("</th>"));
        }
        t.append("</tr>\n");
        for (int i = 0; i < tenants.size(); i++) {
            List<String> cells = StorageFigures.tenant(tenants.get(i));
            t.append("<tr>");
            for (int c = 0; c < cells.size(); c++) {
                t.append(c < 2 ? "<td class=\"l\">" : "<td>")
                        .append(escape(cells.get(c)))
                        .append("</td>");
            }
            int index = i;
            runs.forEach(r -> t.append("<td>")
                    .append(StorageFigures.ms(r.tenants().get(index).latency().p99Millis()))
                    .append("</td>"));
            runs.forEach(r -> t.append("<td>")
                    .append(StorageFigures.ms(r.tenants().get(index).latency().p99999Millis()))
                    .append("</td>"));
            t.append("</tr>\n");
        }
        t.append("</table></div>\n<p class=\"note\">")
                .append(escape(StorageFigures.tenantLegend().get(0)))
                .append(" All percentiles of each tenant are in the command's JSON (--format json).</p>\n");
        return t.toString();
    }

    private static void row(StringBuilder t, String variant, String policy) {
        t.append("<tr><td class=\"l\">")
                .append(escape(variant))
                .append("</td><td class=\"l\">")
                .append(escape(policy))
                .append("</td>");
    }

    /**
     * The sweep summary as the text prints it ({@link StorageFigures}): per policy, worst, median and best
     * of each ratio, the worst idle capacity and the cells above the bounds, then the text's notes.
     */
    static String sweepTable(SweepSummary summary) {
        StringBuilder t = new StringBuilder("<div class=\"scroll\"><table class=\"sweep\"><caption>")
                .append(escape(StorageFigures.sweepTitle(summary)))
                .append("</caption>\n<tr><th class=\"l\" rowspan=\"2\">policy</th>");
        StorageFigures.SWEEP_RATIOS.forEach(name -> t.append("<th class=\"group\" colspan=\"3\">")
                .append(escape(name))
                .append("</th>"));
        t.append("<th rowspan=\"2\">unused</th><th class=\"l\" rowspan=\"2\">cells</th></tr>\n<tr>");
        for (int i = 0; i < StorageFigures.SWEEP_RATIOS.size(); i++) {
            t.append("<th>worst</th><th>median</th><th>best</th>");
        }
        t.append("</tr>\n");
        for (SweepSummary.Row row : summary.policies()) {
            t.append("<tr><td class=\"l\">").append(escape(row.policy())).append("</td>");
            for (SweepSummary.Ratios r : StorageFigures.sweepRatios(row)) {
                StorageFigures.ratios(r).forEach(v -> t.append("<td>").append(v).append("</td>"));
            }
            t.append("<td>")
                    .append(StorageFigures.worstUnused(row))
                    .append("</td><td class=\"l\">")
                    .append(escape(StorageFigures.cellsAbove(row)))
                    .append("</td></tr>\n");
        }
        t.append("</table></div>\n<p class=\"note\">Ratio = the policy's figure ÷ the peer's (fifo's, or mclock's)"
                + " in the same cell, one scenario variant on one seed; worst, median and best over the cells;"
                + " below 1 the policy is better than the peer.</p>\n<ul class=\"note\">");
        StorageFigures.sweepNotes(summary)
                .forEach(n -> t.append("<li>").append(escape(n)).append("</li>"));
        return t.append("</ul>\n").toString();
    }

    static XYChart cdf(List<StorageRunResult> runs, boolean steady, String title) {
        long policies = runs.stream()
                .filter(r -> {
                    Histogram h = steady ? r.steadyLatency() : r.hotLatency();
                    return h != null && h.getTotalCount() > 0;
                })
                .map(StorageRunResult::policy)
                .distinct()
                .count();
        // Many policies (a run of every ablation): the legend goes beside the plot, the plot as tall as it.
        boolean beside = policies > LEGEND_INSIDE_MAX;
        XYChart chart = ReportCharts.tailChart(title, beside ? Math.max(420, 90 + 20 * (int) policies) : 420);
        if (beside) {
            chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        }
        List<Double> latencies = new ArrayList<>();
        Set<String> drawn = new HashSet<>();
        for (StorageRunResult run : runs) {
            Histogram h = steady ? run.steadyLatency() : run.hotLatency();
            if (h == null || h.getTotalCount() == 0 || !drawn.add(run.policy())) {
                continue; // nothing to draw, or the same policy's run again (a seed given twice)
            }
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            double floor = 1 - 1.0 / h.getTotalCount();
            for (HistogramIterationValue v : h.percentiles(5)) {
                double fraction = Math.min(v.getPercentileLevelIteratedTo() / 100, Math.min(floor, 1 - 1e-6));
                x.add(Math.max(0.01, v.getValueIteratedTo() / 1e6));
                y.add(-Math.log10(1 - fraction));
            }
            latencies.addAll(x);
            XYSeries series = chart.addSeries(run.policy(), x, y);
            series.setMarker(SeriesMarkers.NONE);
            series.setLineColor(colour(run.policy()));
            float[] dashes = dashes(run.policy());
            series.setLineStyle(
                    dashes == null
                            ? new BasicStroke(1.6f)
                            : new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, dashes, 0f));
        }
        ReportCharts.logXAxis(chart.getStyler(), latencies);
        return chart;
    }

    /**
     * The token pools of {@code run} interval by interval around its first measured burst, in % of the
     * budget C, with the arriving cost they are drawn against; the legend in a column beside the plot.
     */
    static XYChart pools(StorageRunResult run) {
        IntervalSeries s = run.series();
        XYChart chart = new XYChartBuilder()
                .width(620)
                .height(380)
                .title(run.policy())
                .xAxisTitle("ms since the burst began")
                .yAxisTitle("% of the budget C per interval")
                .build();
        ReportCharts.style(chart);
        // The legend in a column right of the plot, where XChart makes room for it: a row below the plot is
        // centred under the plot, which starts after the y axis's labels, so wide labels (1,000 %) pushed its
        // end past the chart's right edge.
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Vertical);
        long step = s.intervalNanos();
        int center = (int) (s.firstBurstNanos() / step);
        int from = Math.max(0, center - (int) (BEFORE_BURST_MILLIS * 1_000_000L / step));
        int to = Math.min(s.hotArrivingCostUnits().length - 1, center + (int) (AFTER_BURST_MILLIS * 1_000_000L / step));
        double budget = Math.max(1, s.budgetCostUnits());
        addLine(chart, "hot in", s.hotArrivingCostUnits(), from, to, center, step, budget, true);
        addLine(chart, "steady in", s.steadyArrivingCostUnits(), from, to, center, step, budget, true);
        addLine(chart, "main", s.drawnMainCostUnits(), from, to, center, step, budget, false);
        addLine(chart, "reserve", s.drawnReserveCostUnits(), from, to, center, step, budget, false);
        addLine(chart, "borrowed", s.borrowedCostUnits(), from, to, center, step, budget, false);
        addLine(chart, "repaid", s.repaidCostUnits(), from, to, center, step, budget, false);
        addLine(chart, "debt", s.debtCostUnits(), from, to, center, step, budget, false);
        return chart;
    }

    private static void addLine(
            XYChart chart,
            String name,
            float[] values,
            int from,
            int to,
            int center,
            long step,
            double budget,
            boolean dashed) {
        if (values == null || to <= from) {
            return;
        }
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            x.add((i - center) * step / 1e6);
            y.add(100 * values[i] / budget);
        }
        XYSeries series = chart.addSeries(name, x, y);
        series.setMarker(SeriesMarkers.NONE);
        series.setLineColor(POOL_COLOURS.get(name));
        series.setLineStyle(
                dashed
                        ? new BasicStroke(
                                1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {4f, 3f}, 0f)
                        : new BasicStroke(1.5f));
    }

    private static String escape(String text) {
        return HtmlPages.escape(text);
    }
}
