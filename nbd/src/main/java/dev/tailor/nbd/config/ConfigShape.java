package dev.tailor.nbd.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tailor.common.StrictReader;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks a parsed configuration tree against the records it will be bound to, before Jackson binds
 * it, so that a file's mistakes are reported all at once and in the user's words: every unknown field
 * with the fields that mapping takes, and every value of the wrong kind with what the field takes ("a
 * size like 1GiB or a number of bytes"), never a Java type name. Jackson alone stops at the first
 * problem and names types ({@code java.lang.Long}).
 *
 * <p>The shapes are the records' own components, so a field added to a record is known here at once.
 * Field types understood: records, {@code List}s of them, {@code String}, {@code Integer},
 * {@code Double}, {@code Boolean}, {@link ByteSize} and {@link Path}. A field written with no value (YAML's
 * {@code key:}, {@code ~} or {@code null}) is a problem of its own, never its default: the default is for a
 * field left out.
 *
 * <p>Each unknown or mistyped field is removed from the tree, so that the rest can still be bound and
 * its values checked ({@link NbdConfig#problems()}) in the same run.
 */
final class ConfigShape {

    /**
     * One problem with the file's structure.
     *
     * @param paths   the fields concerned, as {@code exports[0].size}
     * @param message the whole line for the user, starting with the paths
     * @param value   for a field written with no value, its value as written ({@code empty}, {@code null}),
     *                else {@code null}
     * @param probe   for a field written with no value, a value of its type its own check refuses, to learn
     *                what the field takes in its own words; {@code null} when there is none
     */
    record Problem(List<String> paths, String message, String value, JsonNode probe) {
        Problem(List<String> paths, String message) {
            this(paths, message, null, null);
        }
    }

    private final List<Problem> problems = new ArrayList<>();

    /** The scalar at a path as written ({@code .nan}, {@code ~}), or null. */
    private final java.util.function.Function<String, String> written;

    /** Whether the file is JSON, whose booleans are true and false alone, not YAML. */
    private final boolean json;

    private ConfigShape(java.util.function.Function<String, String> written, boolean json) {
        this.written = written;
        this.json = json;
    }

    /**
     * Checks {@code tree} against the record {@code type}, removing from it every unknown field and every
     * value of the wrong kind.
     *
     * @return the problems, in file order; empty when the tree fits
     */
    static List<Problem> check(JsonNode tree, Class<?> type) {
        return check(tree, type, path -> null, false);
    }

    /**
     * {@link #check(JsonNode, Class)}, values shown as {@code written} gives them where it knows them (a
     * non-finite float as {@code .nan}, an empty value as {@code empty}), in the words of a JSON file when
     * {@code json} (an object, an array; a boolean is true or false: {@link StrictReader#BOOLEAN_JSON}), else of
     * YAML (a mapping, a list).
     */
    static List<Problem> check(
            JsonNode tree, Class<?> type, java.util.function.Function<String, String> written, boolean json) {
        ConfigShape shape = new ConfigShape(written, json);
        shape.check(tree, type, "(top level)", true);
        return shape.problems;
    }

    /** What a whole-number field takes when its value does not fit; its reader may know a narrower range. */
    static final String TOO_LARGE = "a whole number that fits in 32 bits";

    /**
     * Checks one value; records and lists are checked (and cleaned) inside.
     *
     * @return whether the value may stay in the tree
     */
    private boolean check(JsonNode node, Type type, String path, boolean topLevel) {
        Class<?> raw = raw(type);
        String why = null;
        if (raw.isRecord() && node instanceof ObjectNode object) {
            checkRecord(object, raw, topLevel ? "" : path);
        } else if (List.class.isAssignableFrom(raw) && node instanceof ArrayNode array) {
            Type element = ((ParameterizedType) type).getActualTypeArguments()[0];
            for (int i = 0; i < array.size(); i++) {
                if (!array.get(i).isNull() && !check(array.get(i), element, path + "[" + i + "]", false)) {
                    array.set(i, NullNode.getInstance());
                }
            }
        } else if (raw == ByteSize.class && node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
            why = shown(node, path) + " (expected: " + ByteSize.EXPECTED + ")";
        } else if (raw == ByteSize.class) {
            try {
                ByteSize.of(node);
            } catch (IllegalArgumentException e) {
                why = e.getMessage();
            }
        } else if (raw == Integer.class && node.isIntegralNumber() && !node.canConvertToInt()) {
            why = node + " (expected: " + TOO_LARGE + ")";
        } else if (!scalarFits(node, raw)) {
            String shown = shown(node, path);
            String expected = raw == Boolean.class ? StrictReader.expectedBoolean(json, shown) : expected(type, json);
            if (!json && node.isBoolean() && (raw == Double.class || raw == Integer.class)) {
                // YAML 1.1 reads an unquoted off or no as false (and on or yes as true); JSON's false is false.
                expected += "; YAML reads an unquoted off or no as false: write 0 for off where the field takes 0";
            }
            problems.add(new Problem(List.of(path), new dev.tailor.common.Problem(path, shown, expected).message()));
            return false;
        }
        if (why != null) {
            problems.add(new Problem(List.of(path), path + ": " + why));
        }
        return why == null;
    }

    private static boolean scalarFits(JsonNode node, Class<?> type) {
        if (type.isRecord() || List.class.isAssignableFrom(type)) {
            return false;
        }
        if (type == String.class) {
            return node.isValueNode();
        }
        if (type == Integer.class) {
            return node.isIntegralNumber() && node.canConvertToInt();
        }
        if (type == Double.class) {
            return node.isNumber();
        }
        if (type == Boolean.class) {
            return node.isBoolean();
        }
        if (type == Path.class) {
            return node.isTextual()
                    && !node.textValue().isEmpty()
                    && node.textValue().indexOf('\0') < 0;
        }
        throw new IllegalStateException("no shape for " + type);
    }

    private void checkRecord(ObjectNode object, Class<?> type, String path) {
        Map<String, Type> fields = fields(type);
        List<String> unknown = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String where = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
            Type fieldType = fields.get(field.getKey());
            if (fieldType == null) {
                unknown.add(where);
                it.remove();
            } else if (field.getValue().isNull()) {
                // Written with no value: said, not taken for the default (which is for a key left out).
                String text = written.apply(where);
                String value = text == null || text.isBlank() ? "empty" : text;
                problems.add(new Problem(
                        List.of(where),
                        new dev.tailor.common.Problem(where, value, expected(fieldType, json)).message(),
                        value,
                        probe(fieldType)));
                it.remove();
            } else if (!check(field.getValue(), fieldType, where, false)) {
                it.remove();
            }
        }
        for (String where : unknown) {
            problems.add(new Problem(
                    List.of(where),
                    new dev.tailor.common.Problem(
                                    where,
                                    dev.tailor.common.Problem.UNKNOWN_FIELD,
                                    "one of " + String.join(", ", fields.keySet()))
                            .message()));
        }
    }

    /** The record's fields in declaration order, with their types. */
    private static Map<String, Type> fields(Class<?> type) {
        Map<String, Type> fields = new LinkedHashMap<>();
        for (RecordComponent component : type.getRecordComponents()) {
            fields.put(component.getName(), component.getGenericType());
        }
        return fields;
    }

    private static Class<?> raw(Type type) {
        return type instanceof ParameterizedType parameterized
                ? (Class<?>) parameterized.getRawType()
                : (Class<?>) type;
    }

    /**
     * What a field of {@code type} takes, in words; in a JSON file's when {@code json} (an object, an array, true
     * or false), else in YAML's (a mapping, a list).
     */
    static String expected(Type type, boolean json) {
        Class<?> raw = raw(type);
        if (raw.isRecord()) {
            return (json ? "an object" : "a mapping") + " with the fields "
                    + Arrays.stream(raw.getRecordComponents())
                            .map(RecordComponent::getName)
                            .collect(Collectors.joining(", "));
        }
        if (List.class.isAssignableFrom(raw)) {
            return (json ? "an array" : "a list") + ", each entry "
                    + expected(((ParameterizedType) type).getActualTypeArguments()[0], json);
        }
        if (raw == Integer.class) {
            return "a whole number";
        }
        if (raw == Double.class) {
            return "a number, e.g. 10 or 2.5";
        }
        if (raw == Boolean.class) {
            return json ? StrictReader.BOOLEAN_JSON : StrictReader.BOOLEAN;
        }
        if (raw == Path.class) {
            return "a file path";
        }
        if (raw == ByteSize.class) {
            return ByteSize.EXPECTED;
        }
        return "text";
    }

    /**
     * A value of {@code type} that its field's own check refuses, so that the check's words say what the
     * field takes: not a number for a number, the smallest whole number, an empty text, a size of 0 bytes,
     * an empty list; {@code null} for a type without one (a mapping, a boolean, a path).
     */
    private static JsonNode probe(Type type) {
        Class<?> raw = raw(type);
        com.fasterxml.jackson.databind.node.JsonNodeFactory nodes =
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
        if (raw == Double.class) {
            return nodes.numberNode(Double.NaN);
        }
        if (raw == Integer.class) {
            return nodes.numberNode(Integer.MIN_VALUE);
        }
        if (raw == String.class) {
            return nodes.textNode("");
        }
        if (raw == ByteSize.class) {
            return nodes.numberNode(0);
        }
        if (List.class.isAssignableFrom(raw)) {
            return nodes.arrayNode();
        }
        return null;
    }

    /** {@link #shown(JsonNode)}, or the value as written at {@code path} for a non-finite float. */
    private String shown(JsonNode node, String path) {
        String text = node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue()) ? written.apply(path) : null;
        return text != null ? text : shown(node);
    }

    /**
     * The value as the user wrote it ({@code "abc"}, {@code 1.5}); a list or a mapping on one line, cut short when
     * long ({@code ["a", "b"]}, as {@link dev.tailor.common.StrictReader#written} shows it in JSON).
     */
    private static String shown(JsonNode node) {
        if (node.isContainerNode()) {
            return StrictReader.written(node, true);
        }
        String text = node.toString();
        return text.length() > 60 ? text.substring(0, 57) + "..." : text;
    }
}
