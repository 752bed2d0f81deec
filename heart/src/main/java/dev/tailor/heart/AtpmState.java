package dev.tailor.heart;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What HEART carries from one round to the next: per component, per group, the load EWMA and its
 * tracking-signal state. Immutable and JSON-serialisable, so consecutive {@code tailor heart plan
 * --state FILE} runs, or a restarted controller, continue as consecutive rounds.
 *
 * <p>It records what it was written for, the {@link #services} of the application, so that a state of
 * another application is not taken for this one's ({@link #writtenForAnother}).
 *
 * @param rounds   number of rounds planned so far
 * @param groups   component → group id (node name, or pod name under per-replica grouping) → estimate
 * @param services the application's services in the last round's snapshot ({@link Heart#services}), sorted;
 *                 {@code null} when unknown (a state written before states recorded them)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AtpmState(long rounds, Map<String, Map<String, GroupEstimate>> groups, List<String> services) {

    /** No history: the first round. */
    public static final AtpmState EMPTY = new AtpmState(0, Map.of());

    /** Most rounds a state may count: 30 s rounds for 950,000 years. */
    public static final long MAX_ROUNDS = 1_000_000_000_000L;

    public AtpmState {
        Map<String, Map<String, GroupEstimate>> copy = new TreeMap<>();
        if (groups != null) {
            groups.forEach((component, byGroup) -> copy.put(
                    component, byGroup == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(byGroup))));
        }
        groups = Collections.unmodifiableMap(copy);
        // A null element is the problems' to report, not the constructor's to throw on.
        services = services == null ? null : Collections.unmodifiableList(new ArrayList<>(services));
    }

    /** A state that does not say which application it was written for. */
    public AtpmState(long rounds, Map<String, Map<String, GroupEstimate>> groups) {
        this(rounds, groups, null);
    }

    /**
     * Whether this state was written for another application than one of {@code services}: it names its
     * services and neither includes the other's (an application that grew or lost a service is the same;
     * one whose services differ both ways is not). {@code false} when the state does not name them.
     */
    public boolean writtenForAnother(Collection<String> services) {
        if (this.services == null || this.services.isEmpty()) {
            return false;
        }
        return !services.containsAll(this.services) && !this.services.containsAll(services);
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
        // Bounded so that the next round's number cannot overflow (was: round -9223372036854775808, saved).
        if (rounds < 0 || rounds > MAX_ROUNDS) {
            problems.add(new FieldProblem("rounds", rounds, "rounds in [0, 1e12]"));
        }
        if (services != null) {
            for (int i = 0; i < services.size(); i++) {
                String service = services.get(i);
                if (service == null || service.isBlank()) {
                    problems.add(new FieldProblem(
                            "services[" + i + "]", service == null ? "null" : "\"" + service + "\"", "a service name"));
                }
            }
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
