package dev.tailor.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.LenientTree;
import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a file given to the wrong option looks like, by the fields at its top level, so that its error
 * says which option takes it instead of listing every field it lacks: a HEART snapshot ({@code heart plan
 * --snapshot}), the state {@code heart plan --state} writes, or a cluster scenario ({@code heart simulate
 * --scenario}). Asked only of a file that its own option refused.
 */
final class FileKinds {

    /** YAML reads JSON too; a key written twice does not stop the look. */
    private static final ObjectMapper LINES =
            StrictReader.yaml().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** A kind of file: its name in a message, the option that takes it, and the fields that tell it. */
    enum Kind {
        SNAPSHOT("a HEART snapshot", "heart plan --snapshot", List.of("windowSeconds", "nodes", "replicas")),
        STATE("a HEART state file", "heart plan --state", List.of("rounds", "groups")),
        CLUSTER_SCENARIO("a cluster scenario", "heart simulate --scenario", List.of("components", "entry"));

        private final String words;
        private final String option;
        private final List<String> telling;

        Kind(String words, String option, List<String> telling) {
            this.words = words;
            this.option = option;
            this.telling = telling;
        }

        /** {@code looks like a HEART state file (it has rounds and groups)}, the fields those it has. */
        String looksLike(List<String> present) {
            return "looks like " + words + " (it has " + and(present) + ")";
        }

        /** {@code ; a HEART state file goes to heart plan --state}. */
        String goesTo() {
            return words + " goes to " + option;
        }
    }

    private FileKinds() {}

    /**
     * The kind {@code file} looks like when it is not {@code expected}: {@code looks like KIND (it has F and G)
     * (expected: WHAT; KIND goes to OPTION)}; {@code null} when it looks like none, or like {@code expected}.
     *
     * @param what what the option takes, in words ({@code a snapshot: windowSeconds, nodes, replicas, ...})
     */
    static String wrongKind(Path file, Kind expected, String what) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        LenientTree read = LenientTree.read(LINES, text);
        if (read == null || read.tree() == null || !read.tree().isObject()) {
            return null;
        }
        JsonNode tree = read.tree();
        for (Kind kind : Kind.values()) {
            List<String> present = new ArrayList<>();
            for (String field : kind.telling) {
                if (tree.has(field)) {
                    present.add(field);
                }
            }
            // Every field that tells it, and not every one of the kind the option takes.
            if (kind != expected
                    && present.size() == kind.telling.size()
                    && !expected.telling.stream().allMatch(tree::has)) {
                return kind.looksLike(present) + " (expected: " + what + "; " + kind.goesTo() + ")";
            }
        }
        return null;
    }

    private static String and(List<String> words) {
        return words.size() == 1
                ? words.get(0)
                : String.join(", ", words.subList(0, words.size() - 1)) + " and " + words.get(words.size() - 1);
    }
}
