package dev.tailor.sim.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** What the HTML reports share: escaping text, and writing a page so a reader never sees half of it. */
public final class HtmlPages {

    private HtmlPages() {
    }

    /** {@code text} safe in HTML text and attribute values. */
    public static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
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
