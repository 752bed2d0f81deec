package dev.tailor.heart;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What HEART carries from one round to the next: per component, per group, the load EWMA and its
 * tracking-signal state. Immutable and JSON-serialisable, so consecutive {@code tailor heart plan
 * --state FILE} runs, or a restarted controller, continue as consecutive rounds.
 *
 * @param rounds number of rounds planned so far
 * @param groups component → group id (node name, or pod name under per-replica grouping) → estimate
 */
public record AtpmState(long rounds, Map<String, Map<String, GroupEstimate>> groups) {

    /** No history: the first round. */
    public static final AtpmState EMPTY = new AtpmState(0, Map.of());

    public AtpmState {
        Map<String, Map<String, GroupEstimate>> copy = new TreeMap<>();
        if (groups != null) {
            groups.forEach((component, byGroup) -> copy.put(
                    component, byGroup == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(byGroup))));
        }
        groups = Collections.unmodifiableMap(copy);
    }

    /** The estimates of one component; empty when it is new. */
    public Map<String, GroupEstimate> of(String component) {
        return groups.getOrDefault(component, Map.of());
    }

    /**
     * Every problem of a state read from outside (a file, a ConfigMap), each naming the field and
     * the value; empty when it is usable.
     */
    public List<String> problems() {
        return FieldProblem.messages(fieldProblems());
    }

    /**
     * {@link #problems()} as (path, value, expected): the path as a JSON reader names the field
     * ({@code groups.a.w1.alpha}), a number out of range as read.
     */
    public List<FieldProblem> fieldProblems() {
        List<FieldProblem> problems = new ArrayList<>();
        if (rounds < 0) {
            problems.add(new FieldProblem("rounds", rounds, ">= 0"));
        }
        groups.forEach((component, byGroup) -> byGroup.forEach((group, estimate) -> {
            String at = "groups." + component + "." + group;
            if (estimate == null) {
                problems.add(new FieldProblem(at, "null", "an estimate object"));
            } else {
                problems.addAll(estimate.problems(at));
            }
        }));
        return problems;
    }
}
