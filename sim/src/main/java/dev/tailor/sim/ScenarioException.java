package dev.tailor.sim;

import com.fasterxml.jackson.core.JacksonException;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.util.function.Function;

/**
 * A scenario, cluster or storage, that cannot be read or is invalid; the message names the file and
 * every problem, each with its field path (and its line, where the file could not be read further).
 */
public final class ScenarioException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public ScenarioException(String message) {
        super(message);
    }

    /**
     * A file Jackson cannot read further, in words: {@code SOURCE: field: value (expected: ...) at
     * line N} for a field's problem ({@link StrictReader#problem}), {@code SOURCE: not valid YAML at
     * line N, field F: reason} for a syntax error, {@code SOURCE: empty} for no content.
     *
     * @param locations where the document's fields are: a field's error is told at the field's own line
     * @param expected  what a field of a type takes, in words
     */
    public static ScenarioException unreadable(
            String source, Locations locations, JacksonException e, Function<Class<?>, String> expected) {
        if (StrictReader.empty(e)) {
            return new ScenarioException(source + ": empty (expected: a scenario)");
        }
        Problem problem = StrictReader.problem(e, expected);
        if (problem != null) {
            return new ScenarioException(source + ": " + problem.message() + locations.atLine(e));
        }
        return new ScenarioException(
                source + ": not valid YAML" + StrictReader.where(e) + ": " + StrictReader.reason(e));
    }
}
