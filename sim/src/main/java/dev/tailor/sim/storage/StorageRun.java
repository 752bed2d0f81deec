package dev.tailor.sim.storage;

import dev.tailor.admission.AdmissionStats;
import dev.tailor.admission.BaselineMeter;
import dev.tailor.admission.SegmentClass;
import dev.tailor.admission.SegmentClassification;
import dev.tailor.admission.VirtualDisk;
import dev.tailor.sim.des.EventCalendar;
import dev.tailor.sim.des.RandomStreams;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.IntCountsHistogram;
import org.apache.commons.rng.UniformRandomProvider;

/**
 * One run of the storage simulator: a setup, one policy, simulated time from 0 to the end of the
 * drain. Tenants' arrivals reach their proxy's policy; the policy dispatches to the shared
 * {@link Backend}; completions are measured. Single use, not thread-safe.
 */
/*
 * Maintainer note. Events: one per tenant (its next arrival, rescheduled after each), one per backend
 * channel, one interval tick for all proxies, and whatever a policy schedules (token-bucket's
 * wake-up). Requests are plain objects that die at completion, so memory stays flat over long runs;
 * requests still held or at the backend when the run ends are found through the policies'
 * forEachHeld and the backend, not through a registry of all requests. Time integrals (busy
 * channel-ns, ns with work held at a proxy, idle channel-ns while work is held) are advanced before
 * every change of the busy count or of the number held, and clipped to the measured period, so
 * utilisation and unused capacity are exact, not sampled. The observer hook exists for tests.
 */
final class StorageRun {

    /** Told of what happens, for tests; every method is optional. */
    interface Observer {
        default void dispatched(IoRequest request, long nowNanos) {}

        default void completed(IoRequest request, long nowNanos) {}

        /** An interval boundary, before the policies pass it. */
        default void interval(long nowNanos) {}
    }

    /** One tenant's arrival source: an event rescheduled to its next arrival. */
    private final class Source extends EventCalendar.Event {
        private final int tenant;
        private final int proxy;
        private final int disk;
        private final boolean hot;
        private final TenantStream stream;
        private final UniformRandomProvider service;
        private TenantStream.Arrival next;

        Source(int tenant, int proxy, int disk, StorageSetup.Tenant spec, RandomStreams streams) {
            this.tenant = tenant;
            this.proxy = proxy;
            this.disk = disk;
            this.hot = spec.hot();
            this.stream = new TenantStream(
                            spec.trace(),
                            spec.requestsPerSecond(),
                            setup.scenario().diskSizeBytes(),
                            spec.bursts(),
                            streams.stream("tenant-" + spec.name()))
                    .until(endNanos);
            this.service = streams.stream("service-" + spec.name());
            this.next = stream.next();
        }

        @Override
        protected void fire(long nowNanos) {
            TenantStream.Arrival a = next;
            IoRequest r = new IoRequest(
                    tenant,
                    proxy,
                    disk,
                    a.offsetBytes(),
                    a.lengthBytes(),
                    a.write(),
                    nowNanos,
                    backendModel.serviceNanos(a.lengthBytes(), a.write(), service),
                    setup.costModel()
                            .costUnits(
                                    a.write() ? dev.tailor.admission.IoKind.WRITE : dev.tailor.admission.IoKind.READ,
                                    a.lengthBytes()),
                    hot,
                    a.burst(),
                    nowNanos >= warmupNanos && nowNanos < measuredEndNanos);
            arrive(r, nowNanos);
            next = stream.next();
            if (next.arrivalNanos() < endNanos) {
                calendar.schedule(this, Math.max(nowNanos, next.arrivalNanos()));
            }
        }
    }

    private final StorageSetup setup;
    private final String policyName;
    private final Observer observer;
    /** The policies of the proxies taking part in the spare exchange, and the receivers of this boundary. */
    private final SegmentAdmissionPolicy[] spareExchangers;

    private final boolean[] spareReceiving;
    private final EventCalendar calendar = new EventCalendar();
    private final BackendModel backendModel;
    private final long intervalNanos;
    private final long warmupNanos;
    private final long measuredEndNanos;
    private final long endNanos;
    private final Backend backend;
    private final Proxy[] proxies;
    private final List<Source> sources = new ArrayList<>();
    private final SeriesRecorder recorder;

    private final Histogram steady = new Histogram(3);
    private final Histogram hot = new Histogram(3);
    private final Histogram steadySegments = new Histogram(3);
    private final Histogram hotSegments = new Histogram(3);
    /** Per proxy, admission's classifier without admission: labels every request under every policy. */
    private final SegmentClassification[] classification;

    private final Histogram steadyWithinBaseline = new Histogram(3);
    private final Histogram allWithinBaseline = new Histogram(3);
    /**
     * Per proxy, the shipped segment admission's baseline guarantee without admission: labels every
     * request within its tenant's baseline or not, under every policy.
     */
    private final BaselineMeter[] baselineMeters;

    /**
     * Per tenant (the setup's order): latency, measured requests, of them within baseline, their cost. The
     * latency's buckets are the classes' (3 digits), so a class of one tenant has its figures exactly; int
     * counts halve the memory (about 90 KB a tenant once latencies reach a second).
     */
    private final IntCountsHistogram[] tenantLatency;

    private final long[] tenantOffered;
    private final long[] tenantWithin;
    private final long[] tenantCost;

    private final Histogram admittedSteady = new Histogram(3);
    private final Histogram admittedHot = new Histogram(3);
    private long offered;
    private long simulated;
    /** Requests the backend completed within the measured period, whenever they arrived. */
    private long served;

    private long servedBytes;
    private long refused;
    private long steadyAsHot;
    private long steadyAdmitted;
    private long hotAsSteady;
    private long hotAdmitted;

    // Time integrals over the measured period, ns and channel-ns.
    private long accountedNanos;
    private long held;
    private long busyChannelNanos;
    private long waitingNanos;
    private long idleChannelNanosWhileWaiting;

    StorageRun(StorageSetup setup, String policyName, Observer observer) {
        this.setup = setup;
        this.policyName = policyName;
        this.observer = observer;
        StorageScenario s = setup.scenario();
        this.backendModel = setup.backend();
        this.intervalNanos = Math.max(1_000, Math.round(s.intervalMillis() * 1e6));
        this.warmupNanos = Math.round(s.warmupSeconds() * 1e9);
        this.measuredEndNanos = warmupNanos + Math.round(s.durationSeconds() * 1e9);
        this.endNanos = measuredEndNanos + Math.round(s.drainSeconds() * 1e9);
        this.backend = new Backend(calendar, backendModel.parallelism(), new Backend.Listener() {
            @Override
            public void beforeChange(long nowNanos) {
                account(nowNanos);
            }

            @Override
            public void completed(IoRequest request, long nowNanos) {
                onCompleted(request, nowNanos);
            }
        });
        RandomStreams streams = new RandomStreams(s.seed());
        List<StorageSetup.Tenant> tenants = setup.tenants();
        this.tenantLatency = new IntCountsHistogram[tenants.size()];
        for (int i = 0; i < tenantLatency.length; i++) {
            tenantLatency[i] = new IntCountsHistogram(3);
        }
        this.tenantOffered = new long[tenants.size()];
        this.tenantWithin = new long[tenants.size()];
        this.tenantCost = new long[tenants.size()];
        int observed = 0;
        for (StorageSetup.Tenant t : tenants) {
            if (t.hot()) {
                observed = t.proxy();
                break;
            }
        }
        this.recorder = new SeriesRecorder(observed, intervalNanos, endNanos, warmupNanos);
        this.proxies = new Proxy[s.proxies()];
        this.classification = new SegmentClassification[s.proxies()];
        this.baselineMeters = new BaselineMeter[s.proxies()];
        for (int p = 0; p < proxies.length; p++) {
            List<StorageSetup.Tenant> mine = new ArrayList<>();
            List<VirtualDisk> disks = new ArrayList<>();
            for (int i = 0; i < tenants.size(); i++) {
                StorageSetup.Tenant t = tenants.get(i);
                if (t.proxy() == p) {
                    sources.add(new Source(i, p, mine.size(), t, streams));
                    mine.add(t);
                    disks.add(VirtualDisk.committed(t.name(), s.diskSizeBytes(), t.commitmentCostUnitsPerSecond()));
                }
            }
            proxies[p] = new Proxy(p, this, mine, disks, setup.proxyCapacityCostUnitsPerSecond(p));
            if (!mine.isEmpty()) {
                classification[p] = new SegmentClassification(
                        SegmentAdmissionPolicy.config(proxies[p], "segment-admission-paper"), disks, 0);
                baselineMeters[p] =
                        new BaselineMeter(SegmentAdmissionPolicy.config(proxies[p], "segment-admission"), disks, 0);
                proxies[p].policy = StorageSimulation.policy(policyName, proxies[p], p == observed ? recorder : null);
            }
        }
        List<SegmentAdmissionPolicy> exchangers = new ArrayList<>();
        for (Proxy p : proxies) {
            if (p.policy instanceof SegmentAdmissionPolicy a && a.spareExchange()) {
                exchangers.add(a);
            }
        }
        this.spareExchangers = exchangers.toArray(SegmentAdmissionPolicy[]::new);
        this.spareReceiving = new boolean[spareExchangers.length];
    }

    EventCalendar calendar() {
        return calendar;
    }

    long intervalNanos() {
        return intervalNanos;
    }

    int backendParallelism() {
        return backendModel.parallelism();
    }

    StorageSetup setup() {
        return setup;
    }

    Proxy proxy(int index) {
        return proxies[index];
    }

    StorageRunResult run(java.util.function.LongSupplier wallClock) {
        long wallStart = wallClock == null ? 0 : wallClock.getAsLong();
        for (Source source : sources) {
            if (source.next.arrivalNanos() < endNanos) {
                calendar.schedule(source, source.next.arrivalNanos());
            }
        }
        EventCalendar.Event tick = new EventCalendar.Event() {
            @Override
            protected void fire(long nowNanos) {
                if (observer != null) {
                    observer.interval(nowNanos);
                }
                for (Proxy p : proxies) {
                    if (p.policy != null) {
                        classification[p.index()].advanceTo(nowNanos);
                        p.policy.interval(nowNanos);
                    }
                }
                exchangeSpare(nowNanos);
                if (nowNanos + intervalNanos <= endNanos) {
                    calendar.schedule(this, nowNanos + intervalNanos);
                }
            }
        };
        calendar.schedule(tick, intervalNanos);
        calendar.runUntil(endNanos);
        account(endNanos);
        long[] unfinished = {0};
        java.util.function.Consumer<IoRequest> atAge = r -> {
            if (r.measured) {
                unfinished[0]++;
                (r.hot ? hot : steady).recordValue(endNanos - r.arrivalNanos);
                (r.steadySegment ? steadySegments : hotSegments).recordValue(endNanos - r.arrivalNanos);
                tenantLatency[r.tenant].recordValue(endNanos - r.arrivalNanos);
                withinBaseline(r, endNanos - r.arrivalNanos);
            }
        };
        backend.forEachPending(atAge);
        for (Proxy p : proxies) {
            if (p.policy != null) {
                p.policy.forEachHeld(atAge);
            }
        }
        double wall = wallClock == null ? 0 : (wallClock.getAsLong() - wallStart) / 1e6;
        return result(unfinished[0], wall);
    }

    /**
     * Spare exchange (ours): the regular budget every taking part proxy left unused in the interval that just
     * ended goes to those with requests still waiting after the boundary, in proportion to their budgets,
     * for the running interval only. With fewer than two taking part it does nothing.
     */
    private void exchangeSpare(long nowNanos) {
        if (spareExchangers.length < 2) {
            return;
        }
        long pooled = 0;
        double receiving = 0;
        for (SegmentAdmissionPolicy p : spareExchangers) {
            pooled += p.expiredCostUnits();
        }
        for (int i = 0; i < spareExchangers.length; i++) {
            spareReceiving[i] = spareExchangers[i].waiting();
            if (spareReceiving[i]) {
                receiving += spareExchangers[i].capacityCostUnitsPerSecond();
            }
        }
        if (pooled <= 0 || receiving <= 0) {
            return;
        }
        for (int i = 0; i < spareExchangers.length; i++) {
            if (spareReceiving[i]) {
                long share = (long) Math.floor(pooled * (spareExchangers[i].capacityCostUnitsPerSecond() / receiving));
                if (share > 0) {
                    spareExchangers[i].grantSpare(share, nowNanos);
                }
            }
        }
    }

    private void arrive(IoRequest r, long nowNanos) {
        simulated++;
        if (r.measured) {
            offered++;
        }
        recorder.arrival(r);
        r.steadySegment =
                classification[r.proxy].classify(r.disk, r.kind(), r.offsetBytes, r.lengthBytes) == SegmentClass.STEADY;
        r.withinBaseline = baselineMeters[r.proxy].within(r.disk, r.kind(), r.offsetBytes, r.lengthBytes, nowNanos);
        if (r.measured) {
            tenantOffered[r.tenant]++;
            tenantCost[r.tenant] += r.costUnits;
            tenantWithin[r.tenant] += r.withinBaseline ? 1 : 0;
        }
        account(nowNanos);
        held++;
        proxies[r.proxy].policy.arrive(r, nowNanos);
    }

    void dispatch(Proxy proxy, IoRequest r, long nowNanos) {
        account(nowNanos);
        held--;
        r.dispatchNanos = nowNanos;
        if (observer != null) {
            observer.dispatched(r, nowNanos);
        }
        backend.submit(r, nowNanos);
    }

    void refuse(Proxy proxy, IoRequest r, long nowNanos) {
        account(nowNanos);
        held--;
        if (r.measured) {
            refused++;
        }
    }

    private void onCompleted(IoRequest r, long nowNanos) {
        if (nowNanos >= warmupNanos && nowNanos < measuredEndNanos) {
            served++;
            servedBytes += r.lengthBytes;
        }
        if (r.measured) {
            long latency = nowNanos - r.arrivalNanos;
            (r.hot ? hot : steady).recordValue(latency);
            (r.steadySegment ? steadySegments : hotSegments).recordValue(latency);
            tenantLatency[r.tenant].recordValue(latency);
            withinBaseline(r, latency);
            if (r.ticket != null) {
                boolean asSteady = r.ticket.admittedAs() == SegmentClass.STEADY;
                (asSteady ? admittedSteady : admittedHot).recordValue(latency);
                if (r.hot) {
                    hotAdmitted++;
                    hotAsSteady += asSteady ? 1 : 0;
                } else {
                    steadyAdmitted++;
                    steadyAsHot += asSteady ? 0 : 1;
                }
            }
        }
        if (observer != null) {
            observer.completed(r, nowNanos);
        }
        proxies[r.proxy].policy.completed(r, nowNanos);
    }

    /** Records a measured request's latency in the within-baseline classes it belongs to. */
    private void withinBaseline(IoRequest r, long latencyNanos) {
        if (r.withinBaseline) {
            allWithinBaseline.recordValue(latencyNanos);
            if (!r.hot) {
                steadyWithinBaseline.recordValue(latencyNanos);
            }
        }
    }

    /** Adds the time since the last change to the integrals, clipped to the measured period. */
    private void account(long nowNanos) {
        long from = Math.max(accountedNanos, warmupNanos);
        long to = Math.min(nowNanos, measuredEndNanos);
        if (to > from) {
            long span = to - from;
            int busy = backend.busy();
            busyChannelNanos += busy * span;
            if (held > 0) {
                waitingNanos += span;
                idleChannelNanosWhileWaiting += (long) (backend.parallelism() - busy) * span;
            }
        }
        accountedNanos = Math.max(accountedNanos, nowNanos);
    }

    private StorageRunResult result(long unfinished, double wallMillis) {
        StorageScenario s = setup.scenario();
        double measuredSeconds = s.durationSeconds();
        long measuredNanos = measuredEndNanos - warmupNanos;
        int k = backend.parallelism();
        StorageRunResult.AdmissionCounters admission = null;
        Double reservationPercent = null;
        if (SegmentAdmissionPolicy.NAMES.contains(policyName)) {
            long budget = 0;
            long reserve = 0;
            long lent = 0;
            long borrowed = 0;
            long repaid = 0;
            long forgiven = 0;
            long queued = 0;
            long bursts = 0;
            for (Proxy p : proxies) {
                if (p.policy instanceof SegmentAdmissionPolicy a) {
                    AdmissionStats st = a.stats();
                    budget += st.budgetIssuedCostUnits();
                    reserve += st.drawnReserveCostUnits();
                    lent += st.lentReserveCostUnits();
                    borrowed += st.borrowedCostUnits();
                    repaid += st.repaidCostUnits();
                    forgiven += st.forgivenCostUnits();
                    queued += st.queuedRequests();
                    bursts += st.burstsBorrowing();
                }
            }
            admission = new StorageRunResult.AdmissionCounters(
                    LatencySummary.of(admittedSteady),
                    LatencySummary.of(admittedHot),
                    percent(steadyAsHot, steadyAdmitted),
                    percent(hotAsSteady, hotAdmitted),
                    queued,
                    budget,
                    reserve,
                    lent,
                    borrowed,
                    repaid,
                    forgiven,
                    percent(reserve, budget),
                    percent(lent, budget),
                    percent(borrowed, budget),
                    percent(repaid, budget),
                    bursts);
        } else if ("mclock".equals(policyName) || "mclock-per-client".equals(policyName)) {
            double dispatched = 0;
            double weighted = 0;
            for (Proxy p : proxies) {
                if (p.policy instanceof MClockPolicy m && !Double.isNaN(m.reservationShare())) {
                    weighted += m.reservationShare();
                    dispatched++;
                }
            }
            reservationPercent = dispatched == 0 ? null : 100 * weighted / dispatched;
        }
        return new StorageRunResult(
                s.name(),
                setup.burstMultiplier(),
                policyName,
                s.seed(),
                measuredSeconds,
                offered,
                LatencySummary.of(steady),
                LatencySummary.of(hot),
                LatencySummary.of(steadySegments),
                LatencySummary.of(hotSegments),
                LatencySummary.of(steadyWithinBaseline),
                LatencySummary.of(allWithinBaseline),
                served / measuredSeconds,
                servedBytes / measuredSeconds / (1 << 20),
                100.0 * busyChannelNanos / ((double) k * measuredNanos),
                waitingNanos == 0 ? 0 : 100.0 * idleChannelNanosWhileWaiting / ((double) k * waitingNanos),
                100.0 * waitingNanos / measuredNanos,
                refused,
                unfinished,
                admission,
                reservationPercent,
                simulated,
                calendar.eventsFired(),
                wallMillis,
                tenantResults(measuredSeconds),
                steady,
                hot,
                recorder.finish());
    }

    private List<StorageRunResult.TenantResult> tenantResults(double measuredSeconds) {
        List<StorageRunResult.TenantResult> out = new ArrayList<>();
        List<StorageSetup.Tenant> tenants = setup.tenants();
        for (int i = 0; i < tenants.size(); i++) {
            StorageSetup.Tenant t = tenants.get(i);
            StorageScenario.BaselineSpec baseline = setup.baseline(t);
            out.add(new StorageRunResult.TenantResult(
                    t.name(),
                    t.hot() ? "hot" : "steady",
                    t.proxy(),
                    baseline == null ? null : baseline.iops(),
                    baseline == null ? null : baseline.mibPerSecond(),
                    t.commitmentCostUnitsPerSecond(),
                    tenantCost[i] / measuredSeconds,
                    tenantOffered[i],
                    percent(tenantWithin[i], tenantOffered[i]),
                    LatencySummary.of(tenantLatency[i])));
        }
        return out;
    }

    private static double percent(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }
}
