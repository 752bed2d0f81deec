package dev.tailor.lab.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.lab.StorageOutput;
import dev.tailor.sim.storage.IntervalSeries;
import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageSimulation;
import dev.tailor.sim.storage.SweepSummary;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;

/** The storage report: the sweep summary, every column of the text table, one colour per policy. */
class StorageReportTest {

    @TempDir
    Path dir;

    /**
     * A sweep of two seeds: steady P99.999 of fifo 10 and 20 ms, mclock 8 and 10 ms, segment-admission 4 and
     * 12 ms, so segment-admission's ratios to fifo are 0.40 and 0.60, to mclock 0.50 and 1.20. Steady
     * tenants' within-baseline P99.999 is 2 ms less in each run: fifo 8 and 18, mclock 6 and 8,
     * segment-admission 2 and 10 ms.
     */
    private static List<StorageRunResult> sweep() {
        return List.of(
                run("fifo", 1, 10.0, 3.0, null),
                run("mclock", 1, 8.0, 4.0, null),
                run("segment-admission", 1, 4.0, 6.0, counters()),
                run("fifo", 2, 20.0, 3.0, null),
                run("mclock", 2, 10.0, 2.0, null),
                run("segment-admission", 2, 12.0, 5.0, counters()));
    }

    @Test
    void sweep_theReportHasTheSweepSummaryAsATable_withTheTextsFigures() throws IOException {
        String html = Files.readString(StorageReport.write(dir, "sweep", List.of(), List.of(), sweep()));
        StringWriter text = new StringWriter();
        StorageOutput.summary(new PrintWriter(text, true), SweepSummary.of(sweep()));

        assertThat(html)
                .contains("<h2>Sweep summary</h2>")
                .contains("<caption>sweep over 2 cells (scenario variant × seed): ratio to the peer in the same cell,"
                        + " worst / median / best (below 1: better than the peer)</caption>")
                .contains("<p class=\"note\">Ratio = the policy's figure ÷ the peer's");
        // segment-admission: ÷ fifo 0.60 / 0.50 / 0.40, ÷ mclock 1.20 / 0.85 / 0.50, hot P99 ÷ mclock
        // (6 ÷ 4, 5 ÷ 2) 2.50 / 2.00 / 1.50; within baseline ÷ fifo (2 ÷ 8, 10 ÷ 18) 0.56 / 0.40 / 0.25,
        // ÷ mclock (2 ÷ 6, 10 ÷ 8) 1.25 / 0.79 / 0.33; one cell above 1.1 × mclock.
        assertThat(text.toString())
                .contains("within P99.999 ÷ fifo", "within P99.999 ÷ mclock")
                .containsPattern("segment-admission +0.60 / 0.50 / 0.40 +1.20 / 0.85 / 0.50 +2.50 / 2.00 / 1.50 +"
                        + "0.56 / 0.40 / 0.25 +1.25 / 0.79 / 0.33 +2.5%  0 above fifo, 1 above 1.1 × mclock");
        assertThat(html)
                .contains("<th class=\"group\" colspan=\"3\">within P99.999 ÷ fifo</th>"
                        + "<th class=\"group\" colspan=\"3\">within P99.999 ÷ mclock</th>")
                .contains("<tr><td class=\"l\">segment-admission</td><td>0.60</td><td>0.50</td><td>0.40</td>"
                        + "<td>1.20</td><td>0.85</td><td>0.50</td><td>2.50</td><td>2.00</td><td>1.50</td>"
                        + "<td>0.56</td><td>0.40</td><td>0.25</td><td>1.25</td><td>0.79</td><td>0.33</td>"
                        + "<td>2.5%</td><td class=\"l\">0 above fifo, 1 above 1.1 × mclock</td></tr>")
                // fifo against itself; no fifo-to-mclock steady ratio is missing: every cell has both
                .contains("<tr><td class=\"l\">fifo</td><td>1.00</td><td>1.00</td><td>1.00</td>"
                        + "<td>2.00</td><td>1.63</td><td>1.25</td>")
                .contains("<li>within = steady tenants' requests within their tenant's baseline when they arrived")
                .contains("<li>mclock = in each cell the better (shorter steady tail) of mclock and"
                        + " mclock-per-client, of those run</li>");
        // Every note under the text's table is under the report's, and no raw text table is in the page.
        for (String note : StorageFigures.sweepNotes(SweepSummary.of(sweep()))) {
            assertThat(text.toString()).contains("  " + note);
            assertThat(html).contains("<li>" + HtmlPages.escape(note) + "</li>");
        }
        assertThat(html).doesNotContain("0.60 / 0.50 / 0.40").doesNotContain("| ");
    }

    @Test
    void oneSeedOfOneVariant_isNoSweep_soTheReportHasNoSweepSummary() throws IOException {
        String html = Files.readString(StorageReport.write(dir, "one", List.of(), List.of(), sweep().subList(0, 3)));

        assertThat(html).doesNotContain("Sweep summary").doesNotContain("sweep over");
    }

    @Test
    void results_theReportHasEveryColumnOfTheTextTable_withItsMarksForMissingFigures() throws IOException {
        List<StorageRunResult> runs = sweep().subList(0, 3);
        String html = Files.readString(StorageReport.write(dir, "columns", List.of(), List.of(), runs));
        StringWriter text = new StringWriter();
        StorageOutput.table(new PrintWriter(text, true), runs);

        for (String column : StorageFigures.COUNTERS) {
            assertThat(text.toString()).contains(column);
            assertThat(html).contains("<th>" + HtmlPages.escape(column) + "</th>");
        }
        assertThat(html)
                .contains("<th class=\"group\" colspan=\"6\">steady segments</th>")
                .contains("<th class=\"group\" colspan=\"6\">hot segments</th>")
                .contains("<caption>Latency of requests within their tenant's baseline, ms</caption>")
                .contains("<th class=\"group\" colspan=\"6\">steady tenants within baseline</th>")
                .contains("<th class=\"group\" colspan=\"6\">all within baseline</th>")
                // mclock's within-baseline rows: steady tenants' (P99.999 6 ms), then all tenants'.
                .contains("<td>150000</td><td>0.90</td><td>1.80</td><td>2.70</td><td>3.20</td><td>6</td>"
                        + "<td>180000</td><td>0.80</td><td>1.70</td><td>2.60</td><td>n/r</td><td>n/r</td></tr>")
                // fifo: no admission counters ("–"), its waited share; P99.99 not resolvable ("n/r").
                .contains("<tr><td class=\"l\">robustness-mild</td><td class=\"l\">fifo</td><td>17743</td>"
                        + "<td>30.1%</td><td>2.5%</td><td>7.3%</td><td>–</td><td>–</td><td>–</td><td>–</td>"
                        + "<td>0</td><td>–</td></tr>")
                .contains("<tr><td class=\"l\">robustness-mild</td><td class=\"l\">segment-admission</td>"
                        + "<td>17743</td><td>30.1%</td><td>2.5%</td><td>7.3%</td><td>1.5%</td><td>0.050%</td>"
                        + "<td>3.0%</td><td>4.5%</td><td>0</td><td>2% / 40%</td></tr>")
                // hot segments: P50 2.5 ms, P99 3 ms, P99.9 not resolvable, P99.99 4 ms, P99.999 not resolvable.
                .contains("<td>50000</td><td>2.50</td><td>3</td><td>n/r</td><td>4</td><td>n/r</td></tr>")
                .contains("<li>n/r = not resolvable: fewer requests than the percentile needs (P99.99: 10,000,"
                        + " P99.999: 100,000).</li>");
        // The same strings in the text table.
        assertThat(text.toString())
                .contains("steady tenants within baseline (150000)", "all within baseline (180000)")
                .containsPattern("mclock +0.90 +1.80 +2.70 +3.20 +6  +0.80 +1.70 +2.60 +n/r +n/r\\n")
                .contains("within baseline = the request was within its tenant's baseline when it arrived")
                .containsPattern("fifo +17743 +30.1% +2.5% +7.3% +– +– +– +– +0 +–\\n")
                .containsPattern(
                        "segment-admission +17743 +30.1% +2.5% +7.3% +1.5% +0.050% +3.0% +4.5% +0 +2% / 40%\\n");
    }

    @Test
    void colours_eachPolicyHasItsOwnFixedColour_whateverElseTheReportHolds() {
        // The policies compared have eight distinct colours, solid lines.
        Set<Color> policies = new HashSet<>();
        for (String policy : StorageSimulation.POLICIES) {
            policies.add(StorageReport.colour(policy));
            assertThat(StorageReport.dashes(policy)).as(policy).isNull();
        }
        assertThat(policies).hasSize(StorageSimulation.POLICIES.size());
        // mclock and fair-dispatch, once two close colours, are now far apart in hue.
        assertThat(hueGap(StorageReport.colour("mclock"), StorageReport.colour("fair-dispatch")))
                .isGreaterThan(0.25);
        assertThat(StorageReport.colour("mclock")).isEqualTo(new Color(0x00, 0x72, 0xB2));
        // Every ablation is dashed or dotted, told apart from every other policy by colour and pattern.
        Set<String> styles = new HashSet<>();
        for (String policy : StorageSimulation.policyNames()) {
            styles.add(StorageReport.colour(policy) + Arrays.toString(StorageReport.dashes(policy)));
        }
        assertThat(styles).hasSize(StorageSimulation.policyNames().size());
        assertThat(StorageSimulation.ABLATIONS)
                .allSatisfy(a -> assertThat(StorageReport.dashes(a)).isNotNull());
        assertThat(StorageSimulation.ABLATIONS)
                .allSatisfy(a -> assertThat(policies).doesNotContain(StorageReport.colour(a)));

        // In the plots: the same colour for a policy in two reports of different policies, and in both classes.
        XYChart all = StorageReport.cdf(sweep().subList(0, 3), true, "steady");
        XYChart two = StorageReport.cdf(List.of(sweep().get(2), sweep().get(1)), false, "hot");
        for (XYChart chart : List.of(all, two)) {
            for (String policy : List.of("mclock", "segment-admission")) {
                XYSeries series = chart.getSeriesMap().get(policy);
                assertThat(series.getLineColor()).as(policy).isEqualTo(StorageReport.colour(policy));
                assertThat(((BasicStroke) series.getLineStyle()).getDashArray()).isNull();
            }
        }
        assertThat(all.getSeriesMap().get("fifo").getLineColor()).isEqualTo(Color.BLACK);
        StorageRunResult ablation = withPolicy(sweep().get(2), "no-borrow");
        XYSeries dashed = StorageReport.cdf(List.of(ablation), true, "ablation")
                .getSeriesMap()
                .get("no-borrow");
        assertThat(dashed.getLineColor()).isEqualTo(StorageReport.colour("no-borrow"));
        assertThat(((BasicStroke) dashed.getLineStyle()).getDashArray()).isEqualTo(StorageReport.dashes("no-borrow"));
    }

    @Test
    void colours_everyTwoPoliciesFarApart_andNoPoolLineInAPolicysOrAnAblationsColour() {
        // Why: fifo's black and token-bucket's dark grey (19 CIEDE2000 apart) were hard to tell apart as thin
        // lines, and the pool plots drew "hot in" and "steady in" in segment-admission's vermillion and
        // mclock's blue, so a reader comparing plots took them for those policies.
        assertThat(deltaE2000(new double[] {50, 2.6772, -79.7751}, new double[] {50, 0, -82.7485}))
                .isCloseTo(2.0425, within(1e-4)); // Sharma, Wu and Dalal's test data, pair 1
        List<String> policies = StorageSimulation.POLICIES;
        for (int i = 0; i < policies.size(); i++) {
            for (int j = i + 1; j < policies.size(); j++) {
                String a = policies.get(i);
                String b = policies.get(j);
                assertThat(deltaE2000(StorageReport.colour(a), StorageReport.colour(b)))
                        .as("%s / %s", a, b)
                        .isGreaterThanOrEqualTo(20);
            }
        }
        Map<String, Color> pool = StorageReport.POOL_COLOURS;
        for (Map.Entry<String, Color> line : pool.entrySet()) {
            for (String policy : StorageSimulation.policyNames()) {
                assertThat(deltaE2000(line.getValue(), StorageReport.colour(policy)))
                        .as("pool %s / %s", line.getKey(), policy)
                        .isGreaterThanOrEqualTo(15);
            }
            for (Map.Entry<String, Color> other : pool.entrySet()) {
                if (!other.getKey().equals(line.getKey())) {
                    assertThat(deltaE2000(line.getValue(), other.getValue()))
                            .as("pool %s / %s", line.getKey(), other.getKey())
                            .isGreaterThanOrEqualTo(15);
                }
            }
        }

        // In the plot, every pool line in its colour.
        float[] ramp = {0, 10, 20, 30, 40, 50};
        IntervalSeries series = new IntervalSeries(
                0, 10_000_000, 1000, ramp, ramp, ramp, ramp, ramp, ramp, ramp, ramp, ramp, 20_000_000);
        XYChart plot = StorageReport.pools(withSeries(sweep().get(2), series));
        assertThat(plot.getSeriesMap().keySet()).containsExactlyElementsOf(pool.keySet());
        pool.forEach((name, colour) -> assertThat(plot.getSeriesMap().get(name).getLineColor())
                .as(name)
                .isEqualTo(colour));
    }

    @Test
    void poolPlot_drawsItsLegendWhole_howeverWideTheYAxissLabels() {
        // Why: the legend was a row below the plot, centred under the plot, which starts after the y axis's
        // labels; with the axis up to 1,000 % its last entry read "deb", cut off at the chart's right edge.
        // The chart is painted at its own size on a larger canvas: nothing may land outside its size.
        for (float topPercent : new float[] {60, 1_000, 100_000}) {
            float[] ramp = {0, 100, 200, 300, 400, 500};
            float[] debt = new float[ramp.length];
            for (int i = 0; i < debt.length; i++) {
                debt[i] = topPercent * 10 * i / (debt.length - 1); // budget 1,000 cost units: 10 per %
            }
            IntervalSeries series = new IntervalSeries(
                    0, 10_000_000, 1000, ramp, ramp, ramp, ramp, ramp, ramp, debt, ramp, ramp, 20_000_000);
            XYChart plot = StorageReport.pools(withSeries(sweep().get(2), series));
            BufferedImage canvas =
                    new BufferedImage(plot.getWidth() + 200, plot.getHeight() + 200, BufferedImage.TYPE_INT_ARGB);
            Graphics2D g = canvas.createGraphics();
            try {
                plot.paint(g, plot.getWidth(), plot.getHeight());
            } finally {
                g.dispose();
            }
            int inside = 0;
            int outside = 0;
            for (int x = 0; x < canvas.getWidth(); x++) {
                for (int y = 0; y < canvas.getHeight(); y++) {
                    boolean painted = (canvas.getRGB(x, y) >>> 24) != 0;
                    if (x < plot.getWidth() && y < plot.getHeight()) {
                        inside += painted ? 1 : 0;
                    } else {
                        outside += painted ? 1 : 0;
                    }
                }
            }
            assertThat(inside).as("painted inside, y axis to %s %%", topPercent).isPositive();
            assertThat(outside)
                    .as("pixels painted right of or below the chart, y axis to %s %%", topPercent)
                    .isZero();
        }
    }

    @Test
    void manyNotes_foldAfterTheSweepSummary_andManyPolicies_putTheLegendBesideThePlot() throws IOException {
        List<String> notes = new ArrayList<>();
        for (int i = 0; i <= StorageReport.FOLDED_NOTES; i++) {
            notes.add("warning: run " + i + " left requests unfinished");
        }
        String html = Files.readString(StorageReport.write(dir, "notes", List.of(), notes, sweep()));
        String few = Files.readString(StorageReport.write(dir, "few", List.of(), notes.subList(0, 2), sweep()));

        assertThat(html).contains("<details><summary>" + notes.size() + " notes and warnings</summary>");
        assertThat(html.indexOf("<h2>Sweep summary</h2>")).isLessThan(html.indexOf("warning: run 0"));
        assertThat(few).doesNotContain("<details>").contains("warning: run 1");

        List<StorageRunResult> many = new ArrayList<>();
        for (int i = 0; i <= StorageReport.LEGEND_INSIDE_MAX; i++) {
            many.add(withPolicy(sweep().get(0), "ablation-" + i));
        }
        assertThat(StorageReport.cdf(many, true, "many").getStyler().getLegendPosition())
                .isEqualTo(Styler.LegendPosition.OutsideE);
        assertThat(StorageReport.cdf(many.subList(0, 2), true, "two")
                        .getStyler()
                        .getLegendPosition())
                .isEqualTo(Styler.LegendPosition.InsideNW);
    }

    private static double hueGap(Color a, Color b) {
        float ha = Color.RGBtoHSB(a.getRed(), a.getGreen(), a.getBlue(), null)[0];
        float hb = Color.RGBtoHSB(b.getRed(), b.getGreen(), b.getBlue(), null)[0];
        double gap = Math.abs(ha - hb);
        return Math.min(gap, 1 - gap);
    }

    private static StorageRunResult.AdmissionCounters counters() {
        LatencySummary some = new LatencySummary(10, 1.0, 2.0, null, null, null, 1.0, 2.0);
        return new StorageRunResult.AdmissionCounters(
                some, some, 2.0, 40.0, 0, 1000, 15, 0, 30, 45, 0, 1.5, 0.05, 3.0, 4.5, 1);
    }

    /** A run whose steady tenants' P99.999 and hot tenants' P99 are the figures given, ms. */
    private static StorageRunResult run(
            String policy, long seed, double steadyTail, double hotP99, StorageRunResult.AdmissionCounters admission) {
        LatencySummary steady = new LatencySummary(200_000, 1.0, 2.0, 3.0, 3.5, steadyTail, 1.0, steadyTail);
        LatencySummary hot = new LatencySummary(50_000, 1.0, hotP99, 3.0, null, null, 1.0, 5.0);
        LatencySummary hotSegments = new LatencySummary(50_000, 2.5, 3.0, null, 4.0, null, 1.0, 5.0);
        LatencySummary steadyWithin =
                new LatencySummary(150_000, 0.9, 1.8, 2.7, 3.2, steadyTail - 2, 0.8, steadyTail - 2);
        LatencySummary allWithin = new LatencySummary(180_000, 0.8, 1.7, 2.6, null, null, 0.7, 9.0);
        Histogram latencies = new Histogram(3);
        List<Long> micros = new ArrayList<>(List.of(300L, 500L, 900L, 2_000L, (long) (steadyTail * 1000)));
        micros.forEach(us -> latencies.recordValue(us * 1000));
        return new StorageRunResult(
                "robustness-mild",
                null,
                policy,
                seed,
                20,
                250_000,
                steady,
                hot,
                steady,
                hotSegments,
                steadyWithin,
                allWithin,
                17743.2,
                69.3,
                30.12,
                2.5,
                7.25,
                0,
                0,
                admission,
                null,
                300_000,
                0,
                0,
                latencies,
                latencies,
                null);
    }

    /** CIEDE2000 colour difference of two sRGB colours (D65). */
    private static double deltaE2000(Color a, Color b) {
        return deltaE2000(lab(a), lab(b));
    }

    /** CIELAB (D65) of an sRGB colour. */
    private static double[] lab(Color c) {
        double r = linear(c.getRed());
        double g = linear(c.getGreen());
        double b = linear(c.getBlue());
        double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        double fx = labF(x);
        double fy = labF(y);
        double fz = labF(z);
        return new double[] {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
    }

    private static double linear(int channel) {
        double v = channel / 255.0;
        return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    }

    private static double labF(double t) {
        return t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16.0 / 116;
    }

    /** CIEDE2000 (Sharma, Wu and Dalal 2005) of two CIELAB colours. */
    private static double deltaE2000(double[] lab1, double[] lab2) {
        double c1 = Math.hypot(lab1[1], lab1[2]);
        double c2 = Math.hypot(lab2[1], lab2[2]);
        double cMean7 = Math.pow((c1 + c2) / 2, 7);
        double g = 0.5 * (1 - Math.sqrt(cMean7 / (cMean7 + Math.pow(25, 7))));
        double a1 = (1 + g) * lab1[1];
        double a2 = (1 + g) * lab2[1];
        double c1p = Math.hypot(a1, lab1[2]);
        double c2p = Math.hypot(a2, lab2[2]);
        double h1 = c1p == 0 ? 0 : (Math.toDegrees(Math.atan2(lab1[2], a1)) + 360) % 360;
        double h2 = c2p == 0 ? 0 : (Math.toDegrees(Math.atan2(lab2[2], a2)) + 360) % 360;
        double dL = lab2[0] - lab1[0];
        double dC = c2p - c1p;
        double dh = 0;
        if (c1p * c2p != 0) {
            dh = h2 - h1;
            dh = dh > 180 ? dh - 360 : dh < -180 ? dh + 360 : dh;
        }
        double dH = 2 * Math.sqrt(c1p * c2p) * Math.sin(Math.toRadians(dh / 2));
        double lMean = (lab1[0] + lab2[0]) / 2;
        double cMeanP = (c1p + c2p) / 2;
        double hMean;
        if (c1p * c2p == 0) {
            hMean = h1 + h2;
        } else if (Math.abs(h1 - h2) <= 180) {
            hMean = (h1 + h2) / 2;
        } else {
            hMean = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2;
        }
        double t = 1
                - 0.17 * Math.cos(Math.toRadians(hMean - 30))
                + 0.24 * Math.cos(Math.toRadians(2 * hMean))
                + 0.32 * Math.cos(Math.toRadians(3 * hMean + 6))
                - 0.20 * Math.cos(Math.toRadians(4 * hMean - 63));
        double dTheta = 30 * Math.exp(-Math.pow((hMean - 275) / 25, 2));
        double cMeanP7 = Math.pow(cMeanP, 7);
        double rc = 2 * Math.sqrt(cMeanP7 / (cMeanP7 + Math.pow(25, 7)));
        double sl = 1 + 0.015 * Math.pow(lMean - 50, 2) / Math.sqrt(20 + Math.pow(lMean - 50, 2));
        double sc = 1 + 0.045 * cMeanP;
        double sh = 1 + 0.015 * cMeanP * t;
        double rt = -Math.sin(Math.toRadians(2 * dTheta)) * rc;
        return Math.sqrt(
                Math.pow(dL / sl, 2) + Math.pow(dC / sc, 2) + Math.pow(dH / sh, 2) + rt * (dC / sc) * (dH / sh));
    }

    private static StorageRunResult withSeries(StorageRunResult r, IntervalSeries series) {
        return copy(r, r.policy(), series);
    }

    private static StorageRunResult withPolicy(StorageRunResult r, String policy) {
        return copy(r, policy, r.series());
    }

    /** {@code r} with another policy name and interval series. */
    private static StorageRunResult copy(StorageRunResult r, String policy, IntervalSeries series) {
        return new StorageRunResult(
                r.scenario(),
                r.burstMultiplier(),
                policy,
                r.seed(),
                r.measuredSeconds(),
                r.offeredRequests(),
                r.steady(),
                r.hot(),
                r.steadySegments(),
                r.hotSegments(),
                r.steadyWithinBaseline(),
                r.allWithinBaseline(),
                r.throughputRequestsPerSecond(),
                r.throughputMiBPerSecond(),
                r.backendUtilizationPercent(),
                r.unusedCapacityPercent(),
                r.waitingTimePercent(),
                r.refused(),
                r.unfinished(),
                r.admission(),
                r.mclockReservationPercent(),
                r.simulatedRequests(),
                r.eventsFired(),
                r.wallMillis(),
                r.steadyLatency(),
                r.hotLatency(),
                series);
    }
}
