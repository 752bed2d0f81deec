package dev.tailor.lab.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The one template of the HTML reports: the page's frame and style, a summary at the top, intro text
 * whose Markdown tables become {@code <table>}s, the commands that reproduce the figures; escaping; and
 * writing a page so a reader never sees half of it. Wide tables scroll inside their own box, images
 * shrink to the window, so the body never overflows horizontally.
 */
public final class HtmlPages {

    private HtmlPages() {}

    /** The style every page shares. */
    static final String STYLE = "body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;"
            + "color:#222}table{border-collapse:collapse;font-size:13px;margin:0}"
            + "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}th{background:#f3f3f3}"
            + "td.l,th.l{text-align:left}th.group{text-align:center}caption{text-align:left;font-weight:600;padding:4px 0}"
            + ".scroll{overflow-x:auto;max-width:100%;margin:1em 0}.charts{display:flex;flex-wrap:wrap;gap:12px}"
            + "img{max-width:100%;height:auto}h2{margin-top:2em;border-bottom:1px solid #ddd}"
            + "p.note,ul.note{color:#555;font-size:14px}.summary{background:#f6f8fa;border:1px solid #ddd;"
            + "padding:0.5em 1em;margin:1em 0}.summary p{margin:0.3em 0}.summary p.sub{margin-left:1.5em}"
            + "pre.commands{background:#f6f8fa;padding:0.5em 1em;overflow-x:auto;font-size:13px}";

    /**
     * What a page has besides its own body.
     *
     * @param title    the page's title (also its {@code <h1>})
     * @param summary  lines shown in a box at the top, as the terminal printed them (a line indented by four
     *                 spaces or more is a sub-point); empty for none
     * @param intro    lines under the summary: a run of lines starting with {@code |} is a Markdown table and
     *                 becomes a {@code <table>}, a line of its own above such a run its caption, any other
     *                 line a paragraph
     * @param commands the commands that reproduce the page's figures, shown at the end; empty for none
     */
    public record Frame(String title, List<String> summary, List<String> intro, List<String> commands) {

        public Frame {
            summary = List.copyOf(summary);
            intro = List.copyOf(intro);
            commands = List.copyOf(commands);
        }

        /** A frame with only a title and intro paragraphs. */
        public static Frame of(String title, List<String> intro) {
            return new Frame(title, List.of(), intro, List.of());
        }
    }

    /** The page's start: doctype, head with the shared style, title, summary box and intro. */
    public static String start(Frame frame) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>")
                .append(escape(frame.title()))
                .append("</title>\n<style>")
                .append(STYLE)
                .append("</style></head><body>\n<h1>")
                .append(escape(frame.title()))
                .append("</h1>\n");
        if (!frame.summary().isEmpty()) {
            html.append("<div class=\"summary\">\n");
            for (String line : frame.summary()) {
                if (line.equals("Summary")) {
                    html.append("<h2 style=\"margin-top:0.3em\">Summary</h2>\n");
                } else if (!line.isBlank()) {
                    html.append(line.startsWith("    ") ? "<p class=\"sub\">" : "<p>")
                            .append(escape(line.strip()))
                            .append("</p>\n");
                }
            }
            html.append("</div>\n");
        }
        html.append(blocks(frame.intro()));
        return html.toString();
    }

    /** The page's end: the commands that reproduce it, then the closing tags. */
    public static String end(Frame frame) {
        StringBuilder html = new StringBuilder();
        if (!frame.commands().isEmpty()) {
            html.append("<h2>Reproduce</h2>\n<pre class=\"commands\">")
                    .append(escape(String.join("\n", frame.commands())))
                    .append("</pre>\n");
        }
        return html.append("</body></html>\n").toString();
    }

    /**
     * Lines as HTML: a run of lines starting with {@code |} (a Markdown table, its second line the
     * {@code |---|} separator) becomes a scrolling {@code <table>}, captioned by the line above it (blank
     * lines between) when that line ends with a colon; a blank line nothing; any other line a paragraph.
     */
    public static String blocks(List<String> lines) {
        StringBuilder html = new StringBuilder();
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i).strip();
            int next = i + 1;
            while (next < lines.size() && lines.get(next).isBlank()) {
                next++;
            }
            boolean captions = line.endsWith(":") && !isRow(line) && next < lines.size() && isRow(lines.get(next));
            int from = captions ? next : i;
            int to = from;
            while (to < lines.size() && isRow(lines.get(to))) {
                to++;
            }
            if (to > from) {
                List<String> rows =
                        lines.subList(from, to).stream().map(String::strip).toList();
                html.append(table(captions ? line : null, rows));
                i = to;
                continue;
            }
            if (!line.isEmpty()) {
                html.append("<p class=\"note\">").append(escape(line)).append("</p>\n");
            }
            i++;
        }
        return html.toString();
    }

    private static boolean isRow(String line) {
        return line.strip().startsWith("|");
    }

    /** A Markdown table as a {@code <table>} in a box that scrolls sideways when the table is wider than the page. */
    static String table(String caption, List<String> markdown) {
        StringBuilder html = new StringBuilder("<div class=\"scroll\"><table>");
        if (caption != null) {
            html.append("<caption>").append(escape(caption)).append("</caption>");
        }
        html.append("\n");
        boolean header = true;
        for (String row : markdown) {
            List<String> cells = cells(row);
            if (cells.stream().allMatch(c -> c.matches(":?-+:?"))) {
                continue;
            }
            boolean head = header
                    && markdown.size() > 1
                    && cells(markdown.get(1)).stream().allMatch(c -> c.matches(":?-+:?"));
            html.append("<tr>");
            for (int c = 0; c < cells.size(); c++) {
                String tag = head ? "th" : "td";
                html.append('<')
                        .append(tag)
                        .append(c == 0 || !numeric(cells.get(c)) ? " class=\"l\">" : ">")
                        .append(escape(cells.get(c)))
                        .append("</")
                        .append(tag)
                        .append('>');
            }
            html.append("</tr>\n");
            header = false;
        }
        return html.append("</table></div>\n").toString();
    }

    private static List<String> cells(String row) {
        String inner = row.strip();
        inner = inner.substring(1, inner.endsWith("|") && inner.length() > 1 ? inner.length() - 1 : inner.length());
        List<String> cells = new ArrayList<>();
        for (String cell : inner.split("\\|", -1)) {
            cells.add(cell.strip());
        }
        return cells;
    }

    private static boolean numeric(String cell) {
        return cell.matches("[-+–≥<>=~ ]*[0-9][0-9,.]*( ?(%|ms|µs|s|pp|x))?( \\(.*\\))?");
    }

    /** {@code text} safe in HTML text and attribute values. */
    public static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }

    /**
     * Writes {@code html} to {@code dir/fileName} through a hidden temporary file and an atomic rename.
     *
     * @return the page's path
     * @throws IOException when the directory cannot be written
     */
    public static Path write(Path dir, String fileName, CharSequence html) throws IOException {
        Path file = dir.resolve(fileName);
        Path temporary = dir.resolve("." + fileName + ".tmp");
        Files.writeString(temporary, html, StandardCharsets.UTF_8);
        Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return file;
    }
}
