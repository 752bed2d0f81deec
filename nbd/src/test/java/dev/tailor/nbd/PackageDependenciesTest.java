package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module's packages depend on each other without a cycle: {@code protocol} on none of them,
 * {@code config} on {@code protocol}, {@code backend} on {@code protocol} and {@code config}, {@code server}
 * on all three. Read from the main sources: every mention of {@code dev.tailor.nbd.<package>} (imports,
 * qualified names, Javadoc links) outside a file's own package must be allowed here.
 */
class PackageDependenciesTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/tailor/nbd");

    /** What each package may use of the others; a package not listed may use none. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "protocol", Set.of(),
            "config", Set.of("protocol"),
            "backend", Set.of("protocol", "config"),
            "server", Set.of("protocol", "config", "backend"));

    private static final Pattern MENTION = Pattern.compile("\\bdev\\.tailor\\.nbd\\.([a-z][a-z0-9_]*)\\b");

    /** Each mention in {@code source}, a file of package {@code pkg}, of a package {@code pkg} may not use. */
    static List<String> violations(String pkg, String source) {
        Set<String> allowed = ALLOWED.getOrDefault(pkg, Set.of());
        List<String> found = new ArrayList<>();
        String[] lines = source.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher m = MENTION.matcher(lines[i]);
            while (m.find()) {
                String used = m.group(1);
                if (!used.equals(pkg) && !allowed.contains(used)) {
                    found.add("line " + (i + 1) + ": " + pkg + " -> " + used + ": " + lines[i].strip());
                }
            }
        }
        return found;
    }

    @Test
    void mainSources_dependOnlyDownTheRule() throws IOException {
        assertThat(SOURCES)
                .as("the nbd module's main sources, from the module's folder")
                .isDirectory();
        List<String> violations = new ArrayList<>();
        Set<String> scanned = new TreeSet<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Path relative = SOURCES.relativize(file);
                String pkg =
                        relative.getNameCount() == 1 ? "" : relative.getName(0).toString();
                scanned.add(pkg);
                for (String violation : violations(pkg, Files.readString(file))) {
                    violations.add(relative + ", " + violation);
                }
            }
        }
        assertThat(scanned).as("packages scanned").containsAll(ALLOWED.keySet());
        assertThat(violations)
                .as("mentions against the packages' dependency rule")
                .isEmpty();
    }

    @Test
    void theCheck_findsImportsQualifiedNamesAndLinksAgainstTheRule() {
        assertThat(violations("config", "import dev.tailor.nbd.server.ServerTls;"))
                .containsExactly("line 1: config -> server: import dev.tailor.nbd.server.ServerTls;");
        assertThat(violations("config", "x\n * {@link dev.tailor.nbd.backend.FileBackend}"))
                .containsExactly("line 2: config -> backend: * {@link dev.tailor.nbd.backend.FileBackend}");
        assertThat(violations("protocol", "var c = dev.tailor.nbd.config.ByteSize.parse(s);"))
                .singleElement()
                .asString()
                .startsWith("line 1: protocol -> config");
        assertThat(violations("backend", "import static dev.tailor.nbd.server.NbdServer.start;"))
                .hasSize(1);
        // A package not in the rule may use none of the others.
        assertThat(violations("tools", "import dev.tailor.nbd.protocol.NbdProtocol;"))
                .hasSize(1);

        assertThat(violations("config", "import dev.tailor.nbd.protocol.BlockSizes;\nimport dev.tailor.admission.X;"))
                .isEmpty();
        assertThat(violations("backend", "import dev.tailor.nbd.config.NbdConfig;"))
                .isEmpty();
        assertThat(violations("server", "import dev.tailor.nbd.backend.FileBackend;"))
                .isEmpty();
        assertThat(violations("server", "package dev.tailor.nbd.server;")).isEmpty();
    }
}
