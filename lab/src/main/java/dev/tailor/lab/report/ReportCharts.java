package dev.tailor.lab.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The look the HTML reports' XChart plots share: white background, light grid, and latency tails on
 * a "nines" axis (the plotted value is −log10(1 − F), so P90, P99, P99.9 ... are evenly spaced).
 */
public final class ReportCharts {

    private ReportCharts() {}

    /** Tick labels of a log axis: 0.1, 1, 10, 100, 1,000, 10,000 (XChart's default writes 1E4). */
    public static final String LOG_AXIS_PATTERN = "#,##0.###";

    /**
     * Line patterns that tell apart curves which coincide: solid, dashed, dotted, dash-dot. Width 1.6 px.
     */
    private static final float[][] DASHES = {null, {7f, 4f}, {2f, 3f}, {9f, 3f, 2f, 3f}};

    /**
     * Series colours for up to twelve series, most distinct first: Okabe–Ito's blue, vermillion, bluish green,
     * reddish purple, black, sky blue and orange (readable by colour-blind readers), then Paul Tol's wine,
     * olive and indigo, grey and brown. Orange comes after vermillion's five most distinct neighbours, so two
     * orange-ish lines meet only in a chart of seven series or more.
     */
    private static final Color[] SERIES_COLOURS = {
        new Color(0x00, 0x72, 0xB2), new Color(0xD5, 0x5E, 0x00), new Color(0x00, 0x9E, 0x73),
        new Color(0xCC, 0x79, 0xA7), new Color(0x00, 0x00, 0x00), new Color(0x56, 0xB4, 0xE9),
        new Color(0xE6, 0x9F, 0x00), new Color(0x88, 0x22, 0x55), new Color(0x99, 0x99, 0x33),
        new Color(0x33, 0x22, 0x88), new Color(0x88, 0x88, 0x88), new Color(0x8C, 0x56, 0x4B)
    };

    /** How many distinct series colours there are before they repeat. */
    public static final int SERIES_COLOUR_COUNT = SERIES_COLOURS.length;

    /** The {@code index}-th series colour (0-based; repeats after {@link #SERIES_COLOUR_COUNT}). */
    public static Color seriesColour(int index) {
        return SERIES_COLOURS[Math.floorMod(index, SERIES_COLOURS.length)];
    }

    /** The smallest chart-title font size, points, {@link #fitTitle} goes down to. */
    private static final float SMALLEST_TITLE_POINTS = 10f;

    /**
     * Makes the chart's title fit its width: keeps the font when the title fits, else shrinks it (not below
     * 10 pt) to fit the chart's width less 100 px (XChart centres it over the plot, right of the y axis).
     * Callers keep titles short enough to fit at 10 pt (about 80 characters in 620 px).
     */
    public static void fitTitle(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart) {
        Font font = chart.getStyler().getChartTitleFont();
        // XChart centres the title over the plot, right of the y axis (about 80 px): the room is what is left.
        double room = chart.getWidth() - 100.0;
        while (textWidth(chart.getTitle(), font) > room && font.getSize2D() > SMALLEST_TITLE_POINTS) {
            font = font.deriveFont(Math.max(SMALLEST_TITLE_POINTS, font.getSize2D() - 0.5f));
        }
        chart.getStyler().setChartTitleFont(font);
    }

    /** The width of {@code text} in {@code font}, pixels, as drawn on an image with XChart's text hints. */
    public static double textWidth(String text, Font font) {
        java.awt.Graphics2D g =
                new java.awt.image.BufferedImage(1, 1, java.awt.image.BufferedImage.TYPE_INT_ARGB).createGraphics();
        try {
            g.setRenderingHint(
                    java.awt.RenderingHints.KEY_TEXT_ANTIALIASING, java.awt.RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            return new java.awt.font.TextLayout(text, font, g.getFontRenderContext())
                    .getBounds()
                    .getWidth();
        } finally {
            g.dispose();
        }
    }

    /**
     * The range a log axis over {@code [minValue, maxValue]} (&gt; 0) needs so that it shows labelled ticks:
     * XChart labels only powers of ten, so the axis starts at the power of ten at or below {@code minValue}
     * and, when that leaves no other power of ten up to {@code maxValue}, ends at the next one.
     *
     * @return {@code {min, max}} of the axis; {@code max} is {@code maxValue} or the next power of ten
     */
    public static double[] logAxisRange(double minValue, double maxValue) {
        double low = Math.pow(10, Math.floor(Math.log10(minValue) + 1e-9));
        return new double[] {low, Math.max(maxValue, low * 10)};
    }

    /**
     * Sets a logarithmic y axis over the values plotted on it ({@link #logAxisRange}): labelled ticks at the
     * powers of ten in the range, written 0.1, 1, 10, 100, 1,000. Does nothing when no value is &gt; 0.
     */
    public static void logYAxis(AxesChartStyler styler, List<Double> values) {
        styler.setYAxisLogarithmic(true);
        styler.setYAxisDecimalPattern(LOG_AXIS_PATTERN);
        double[] range = range(values);
        if (range != null) {
            styler.setYAxisMin(range[0]);
            styler.setYAxisMax(range[1]);
        }
    }

    /** As {@link #logYAxis}, for the x axis. */
    public static void logXAxis(AxesChartStyler styler, List<Double> values) {
        styler.setXAxisLogarithmic(true);
        styler.setXAxisDecimalPattern(LOG_AXIS_PATTERN);
        double[] range = range(values);
        if (range != null) {
            styler.setXAxisMin(range[0]);
            styler.setXAxisMax(range[1]);
        }
    }

    private static double[] range(List<Double> values) {
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (Double v : values) {
            if (v != null && v > 0 && Double.isFinite(v)) {
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        return max > 0 ? logAxisRange(min, max) : null;
    }

    /**
     * A tick label of a log10 axis: the value 10^{@code exponent} to 3 significant digits, written like
     * {@link #LOG_AXIS_PATTERN} (2.2 → 158, 3 → 1,000, -0.5 → 0.316).
     */
    public static String powerOfTenLabel(double exponent) {
        java.math.BigDecimal value =
                new java.math.BigDecimal(Math.pow(10, exponent)).round(new java.math.MathContext(3));
        return new java.text.DecimalFormat(LOG_AXIS_PATTERN, java.text.DecimalFormatSymbols.getInstance(Locale.ROOT))
                .format(value);
    }

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
     * requests at most that slow on the nines y axis (add series of x ms, y = −log10(1 − F); then
     * {@link #logXAxis} with their latencies so the x axis has labelled ticks). The title's font shrinks to fit.
     */
    public static XYChart tailChart(String title, int heightPixels) {
        XYChart chart = new XYChartBuilder()
                .width(620)
                .height(heightPixels)
                .title(title)
                .xAxisTitle("latency (ms, log scale)")
                .yAxisTitle("fraction of requests at most this slow")
                .build();
        style(chart);
        fitTitle(chart);
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
        return pattern == null
                ? new BasicStroke(1.6f)
                : new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, pattern, 0f);
    }

    /**
     * Marks the request timeout on a latency-tail chart: a grey dashed vertical line at {@code timeoutMillis}
     * from the bottom to {@code topNines}, named in the legend. Requests slower than the timeout are
     * recorded at it, so curves that reach the line end there.
     */
    public static void timeoutLine(XYChart chart, double timeoutMillis, double topNines) {
        XYSeries wall = chart.addSeries(
                "timeout (" + String.format(Locale.ROOT, "%,.0f", timeoutMillis / 1000) + " s)",
                List.of(timeoutMillis, timeoutMillis),
                List.of(0.0, topNines));
        wall.setMarker(SeriesMarkers.NONE);
        wall.setLineColor(new Color(0x88, 0x88, 0x88));
        wall.setLineStyle(
                new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {4f, 4f}, 0f));
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
        return inlinePng(chart, chart.getTitle());
    }

    /**
     * As {@link #inlinePng(org.knowm.xchart.internal.chartpart.Chart)}, with {@code alt} as the alt text (say
     * what the chart shows and for which cell: scenario, network, CPU model, rate).
     */
    public static String inlinePng(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, String alt)
            throws IOException {
        byte[] png = BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
        return "<img alt=\"" + HtmlPages.escape(alt) + "\" width=\"" + chart.getWidth() + "\" height=\""
                + chart.getHeight() + "\" src=\"data:image/png;base64,"
                + Base64.getEncoder().encodeToString(png)
                + "\">\n";
    }
}
