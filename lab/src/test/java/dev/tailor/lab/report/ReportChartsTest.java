package dev.tailor.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.cluster.ClusterSimulation;
import java.awt.Color;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

/** The reports' chart helpers: labelled log axes, titles that fit, distinct policy colours. */
class ReportChartsTest {

    @Test
    void logAxisRange_startsAtAPowerOfTen_soTheLowestValuesHaveALabelBelowThem() {
        // P99s of 134 ms to 10.5 s: XChart labels only powers of ten, so the axis must reach down to 100.
        assertThat(ReportCharts.logAxisRange(134, 10_500)).containsExactly(100, 10_500);
        // Within one decade: the axis spans the whole decade, labelled at both ends.
        assertThat(ReportCharts.logAxisRange(140, 460)).containsExactly(100, 1_000);
        assertThat(ReportCharts.logAxisRange(1_000, 1_000)).containsExactly(1_000, 10_000);
        assertThat(ReportCharts.logAxisRange(0.5, 3)).containsExactly(0.1, 3);
    }

    @Test
    void powerOfTenLabel_namesTheMillisecondsATickOfALog10AxisStandsFor() {
        assertThat(ReportCharts.powerOfTenLabel(2)).isEqualTo("100");
        assertThat(ReportCharts.powerOfTenLabel(2.2)).isEqualTo("158");
        assertThat(ReportCharts.powerOfTenLabel(3)).isEqualTo("1,000");
        assertThat(ReportCharts.powerOfTenLabel(3.4)).isEqualTo("2,510");
        assertThat(ReportCharts.powerOfTenLabel(-0.5)).isEqualTo("0.316");
    }

    @Test
    void logYAxis_setsTheRange_ignoringNoData() {
        XYChart chart = new XYChartBuilder().width(620).height(400).build();
        ReportCharts.logYAxis(chart.getStyler(), java.util.Arrays.asList(209.0, null, Double.NaN, 0.0, 443.0));
        assertThat(chart.getStyler().isYAxisLogarithmic()).isTrue();
        assertThat(chart.getStyler().getYAxisMin()).isEqualTo(100);
        assertThat(chart.getStyler().getYAxisMax()).isEqualTo(1_000);
        XYChart empty = new XYChartBuilder().width(620).height(400).build();
        ReportCharts.logXAxis(empty.getStyler(), List.of());
        assertThat(empty.getStyler().getXAxisMin()).isNull();
    }

    @Test
    void fitTitle_shrinksALongTitleToTheChartsWidth_andKeepsAShortOne() {
        XYChart chart = new XYChartBuilder()
                .width(620)
                .height(400)
                .title("P99 over 2 seeds: dyn-calls-overcount · network A · CPU fluid · 400 RPS")
                .build();
        float before = chart.getStyler().getChartTitleFont().getSize2D();
        assertThat(ReportCharts.textWidth(chart.getTitle(), chart.getStyler().getChartTitleFont()))
                .isGreaterThan(520);

        ReportCharts.fitTitle(chart);

        assertThat(chart.getStyler().getChartTitleFont().getSize2D()).isLessThan(before);
        assertThat(ReportCharts.textWidth(chart.getTitle(), chart.getStyler().getChartTitleFont()))
                .isLessThanOrEqualTo(520);
        XYChart small =
                new XYChartBuilder().width(620).height(400).title("P99 latency").build();
        ReportCharts.fitTitle(small);
        assertThat(small.getStyler().getChartTitleFont().getSize2D()).isEqualTo(before);
    }

    @Test
    void colours_twelvePoliciesOfAReport_getTwelveDistinctColours_inThePolicyOrder() {
        List<String> twelve = ClusterSimulation.policyNames().subList(0, 12);
        Map<String, Color> colours = ClusterReport.colours(twelve.reversed());
        Set<Color> distinct = new HashSet<>(colours.values());
        assertThat(distinct).hasSize(12);
        // The order is the simulator's, not the caller's: the same policies get the same colours.
        assertThat(colours.get(twelve.get(0))).isEqualTo(ReportCharts.seriesColour(0));
        // Two policies that used to be orange-red and orange are now far apart in hue.
        Map<String, Color> pair = ClusterReport.colours(List.of("heart", "least-request"));
        float[] a = Color.RGBtoHSB(
                pair.get("heart").getRed(),
                pair.get("heart").getGreen(),
                pair.get("heart").getBlue(),
                null);
        float[] b = Color.RGBtoHSB(
                pair.get("least-request").getRed(),
                pair.get("least-request").getGreen(),
                pair.get("least-request").getBlue(),
                null);
        double hueGap = Math.abs(a[0] - b[0]);
        assertThat(Math.min(hueGap, 1 - hueGap)).isGreaterThan(0.25);
    }
}
