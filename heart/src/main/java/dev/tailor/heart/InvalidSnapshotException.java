package dev.tailor.heart;

import java.util.List;

/**
 * A snapshot that cannot be planned. {@link #problems()} lists every problem found, each naming
 * the field, the value and what was expected, e.g.
 * {@code replicas[3].cpuCores: NaN (expected: cores in [0, 1e6], or absent for no data)};
 * {@link #fieldProblems()} the same as (path, value, expected), for a reader that words them with
 * the file's lines.
 */
public final class InvalidSnapshotException extends IllegalArgumentException {

    private final List<FieldProblem> problems;

    public InvalidSnapshotException(List<FieldProblem> problems) {
        super(message(FieldProblem.messages(problems)));
        this.problems = List.copyOf(problems);
    }

    /** Every problem in words, in the order the fields appear in the snapshot. */
    public List<String> problems() {
        return FieldProblem.messages(problems);
    }

    /** Every problem as (path, value, expected), in the order the fields appear in the snapshot. */
    public List<FieldProblem> fieldProblems() {
        return problems;
    }

    private static String message(List<String> problems) {
        if (problems.size() == 1) {
            return "invalid snapshot: " + problems.get(0);
        }
        return "invalid snapshot, " + problems.size() + " problems:\n  " + String.join("\n  ", problems);
    }
}
