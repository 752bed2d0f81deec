package dev.tailor.lab;

import dev.tailor.lab.report.HtmlPages;
import dev.tailor.lab.report.ReportCharts;
import dev.tailor.lab.report.StorageReport;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The NBD experiments' report: an HTML page with the Markdown tables the command printed and plots made
 * with XChart, each plot also a PNG file next to the page (so README and docs can embed them). Burst:
 * the steady tenants' and the bursty tenant's latency tail in each mode (admission off, on, the paper's,
 * the door alone), each mode in the colour of the storage simulator's policy with its mechanism. Low
 * load: the latency tail, fifo vs priority, and the health-check age over time against the bound of twice
 * its period. Tails are drawn like the storage simulator's CDFs ({@code StorageReport}): latency on a log
 * axis, the fraction of requests on a "nines" axis (−log10(1 − F)), so P90, P99, P99.9 and P99.99 are
 * evenly spaced.
 */
public final class ExperimentReport {

    /** The low-load test's fifo loop (the baseline) and priority loop (ours), Okabe–Ito. */
    static final Color BASELINE = new Color(0x00, 0x00, 0x00);

    static final Color OURS = new Color(0x00, 0x72, 0xB2);

    /**
     * The low-load plot's bound, a neutral grey dashed line: no mechanism's colour (segment-admission's is
     * vermillion, fifo's black), so the bound is not read as a run.
     */
    static final Color BOUND = new Color(0x77, 0x77, 0x77);

    /**
     * The storage simulator's policy with each burst mode's mechanism, whose colour the mode is drawn in
     * ({@link StorageReport#colour}), so that one mechanism has one colour in every report: off is fifo (no
     * admission), on is segment-admission (admission with its fair dispatch door), paper is
     * segment-admission-paper (the paper's mechanism, no door) and door is fair-dispatch (the door alone).
     */
    static final Map<String, String> MODE_POLICIES = Map.of(
            "off", "fifo",
            "on", "segment-admission",
            "paper", "segment-admission-paper",
            "door", "fair-dispatch");

    /** A burst mode's line colour: its mechanism's in the storage simulator's plots ({@link #MODE_POLICIES}). */
    static Color colour(String mode) {
        String policy = MODE_POLICIES.get(mode);
        if (policy == null) {
            throw new IllegalArgumentException(
                    "mode : \"" + mode + "\" (expected: one of " + BurstExperiment.MODES + ")");
        }
        return StorageReport.colour(policy);
    }

    private ExperimentReport() {}

    /** A plot and the PNG file name it is written to. */
    record Chart(String fileName, XYChart chart) {}

    /**
     * One part of the page.
     *
     * @param heading  its title
     * @param intro    paragraphs of plain text
     * @param markdown the tables as printed, in Markdown (shown as HTML tables)
     * @param charts   its plots
     * @param pooling  what its latency tails pool, for the note under the page ("" for none)
     */
    public record Section(
            String heading, List<String> intro, List<String> markdown, List<Chart> charts, String pooling) {

        public Section(String heading, List<String> intro, List<String> markdown, List<Chart> charts) {
            this(heading, intro, markdown, charts, "");
        }
    }

    /** The burst experiment's plots, files {@code PREFIX-steady-tail.png} and {@code PREFIX-bursty-tail.png}. */
    static List<Chart> burstCharts(BurstExperiment.Result r, String prefix) {
        String runs = r.settings().rounds() + (r.settings().rounds() == 1 ? " round" : " rounds") + " of "
                + r.settings().runtimeSeconds() + " s";
        XYChart steady = tailChart("Steady tenants' latency tail (" + runs + ")");
        XYChart bursty = tailChart("Bursty tenant's latency tail (" + runs + ")");
        for (String mode : r.settings().modes()) {
            Color colour = colour(mode);
            String label = mode.equals("door") ? "door alone" : "admission " + mode;
            addTail(steady, label, r.steady(mode), colour);
            addTail(bursty, label, r.bursty(mode), colour);
        }
        return List.of(new Chart(prefix + "-steady-tail.png", steady), new Chart(prefix + "-bursty-tail.png", bursty));
    }

    /** The low-load experiment's plots, {@code PREFIX-tail.png} and {@code PREFIX-health-check-age.png}. */
    static List<Chart> lowLoadCharts(LowLoadExperiment.Result r, String prefix) {
        LowLoadExperiment.Settings s = r.settings();
        XYChart tail = tailChart("Read latency tail at low load (" + s.rounds()
                + (s.rounds() == 1 ? " round" : " rounds") + " of " + s.runtimeSeconds() + " s)");
        for (String mode : LowLoadExperiment.MODES) {
            addTail(tail, mode + " loop", r.pooled(mode), mode.equals("fifo") ? BASELINE : OURS);
        }
        XYChart age = new XYChartBuilder()
                .width(720)
                .height(420)
                .title("Health-check age while fio measured (per metrics window)")
                .xAxisTitle("seconds into the measured time")
                .yAxisTitle("largest gap between health checks (ms)")
                .build();
        ReportCharts.style(age);
        age.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE); // one entry per run: a column
        age.getStyler().setYAxisMin(0.0);
        double end = 0;
        for (LowLoadExperiment.Run run : r.runs()) {
            if (run.ages().isEmpty()) {
                continue;
            }
            List<Double> x = run.ages().stream()
                    .map(LowLoadExperiment.AgeSample::secondsIntoMeasurement)
                    .toList();
            List<Double> y = run.ages().stream()
                    .map(LowLoadExperiment.AgeSample::maxAgeMillis)
                    .toList();
            end = Math.max(end, x.get(x.size() - 1));
            XYSeries series = age.addSeries(run.mode() + " " + run.round(), x, y);
            series.setLineColor(run.mode().equals("fifo") ? BASELINE : OURS);
            series.setMarkerColor(run.mode().equals("fifo") ? BASELINE : OURS);
            series.setMarker(run.round() % 2 == 1 ? SeriesMarkers.CIRCLE : SeriesMarkers.DIAMOND);
            series.setLineStyle(new BasicStroke(1f));
        }
        if (end > 0) {
            XYSeries bound =
                    age.addSeries("bound (2 × period)", List.of(0.0, end), List.of(s.boundMillis(), s.boundMillis()));
            bound.setMarker(SeriesMarkers.NONE);
            bound.setLineColor(BOUND);
            bound.setLineStyle(
                    new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        }
        return List.of(new Chart(prefix + "-tail.png", tail), new Chart(prefix + "-health-check-age.png", age));
    }

    private static XYChart tailChart(String title) {
        XYChart chart = ReportCharts.tailChart(title, 420);
        return chart;
    }

    /** Adds {@code latency} as a tail curve; a histogram without samples adds nothing (no data). */
    private static void addTail(XYChart chart, String name, FioLatency latency, Color colour) {
        if (latency.samples() == 0) {
            return;
        }
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        double total = latency.samples();
        double ceiling = Math.min(1 - 1 / total, 1 - 1e-6);
        long seen = 0;
        for (Map.Entry<Long, Long> bin : latency.binsNanos().entrySet()) {
            seen += bin.getValue();
            double fraction = Math.min(seen / total, ceiling);
            x.add(Math.max(0.001, bin.getKey() / 1e6));
            y.add(-Math.log10(1 - fraction));
        }
        XYSeries series = chart.addSeries(
                name + " (" + String.format(Locale.ROOT, "%,d", latency.samples()) + " requests)", x, y);
        series.setMarker(SeriesMarkers.NONE);
        series.setLineColor(colour);
        series.setLineStyle(new BasicStroke(1.6f));
    }

    /**
     * Writes {@code dir/fileName} and each section's PNGs next to it (creating {@code dir}), replacing
     * earlier ones.
     *
     * @return the page
     * @throws IOException if a file cannot be written
     */
    public static Path write(Path dir, String fileName, String title, List<Section> sections) throws IOException {
        return write(dir, fileName, HtmlPages.Frame.of(title, List.of()), sections);
    }

    /** As {@link #write(Path, String, String, List)}, in a frame with a summary and the commands to reproduce. */
    public static Path write(Path dir, String fileName, HtmlPages.Frame frame, List<Section> sections)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        StringBuilder html = new StringBuilder(HtmlPages.start(frame));
        for (Section section : sections) {
            html.append("<h2>").append(escape(section.heading())).append("</h2>\n");
            for (String paragraph : section.intro()) {
                html.append("<p class=\"note\">").append(escape(paragraph)).append("</p>\n");
            }
            html.append("<div class=\"charts\">\n");
            for (Chart chart : section.charts()) {
                BitmapEncoder.saveBitmap(
                        chart.chart(), dir.resolve(chart.fileName()).toString(), BitmapEncoder.BitmapFormat.PNG);
                html.append("<img alt=\"")
                        .append(escape(chart.chart().getTitle()))
                        .append("\" width=\"")
                        .append(chart.chart().getWidth())
                        .append("\" height=\"")
                        .append(chart.chart().getHeight())
                        .append("\" src=\"")
                        .append(escape(chart.fileName()))
                        .append("\">\n");
            }
            html.append("</div>\n").append(HtmlPages.blocks(section.markdown()));
        }
        List<String> pooling = sections.stream()
                .map(Section::pooling)
                .filter(p -> !p.isEmpty())
                .toList();
        html.append("<p class=\"note\">")
                .append(escape("Latency tails: the vertical axis is stretched towards the tail (it shows "
                        + "−log10(1 − F)), so P90, P99, P99.9 and P99.99 are evenly spaced; the curves are fio's latency "
                        + "histograms (bins about 1.5 % wide)"
                        + (pooling.isEmpty() ? "" : "; " + String.join("; ", pooling))
                        + ". docs/nbd.md, \"Experiments with real clients\", describes "
                        + (sections.size() == 1 ? "the setup." : "both setups.")))
                .append("</p>\n");
        html.append(HtmlPages.end(frame));
        return HtmlPages.write(dir, fileName, html);
    }

    private static String escape(String text) {
        return HtmlPages.escape(text);
    }

    /** " Work directory: DIR." while {@code dir} exists (the demo's temporary one is gone by then), else "". */
    private static String workDirectory(Path dir) {
        return dir != null
                        && Files.isDirectory(dir)
                        && !dir.getFileName().toString().startsWith("tailor-demo-")
                        && (dir.getParent() == null
                                || !dir.getParent().getFileName().toString().startsWith("tailor-demo-experiments-"))
                ? " Work directory: " + dir + "."
                : "";
    }

    /** The burst experiment's part of a report. */
    public static Section section(BurstExperiment.Result result, String prefix) {
        double judged = Demo.burstPercent(result);
        boolean door = result.settings().modes().contains("door");
        return new Section(
                door
                        ? "Burst: segment admission off vs on, and the fair dispatch door alone"
                        : "Burst: segment admission off vs on",
                List.of("Steady tenants' " + Demo.percentileName(judged)
                        + " is the figure that should be clearly lower with admission on"
                        + " (paper, NSDI 2026: up to -97 % in burst tests)"
                        + (door ? " and with the door alone (admission off, --fair-dispatch on)" : "")
                        + (judged == 99.99
                                ? ""
                                : ": the highest percentile these runs' steady samples resolve; P99.99 needs 10,000")
                        + "."
                        + workDirectory(result.settings().dir())),
                BurstExperiment.markdown(result),
                burstCharts(result, prefix),
                burstPooling(result.settings()));
    }

    /** What the burst plots' curves pool: the steady tenants' and the bursty tenant's, over the rounds. */
    static String burstPooling(BurstExperiment.Settings s) {
        String rounds = s.rounds() == 1 ? "" : "the " + s.rounds() + " rounds";
        String steady = s.steady() == 1 ? "" : "the " + s.steady() + " steady tenants";
        String steadyParts = steady.isEmpty() || rounds.isEmpty() ? steady + rounds : steady + " and " + rounds;
        return "burst: each mode's steady curve "
                + (steadyParts.isEmpty() ? "is one tenant's one run" : "pools " + steadyParts)
                + ", its bursty curve "
                + (rounds.isEmpty()
                        ? "is the one bursty tenant's one run"
                        : "pools the one bursty tenant's " + s.rounds() + " rounds");
    }

    /** What the low-load plot's curves pool: the one fio job's runs. */
    static String lowLoadPooling(LowLoadExperiment.Settings s) {
        return "low load: each loop's curve "
                + (s.rounds() == 1
                        ? "is the one fio job's one run"
                        : "pools the one fio job's " + s.rounds() + " rounds");
    }

    /** The low-load experiment's part of a report. */
    public static Section section(LowLoadExperiment.Result result, String prefix) {
        return new Section(
                "Low load: fifo vs priority event loop",
                List.of("The targets: P99.9 at least 22 % lower with the priority loop (the paper's deployed"
                        + " figure, NSDI 2026), and the health-check age at most twice its period."
                        + workDirectory(result.settings().dir())),
                LowLoadExperiment.markdown(result),
                lowLoadCharts(result, prefix),
                lowLoadPooling(result.settings()));
    }
}
