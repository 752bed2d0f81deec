package dev.tailor.sim.cluster;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A cluster-simulator scenario: heterogeneous nodes, the application's call graph and CPU costs,
 * the networks to run it on, the load and the length of a run. Read from a commented YAML file
 * ({@link Scenarios}); the bundled ones live in {@code sim/src/main/resources/dev/tailor/sim/scenarios}.
 * Absent optional fields take the defaults below; {@link #problems()} lists every invalid field.
 *
 * @param name                  the scenario's name (letters, digits, '-', '_')
 * @param description           one line for reports
 * @param seed                  the run's seed: arrivals, costs, link draws and routing draw from
 *                              streams derived from it
 * @param rps                   user requests per second to sweep, each &gt; 0
 * @param warmupSeconds         simulated seconds before measuring (default 120)
 * @param durationSeconds       simulated seconds measured after the warm-up (default 600)
 * @param timeoutSeconds        a user request slower than this counts as a timeout and is recorded
 *                              at this latency (default 30)
 * @param cpuModel              how a replica's CPU limit acts (default {@link CpuModel#FLUID})
 * @param cfsPeriodMillis       CFS bandwidth period for {@link CpuModel#CFS_QUOTA} (default 100, the
 *                              kernel's default {@code cpu.cfs_period_us})
 * @param callCostCv            coefficient of variation of one call's CPU cost, log-normal (default 0.5)
 * @param replicaCostVariation  σ of a replica's log-normal cost factor, fixed per replica (default
 *                              0.12: code paths, caches and neighbours make replicas differ)
 * @param linkJitter            a message's delay is the link's mean × U(1 − j, 1 + j) (default 0.1)
 * @param scrapeIntervalSeconds the simulated Prometheus scrapes counters this often (default 15)
 * @param nodes                 the workers
 * @param components            the application
 * @param entry                 the component user requests enter, through an ingress proxy on every
 *                              node (chosen uniformly per request)
 * @param replicasPerNode       replicas of every component on every node (default 1)
 * @param cpuLimitCores         every replica's CPU limit in cores (default 1)
 * @param networks              named link-delay settings; a run uses one
 * @param network               the network used when a run names none (default: the first)
 * @param rpsProfile            the rate over time: the run's rate × a factor, piecewise linear between
 *                              the points, constant before the first and after the last; two points at
 *                              one instant make a step. Times count from the start of the run, warm-up
 *                              included. Default: none (a constant rate)
 * @param events                faults and interference at given instants (default: none)
 */
public record ClusterScenario(
        String name,
        String description,
        Long seed,
        List<Double> rps,
        Double warmupSeconds,
        Double durationSeconds,
        Double timeoutSeconds,
        CpuModel cpuModel,
        Double cfsPeriodMillis,
        Double callCostCv,
        Double replicaCostVariation,
        Double linkJitter,
        Double scrapeIntervalSeconds,
        List<NodeSpec> nodes,
        List<ComponentSpec> components,
        String entry,
        Integer replicasPerNode,
        Double cpuLimitCores,
        Map<String, NetworkSpec> networks,
        String network,
        List<RatePoint> rpsProfile,
        List<EventSpec> events) {

    /** How a replica's CPU limit acts on its requests. */
    public enum CpuModel {
        /**
         * An ideal limit: a replica never runs on more than its limit's worth of cores at any
         * instant; its requests share that capacity equally (processor sharing).
         */
        @JsonProperty("fluid")
        FLUID,
        /**
         * Linux CFS bandwidth control, what Kubernetes does with a CPU limit: a replica's threads
         * run in parallel on any free core until the period's quota (limit × period) is spent, then
         * the replica is throttled until the period ends.
         */
        @JsonProperty("cfs-quota")
        CFS_QUOTA;

        /** The name used in scenario files and on the command line. */
        public String label() {
            return this == FLUID ? "fluid" : "cfs-quota";
        }

        /** Parses {@link #label()}; {@code null} when unknown. */
        public static CpuModel ofLabel(String label) {
            for (CpuModel model : values()) {
                if (model.label().equals(label)) {
                    return model;
                }
            }
            return null;
        }
    }

    /**
     * One point of the rate profile.
     *
     * @param atSeconds seconds from the start of the run (warm-up included), &ge; 0, non-decreasing
     * @param factor    the run's rate is multiplied by this, &ge; 0 (at least one point &gt; 0)
     */
    public record RatePoint(Double atSeconds, Double factor) {}

    /** What a scenario event does. */
    public enum EventKind {
        /**
         * A noisy neighbour: the node's per-core speed is multiplied by {@code speedMultiplier} for
         * {@code durationSeconds} (memory bandwidth and cache contention slow every core of it).
         */
        @JsonProperty("node-slowdown")
        NODE_SLOWDOWN,
        /**
         * A co-located job outside the simulated pods takes {@code cores} of the node's cores in bursts
         * of {@code burstSeconds}, separated by exponentially distributed idle times of mean
         * {@code meanGapSeconds}, for {@code durationSeconds}.
         */
        @JsonProperty("cpu-antagonist")
        CPU_ANTAGONIST,
        /**
         * The replica stops answering (its process hangs or dies without closing connections): calls at
         * it and sent to it are lost; after {@code durationSeconds} it restarts and the callers of the
         * lost calls get an error. Its readiness probe takes it out of the endpoints
         * {@code notReadyAfterSeconds} after the crash if it is still down then, and it is back
         * {@code readyAfterSeconds} after the restart. It may restart cold.
         */
        @JsonProperty("replica-crash")
        REPLICA_CRASH,
        /**
         * A graceful restart (a rollout, an eviction): the replica leaves the endpoints at once and
         * finishes the calls it has; its successor is Ready {@code durationSeconds} later, possibly cold.
         */
        @JsonProperty("replica-restart")
        REPLICA_RESTART,
        /**
         * The replica serves as before, but the request metric scraped from it (its sidecar's
         * {@code istio_requests_total}) counts only {@code countedFraction} of what it serves for
         * {@code durationSeconds}, while its CPU is measured right: a telemetry glitch of the kind a
         * metrics-driven controller has to survive (a sidecar's counters reset between scrapes, a
         * scrape of a stale target). Policies that do not read Prometheus do not see it.
         */
        @JsonProperty("metrics-undercount")
        METRICS_UNDERCOUNT,
        /**
         * The calls a proxy sends are answered as before, but its scraped call metric (the source side of
         * {@code istio_requests_total}, which the per-node call rates and the entry split are read from)
         * counts each call {@code countedFactor} times for {@code durationSeconds}: the proxy of the
         * {@code component}'s replica on the node, or the node's ingress gateway when no component is
         * given. Policies that do not read Prometheus do not see it.
         */
        @JsonProperty("calls-overcount")
        CALLS_OVERCOUNT,
        /**
         * Every replica on the node spends {@code cores} of background CPU (garbage collection, health
         * checks, telemetry) for {@code durationSeconds}: it serves no request, and it is counted where a
         * replica's CPU is measured (cAdvisor, a replica's own utilisation report). The capacity it
         * takes from requests is not modelled (our simplification, meant for a few hundredths of a
         * core).
         */
        @JsonProperty("background-cpu")
        BACKGROUND_CPU;

        /** The name used in scenario files. */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** The labels, for error messages. */
        public static String labels() {
            return java.util.Arrays.stream(values())
                    .map(EventKind::label)
                    .collect(java.util.stream.Collectors.joining(", "));
        }
    }

    /**
     * A scenario event: a fault or interference from {@code atSeconds} for {@code durationSeconds}.
     * Fields a kind does not use must be absent.
     *
     * @param kind                 what happens ({@link EventKind})
     * @param atSeconds            when it starts, seconds from the start of the run (warm-up included)
     * @param durationSeconds      how long: the slowdown, the antagonist's activity, the time a crashed
     *                             replica is down, or the time a restarted replica is out of the endpoints
     * @param node                 the node (every kind)
     * @param component            the replica's component (crash, restart, undercount; calls-overcount:
     *                             the calling replica's, absent for the node's ingress gateway)
     * @param replicaOnNode        which of the component's replicas on the node, from 1 (default 1)
     * @param speedMultiplier      node-slowdown: the factor on the node's per-core speed, in (0, 1]
     * @param cores                cpu-antagonist: cores it takes during a burst, below the node's cores;
     *                             background-cpu: each replica's background CPU, below its CPU limit
     * @param burstSeconds         cpu-antagonist: length of one burst
     * @param meanGapSeconds       cpu-antagonist: mean idle time between bursts (exponential)
     * @param notReadyAfterSeconds replica-crash: seconds after the crash the replica leaves the endpoints
     *                             if it is still down (default 30: Kubernetes' readiness probe every 10 s,
     *                             3 failures)
     * @param readyAfterSeconds    replica-crash: seconds after the restart it is back in the endpoints, if
     *                             it left them (default 10: the next readiness probe)
     * @param coldSeconds          crash, restart: the restarted replica's calls cost {@code coldFactor}
     *                             times as much CPU for this long after it starts (default 0)
     * @param coldFactor           crash, restart: see {@code coldSeconds}, &ge; 1 (default 1)
     * @param countedFraction      metrics-undercount: the fraction of the served requests the scraped
     *                             metric counts, in [0, 1)
     * @param countedFactor        calls-overcount: how many times the scraped call metric counts each call,
     *                             in (1, 100]
     */
    public record EventSpec(
            EventKind kind,
            Double atSeconds,
            Double durationSeconds,
            String node,
            String component,
            Integer replicaOnNode,
            Double speedMultiplier,
            Double cores,
            Double burstSeconds,
            Double meanGapSeconds,
            Double notReadyAfterSeconds,
            Double readyAfterSeconds,
            Double coldSeconds,
            Double coldFactor,
            Double countedFraction,
            Double countedFactor) {

        /** Default of {@code notReadyAfterSeconds}: readiness probe period 10 s × failure threshold 3. */
        public static final double NOT_READY_AFTER_SECONDS = 30;
        /** Default of {@code readyAfterSeconds}: one readiness probe period. */
        public static final double READY_AFTER_SECONDS = 10;

        /** {@code replicaOnNode}, or 1. */
        public int replicaOnNodeOrDefault() {
            return replicaOnNode == null ? 1 : replicaOnNode;
        }

        /** {@code notReadyAfterSeconds}, or its default. */
        public double notReadyAfterSecondsOrDefault() {
            return notReadyAfterSeconds == null ? NOT_READY_AFTER_SECONDS : notReadyAfterSeconds;
        }

        /** {@code readyAfterSeconds}, or its default. */
        public double readyAfterSecondsOrDefault() {
            return readyAfterSeconds == null ? READY_AFTER_SECONDS : readyAfterSeconds;
        }

        /** {@code coldSeconds}, or 0. */
        public double coldSecondsOrDefault() {
            return coldSeconds == null ? 0 : coldSeconds;
        }

        /** {@code coldFactor}, or 1. */
        public double coldFactorOrDefault() {
            return coldFactor == null ? 1 : coldFactor;
        }
    }

    /**
     * A worker node.
     *
     * @param name        node name (also its locality sub-zone)
     * @param cores       CPU cores, &gt; 0
     * @param speedFactor work a core does per second relative to the scenario's reference core, &gt; 0
     * @param locality    Istio locality {@code region/zone/subzone} (default {@code region/zone/<name>})
     */
    public record NodeSpec(String name, Double cores, Double speedFactor, String locality) {}

    /**
     * A component and the calls one of its requests makes.
     *
     * @param name             component name
     * @param cpuMillisPerCall mean CPU cost of one request on a speed-1.0 core, ms
     * @param calls            stages run one after the other after the request's CPU work; the calls
     *                         of a stage run in parallel and the stage ends when all have answered.
     *                         A callee may be written {@code name*k} for k parallel calls, or
     *                         {@code name*0.3} for one call with probability 0.3 (any k ≥ 0: its
     *                         floor, plus one more with the fractional part's probability)
     */
    public record ComponentSpec(String name, Double cpuMillisPerCall, List<List<String>> calls) {}

    /**
     * Link delays: every link's mean one-way delay is drawn once per run from its range with the
     * scenario's seed, the same for both directions.
     *
     * @param sameNodeMillis    a call within a node (default 0.05)
     * @param otherMillis       [min, max] one-way ms between two nodes
     * @param remoteNodes       nodes behind slow links (default none)
     * @param remoteMillis      [min, max] one-way ms between a remote node and any other node; two
     *                          remote nodes talk over {@code otherMillis} (same site)
     * @param delaysMillis      measured one-way ms, {@code from → to → ms}; a pair given in one
     *                          direction only is used for both; pairs not given come from the ranges
     *                          (then {@code otherMillis} is required)
     */
    public record NetworkSpec(
            Double sameNodeMillis,
            List<Double> otherMillis,
            List<String> remoteNodes,
            List<Double> remoteMillis,
            Map<String, Map<String, Double>> delaysMillis) {

        /** A network of measured delays only. */
        public static NetworkSpec measured(double sameNodeMillis, Map<String, Map<String, Double>> delaysMillis) {
            return new NetworkSpec(sameNodeMillis, null, null, null, delaysMillis);
        }

        /** The measured delay from → to, or else to → from, or {@code null}. */
        public Double measuredMillis(String from, String to) {
            if (delaysMillis == null) {
                return null;
            }
            Map<String, Double> row = delaysMillis.get(from);
            if (row != null && row.get(to) != null) {
                return row.get(to);
            }
            Map<String, Double> back = delaysMillis.get(to);
            return back == null ? null : back.get(from);
        }
    }

    public ClusterScenario {
        description = description == null ? "" : description;
        warmupSeconds = warmupSeconds == null ? 120.0 : warmupSeconds;
        durationSeconds = durationSeconds == null ? 600.0 : durationSeconds;
        timeoutSeconds = timeoutSeconds == null ? 30.0 : timeoutSeconds;
        cpuModel = cpuModel == null ? CpuModel.FLUID : cpuModel;
        cfsPeriodMillis = cfsPeriodMillis == null ? 100.0 : cfsPeriodMillis;
        callCostCv = callCostCv == null ? 0.5 : callCostCv;
        replicaCostVariation = replicaCostVariation == null ? 0.12 : replicaCostVariation;
        linkJitter = linkJitter == null ? 0.1 : linkJitter;
        scrapeIntervalSeconds = scrapeIntervalSeconds == null ? 15.0 : scrapeIntervalSeconds;
        replicasPerNode = replicasPerNode == null ? 1 : replicasPerNode;
        cpuLimitCores = cpuLimitCores == null ? 1.0 : cpuLimitCores;
        rps = rps == null ? List.of() : List.copyOf(rps);
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
        components = components == null ? List.of() : List.copyOf(components);
        networks = networks == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(networks));
        if (network == null && !networks.isEmpty()) {
            network = networks.keySet().iterator().next();
        }
        rpsProfile = rpsProfile == null ? null : java.util.Collections.unmodifiableList(new ArrayList<>(rpsProfile));
        events = events == null ? List.of() : java.util.Collections.unmodifiableList(new ArrayList<>(events));
    }

    /** {@code override} if given, else this scenario's warm-up. */
    public double warmupSecondsOr(Double override) {
        return override != null ? override : warmupSeconds;
    }

    /** {@code override} if given, else this scenario's measured duration. */
    public double durationSecondsOr(Double override) {
        return override != null ? override : durationSeconds;
    }

    /**
     * What this scenario changes no earlier than {@code endSeconds} from the start of a run (warm-up
     * included), one entry each, so that a run ending there never sees it: every event that starts
     * then or later ({@code events[2] (replica-crash at 247.5 s)}), and the first point of the rate
     * profile from then on whose factor differs from the point before it ({@code rpsProfile[2]
     * (factor 1 at 247.5 s)}). Empty when a run that long sees every change.
     */
    public List<String> changesFrom(double endSeconds) {
        List<String> changes = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            EventSpec event = events.get(i);
            if (event.atSeconds() != null && event.atSeconds() >= endSeconds) {
                changes.add("events[" + i + "] ("
                        + (event.kind() == null ? "event" : event.kind().label()) + " at "
                        + Numbers.written(event.atSeconds()) + " s)");
            }
        }
        if (rpsProfile != null) {
            for (int i = 1; i < rpsProfile.size(); i++) {
                RatePoint point = rpsProfile.get(i);
                if (point.atSeconds() != null
                        && point.atSeconds() >= endSeconds
                        && !java.util.Objects.equals(
                                point.factor(), rpsProfile.get(i - 1).factor())) {
                    changes.add("rpsProfile[" + i + "] (factor " + Numbers.written(point.factor()) + " at "
                            + Numbers.written(point.atSeconds()) + " s)");
                    break;
                }
            }
        }
        return changes;
    }

    /** Every problem of this scenario, each naming the field, its value and what was expected. */
    public List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        if (name == null || !name.matches("[A-Za-z0-9_-]+")) {
            problems.add(new Problem("name", quote(name), "letters, digits, '-' or '_'"));
        }
        if (seed == null) {
            problems.add(new Problem("seed", "missing", "an integer; fixed seeds make runs repeatable"));
        }
        for (int i = 0; i < rps.size(); i++) {
            positive(problems, "rps[" + i + "]", rps.get(i), 1e6);
        }
        nonNegative(problems, "warmupSeconds", warmupSeconds, 86_400);
        positive(problems, "durationSeconds", durationSeconds, 86_400);
        positive(problems, "timeoutSeconds", timeoutSeconds, 86_400);
        positive(problems, "cfsPeriodMillis", cfsPeriodMillis, 1_000);
        nonNegative(problems, "callCostCv", callCostCv, 10);
        nonNegative(problems, "replicaCostVariation", replicaCostVariation, 2);
        if (!(linkJitter >= 0 && linkJitter < 1)) {
            problems.add(new Problem("linkJitter", linkJitter, "in [0, 1)"));
        }
        positive(problems, "scrapeIntervalSeconds", scrapeIntervalSeconds, 3_600);
        if (replicasPerNode < 1 || replicasPerNode > 1_000) {
            problems.add(new Problem("replicasPerNode", replicasPerNode, "1 .. 1000"));
        }
        positive(problems, "cpuLimitCores", cpuLimitCores, 1_024);

        Set<String> nodeNames = new HashSet<>();
        if (nodes.isEmpty()) {
            problems.add(new Problem("nodes", "empty", "at least one node"));
        }
        for (int i = 0; i < nodes.size(); i++) {
            NodeSpec node = nodes.get(i);
            String at = "nodes[" + i + "]";
            if (node == null) {
                problems.add(new Problem(at, "null", "a node"));
                continue;
            }
            if (node.name() == null || node.name().isBlank()) {
                problems.add(new Problem(at + ".name", "missing", "a node name"));
            } else if (!nodeNames.add(node.name())) {
                problems.add(new Problem(at + ".name", quote(node.name()), "unique; already used"));
            }
            positive(problems, at + ".cores", node.cores(), 1_024);
            positive(problems, at + ".speedFactor", node.speedFactor(), 100);
        }

        Map<String, ComponentSpec> byName = new LinkedHashMap<>();
        if (components.isEmpty()) {
            problems.add(new Problem("components", "empty", "at least one component"));
        }
        for (int i = 0; i < components.size(); i++) {
            ComponentSpec component = components.get(i);
            String at = "components[" + i + "]";
            if (component == null) {
                problems.add(new Problem(at, "null", "a component"));
                continue;
            }
            if (component.name() == null || !component.name().matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")) {
                problems.add(new Problem(
                        at + ".name", quote(component.name()), "a DNS label: lower-case letters, digits and '-'"));
            } else if (byName.putIfAbsent(component.name(), component) != null) {
                problems.add(new Problem(at + ".name", quote(component.name()), "unique; already used"));
            }
            positive(problems, at + ".cpuMillisPerCall", component.cpuMillisPerCall(), 60_000);
        }
        for (int i = 0; i < components.size(); i++) {
            ComponentSpec component = components.get(i);
            if (component == null || component.calls() == null) {
                continue;
            }
            for (int s = 0; s < component.calls().size(); s++) {
                List<String> stage = component.calls().get(s);
                String at = "components[" + i + "].calls[" + s + "]";
                if (stage == null || stage.isEmpty()) {
                    problems.add(new Problem(at, "empty", "one or more callees"));
                    continue;
                }
                for (int c = 0; c < stage.size(); c++) {
                    Problem problem = CallSpec.problem(at + "[" + c + "]", stage.get(c), byName.keySet());
                    if (problem != null) {
                        problems.add(problem);
                    }
                }
            }
        }
        if (entry == null || !byName.containsKey(entry)) {
            problems.add(new Problem("entry", quote(entry), "one of the components " + byName.keySet()));
        }
        if (problems.isEmpty()) {
            Set<String> done = new HashSet<>();
            for (String component : byName.keySet()) {
                String cycle = cycleFrom(component, byName, new ArrayList<>(), done);
                if (cycle != null) {
                    problems.add(new Problem("components", "the calls form a cycle " + cycle, "a DAG"));
                    break;
                }
            }
        }

        if (networks.isEmpty()) {
            problems.add(new Problem("networks", "empty", "at least one named network"));
        }
        networks.forEach((networkName, spec) -> {
            String at = "networks." + networkName;
            if (spec == null) {
                problems.add(new Problem(at, "null", "a network"));
                return;
            }
            if (spec.sameNodeMillis() != null) {
                nonNegative(problems, at + ".sameNodeMillis", spec.sameNodeMillis(), 3.6e6);
            }
            boolean complete = true;
            if (spec.delaysMillis() != null) {
                spec.delaysMillis().forEach((from, row) -> {
                    if (!nodeNames.contains(from)) {
                        problems.add(new Problem(at + ".delaysMillis", quote(from), "one of the nodes " + nodeNames));
                    }
                    if (row != null) {
                        row.forEach((to, millis) -> {
                            if (!nodeNames.contains(to)) {
                                problems.add(new Problem(
                                        at + ".delaysMillis." + from, quote(to), "one of the nodes " + nodeNames));
                            }
                            nonNegative(problems, at + ".delaysMillis." + from + "." + to, millis, 3.6e6);
                        });
                    }
                });
                for (String a : nodeNames) {
                    for (String b : nodeNames) {
                        if (!a.equals(b) && spec.measuredMillis(a, b) == null) {
                            complete = false;
                        }
                    }
                }
            }
            if (spec.delaysMillis() == null || !complete || spec.otherMillis() != null) {
                range(problems, at + ".otherMillis", spec.otherMillis(), true);
            }
            List<String> remote = spec.remoteNodes() == null ? List.of() : spec.remoteNodes();
            for (int i = 0; i < remote.size(); i++) {
                if (!nodeNames.contains(remote.get(i))) {
                    problems.add(new Problem(
                            at + ".remoteNodes[" + i + "]", quote(remote.get(i)), "one of the nodes " + nodeNames));
                }
            }
            if (!remote.isEmpty() || spec.remoteMillis() != null) {
                range(problems, at + ".remoteMillis", spec.remoteMillis(), !remote.isEmpty());
            }
        });
        if (network != null && !networks.containsKey(network)) {
            problems.add(new Problem("network", quote(network), "one of " + networks.keySet()));
        }
        rpsProfileProblems(problems);
        ScenarioEvents.problems(this, problems);
        return problems;
    }

    private void rpsProfileProblems(List<Problem> problems) {
        if (rpsProfile == null) {
            return;
        }
        if (rpsProfile.isEmpty()) {
            problems.add(new Problem(
                    "rpsProfile", "empty", "points {atSeconds, factor}, or no rpsProfile for a constant" + " rate"));
            return;
        }
        boolean anyPositive = false;
        double previous = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < rpsProfile.size(); i++) {
            RatePoint point = rpsProfile.get(i);
            String at = "rpsProfile[" + i + "]";
            if (point == null) {
                problems.add(new Problem(at, "null", "{atSeconds, factor}"));
                continue;
            }
            if (point.atSeconds() == null || !(point.atSeconds() >= 0 && point.atSeconds() <= 86_400)) {
                problems.add(new Problem(at + ".atSeconds", point.atSeconds(), "a number in [0, 86400]"));
            } else if (point.atSeconds() < previous) {
                problems.add(new Problem(
                        at + ".atSeconds", point.atSeconds(), "not before the point above, " + format(previous)));
            } else {
                previous = point.atSeconds();
            }
            if (point.factor() == null || !(point.factor() >= 0 && point.factor() <= 1_000)) {
                problems.add(new Problem(at + ".factor", point.factor(), "a number in [0, 1000]"));
            } else if (point.factor() > 0) {
                anyPositive = true;
            }
        }
        for (int i = 2; i < rpsProfile.size(); i++) {
            RatePoint a = rpsProfile.get(i - 2);
            RatePoint c = rpsProfile.get(i);
            if (a != null && c != null && a.atSeconds() != null && a.atSeconds().equals(c.atSeconds())) {
                problems.add(new Problem(
                        "rpsProfile[" + i + "].atSeconds",
                        c.atSeconds(),
                        "at most two points at" + " one instant, a step"));
            }
        }
        if (!anyPositive && problems.stream().noneMatch(p -> p.path().startsWith("rpsProfile"))) {
            problems.add(new Problem("rpsProfile", "every factor is 0", "at least one factor > 0"));
        }
    }

    private static String cycleFrom(
            String component, Map<String, ComponentSpec> byName, List<String> path, Set<String> done) {
        if (path.contains(component)) {
            List<String> cycle = new ArrayList<>(path.subList(path.indexOf(component), path.size()));
            cycle.add(component);
            return String.join(" -> ", cycle);
        }
        if (done.contains(component)) {
            return null;
        }
        path.add(component);
        ComponentSpec spec = byName.get(component);
        if (spec.calls() != null) {
            for (List<String> stage : spec.calls()) {
                for (String call : stage) {
                    String cycle = cycleFrom(CallSpec.parse(call).callee(), byName, path, done);
                    if (cycle != null) {
                        return cycle;
                    }
                }
            }
        }
        path.remove(path.size() - 1);
        done.add(component);
        return null;
    }

    private static void range(List<Problem> problems, String at, List<Double> range, boolean required) {
        if (range == null) {
            if (required) {
                problems.add(new Problem(at, "missing", "[min, max] in ms"));
            }
            return;
        }
        if (range.size() != 2 || range.get(0) == null || range.get(1) == null) {
            problems.add(new Problem(at, range, "[min, max] in ms"));
            return;
        }
        double min = range.get(0);
        double max = range.get(1);
        if (!(min >= 0 && max >= min && max <= 3.6e6)) {
            problems.add(new Problem(at, range, "0 <= min <= max <= 3.6e6 ms"));
        }
    }

    private static void positive(List<Problem> problems, String at, Double value, double max) {
        if (value == null) {
            problems.add(new Problem(at, "missing", "a number in (0, " + format(max) + "]"));
        } else if (!(value > 0 && value <= max)) {
            problems.add(new Problem(at, value, "a number in (0, " + format(max) + "]"));
        }
    }

    private static void nonNegative(List<Problem> problems, String at, Double value, double max) {
        if (value == null || !(value >= 0 && value <= max)) {
            problems.add(new Problem(at, value, "a number in [0, " + format(max) + "]"));
        }
    }

    private static String format(double value) {
        return Numbers.written(value);
    }

    private static String quote(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }

    /** One entry of a stage: a callee and how many parallel calls go to it. */
    record CallSpec(String callee, double count) {

        static CallSpec parse(String text) {
            int star = text.indexOf('*');
            if (star < 0) {
                return new CallSpec(text.trim(), 1);
            }
            return new CallSpec(
                    text.substring(0, star).trim(),
                    Double.parseDouble(text.substring(star + 1).trim()));
        }

        static Problem problem(String at, String text, Set<String> components) {
            if (text == null) {
                return new Problem(at, "null", "a callee name, optionally name*count");
            }
            CallSpec spec;
            try {
                spec = parse(text);
            } catch (NumberFormatException e) {
                return new Problem(at, quote(text), "name or name*count with a number count");
            }
            if (!components.contains(spec.callee())) {
                return new Problem(at, quote(text), "a callee among the components " + components);
            }
            if (!(spec.count() >= 0 && spec.count() <= 1_000)) {
                return new Problem(at, quote(text), "a count in [0, 1000]");
            }
            return null;
        }
    }

    /** A builder with every field unset: {@link #build} gives the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds a {@link ClusterScenario} by field name; a field left unset, or set to {@code null}, takes its default in
     * the
     * canonical constructor (the one place the defaults are set, and the constructor the scenario files are read with).
     */
    public static final class Builder {
        private String name;
        private String description;
        private Long seed;
        private List<Double> rps;
        private Double warmupSeconds;
        private Double durationSeconds;
        private Double timeoutSeconds;
        private CpuModel cpuModel;
        private Double cfsPeriodMillis;
        private Double callCostCv;
        private Double replicaCostVariation;
        private Double linkJitter;
        private Double scrapeIntervalSeconds;
        private List<NodeSpec> nodes;
        private List<ComponentSpec> components;
        private String entry;
        private Integer replicasPerNode;
        private Double cpuLimitCores;
        private Map<String, NetworkSpec> networks;
        private String network;
        private List<RatePoint> rpsProfile;
        private List<EventSpec> events;

        private Builder() {}

        private Builder(ClusterScenario from) {
            name = from.name;
            description = from.description;
            seed = from.seed;
            rps = from.rps;
            warmupSeconds = from.warmupSeconds;
            durationSeconds = from.durationSeconds;
            timeoutSeconds = from.timeoutSeconds;
            cpuModel = from.cpuModel;
            cfsPeriodMillis = from.cfsPeriodMillis;
            callCostCv = from.callCostCv;
            replicaCostVariation = from.replicaCostVariation;
            linkJitter = from.linkJitter;
            scrapeIntervalSeconds = from.scrapeIntervalSeconds;
            nodes = from.nodes;
            components = from.components;
            entry = from.entry;
            replicasPerNode = from.replicasPerNode;
            cpuLimitCores = from.cpuLimitCores;
            networks = from.networks;
            network = from.network;
            rpsProfile = from.rpsProfile;
            events = from.events;
        }

        /** {@link ClusterScenario#name}. */
        public Builder name(String value) {
            name = value;
            return this;
        }

        /** {@link ClusterScenario#description}. */
        public Builder description(String value) {
            description = value;
            return this;
        }

        /** {@link ClusterScenario#seed}. */
        public Builder seed(Long value) {
            seed = value;
            return this;
        }

        /** {@link ClusterScenario#rps}. */
        public Builder rps(List<Double> value) {
            rps = value;
            return this;
        }

        /** {@link ClusterScenario#warmupSeconds}. */
        public Builder warmupSeconds(Double value) {
            warmupSeconds = value;
            return this;
        }

        /** {@link ClusterScenario#durationSeconds}. */
        public Builder durationSeconds(Double value) {
            durationSeconds = value;
            return this;
        }

        /** {@link ClusterScenario#timeoutSeconds}. */
        public Builder timeoutSeconds(Double value) {
            timeoutSeconds = value;
            return this;
        }

        /** {@link ClusterScenario#cpuModel}. */
        public Builder cpuModel(CpuModel value) {
            cpuModel = value;
            return this;
        }

        /** {@link ClusterScenario#cfsPeriodMillis}. */
        public Builder cfsPeriodMillis(Double value) {
            cfsPeriodMillis = value;
            return this;
        }

        /** {@link ClusterScenario#callCostCv}. */
        public Builder callCostCv(Double value) {
            callCostCv = value;
            return this;
        }

        /** {@link ClusterScenario#replicaCostVariation}. */
        public Builder replicaCostVariation(Double value) {
            replicaCostVariation = value;
            return this;
        }

        /** {@link ClusterScenario#linkJitter}. */
        public Builder linkJitter(Double value) {
            linkJitter = value;
            return this;
        }

        /** {@link ClusterScenario#scrapeIntervalSeconds}. */
        public Builder scrapeIntervalSeconds(Double value) {
            scrapeIntervalSeconds = value;
            return this;
        }

        /** {@link ClusterScenario#nodes}. */
        public Builder nodes(List<NodeSpec> value) {
            nodes = value;
            return this;
        }

        /** {@link ClusterScenario#components}. */
        public Builder components(List<ComponentSpec> value) {
            components = value;
            return this;
        }

        /** {@link ClusterScenario#entry}. */
        public Builder entry(String value) {
            entry = value;
            return this;
        }

        /** {@link ClusterScenario#replicasPerNode}. */
        public Builder replicasPerNode(Integer value) {
            replicasPerNode = value;
            return this;
        }

        /** {@link ClusterScenario#cpuLimitCores}. */
        public Builder cpuLimitCores(Double value) {
            cpuLimitCores = value;
            return this;
        }

        /** {@link ClusterScenario#networks}. */
        public Builder networks(Map<String, NetworkSpec> value) {
            networks = value;
            return this;
        }

        /** {@link ClusterScenario#network}. */
        public Builder network(String value) {
            network = value;
            return this;
        }

        /** {@link ClusterScenario#rpsProfile}. */
        public Builder rpsProfile(List<RatePoint> value) {
            rpsProfile = value;
            return this;
        }

        /** {@link ClusterScenario#events}. */
        public Builder events(List<EventSpec> value) {
            events = value;
            return this;
        }

        /**
         * The scenario, each field left unset at its default. Its values are checked as a scenario file's are, by
         * {@link ClusterScenario#problems()}, which names every invalid field at once.
         */
        public ClusterScenario build() {
            return new ClusterScenario(
                    name,
                    description,
                    seed,
                    rps,
                    warmupSeconds,
                    durationSeconds,
                    timeoutSeconds,
                    cpuModel,
                    cfsPeriodMillis,
                    callCostCv,
                    replicaCostVariation,
                    linkJitter,
                    scrapeIntervalSeconds,
                    nodes,
                    components,
                    entry,
                    replicasPerNode,
                    cpuLimitCores,
                    networks,
                    network,
                    rpsProfile,
                    events);
        }
    }
}
