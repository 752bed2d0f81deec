package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.lab.report.HtmlPages;
import dev.tailor.testkit.HeadlessChromium;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kind of report page, opened in headless Chromium ({@link HeadlessChromium}): it loads, its body
 * fits a 1,400- and a 1,024-pixel window, every image has alt text, every table is a {@code <table>}.
 * The demo's own pages are checked by {@code SimulateCommandTest}'s demo test, the experiments page by the
 * lab's {@code ExperimentOutputTest}.
 */
class ReportPagesBrowserTest {

    @TempDir
    Path dir;

    @Test
    void clusterSimulationPageOverSeeds_readsWell_andPlotsTheP99sSpread() throws Exception {
        Path report = dir.resolve("cluster");
        PlanCommandTest.Result result = tailor(
                "heart",
                "simulate",
                "--scenario",
                "paper-pairwise",
                "--policies",
                "least-request,heart",
                "--rps",
                "100,400",
                "--seeds",
                "3",
                "--warmup-seconds",
                "30",
                "--duration-seconds",
                "20",
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(Files.readString(report.resolve("index.html")))
                .contains("<h2>P99 over the seeds</h2>")
                .contains("alt=\"P99 over 3 seeds: paper-pairwise · network A · CPU fluid · 400 RPS\"");
        HeadlessChromium.assertReadable(report.resolve("index.html"));
    }

    @Test
    void storageSimulationPage_withItsTwentyColumnTable_readsWell() throws Exception {
        Path report = dir.resolve("storage");
        PlanCommandTest.Result result = tailor(
                "storage",
                "simulate",
                "--scenario",
                "burst-microbench",
                "--policies",
                "fifo,segment-admission",
                "--duration-seconds",
                "2",
                "--report",
                report.toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        HeadlessChromium.assertReadable(report.resolve("index.html"));
    }

    @Test
    void aTableWiderThanTheWindow_scrollsInItsBox() throws Exception {
        List<String> intro = new ArrayList<>(List.of("A wide table:"));
        intro.add("|" + " column with a long name |".repeat(40));
        intro.add("|" + "---|".repeat(40));
        intro.add("|" + " 1,234,567.89 |".repeat(40));
        HtmlPages.Frame frame = new HtmlPages.Frame(
                "wide",
                List.of(),
                intro,
                List.of("./tailor demo --a-very-long-command-line" + " --option value".repeat(200)));
        Path page = HtmlPages.write(dir, "wide.html", HtmlPages.start(frame) + HtmlPages.end(frame));
        HeadlessChromium.assertReadable(page);
    }

    @Test
    void theProbeSeesOverflowMissingAltTextAndTextTables() throws Exception {
        Path page = dir.resolve("bad.html");
        Files.writeString(
                page,
                "<!DOCTYPE html><html><body><div style=\"width:3000px\">wide</div>"
                        + "<img src=\"missing.png\"><p>| a | b |</p><pre>x  y</pre></body></html>");

        HeadlessChromium.Look look = HeadlessChromium.look(page, 1400);

        assertThat(look.overflowPixels()).isGreaterThan(1000);
        assertThat(look.imagesWithoutAlt()).isEqualTo(1);
        assertThat(look.brokenImages()).isEqualTo(1);
        assertThat(look.textTableLines()).isEqualTo(1);
        assertThat(look.preformatted()).isEqualTo(1);
        assertThat(look.tables()).isZero();
    }
}
