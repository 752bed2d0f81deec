package dev.tailor.sim;

import com.fasterxml.jackson.databind.JsonMappingException;
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
