package dev.tailor.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.cluster.RunResult;
import java.awt.Font;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.internal.chartpart.ChartProbe;

/**
 * The cluster report's CPU panels, drawn as in the report: a few time ticks with room between their labels
 * (not every 10-s point labelled edge to edge), and each component's name in full inside its panel.
 */
class ClusterReportCpuPanelsTest {

    private static final List<String> COMPONENTS =
            List.of("frontend", "productcatalogservice", "recommendationservice", "b", "ts-travel-plan-service-long");

    @Test
    void cpuPanels_ofAShortAndOfTheDefaultLongRun_haveAFewTimeTicksThatDoNotTouch() {
        for (int seconds : new int[] {720, 150, 3_600}) {
            for (XYChart panel : ClusterReport.cpuPerComponent(run(seconds), Map.of("w1", 1.0, "w2", 0.4))) {
                ChartProbe.Drawn drawn = ChartProbe.draw(panel);
                String what = seconds + " s, " + panel.getTitle() + ": ticks " + drawn.xTickLabels();
                assertThat(drawn.xTickLabels()).as(what).hasSizeBetween(2, 6);
                Font font = panel.getStyler().getAxisTickLabelsFont();
                for (int i = 1; i < drawn.xTickLabels().size(); i++) {
                    double gap = drawn.xTickPixels().get(i)
                            - drawn.xTickPixels().get(i - 1)
                            - ReportCharts.textWidth(drawn.xTickLabels().get(i - 1), font) / 2
                            - ReportCharts.textWidth(drawn.xTickLabels().get(i), font) / 2;
                    assertThat(gap)
                            .as(what + ": pixels between labels " + i + " and " + (i + 1))
                            .isGreaterThanOrEqualTo(10);
                }
                // Round ticks from the start of the run, not every data point (10, 130, 250, ...).
                assertThat(drawn.xTickLabels().get(0)).as(what).isEqualTo("0");
            }
        }
    }

    @Test
    void cpuPanels_ofARow_haveTheSameTimeTicks_theLegendsPanelAndTheWidenedOnesToo() {
        for (int seconds : new int[] {720, 150, 600, 3_600, 60}) {
            List<XYChart> panels = ClusterReport.cpuPerComponent(run(seconds), Map.of("w1", 1.0, "w2", 0.4));
            List<String> first = ChartProbe.draw(panels.get(0)).xTickLabels();
            // Was: 0, 500 beside the legend where the other panels showed 0, 200, 400, 600.
            for (XYChart panel : panels) {
                assertThat(ChartProbe.draw(panel).xTickLabels())
                        .as(seconds + " s, " + panel.getTitle() + " (" + panel.getWidth() + " px) against "
                                + panels.get(0).getTitle())
                        .isEqualTo(first);
            }
            if (seconds == 720) { // the default run: as many ticks as the panels without a legend had
                assertThat(first).containsExactly("0", "200", "400", "600");
            }
        }
    }

    @Test
    void cpuPanels_titleTheirComponent_inFull_withinThePanel() {
        List<XYChart> panels = ClusterReport.cpuPerComponent(run(150), Map.of("w1", 1.0, "w2", 0.4));

        for (XYChart panel : panels) {
            ChartProbe.Drawn drawn = ChartProbe.draw(panel);
            double half =
                    ReportCharts.textWidth(panel.getTitle(), panel.getStyler().getChartTitleFont()) / 2;
            double centre = drawn.plot().getCenterX();
            assertThat(centre - half)
                    .as(panel.getTitle() + ": left end of the title")
                    .isGreaterThanOrEqualTo(0);
            assertThat(centre + half)
                    .as(panel.getTitle() + ": right end of the title")
                    .isLessThanOrEqualTo(drawn.chartWidth());
            assertThat(panel.getStyler().getChartTitleFont().getSize2D()).isGreaterThanOrEqualTo(10f);
        }
        // The policy heads the row of panels: the title is the component alone.
        assertThat(panels).extracting(XYChart::getTitle).containsExactlyElementsOf(COMPONENTS);
        // Names that fit keep the standard panel width, so the rows stay aligned.
        assertThat(panels.get(3).getWidth()).isEqualTo(ClusterReport.PANEL_PIXELS);
    }

    /** A run of the policy with the longest name: two replicas per component, {@code seconds} of CPU samples. */
    private static RunResult run(int seconds) {
        List<RunResult.ReplicaStats> replicas = new ArrayList<>();
        List<double[]> series = new ArrayList<>();
        for (String component : COMPONENTS) {
            for (String node : List.of("w1", "w2")) {
                replicas.add(new RunResult.ReplicaStats(component + "-" + node, component, node, 20.0, 0, 0));
                double[] perSecond = new double[seconds];
                Arrays.fill(perSecond, node.equals("w1") ? 20 : 45);
                series.add(perSecond);
            }
        }
        return new RunResult(
                "paper-dag",
                "A",
                "fluid",
                "heart-no-outlier-filter",
                100,
                1,
                0,
                0,
                0,
                0,
                0,
                null,
                null,
                null,
                null,
                null,
                replicas,
                null,
                0,
                0,
                0,
                null,
                series);
    }
}
