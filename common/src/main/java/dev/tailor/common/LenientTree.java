package dev.tailor.common;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A document read past what a strict read ({@link StrictReader}) stops at, though the rest of it can still be
 * checked, so that no problem hides another: a key written twice in one mapping (the first value is kept, and
 * checked), and YAML's non-finite floats ({@code .nan}, {@code .inf}, {@code -.inf}), which Jackson's number
 * parser refuses, kept as the double they mean so that the field's own check can say what it takes.
 *
 * @param tree       the document, as a strict read would have given it but for these
 * @param duplicates each key written twice, in the order of the document
 * @param nonFinite  the non-finite floats by field path ({@code tenants[0].rate}), as written
 */
public record LenientTree(JsonNode tree, List<Duplicate> duplicates, Map<String, String> nonFinite) {

    /**
     * A key written a second time in one mapping.
     *
     * @param path  the field's path ({@code backend.parallelism})
     * @param at    where the second key is
     * @param first where the first one is, whose value is kept
     * @param json  whether the document was read as JSON, whose mappings are objects
     */
    public record Duplicate(String path, JsonLocation at, JsonLocation first, boolean json) {

        /**
         * {@code path: duplicate key (expected: each key once per mapping; the first,FIRST, is the one checked)};
         * in a JSON document, {@code each key once per object}.
         */
        public Problem problem(String firstAt) {
            return new Problem(
                    path,
                    StrictReader.DUPLICATE_KEY,
                    StrictReader.onceEach(json) + "; the first," + firstAt + ", is the one checked");
        }
    }

    /**
     * What a checked document reports: each problem of {@code checked} but those under a field taken out for
     * its type (the field or what lies under it, {@link Problem#related}), then, for each non-finite float
     * that no problem named and that was not taken out, that it is not a finite number (a field whose own
     * check a non-finite number would pass is refused all the same).
     *
     * @param checked   the problems the document's own checks found, in their order
     * @param nonFinite the document's non-finite floats by field path, as written ({@link #nonFinite})
     * @param takenOut  the paths of fields taken out of the document for their type before it was bound
     */
    public static List<Problem> problems(
            List<Problem> checked, Map<String, String> nonFinite, Collection<String> takenOut) {
        List<Problem> problems = new ArrayList<>();
        Set<String> told = new HashSet<>();
        for (Problem problem : checked) {
            if (takenOut.stream().noneMatch(out -> Problem.related(out, problem.path()))) {
                problems.add(problem);
                told.add(problem.path());
            }
        }
        for (Map.Entry<String, String> value : nonFinite.entrySet()) {
            String path = value.getKey();
            if (!told.contains(path) && takenOut.stream().noneMatch(out -> Problem.related(out, path))) {
                problems.add(new Problem(path, value.getValue(), "a finite number"));
            }
        }
        return problems;
    }

    /**
     * {@code text} read with {@code reader}'s format (its duplicate detection left off); {@code null} when the
     * text has a problem a strict read words better: a syntax error, or content after the document.
     */
    public static LenientTree read(ObjectMapper reader, String text) {
        List<Duplicate> duplicates = new ArrayList<>();
        Map<String, String> nonFinite = new LinkedHashMap<>();
        try (JsonParser parser = reader.getFactory().createParser(text)) {
            parser.disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            JsonToken first = parser.nextToken();
            JsonNode tree = first == null ? null : node(parser, first, duplicates, nonFinite);
            if (parser.nextToken() != null) {
                return null;
            }
            return new LenientTree(tree, List.copyOf(duplicates), java.util.Collections.unmodifiableMap(nonFinite));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The syntax error of {@code text}, where a strict read may have stopped earlier at a problem this reading
     * goes past ({@code .nan}, a key written twice): the error to report for a text {@link #read} does not
     * take; {@code null} when its tokens read to the end.
     */
    public static JacksonException syntaxError(ObjectMapper reader, String text) {
        try (JsonParser parser = reader.getFactory().createParser(text)) {
            parser.disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            while (parser.nextToken() != null) {
                parser.getText();
            }
            return null;
        } catch (JacksonException e) {
            return e;
        } catch (IOException e) {
            return null;
        }
    }

    /** The value the parser stands at ({@code token}), read whole. */
    private static JsonNode node(
            JsonParser parser, JsonToken token, List<Duplicate> duplicates, Map<String, String> nonFinite)
            throws IOException {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        switch (token) {
            case START_OBJECT -> {
                ObjectNode object = nodes.objectNode();
                Map<String, JsonLocation> firsts = new HashMap<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
                    String key = parser.currentName();
                    JsonLocation at = parser.currentTokenLocation();
                    String path = StrictReader.path(parser.getParsingContext());
                    JsonToken value = parser.nextToken();
                    if (object.has(key)) {
                        duplicates.add(new Duplicate(
                                path,
                                at,
                                firsts.get(key),
                                !(parser instanceof com.fasterxml.jackson.dataformat.yaml.YAMLParser)));
                        parser.skipChildren();
                    } else {
                        firsts.put(key, at);
                        object.set(key, node(parser, value, duplicates, nonFinite));
                    }
                }
                return object;
            }
            case START_ARRAY -> {
                ArrayNode array = nodes.arrayNode();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    array.add(node(parser, t, duplicates, nonFinite));
                }
                return array;
            }
            case VALUE_STRING -> {
                return nodes.textNode(parser.getText());
            }
            case VALUE_NUMBER_INT -> {
                return switch (parser.getNumberType()) {
                    case INT -> nodes.numberNode(parser.getIntValue());
                    case LONG -> nodes.numberNode(parser.getLongValue());
                    default -> nodes.numberNode(parser.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                String written = parser.getText();
                String lower = written.toLowerCase(Locale.ROOT);
                if (lower.matches("[-+]?\\.(nan|inf)")) {
                    // YAML's own words for them, which Jackson's number parser does not take.
                    nonFinite.put(StrictReader.path(parser.getParsingContext()), written);
                    return nodes.numberNode(
                            lower.endsWith("nan")
                                    ? Double.NaN
                                    : lower.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY);
                }
                return nodes.numberNode(parser.getDoubleValue());
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return nodes.booleanNode(token == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return nodes.nullNode();
            }
            default -> {
                Object embedded = parser.getEmbeddedObject();
                return embedded == null ? nodes.nullNode() : nodes.pojoNode(embedded);
            }
        }
    }

    /**
     * Puts {@code value} at {@code path} ({@code limits.maxConnections}, {@code exports[0].port}) in {@code tree},
     * or, when {@code value} is {@code null}, takes the field there out (an array's element becomes JSON
     * {@code null}, so later indices keep their meaning).
     *
     * @return whether the path's parent is in the tree and, when taking out, the field was there
     */
    public static boolean put(JsonNode tree, String path, JsonNode value) {
        String[] parts = path.split("\\.|(?=\\[)");
        JsonNode node = tree;
        for (int i = 0; i < parts.length && node != null; i++) {
            String part = parts[i];
            boolean last = i == parts.length - 1;
            if (part.startsWith("[") && part.endsWith("]") && node instanceof ArrayNode array) {
                int index = Integer.parseInt(part.substring(1, part.length() - 1));
                if (index >= array.size()) {
                    return false;
                }
                if (last) {
                    array.set(index, value == null ? NullNode.getInstance() : value);
                    return true;
                }
                node = array.get(index);
            } else if (node instanceof ObjectNode object) {
                if (last) {
                    if (value == null) {
                        return object.remove(part) != null;
                    }
                    object.set(part, value);
                    return true;
                }
                node = object.get(part);
            } else {
                return false;
            }
        }
        return false;
    }
}
