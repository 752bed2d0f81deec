package dev.tailor.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Opens a report page in headless Chromium and reads what a reader would see: whether the body is wider
 * than the window, images without alt text or that did not load, text tables left as preformatted text
 * or paragraphs of {@code |} cells. Skips the calling test when chromium is not installed (fails when
 * tools are required, as in CI).
 */
public final class HeadlessChromium {

    /** What the page showed at one window width. */
    public record Look(
            int windowWidth,
            int overflowPixels,
            int images,
            int imagesWithoutAlt,
            int brokenImages,
            int preformatted,
            int textTableLines,
            int tables) {}

    private static final String PROBE = """
            <script>
            window.addEventListener('load', () => {
              const root = document.documentElement;
              const images = [...document.images];
              const look = {
                overflowPixels: Math.max(root.scrollWidth, document.body.scrollWidth) - root.clientWidth,
                images: images.length,
                imagesWithoutAlt: images.filter(i => !i.hasAttribute('alt') || !i.alt.trim()).length,
                brokenImages: images.filter(i => !i.complete || i.naturalWidth === 0).length,
                preformatted: document.querySelectorAll('pre:not(.commands)').length,
                textTableLines: [...document.querySelectorAll('p, li')]
                    .filter(p => /^\\s*\\|.*\\|\\s*$/.test(p.textContent)).length,
                tables: document.querySelectorAll('table').length
              };
              const out = document.createElement('output');
              out.id = 'tailor-look';
              out.textContent = JSON.stringify(look);
              document.body.appendChild(out);
            });
            </script>
            """;
    private static final Pattern LOOK = Pattern.compile("<output id=\"tailor-look\">(.*?)</output>");

    private HeadlessChromium() {}

    /** Loads {@code page} (a copy with a probe script, next to it so relative images load) at {@code widthPixels}. */
    public static Look look(Path page, int widthPixels) throws IOException, InterruptedException {
        Path chromium = Tools.find("chromium")
                .or(() -> Tools.find("chromium-browser"))
                .orElseGet(() -> Tools.require("chromium", "chromium"));
        String html = Files.readString(page, StandardCharsets.UTF_8);
        assertThat(html).as(page + " has a body").contains("</body>");
        Path probe = page.resolveSibling(".probe-" + page.getFileName());
        Files.writeString(probe, html.replace("</body>", PROBE + "</body>"), StandardCharsets.UTF_8);
        Path profile = Files.createTempDirectory("tailor-chromium-");
        try {
            Process process = new ProcessBuilder(List.of(
                            chromium.toString(),
                            "--headless",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            "--user-data-dir=" + profile,
                            "--window-size=" + widthPixels + ",900",
                            "--virtual-time-budget=5000",
                            "--dump-dom",
                            probe.toUri().toString()))
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            byte[] dom = process.getInputStream().readAllBytes();
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("chromium did not finish loading " + page + " within 120 s");
            }
            Matcher m = LOOK.matcher(new String(dom, StandardCharsets.UTF_8));
            assertThat(m.find())
                    .as("chromium loaded " + page + " and ran its load handler")
                    .isTrue();
            JsonNode look = new ObjectMapper().readTree(m.group(1).replace("&amp;", "&"));
            return new Look(
                    widthPixels,
                    look.get("overflowPixels").asInt(),
                    look.get("images").asInt(),
                    look.get("imagesWithoutAlt").asInt(),
                    look.get("brokenImages").asInt(),
                    look.get("preformatted").asInt(),
                    look.get("textTableLines").asInt(),
                    look.get("tables").asInt());
        } finally {
            Files.deleteIfExists(probe);
            try (var paths = Files.walk(profile)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /**
     * Asserts that {@code page} reads well at 1,400 and 1,024 pixels: no horizontal overflow of the body,
     * every image loaded and with alt text, no text tables, at least one {@code <table>}.
     */
    public static void assertReadable(Path page) throws IOException, InterruptedException {
        for (int width : List.of(1400, 1024)) {
            Look look = look(page, width);
            assertThat(look.overflowPixels())
                    .as(page + " at " + width + " px: body wider than the window")
                    .isLessThanOrEqualTo(0);
            assertThat(look.imagesWithoutAlt())
                    .as(page + ": images without alt text")
                    .isZero();
            assertThat(look.brokenImages())
                    .as(page + ": images that did not load")
                    .isZero();
            assertThat(look.preformatted())
                    .as(page + ": preformatted text (a text table?)")
                    .isZero();
            assertThat(look.textTableLines())
                    .as(page + ": Markdown table rows left as text")
                    .isZero();
            assertThat(look.tables()).as(page + ": tables").isPositive();
        }
    }
}
