package dev.tailor.sim.cluster;

import dev.tailor.sim.des.EventCalendar;
import dev.tailor.sim.des.RandomStreams;
import dev.tailor.sim.storage.LatencySummary;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.sampling.distribution.ZigguratSampler;

/**
 * One run of the cluster simulator: the scenario's nodes, replicas and links, Poisson user
 * requests at one rate, one routing policy, the simulated Prometheus, and the measurements.
 * Built and run by {@link ClusterSimulation}; everything runs on simulated time.
 *
 * <p>Random streams (see {@link RandomStreams}) are separate for arrivals, the ingress node, call
 * costs, link jitter, fractional call counts, routing, and the scenario's draws (link means, replica
 * cost factors, CFS phases), so every policy of a comparison sees the same arrivals and costs.
 */
final class ClusterModel {

    /** The caller name of user requests in HEART snapshots: the entry point. */
    static final String INGRESS = "ingress";

    static final long NANOS_PER_SECOND = 1_000_000_000L;

    final ClusterScenario scenario;
    final String networkName;
    final EventCalendar calendar = new EventCalendar();
    final RandomStreams streams;
    final SimNode[] nodes;
    final SimComponent[] components;
    final SimReplica[] replicas;
    /** Ingress proxies (one per node, index = node index), then each replica's proxy. */
    final Proxy[] proxies;

    final SimComponent entry;
    final double[][] delayMeanNanos;
    final RoutingPolicy policy;
    final String policyName;
    final ScrapedMetrics metrics;
    final LongSupplier wallClock;
    /** Scratch for {@link SimReplica#fire}: requests finishing at one instant. */
    Visit[] scratch = new Visit[16];

    private final double rps;
    private final long warmupEndNanos;
    private final long endNanos;
    private final long timeoutNanos;
    private final double linkJitter;
    private final double costSigma;
    private final double costMu;
    private final UniformRandomProvider arrivalRng;
    private final UniformRandomProvider ingressRng;
    private final UniformRandomProvider jitterRng;
    private final UniformRandomProvider callCountRng;
    final UniformRandomProvider routingRng;
    private final ZigguratSampler.Exponential interArrival;
    private final ZigguratSampler.NormalizedGaussian costGaussian;

    private final Histogram latencyMicros;
    private final UserRequest inFlight = new UserRequest(0, false);
    private long requests;
    private long completed;
    private long timeouts;
    private long errors;
    /** The rate's factor over time, or {@code null} for a constant rate. */
    private final RateProfile rateProfile;

    private final UniformRandomProvider thinningRng;

    private final List<double[]> utilisationSeries = new ArrayList<>();
    private double[] lastCpuCoreNanos;

    ClusterModel(
            ClusterScenario scenario, String policyName, RoutingPolicy policy, double rps, LongSupplier wallClock) {
        this.scenario = scenario;
        this.networkName = scenario.network();
        this.policyName = policyName;
        this.policy = policy;
        this.rps = rps;
        this.wallClock = wallClock;
        this.streams = new RandomStreams(scenario.seed());
        this.warmupEndNanos = seconds(scenario.warmupSeconds());
        this.endNanos = warmupEndNanos + seconds(scenario.durationSeconds());
        this.timeoutNanos = seconds(scenario.timeoutSeconds());
        this.linkJitter = scenario.linkJitter();
        double cv = scenario.callCostCv();
        this.costSigma = Math.sqrt(Math.log1p(cv * cv));
        this.costMu = -costSigma * costSigma / 2;
        this.arrivalRng = streams.stream("arrivals");
        this.ingressRng = streams.stream("ingress");
        this.jitterRng = streams.stream("link-jitter");
        this.callCountRng = streams.stream("call-counts");
        this.routingRng = streams.stream("routing");
        this.interArrival = ZigguratSampler.Exponential.of(arrivalRng);
        this.costGaussian = ZigguratSampler.NormalizedGaussian.of(streams.stream("call-costs"));
        this.latencyMicros = new Histogram(Math.max(2, timeoutNanos / 1_000), 3);
        this.rateProfile = scenario.rpsProfile() == null ? null : new RateProfile(scenario.rpsProfile());
        this.thinningRng = rateProfile == null ? null : streams.stream("arrival-thinning");

        List<ClusterScenario.NodeSpec> nodeSpecs = scenario.nodes();
        nodes = new SimNode[nodeSpecs.size()];
        for (int i = 0; i < nodes.length; i++) {
            ClusterScenario.NodeSpec spec = nodeSpecs.get(i);
            String locality = spec.locality() == null ? "region/zone/" + spec.name() : spec.locality();
            nodes[i] = new SimNode(i, spec.name(), locality, spec.cores(), spec.speedFactor());
        }
        delayMeanNanos = Networks.meanDelaysNanos(scenario, networkName, nodes, streams.stream("link-means"));

        List<ClusterScenario.ComponentSpec> componentSpecs = scenario.components();
        components = new SimComponent[componentSpecs.size()];
        Map<String, Integer> componentIndex = new HashMap<>();
        for (int i = 0; i < components.length; i++) {
            ClusterScenario.ComponentSpec spec = componentSpecs.get(i);
            components[i] = new SimComponent(i, spec.name(), spec.cpuMillisPerCall() * 1e6, nodes.length);
            componentIndex.put(spec.name(), i);
        }
        for (int i = 0; i < components.length; i++) {
            List<List<String>> stages = componentSpecs.get(i).calls() == null
                    ? List.of()
                    : componentSpecs.get(i).calls();
            int[][] callees = new int[stages.size()][];
            double[][] counts = new double[stages.size()][];
            for (int s = 0; s < stages.size(); s++) {
                List<String> stage = stages.get(s);
                callees[s] = new int[stage.size()];
                counts[s] = new double[stage.size()];
                for (int k = 0; k < stage.size(); k++) {
                    ClusterScenario.CallSpec call = ClusterScenario.CallSpec.parse(stage.get(k));
                    callees[s][k] = componentIndex.get(call.callee());
                    counts[s][k] = call.count();
                }
            }
            components[i].calleesByStage = callees;
            components[i].countsByStage = counts;
        }
        entry = components[componentIndex.get(scenario.entry())];

        UniformRandomProvider variation = streams.stream("replica-cost-factors");
        ZigguratSampler.NormalizedGaussian variationGaussian = ZigguratSampler.NormalizedGaussian.of(variation);
        UniformRandomProvider phases = streams.stream("cfs-phases");
        double sigma = scenario.replicaCostVariation();
        long periodNanos = Math.round(scenario.cfsPeriodMillis() * 1e6);
        boolean cfs = scenario.cpuModel() == ClusterScenario.CpuModel.CFS_QUOTA;
        List<SimReplica> all = new ArrayList<>();
        for (SimComponent component : components) {
            for (SimNode node : nodes) {
                for (int r = 0; r < scenario.replicasPerNode(); r++) {
                    String pod =
                            component.name + "-" + node.name + (scenario.replicasPerNode() > 1 ? "-" + (r + 1) : "");
                    double factor = Math.exp(sigma * variationGaussian.sample() - sigma * sigma / 2);
                    long phase = (long) (phases.nextDouble() * periodNanos);
                    SimReplica replica = new SimReplica(
                            all.size(),
                            pod,
                            component,
                            node,
                            scenario.cpuLimitCores(),
                            factor,
                            this,
                            periodNanos,
                            phase,
                            cfs);
                    all.add(replica);
                    component.add(replica);
                    node.add(replica);
                }
            }
        }
        replicas = all.toArray(SimReplica[]::new);
        proxies = new Proxy[nodes.length + replicas.length];
        for (SimNode node : nodes) {
            proxies[node.index] = new Proxy(node, null, null);
        }
        for (SimReplica replica : replicas) {
            proxies[nodes.length + replica.id] = replica.proxy;
        }
        for (int p = 0; p < proxies.length; p++) {
            proxies[p].id = p;
            proxies[p].size(replicas.length, components.length);
        }
        lastCpuCoreNanos = new double[replicas.length];
        metrics = new ScrapedMetrics(this);
        inFlight.next = inFlight;
        inFlight.previous = inFlight;
    }

    /** The end of the run, simulated ns. */
    long endNanos() {
        return endNanos;
    }

    static long seconds(double seconds) {
        return Math.round(seconds * NANOS_PER_SECOND);
    }

    /** Runs to the end and returns the measurements. */
    RunResult run() {
        start();
        calendar.runUntil(endNanos);
        return result();
    }

    /** Starts the policy and puts the first events on the calendar; {@link #run} then runs it. */
    void start() {
        policy.start(this);
        calendar.schedule(new Periodic(seconds(scenario.scrapeIntervalSeconds()), metrics::scrape), 0);
        calendar.schedule(new Periodic(NANOS_PER_SECOND, this::sampleUtilisation), NANOS_PER_SECOND);
        if (policy.tickIntervalNanos() > 0) {
            calendar.schedule(new Periodic(policy.tickIntervalNanos(), policy::tick), policy.firstTickNanos());
        }
        ScenarioEvents.schedule(this);
        Arrivals arrivals = new Arrivals();
        long first = nextArrivalNanos(0);
        if (first < endNanos) {
            calendar.schedule(arrivals, first);
        }
    }

    // ---- called by visits and replicas ----

    /** Reference-core ns of work for one call at {@code replica}. */
    double workNanos(SimReplica replica) {
        return replica.component.meanWorkNanos
                * replica.costFactor
                * Math.exp(costMu + costSigma * costGaussian.sample());
    }

    /** How many calls a stage entry with mean count {@code count} makes this time. */
    int callCount(double count) {
        int whole = (int) count;
        double fraction = count - whole;
        return fraction > 0 && callCountRng.nextDouble() < fraction ? whole + 1 : whole;
    }

    /** One-way delay of one message from {@code from} to {@code to}, ns. */
    long delayNanos(SimNode from, SimNode to) {
        double mean = delayMeanNanos[from.index][to.index];
        double jitter = linkJitter == 0 ? 1 : 1 + linkJitter * (2 * jitterRng.nextDouble() - 1);
        return Math.round(mean * jitter);
    }

    /** Sends a call from {@code proxy} to a replica of {@code callee} chosen by the policy. */
    void send(UserRequest request, Visit parent, Proxy proxy, SimComponent callee, long nowNanos) {
        SimReplica target = policy.choose(proxy, callee, nowNanos);
        proxy.active[target.id]++;
        Visit visit = new Visit(this, request, parent, proxy, target, nowNanos);
        calendar.schedule(visit, nowNanos + delayNanos(proxy.node, target.node));
    }

    /**
     * The response to a user request reached the ingress. A failed one (a call of it was lost to a
     * crash) counts in {@code errors} and enters the percentiles at the timeout: the user did not get
     * an answer.
     */
    void complete(UserRequest request, long nowNanos) {
        request.previous.next = request.next;
        request.next.previous = request.previous;
        if (request.measured) {
            completed++;
            if (request.failed) {
                errors++;
                latencyMicros.recordValue(Math.max(0, timeoutNanos / 1_000));
            } else {
                record(nowNanos - request.startNanos);
            }
        }
    }

    private void record(long latencyNanos) {
        if (latencyNanos > timeoutNanos) {
            timeouts++;
            latencyNanos = timeoutNanos;
        }
        latencyMicros.recordValue(Math.max(0, latencyNanos / 1_000));
    }

    /**
     * The next user request's arrival after {@code nowNanos}: Poisson at the run's rate, or, with a
     * rate profile, a non-homogeneous Poisson process by thinning (candidates at the profile's highest
     * rate, each kept with probability rate(t) ÷ highest rate, drawn from their own stream).
     */
    private long nextArrivalNanos(long nowNanos) {
        if (rateProfile == null) {
            return nowNanos + Math.max(1, Math.round(interArrival.sample() * NANOS_PER_SECOND / rps));
        }
        double peak = rateProfile.maxFactor();
        long t = nowNanos;
        while (true) {
            t += Math.max(1, Math.round(interArrival.sample() * NANOS_PER_SECOND / (rps * peak)));
            if (t >= endNanos || thinningRng.nextDouble() * peak < rateProfile.factorAt(t)) {
                return t;
            }
        }
    }

    private final class Arrivals extends EventCalendar.Event {
        @Override
        protected void fire(long nowNanos) {
            UserRequest request = new UserRequest(nowNanos, nowNanos >= warmupEndNanos);
            if (request.measured) {
                requests++;
            }
            request.next = inFlight;
            request.previous = inFlight.previous;
            inFlight.previous.next = request;
            inFlight.previous = request;
            Proxy ingress = proxies[ingressRng.nextInt(nodes.length)];
            send(request, null, ingress, entry, nowNanos);
            long next = nextArrivalNanos(nowNanos);
            if (next < endNanos) {
                calendar.schedule(this, next);
            }
        }
    }

    /** An action repeated every {@code periodNanos}. */
    private final class Periodic extends EventCalendar.Event {
        private final long periodNanos;
        private final java.util.function.LongConsumer action;

        Periodic(long periodNanos, java.util.function.LongConsumer action) {
            this.periodNanos = periodNanos;
            this.action = action;
        }

        @Override
        protected void fire(long nowNanos) {
            action.accept(nowNanos);
            if (nowNanos + periodNanos <= endNanos) {
                calendar.schedule(this, nowNanos + periodNanos);
            }
        }
    }

    private void sampleUtilisation(long nowNanos) {
        double[] percent = new double[replicas.length];
        for (int i = 0; i < replicas.length; i++) {
            double cpu = replicas[i].cpuCoreNanosAt(nowNanos);
            percent[i] = 100 * (cpu - lastCpuCoreNanos[i]) / (replicas[i].limitCores * NANOS_PER_SECOND);
            lastCpuCoreNanos[i] = cpu;
        }
        utilisationSeries.add(percent);
    }

    // ---- results ----

    /** The measurements, once the calendar has run to the end. */
    RunResult result() {
        long unfinished = 0;
        for (UserRequest r = inFlight.next; r != inFlight; r = r.next) {
            if (r.measured) {
                if (endNanos - r.startNanos >= timeoutNanos) {
                    record(timeoutNanos + 1);
                } else {
                    unfinished++;
                    record(endNanos - r.startNanos); // a lower bound on its latency
                }
            }
        }
        int firstMeasured = (int) (warmupEndNanos / NANOS_PER_SECOND); // series[k] covers second k+1
        List<RunResult.ReplicaStats> stats = new ArrayList<>();
        double[] meanPercent = new double[replicas.length];
        for (SimReplica replica : replicas) {
            double sum = 0;
            long atLimit = 0;
            int n = 0;
            for (int k = firstMeasured; k < utilisationSeries.size(); k++) {
                double percent = utilisationSeries.get(k)[replica.id];
                sum += percent;
                n++;
                if (percent >= 99.5) {
                    atLimit++;
                }
            }
            meanPercent[replica.id] = n == 0 ? Double.NaN : sum / n;
            stats.add(new RunResult.ReplicaStats(
                    replica.pod,
                    replica.component.name,
                    replica.node.name,
                    n == 0 ? null : round(meanPercent[replica.id], 2),
                    atLimit,
                    round(replica.throttledNanos() / 1e9, 3)));
        }
        double gap = utilisationSeries.size() > firstMeasured ? 0 : Double.NaN;
        for (SimComponent component : components) {
            double min = Double.POSITIVE_INFINITY;
            double max = Double.NEGATIVE_INFINITY;
            for (SimReplica replica : component.replicas) {
                min = Math.min(min, meanPercent[replica.id]);
                max = Math.max(max, meanPercent[replica.id]);
            }
            gap = Math.max(gap, max - min);
        }
        long served = 0;
        for (SimReplica replica : replicas) {
            served += replica.served;
        }
        boolean any = latencyMicros.getTotalCount() > 0;
        List<double[]> series = new ArrayList<>();
        for (SimReplica replica : replicas) {
            double[] values = new double[utilisationSeries.size()];
            for (int k = 0; k < values.length; k++) {
                values[k] = utilisationSeries.get(k)[replica.id];
            }
            series.add(values);
        }
        return new RunResult(
                scenario.name(),
                networkName,
                scenario.cpuModel().label(),
                policyName,
                rps,
                scenario.seed(),
                requests,
                completed,
                timeouts,
                errors,
                unfinished,
                percentile(50),
                percentile(99),
                percentile(99.9),
                any ? round(latencyMicros.getMean() / 1_000, 3) : null,
                Double.isFinite(gap) ? round(gap, 2) : null,
                stats,
                policy.planning(),
                served,
                calendar.eventsFired(),
                0,
                latencyMicros,
                series);
    }

    /**
     * The percentile {@code levelPercent} of the measured latencies, ms; {@code null} (not resolvable) with
     * fewer requests than it needs ({@link LatencySummary#needed}: 100 for P99, 1,000 for P99.9), as in the
     * storage simulator.
     */
    private Double percentile(double levelPercent) {
        return latencyMicros.getTotalCount() >= LatencySummary.needed(levelPercent)
                ? millis(latencyMicros.getValueAtPercentile(levelPercent))
                : null;
    }

    private static double millis(long micros) {
        return round(micros / 1_000.0, 3);
    }

    static double round(double value, int digits) {
        if (!Double.isFinite(value)) {
            return value;
        }
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
