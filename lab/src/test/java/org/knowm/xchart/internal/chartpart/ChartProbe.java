package org.knowm.xchart.internal.chartpart;

import java.awt.geom.Rectangle2D;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;

/**
 * Draws a chart and reads back where XChart put what a reader sees: the x axis's tick labels within the
 * axis and their positions, the plot's bounds (the title is centred over the plot). Test-only; it lives
 * in XChart's package because XChart keeps these parts package-private.
 */
public final class ChartProbe {

    /**
     * What a drawn chart shows.
     *
     * @param xTickLabels the x axis's tick labels drawn, left to right
     * @param xTickPixels their centres, pixels from the chart's left edge
     * @param plot        the plot's bounds, pixels
     * @param chartWidth  the chart's width, pixels
     */
    public record Drawn(List<String> xTickLabels, List<Double> xTickPixels, Rectangle2D plot, int chartWidth) {}

    private ChartProbe() {}

    /** Draws {@code chart} (as its PNG would be) and reads its x ticks and plot bounds. */
    public static Drawn draw(Chart<?, ?> chart) {
        BitmapEncoder.getBufferedImage(chart);
        Axis<?, ?> axis = chart.getXAxis();
        Rectangle2D bounds = axis.getBounds();
        List<String> labels = new ArrayList<>();
        List<Double> pixels = new ArrayList<>();
        AxisTickCalculator ticks = axis.getAxisTickCalculator();
        for (int i = 0; i < ticks.getTickLabels().size(); i++) {
            double location = ticks.getTickLocations().get(i);
            String label = ticks.getTickLabels().get(i);
            // AxisTickLabels draws only the labels strictly inside the axis.
            if (label != null && location > 0 && location < bounds.getWidth()) {
                labels.add(label);
                pixels.add(bounds.getX() + location);
            }
        }
        return new Drawn(labels, pixels, chart.getPlot().getBounds(), chart.getWidth());
    }
}
