package dev.tailor.heart;

import java.util.List;

/**
 * A snapshot that cannot be planned. {@link #problems()} lists every problem found, each naming
 * the field, the value and what was expected, e.g.
 * {@code replicas[3].cpuCores: NaN (expected: a finite number >= 0, or absent for no data)}.
 */
public final class InvalidSnapshotException extends IllegalArgumentException {

    private final List<String> problems;

    public InvalidSnapshotException(List<String> problems) {
        super(message(problems));
        this.problems = List.copyOf(problems);
    }

    /** Every problem, in the order the fields appear in the snapshot. */
    public List<String> problems() {
        return problems;
    }

    private static String message(List<String> problems) {
        if (problems.size() == 1) {
            return "invalid snapshot: " + problems.get(0);
        }
        return "invalid snapshot, " + problems.size() + " problems:\n  " + String.join("\n  ", problems);
    }
}
