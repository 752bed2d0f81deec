package dev.tailor.sim;

import com.fasterxml.jackson.core.JacksonException;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.util.List;
import java.util.function.Function;

/**
 * A scenario, cluster or storage, that cannot be read or is invalid; the message names the file and
 * every problem, each with its field path (and its line, where the file could not be read further).
 * Problems found after reading, when the scenario is built, are kept as {@link #problems()}, so that
 * whoever has the file's {@link Locations} can tell each at its line.
 */
public final class ScenarioException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient List<Problem> problems;

    public ScenarioException(String message) {
        super(message);
        this.problems = List.of();
    }

    /**
     * Problems of the scenario {@code source}, by field path as in the scenario's file: the message is
     * {@code SOURCE: problem}, or {@code SOURCE: N problems:} and one indented line each.
     */
    public ScenarioException(String source, List<Problem> problems) {
        super(Problem.report(source, problems.stream().map(Problem::message).toList()));
        this.problems = List.copyOf(problems);
    }

    /** The problems, by field path, when they were found after reading; else empty (the message says all). */
    public List<Problem> problems() {
        return problems == null ? List.of() : problems;
    }

    /**
     * A file Jackson cannot read further, in words: {@code SOURCE: field: value (expected: ...) at
     * line N} for a field's problem ({@link StrictReader#problem}), {@code SOURCE: not valid YAML at
     * line N, field F: reason} for a syntax error ({@code not valid JSON}, in JSON's words, when {@code json}),
     * {@code SOURCE: empty} for no content.
     *
     * @param locations where the document's fields are: a field's error is told at the field's own line
     * @param expected  what a field of a type takes, in words
     * @param json      whether the file was read as JSON
     */
    public static ScenarioException unreadable(
            String source, Locations locations, JacksonException e, Function<Class<?>, String> expected, boolean json) {
        if (StrictReader.empty(e)) {
            return new ScenarioException(source + ": empty (expected: a scenario)");
        }
        Problem problem = locations.problem(e, expected);
        if (problem != null) {
            return new ScenarioException(source + ": " + problem.message() + locations.atLine(e));
        }
        return new ScenarioException(source + ": not valid " + (json ? "JSON" : "YAML") + locations.where(e) + ": "
                + StrictReader.reason(e, json));
    }
}
