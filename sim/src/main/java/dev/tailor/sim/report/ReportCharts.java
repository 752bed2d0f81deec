package dev.tailor.sim.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The look the HTML reports' XChart plots share: white background, light grid, and latency tails on
 * a "nines" axis (the plotted value is −log10(1 − F), so P90, P99, P99.9 ... are evenly spaced).
 */
public final class ReportCharts {

    private ReportCharts() {
    }

    /** Tick labels of a log axis: 0.1, 1, 10, 100, 1,000, 10,000 (XChart's default writes 1E4). */
    public static final String LOG_AXIS_PATTERN = "#,##0.###";

    /**
     * Line patterns that tell apart curves which coincide: solid, dashed, dotted, dash-dot. Width 1.6 px.
     */
    private static final float[][] DASHES = {null, {7f, 4f}, {2f, 3f}, {9f, 3f, 2f, 3f}};

    /** White background, light grid, small markers, numbers written the same in every locale. */
    public static void style(XYChart chart) {
        chart.getStyler().setLocale(Locale.ROOT);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesColor(new Color(0xE5, 0xE5, 0xE5));
        chart.getStyler().setLegendBorderColor(Color.WHITE);
        chart.getStyler().setMarkerSize(5);
    }

    /**
     * An empty latency-tail chart, 620 px wide: latency in ms on a log x axis, the fraction of
     * requests at most that slow on the nines y axis (add series of x ms, y = −log10(1 − F)).
     */
    public static XYChart tailChart(String title, int heightPixels) {
        XYChart chart = new XYChartBuilder().width(620).height(heightPixels).title(title)
                .xAxisTitle("latency (ms, log scale)").yAxisTitle("fraction of requests at most this slow").build();
        style(chart);
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setXAxisDecimalPattern(LOG_AXIS_PATTERN);
        chart.getStyler().setyAxisTickLabelsFormattingFunction(ReportCharts::tailLabel);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        return chart;
    }

    /**
     * The {@code index}-th line pattern (solid, dashed, dotted, dash-dot, then again), so that curves drawn
     * on top of each other stay visible.
     */
    public static BasicStroke dash(int index) {
        float[] pattern = DASHES[Math.floorMod(index, DASHES.length)];
        return pattern == null ? new BasicStroke(1.6f)
                : new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, pattern, 0f);
    }

    /**
     * Marks the request timeout on a latency-tail chart: a grey dashed vertical line at {@code timeoutMillis}
     * from the bottom to {@code topNines}, named in the legend. Requests slower than the timeout are
     * recorded at it, so curves that reach the line end there.
     */
    public static void timeoutLine(XYChart chart, double timeoutMillis, double topNines) {
        XYSeries wall = chart.addSeries("timeout (" + String.format(Locale.ROOT, "%,.0f", timeoutMillis / 1000)
                + " s)", List.of(timeoutMillis, timeoutMillis), List.of(0.0, topNines));
        wall.setMarker(SeriesMarkers.NONE);
        wall.setLineColor(new Color(0x88, 0x88, 0x88));
        wall.setLineStyle(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {4f, 4f},
                0f));
    }

    /** A "nines" value as a percentage: 0 → 0 %, 1 → 90 %, 2 → 99 %, 3 → 99.9 %. */
    public static String tailLabel(double nines) {
        double percent = 100 * (1 - Math.pow(10, -nines));
        if (nines < 0.5) {
            return String.format(Locale.ROOT, "%.0f %%", percent);
        }
        return String.format(Locale.ROOT, "%." + Math.max(0, (int) Math.round(nines) - 2) + "f %%", percent);
    }

    /**
     * The chart as an inline PNG {@code <img>}. Not SVG: XChart's SVG writes every glyph as a path,
     * 300-500 kB a chart, where the PNG is a tenth of that.
     */
    public static String inlinePng(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart) throws IOException {
        byte[] png = BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
        return "<img alt=\"" + HtmlPages.escape(chart.getTitle()) + "\" width=\"" + chart.getWidth() + "\" height=\""
                + chart.getHeight() + "\" src=\"data:image/png;base64," + Base64.getEncoder().encodeToString(png)
                + "\">\n";
    }
}
