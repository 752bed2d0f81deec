package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.quicktheories.QuickTheory.qt;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * One random corruption of a random valid snapshot must be refused with an
 * {@link InvalidSnapshotException} whose problems name the field path and the bad value: what a user
 * of {@code tailor heart plan} reads to fix a snapshot file, and what the controller logs when a
 * metric source misbehaves.
 */
class SnapshotValidatorPropertiesTest {

    private static final Heart HEART =
            new Heart(HeartConfig.DEFAULTS.toBuilder().parallel(false).build());

    @Test
    void plan_randomValidSnapshot_isAccepted() {
        // The baseline for the corruptions below: without it, "refused" could just mean "always refused".
        qt().withExamples(200).forAll(RandomClusters.snapshots()).checkAssert(snapshot -> {
            assertThat(SnapshotValidator.validate(snapshot)).isEmpty();
            assertThat(HEART.plan(snapshot, AtpmState.EMPTY).allocation().routes())
                    .hasSameSizeAs(snapshot.calls());
        });
    }

    @Test
    void plan_oneRandomCorruption_throwsNamingTheFieldPathAndTheBadValue() {
        // A corrupted snapshot that planned anyway would route on NaN shares; one refused with a vague
        // message would leave the user guessing which of hundreds of fields is wrong.
        qt().withExamples(1000).forAll(corruptions()).checkAssert(c -> {
            InvalidSnapshotException e = catchThrowableOfType(
                    InvalidSnapshotException.class, () -> HEART.plan(c.snapshot(), AtpmState.EMPTY));
            assertThat(e).as("%s must be refused", c.what()).isNotNull();
            assertThat(e.problems()).as(c.what()).anyMatch(p -> p.startsWith(c.expected()));
            if (c.sole()) {
                // Nothing else is wrong with the snapshot, so nothing else may be reported.
                assertThat(e.problems()).as(c.what()).hasSize(1);
            }
            assertThat(e.getMessage()).contains(c.expected());
        });
    }

    /**
     * @param what     the corruption, in words
     * @param expected the start of the problem that must be reported: field path, ": ", bad value
     * @param sole     whether it must be the only problem
     */
    record Corruption(String what, Snapshot snapshot, String expected, boolean sole) {}

    private static final Double[] BAD_METRICS = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.5};
    private static final String[] METRICS = {"cpuCores", "requestsPerSecond", "cpuLimitCores"};

    private static Gen<Corruption> corruptions() {
        Gen<Corruption> gen = in -> {
            Snapshot s = RandomClusters.snapshots().generate(in);
            RandomClusters.Draw d = new RandomClusters.Draw(in);
            int nodes = s.nodes().size();
            int replicas = s.replicas().size();
            int calls = s.calls().size();
            return switch (d.intIn(0, 15)) {
                case 0 -> {
                    int i = d.intIn(0, replicas - 1);
                    String field = METRICS[d.intIn(0, 2)];
                    Double bad = field.equals("cpuLimitCores") && d.chance(25) ? 0.0 : BAD_METRICS[d.intIn(0, 3)];
                    Replica r = s.replicas().get(i);
                    Replica broken = switch (field) {
                        case "cpuCores" ->
                            new Replica(
                                    r.pod(),
                                    r.component(),
                                    r.node(),
                                    r.ready(),
                                    bad,
                                    r.cpuLimitCores(),
                                    r.requestsPerSecond());
                        case "requestsPerSecond" ->
                            new Replica(
                                    r.pod(), r.component(), r.node(), r.ready(), r.cpuCores(), r.cpuLimitCores(), bad);
                        default ->
                            new Replica(
                                    r.pod(),
                                    r.component(),
                                    r.node(),
                                    r.ready(),
                                    r.cpuCores(),
                                    bad,
                                    r.requestsPerSecond());
                    };
                    yield new Corruption(
                            "replica " + field + " " + bad,
                            replicas(s, l -> set(l, i, broken)),
                            "replicas[" + i + "]." + field + ": " + shown(bad),
                            true);
                }
                case 1 -> {
                    int i = d.intIn(0, replicas - 1);
                    Replica r = s.replicas().get(i);
                    Replica moved = new Replica(
                            r.pod(),
                            r.component(),
                            "nowhere",
                            r.ready(),
                            r.cpuCores(),
                            r.cpuLimitCores(),
                            r.requestsPerSecond());
                    yield new Corruption(
                            "replica on an unknown node",
                            replicas(s, l -> set(l, i, moved)),
                            "replicas[" + i + "].node: \"nowhere\" is not a node",
                            true);
                }
                case 2 -> {
                    Replica twin = s.replicas().get(d.intIn(0, replicas - 1));
                    yield new Corruption(
                            "duplicate pod",
                            replicas(s, l -> append(l, twin)),
                            "replicas[" + replicas + "].pod: \"" + twin.pod() + "\" is a duplicate",
                            true);
                }
                case 3 -> {
                    String component =
                            s.replicas().get(d.intIn(0, replicas - 1)).component();
                    yield new Corruption(
                            "component without a ready replica",
                            replicas(s, l -> {
                                List<Replica> out = new ArrayList<>();
                                for (Replica r : l) {
                                    out.add(
                                            !r.component().equals(component)
                                                    ? r
                                                    : new Replica(
                                                            r.pod(),
                                                            r.component(),
                                                            r.node(),
                                                            false,
                                                            r.cpuCores(),
                                                            r.cpuLimitCores(),
                                                            r.requestsPerSecond()));
                                }
                                return out;
                            }),
                            "replicas[" + firstOf(s.replicas(), component) + "].component: \"" + component
                                    + "\" has no ready replica",
                            true);
                }
                case 4 ->
                    new Corruption(
                            "no nodes",
                            new Snapshot(s.windowSeconds(), List.of(), s.replicas(), s.calls(), s.delays()),
                            "nodes: empty",
                            false);
                case 5 ->
                    new Corruption(
                            "no replicas",
                            new Snapshot(s.windowSeconds(), s.nodes(), List.of(), s.calls(), s.delays()),
                            "replicas: empty",
                            false);
                case 6 -> {
                    int i = d.intIn(0, nodes - 1);
                    Double bad = d.chance(25) ? 0.0 : BAD_METRICS[d.intIn(0, 3)];
                    List<Node> list = new ArrayList<>(s.nodes());
                    list.set(i, new Node(list.get(i).name(), list.get(i).locality(), bad));
                    yield new Corruption(
                            "node cpuCores " + bad,
                            new Snapshot(s.windowSeconds(), list, s.replicas(), s.calls(), s.delays()),
                            "nodes[" + i + "].cpuCores: " + shown(bad),
                            true);
                }
                case 7 -> {
                    List<Node> list = new ArrayList<>(s.nodes());
                    list.add(new Node("w0", null, null));
                    yield new Corruption(
                            "duplicate node",
                            new Snapshot(s.windowSeconds(), list, s.replicas(), s.calls(), s.delays()),
                            "nodes[" + nodes + "].name: \"w0\" is a duplicate",
                            true);
                }
                case 8 -> {
                    Double bad = d.chance(20)
                            ? null
                            : new Double[] {Double.NaN, Double.POSITIVE_INFINITY, 0.0, -30.0}[d.intIn(0, 3)];
                    yield new Corruption(
                            "window " + bad,
                            new Snapshot(bad, s.nodes(), s.replicas(), s.calls(), s.delays()),
                            "windowSeconds: " + (bad == null ? "missing" : shown(bad)),
                            true);
                }
                case 9 -> {
                    int i = d.intIn(0, calls - 1);
                    double bad = BAD_METRICS[d.intIn(0, 3)];
                    Call c = s.calls().get(i);
                    // An entry point at rate 0 may omit its split; at a positive rate that is a second problem.
                    boolean entry =
                            s.replicas().stream().noneMatch(r -> r.component().equals(c.caller()));
                    boolean sole = !(entry && bad > 0 && c.byCallerNode() == null);
                    yield new Corruption(
                            "call rate " + bad,
                            calls(s, l -> set(l, i, new Call(c.caller(), c.callee(), bad, c.byCallerNode()))),
                            "calls[" + i + "].requestsPerSecond: " + shown(bad),
                            sole);
                }
                case 10 -> {
                    int i = d.intIn(0, calls - 1);
                    Call c = s.calls().get(i);
                    Map<String, Double> split =
                            c.byCallerNode() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(c.byCallerNode());
                    boolean unknownNode = d.chance(30);
                    Double bad = d.chance(20) ? null : BAD_METRICS[d.intIn(0, 3)];
                    String key = unknownNode ? "nowhere" : "w" + d.intIn(0, nodes - 1);
                    split.put(key, unknownNode ? Double.valueOf(1.0) : bad);
                    String expected = "calls[" + i + "].byCallerNode." + key + ": "
                            + (unknownNode ? "\"nowhere\" is not a node" : shown(bad));
                    // Breaking an entry point's only positive rate also makes its split "all zero".
                    yield new Corruption(
                            "byCallerNode " + key + " = " + (unknownNode ? "1.0" : bad),
                            calls(s, l -> set(l, i, new Call(c.caller(), c.callee(), c.requestsPerSecond(), split))),
                            expected,
                            false);
                }
                case 11 ->
                    new Corruption(
                            "call to a component without replicas",
                            calls(s, l -> append(l, new Call("c0", "ghost", 1.0, null))),
                            "calls[" + calls + "].callee: \"ghost\" has no replicas",
                            true);
                case 12 ->
                    new Corruption(
                            "entry point without its split",
                            calls(s, l -> append(l, new Call("outside", "c0", 5.0, null))),
                            "calls[" + calls + "].byCallerNode: missing for entry point \"outside\"",
                            true);
                case 13 ->
                    new Corruption(
                            "duplicate call",
                            calls(s, l -> append(l, s.calls().get(0))),
                            "calls[" + calls + "]: a second call",
                            true);
                case 14 -> {
                    double bad = BAD_METRICS[d.intIn(0, 3)];
                    boolean unknownNode = d.chance(30);
                    boolean none = s.delays().isEmpty();
                    int i = none ? 0 : d.intIn(0, s.delays().size() - 1);
                    LinkDelay old =
                            none ? new LinkDelay("w0", "w1", 1.0) : s.delays().get(i);
                    LinkDelay broken = new LinkDelay(
                            unknownNode ? "nowhere" : old.from(), old.to(), unknownNode ? old.millis() : bad);
                    yield new Corruption(
                            unknownNode ? "delay from an unknown node" : "delay " + bad,
                            delays(s, l -> none ? append(l, broken) : set(l, i, broken)),
                            unknownNode
                                    ? "delays[" + i + "].from: \"nowhere\" is not a node"
                                    : "delays[" + i + "].millis: " + shown(bad),
                            true);
                }
                default -> {
                    int i = d.intIn(0, replicas - 1);
                    yield new Corruption(
                            "null replica", replicas(s, l -> set(l, i, null)), "replicas[" + i + "]: null", false);
                }
            };
        };
        return gen.describedAs(
                c -> c.what() + ", expecting '" + c.expected() + "' in\n" + RandomClusters.describe(c.snapshot()));
    }

    private static Snapshot replicas(Snapshot s, UnaryOperator<List<Replica>> change) {
        return new Snapshot(
                s.windowSeconds(), s.nodes(), change.apply(new ArrayList<>(s.replicas())), s.calls(), s.delays());
    }

    private static Snapshot calls(Snapshot s, UnaryOperator<List<Call>> change) {
        return new Snapshot(
                s.windowSeconds(), s.nodes(), s.replicas(), change.apply(new ArrayList<>(s.calls())), s.delays());
    }

    private static Snapshot delays(Snapshot s, UnaryOperator<List<LinkDelay>> change) {
        return new Snapshot(
                s.windowSeconds(), s.nodes(), s.replicas(), s.calls(), change.apply(new ArrayList<>(s.delays())));
    }

    /** The index of the first replica of {@code component}, where a component's problem is told. */
    private static int firstOf(List<Replica> replicas, String component) {
        for (int i = 0; i < replicas.size(); i++) {
            if (replicas.get(i).component().equals(component)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no replica of " + component);
    }

    private static <T> List<T> set(List<T> list, int index, T value) {
        list.set(index, value);
        return list;
    }

    private static <T> List<T> append(List<T> list, T value) {
        list.add(value);
        return list;
    }

    /** A value as the problems write it: a real number as {@link dev.tailor.common.Numbers#written}. */
    private static String shown(Double value) {
        return value == null ? "null" : dev.tailor.common.Numbers.written(value);
    }
}
