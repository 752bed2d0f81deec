package dev.tailor.sim;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.databind.JsonMappingException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * Words for Jackson's mapping errors in the scenario loaders: where in the file (a field path such
 * as {@code tenants[2].bursts.multiplier}) and what the field takes.
 */
public final class YamlErrors {

    private YamlErrors() {
    }

    /** The field path of {@code e}, e.g. {@code nodes[1].speed}, or {@code (top level)}. */
    public static String path(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            } else if (ref.getFieldName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
            }
        }
        return path.length() == 0 ? "(top level)" : path.toString();
    }

    /**
     * Where a syntax error is, for "not valid YAML{where}: reason": {@code " at line 7, field
     * tenants[2].rate"}, either part left out when Jackson does not know it, or {@code ""}.
     * For values YAML reads but JSON numbers do not take ({@code .nan}, {@code .inf}) this names the
     * field, which the parser's message alone does not.
     */
    public static String where(JacksonException e) {
        StringBuilder where = new StringBuilder();
        if (e.getLocation() != null) {
            where.append(" at line ").append(e.getLocation().getLineNr());
        }
        if (e.getProcessor() instanceof JsonParser parser) {
            String field = path(parser.getParsingContext());
            if (!field.isEmpty()) {
                where.append(where.length() == 0 ? " at " : ", ").append("field ").append(field);
            }
        }
        return where.toString();
    }

    /**
     * For YAML's non-finite floats ({@code .nan}, {@code .inf}, {@code -.inf}), which Jackson's number
     * parser refuses as "malformed": {@code "tenants[0].requestsPerSecond: .nan (expected: a finite
     * number)"}; {@code null} for any other error.
     */
    public static String nonFinite(JacksonException e) {
        String message = e.getOriginalMessage();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("Malformed numeric value '([-+]?\\.(?i:nan|inf))'")
                .matcher(message == null ? "" : message);
        if (!m.find() || !(e.getProcessor() instanceof JsonParser parser)) {
            return null;
        }
        String field = path(parser.getParsingContext());
        return (field.isEmpty() ? "(top level)" : field) + ": " + m.group(1) + " (expected: a finite number)";
    }

    /** The dotted path of a parser's context, e.g. {@code tenants[2].rate}, or {@code ""} at the root. */
    static String path(JsonStreamContext context) {
        Deque<String> parts = new ArrayDeque<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.push("[" + Math.max(0, c.getCurrentIndex()) + "]");
            } else if (c.getCurrentName() != null) {
                parts.push((c.getParent() == null || c.getParent().inRoot() ? "" : ".") + c.getCurrentName());
            }
        }
        return String.join("", parts);
    }

    /**
     * What a field of {@code type} takes, in words.
     *
     * @param enumValues how to name the values of an enum field, e.g. "one of fluid, cfs-quota"
     */
    public static String expected(Class<?> type, String enumValues) {
        if (type == null) {
            return "another type";
        }
        if (type.isEnum()) {
            return enumValues;
        }
        if (type == Integer.class || type == Long.class || type == int.class || type == long.class) {
            return "a whole number";
        }
        if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
            return "a number";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (type == String.class) {
            return "a string";
        }
        return "an object";
    }
}
