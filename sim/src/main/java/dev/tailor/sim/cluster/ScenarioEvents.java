package dev.tailor.sim.cluster;

import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.sim.des.EventCalendar;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.sampling.distribution.ZigguratSampler;

/**
 * A scenario's {@code events}: their validation, and their actions on a run's calendar. Every
 * instant is fixed by the scenario (the antagonist's bursts are drawn from the scenario's own stream),
 * so every policy of a comparison faces the same faults at the same times.
 *
 * <p>What each kind does to the model: a node slowdown scales the node's per-core speed; an
 * antagonist takes cores from the node's max-min share; a crash loses the calls at and to the replica
 * until it restarts (their callers then get an error), and its readiness follows Kubernetes' probes;
 * a graceful restart takes the replica out of the endpoints while it drains and brings it back, cold
 * if asked; a metrics undercount changes only what the simulated Prometheus scrapes of the replica's
 * served requests, a calls overcount only what it scrapes of a proxy's calls; background CPU adds to
 * what is measured of a replica's CPU, not to what its requests need.
 */
final class ScenarioEvents {

    private ScenarioEvents() {}

    /** Adds every problem of {@code scenario}'s events to {@code problems}, naming the field. */
    static void problems(ClusterScenario scenario, List<Problem> problems) {
        Map<String, ClusterScenario.NodeSpec> nodes = new HashMap<>();
        for (ClusterScenario.NodeSpec node : scenario.nodes()) {
            if (node != null && node.name() != null) {
                nodes.putIfAbsent(node.name(), node);
            }
        }
        List<String> components = new ArrayList<>();
        for (ClusterScenario.ComponentSpec component : scenario.components()) {
            if (component != null && component.name() != null) {
                components.add(component.name());
            }
        }
        List<double[]> intervals = new ArrayList<>();
        List<String> targets = new ArrayList<>();
        for (int i = 0; i < scenario.events().size(); i++) {
            ClusterScenario.EventSpec event = scenario.events().get(i);
            String at = "events[" + i + "]";
            if (event == null) {
                problems.add(new Problem(at, "null", "an event"));
                intervals.add(null);
                targets.add(null);
                continue;
            }
            int before = problems.size();
            ClusterScenario.EventKind kind = event.kind();
            if (kind == null) {
                problems.add(new Problem(at + ".kind", "missing", "one of " + ClusterScenario.EventKind.labels()));
            }
            if (event.atSeconds() == null || !(event.atSeconds() >= 0 && event.atSeconds() <= 86_400)) {
                problems.add(new Problem(
                        at + ".atSeconds",
                        given(event.atSeconds()),
                        "a number in [0, 86400], seconds" + " from the start of the run"));
            }
            positive(problems, at + ".durationSeconds", event.durationSeconds(), 86_400);
            ClusterScenario.NodeSpec node = null;
            if (event.node() == null || !nodes.containsKey(event.node())) {
                problems.add(new Problem(at + ".node", quote(event.node()), "one of the nodes " + nodes.keySet()));
            } else {
                node = nodes.get(event.node());
            }
            if (kind == null) {
                intervals.add(null);
                targets.add(null);
                continue;
            }
            boolean undercount = kind == ClusterScenario.EventKind.METRICS_UNDERCOUNT;
            boolean restarts = kind == ClusterScenario.EventKind.REPLICA_CRASH
                    || kind == ClusterScenario.EventKind.REPLICA_RESTART;
            boolean overcount = kind == ClusterScenario.EventKind.CALLS_OVERCOUNT;
            boolean replicaKind = restarts || undercount;
            boolean callerReplica = overcount && event.component() != null;
            onlyFor(problems, at, "component", event.component(), replicaKind || overcount, kind);
            onlyFor(problems, at, "replicaOnNode", event.replicaOnNode(), replicaKind || callerReplica, kind);
            onlyFor(problems, at, "countedFactor", event.countedFactor(), overcount, kind);
            if (overcount
                    && (event.countedFactor() == null
                            || !(event.countedFactor() > 1 && event.countedFactor() <= 100))) {
                problems.add(new Problem(
                        at + ".countedFactor",
                        given(event.countedFactor()),
                        "a number in (1, 100]:" + " how many times the scraped call metric counts each call"));
            }
            onlyFor(problems, at, "coldSeconds", event.coldSeconds(), restarts, kind);
            onlyFor(problems, at, "coldFactor", event.coldFactor(), restarts, kind);
            onlyFor(problems, at, "countedFraction", event.countedFraction(), undercount, kind);
            if (undercount
                    && (event.countedFraction() == null
                            || !(event.countedFraction() >= 0 && event.countedFraction() < 1))) {
                problems.add(new Problem(
                        at + ".countedFraction",
                        given(event.countedFraction()),
                        "a number in [0, 1):" + " the fraction of the served requests the scraped metric counts"));
            }
            boolean crash = kind == ClusterScenario.EventKind.REPLICA_CRASH;
            onlyFor(problems, at, "notReadyAfterSeconds", event.notReadyAfterSeconds(), crash, kind);
            onlyFor(problems, at, "readyAfterSeconds", event.readyAfterSeconds(), crash, kind);
            boolean slowdown = kind == ClusterScenario.EventKind.NODE_SLOWDOWN;
            onlyFor(problems, at, "speedMultiplier", event.speedMultiplier(), slowdown, kind);
            boolean antagonist = kind == ClusterScenario.EventKind.CPU_ANTAGONIST;
            boolean background = kind == ClusterScenario.EventKind.BACKGROUND_CPU;
            onlyFor(problems, at, "cores", event.cores(), antagonist || background, kind);
            if (background
                    && (event.cores() == null || !(event.cores() > 0 && event.cores() < scenario.cpuLimitCores()))) {
                problems.add(new Problem(
                        at + ".cores",
                        given(event.cores()),
                        "more than 0 and less than a replica's" + " CPU limit, " + fmt(scenario.cpuLimitCores())
                                + " cores"));
            }
            onlyFor(problems, at, "burstSeconds", event.burstSeconds(), antagonist, kind);
            onlyFor(problems, at, "meanGapSeconds", event.meanGapSeconds(), antagonist, kind);
            if (slowdown
                    && (event.speedMultiplier() == null
                            || !(event.speedMultiplier() > 0 && event.speedMultiplier() <= 1))) {
                problems.add(new Problem(
                        at + ".speedMultiplier",
                        given(event.speedMultiplier()),
                        "a number in (0, 1]:" + " the factor on the node's per-core speed"));
            }
            if (antagonist) {
                double nodeCores = node == null || node.cores() == null ? Double.NaN : node.cores();
                if (event.cores() == null || !(event.cores() > 0 && event.cores() < nodeCores)) {
                    problems.add(new Problem(
                            at + ".cores",
                            given(event.cores()),
                            "more than 0 and fewer than the node's"
                                    + (Double.isNaN(nodeCores) ? "" : " " + fmt(nodeCores)) + " cores"));
                }
                positive(problems, at + ".burstSeconds", event.burstSeconds(), 3_600);
                positive(problems, at + ".meanGapSeconds", event.meanGapSeconds(), 86_400);
            }
            if (replicaKind || callerReplica) {
                if (event.component() == null || !components.contains(event.component())) {
                    problems.add(new Problem(
                            at + ".component", quote(event.component()), "one of the components " + components));
                }
                int perNode = scenario.replicasPerNode();
                Integer onNode = event.replicaOnNode();
                if (onNode != null && !(onNode >= 1 && onNode <= perNode)) {
                    problems.add(new Problem(
                            at + ".replicaOnNode",
                            event.replicaOnNode(),
                            "1 .. " + perNode + ", the replicas of a component on a node"));
                }
                if (event.coldSeconds() != null && !(event.coldSeconds() >= 0 && event.coldSeconds() <= 86_400)) {
                    problems.add(new Problem(at + ".coldSeconds", event.coldSeconds(), "a number in [0, 86400]"));
                }
                if (event.coldFactor() != null && !(event.coldFactor() >= 1 && event.coldFactor() <= 100)) {
                    problems.add(new Problem(
                            at + ".coldFactor",
                            event.coldFactor(),
                            "a number in [1, 100], the" + " factor on the CPU cost of a call while cold"));
                }
            }
            if (crash) {
                if (event.notReadyAfterSeconds() != null
                        && !(event.notReadyAfterSeconds() >= 0 && event.notReadyAfterSeconds() <= 86_400)) {
                    problems.add(new Problem(
                            at + ".notReadyAfterSeconds", event.notReadyAfterSeconds(), "a number in [0, 86400]"));
                }
                if (event.readyAfterSeconds() != null
                        && !(event.readyAfterSeconds() >= 0 && event.readyAfterSeconds() <= 86_400)) {
                    problems.add(new Problem(
                            at + ".readyAfterSeconds", event.readyAfterSeconds(), "a number in [0, 86400]"));
                }
            }
            if (problems.size() > before) {
                intervals.add(null);
                targets.add(null);
                continue;
            }
            double start = event.atSeconds();
            double end = start + event.durationSeconds() + (crash ? event.readyAfterSecondsOrDefault() : 0);
            intervals.add(new double[] {start, end});
            String replica =
                    "replica " + event.component() + " #" + event.replicaOnNodeOrDefault() + " on " + event.node();
            targets.add(
                    restarts
                            ? replica
                            : undercount
                                    ? "metrics of " + replica
                                    : overcount
                                            ? "call metrics of "
                                                    + (callerReplica
                                                            ? replica
                                                            : "the ingress gateway on " + event.node())
                                            : kind.label() + " on node " + event.node());
        }
        for (int j = 0; j < intervals.size(); j++) {
            for (int i = 0; i < j; i++) {
                if (intervals.get(i) == null
                        || intervals.get(j) == null
                        || !targets.get(i).equals(targets.get(j))) {
                    continue;
                }
                double[] a = intervals.get(i);
                double[] b = intervals.get(j);
                if (a[0] < b[1] && b[0] < a[1]) {
                    problems.add(new Problem(
                            "events[" + j + "]",
                            "overlaps events[" + i + "] (" + targets.get(j) + ", " + fmt(b[0]) + "-" + fmt(b[1])
                                    + " s against " + fmt(a[0]) + "-" + fmt(a[1]) + " s)",
                            "one at a time"));
                }
            }
        }
    }

    private static void onlyFor(
            List<Problem> problems,
            String at,
            String field,
            Object value,
            boolean used,
            ClusterScenario.EventKind kind) {
        if (!used && value != null) {
            problems.add(new Problem(at + "." + field, value, "absent for kind " + kind.label()));
        }
    }

    private static void positive(List<Problem> problems, String at, Double value, double max) {
        if (value == null || !(value > 0 && value <= max)) {
            problems.add(new Problem(at, given(value), "a number in (0, " + fmt(max) + "]"));
        }
    }

    private static String fmt(double value) {
        return Numbers.written(value);
    }

    /** A required value for a message: itself, or {@code missing} when the file leaves it out. */
    private static Object given(Double value) {
        return value == null ? "missing" : value;
    }

    private static String quote(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }

    // ---- actions ----

    /** Puts every event of the model's scenario on its calendar. */
    static void schedule(ClusterModel model) {
        List<ClusterScenario.EventSpec> events = model.scenario.events();
        for (int i = 0; i < events.size(); i++) {
            ClusterScenario.EventSpec event = events.get(i);
            SimNode node = null;
            for (SimNode candidate : model.nodes) {
                if (candidate.name.equals(event.node())) {
                    node = candidate;
                }
            }
            long start = ClusterModel.seconds(event.atSeconds());
            long end = start + ClusterModel.seconds(event.durationSeconds());
            switch (event.kind()) {
                case NODE_SLOWDOWN -> slowdown(model, node, event.speedMultiplier(), start, end);
                case CPU_ANTAGONIST ->
                    antagonist(model, node, event, start, end, model.streams.stream("antagonist-" + i));
                case REPLICA_CRASH -> crash(model, replica(model, node, event), event, start, end);
                case REPLICA_RESTART -> restart(model, replica(model, node, event), event, start, end);
                case METRICS_UNDERCOUNT ->
                    undercount(model, replica(model, node, event), event.countedFraction(), start, end);
                case BACKGROUND_CPU -> background(model, node, event.cores(), start, end);
                case CALLS_OVERCOUNT ->
                    overcount(
                            model,
                            event.component() == null ? model.proxies[node.index] : replica(model, node, event).proxy,
                            event.countedFactor(),
                            start,
                            end);
                default -> throw new IllegalStateException("unknown event kind " + event.kind());
            }
        }
    }

    private static SimReplica replica(ClusterModel model, SimNode node, ClusterScenario.EventSpec event) {
        for (SimComponent component : model.components) {
            if (component.name.equals(event.component())) {
                return component.replicasByNode[node.index][event.replicaOnNodeOrDefault() - 1];
            }
        }
        throw new IllegalStateException("no component " + event.component());
    }

    private static void slowdown(ClusterModel model, SimNode node, double multiplier, long start, long end) {
        double[] before = new double[1];
        at(model, start, now -> {
            before[0] = node.speedFactor;
            node.setSpeedFactor(before[0] * multiplier, now);
        });
        at(model, end, now -> node.setSpeedFactor(before[0], now));
    }

    /** Idle for an exponential time, busy for a burst, and again, from {@code start} until {@code end}. */
    private static void antagonist(
            ClusterModel model,
            SimNode node,
            ClusterScenario.EventSpec event,
            long start,
            long end,
            UniformRandomProvider rng) {
        ZigguratSampler.Exponential gaps = ZigguratSampler.Exponential.of(rng);
        long burst = ClusterModel.seconds(event.burstSeconds());
        double meanGapNanos = event.meanGapSeconds() * ClusterModel.NANOS_PER_SECOND;
        long t = start;
        end = Math.min(end, model.endNanos());
        while (true) {
            t += Math.max(1, Math.round(gaps.sample() * meanGapNanos));
            if (t >= end) {
                break;
            }
            long burstEnd = Math.min(end, t + burst);
            at(model, t, now -> node.setAntagonistCores(event.cores(), now));
            at(model, burstEnd, now -> node.setAntagonistCores(0, now));
            t = burstEnd;
        }
    }

    private static void crash(
            ClusterModel model, SimReplica replica, ClusterScenario.EventSpec event, long start, long restart) {
        at(model, start, replica::crash);
        long notReady = start + ClusterModel.seconds(event.notReadyAfterSecondsOrDefault());
        boolean leaves = notReady < restart;
        if (leaves) {
            at(model, notReady, now -> setReady(replica, false));
        }
        at(model, restart, now -> {
            for (Visit visit : replica.restart(now)) {
                visit.resetAfterCrash(now);
            }
            newProcess(replica);
            replica.coldUntilNanos = now + ClusterModel.seconds(event.coldSecondsOrDefault());
            replica.coldFactor = event.coldFactorOrDefault();
        });
        if (leaves) {
            long ready = restart + ClusterModel.seconds(event.readyAfterSecondsOrDefault());
            at(model, ready, now -> setReady(replica, true));
        }
    }

    private static void restart(
            ClusterModel model, SimReplica replica, ClusterScenario.EventSpec event, long start, long ready) {
        at(model, start, now -> setReady(replica, false));
        at(model, ready, now -> {
            newProcess(replica);
            replica.coldUntilNanos = now + ClusterModel.seconds(event.coldSecondsOrDefault());
            replica.coldFactor = event.coldFactorOrDefault();
            setReady(replica, true);
        });
    }

    private static void undercount(
            ClusterModel model, SimReplica replica, double countedFraction, long start, long end) {
        at(model, start, now -> replica.metricsCountedFraction = countedFraction);
        at(model, end, now -> replica.metricsCountedFraction = 1);
    }

    private static void background(ClusterModel model, SimNode node, double cores, long start, long end) {
        for (SimReplica replica : model.replicas) {
            if (replica.node == node) {
                at(model, start, now -> replica.setBackgroundCores(cores, now));
                at(model, end, now -> replica.setBackgroundCores(0, now));
            }
        }
    }

    private static void overcount(ClusterModel model, Proxy proxy, double countedFactor, long start, long end) {
        at(model, start, now -> proxy.callsCountedFactor = countedFactor);
        at(model, end, now -> proxy.callsCountedFactor = 1);
    }

    /** A restarted replica is a new process: it remembers no latencies. */
    private static void newProcess(SimReplica replica) {
        if (replica.serverLatency != null) {
            replica.serverLatency.reset();
        }
    }

    private static void setReady(SimReplica replica, boolean ready) {
        replica.ready = ready;
        replica.component.updateEndpoints();
    }

    private static void at(ClusterModel model, long timeNanos, LongConsumer action) {
        model.calendar.schedule(new Action(action), timeNanos);
    }

    /** A one-off action at an instant. */
    private static final class Action extends EventCalendar.Event {
        private final LongConsumer action;

        Action(LongConsumer action) {
            this.action = action;
        }

        @Override
        protected void fire(long nowNanos) {
            action.accept(nowNanos);
        }
    }
}
