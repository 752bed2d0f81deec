package dev.tailor.lab;

import java.util.ArrayList;
import java.util.List;

/**
 * A small table the demo prints and puts in its HTML pages: aligned columns on the terminal, a Markdown
 * table on the page (which the page turns into an HTML table).
 *
 * @param caption the line above the table, ending with a colon
 * @param header  the column names; the first may be empty
 * @param rows    the cells, as many per row as {@code header}
 * @param notes   lines under the table
 */
record TextTable(String caption, List<String> header, List<List<String>> rows, List<String> notes) {

    TextTable {
        header = List.copyOf(header);
        rows = rows.stream().map(List::copyOf).toList();
        notes = List.copyOf(notes);
        for (List<String> row : rows) {
            if (row.size() != header.size()) {
                throw new IllegalArgumentException(
                        "a row has " + row.size() + " cells, the header " + header.size() + ": " + row);
            }
        }
    }

    /** For the terminal: the caption, header and rows indented by two spaces in aligned columns, the notes. */
    List<String> lines() {
        int[] widths = new int[header.size()];
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        for (List<String> row : all) {
            for (int c = 0; c < row.size(); c++) {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add(caption);
        for (List<String> row : all) {
            StringBuilder line = new StringBuilder(" ");
            for (int c = 0; c < row.size(); c++) {
                line.append(' ')
                        .append(row.get(c))
                        .append(" ".repeat(widths[c] - row.get(c).length()));
                if (c < row.size() - 1) {
                    line.append(' ');
                }
            }
            lines.add(line.toString().stripTrailing());
        }
        notes.forEach(n -> lines.add("  " + n));
        return lines;
    }

    /** For a page: the caption, a Markdown table (the first column left-aligned, the others right), the notes. */
    List<String> markdown() {
        List<String> lines = new ArrayList<>();
        lines.add(caption);
        lines.add("| " + String.join(" | ", header) + " |");
        StringBuilder separator = new StringBuilder("|---|");
        for (int c = 1; c < header.size(); c++) {
            separator.append("--:|");
        }
        lines.add(separator.toString());
        rows.forEach(r -> lines.add("| " + String.join(" | ", r) + " |"));
        lines.addAll(notes);
        return lines;
    }
}
