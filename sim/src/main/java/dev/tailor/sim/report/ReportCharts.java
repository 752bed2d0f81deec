package dev.tailor.sim.report;

import java.awt.Color;
import java.io.IOException;
import java.util.Base64;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The look the HTML reports' XChart plots share: white background, light grid, and latency tails on
 * a "nines" axis (the plotted value is −log10(1 − F), so P90, P99, P99.9 ... are evenly spaced).
 */
public final class ReportCharts {

    private ReportCharts() {
    }

    /** White background, light grid, small markers. */
    public static void style(XYChart chart) {
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
        chart.getStyler().setyAxisTickLabelsFormattingFunction(ReportCharts::tailLabel);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        return chart;
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
    public static String inlinePng(XYChart chart) throws IOException {
        byte[] png = BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
        return "<img alt=\"" + HtmlPages.escape(chart.getTitle()) + "\" width=\"" + chart.getWidth() + "\" height=\""
                + chart.getHeight() + "\" src=\"data:image/png;base64," + Base64.getEncoder().encodeToString(png)
                + "\">\n";
    }
}
