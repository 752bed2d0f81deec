package dev.tailor.sim.cluster;

import dev.tailor.sim.des.EventCalendar;
import java.util.Arrays;

/**
 * A replica: requests share its CPU by processor sharing, each request using at most one core,
 * and the replica as a whole at most what its node and its CPU limit allow.
 *
 * <p><b>Why processor sharing and not FCFS.</b> The services of the paper's setting (Go, Java,
 * Node.js servers) run every in-flight request on its own goroutine or thread; the kernel time-slices
 * them, so a long request does not hold up a short one as a single FCFS queue would, and a
 * replica's requests all slow down together when it is busy. FCFS with one server per core would
 * model a fixed worker pool, which these services do not have.
 *
 * <p><b>CPU limit.</b> {@link ClusterScenario.CpuModel#FLUID}: at any instant the replica runs on at
 * most min(requests, limit) cores. {@link ClusterScenario.CpuModel#CFS_QUOTA}: it runs on
 * min(requests, free cores) until it has used limit × period core-time in the current CFS period,
 * then it gets no CPU until the period ends (throttling). Periods start at a per-replica phase.
 *
 * <p>Maintainer note: all requests in service progress at the same rate, so one virtual clock
 * {@code virtualWork} (reference-core ns of work each request has received) and a min-heap of finish
 * tags (virtual work at arrival + the request's work) give the next completion in O(log n). The
 * replica's one calendar event is its next "timer": a completion, quota exhaustion, or the end of
 * its CFS period when that matters, whichever is first. Work is in reference-core ns (a speed-1.0
 * core does 1 ns of work per ns); CPU time is in core-ns, so CPU per request grows on slow nodes,
 * which is what HEART's ATPM measures.
 */
final class SimReplica extends EventCalendar.Event {

    /** Relative tolerance on virtual work: a finish tag this close to the clock counts as reached. */
    private static final double EPSILON_WORK = 1e-9;
    /** Quota used up to this many core-ns short of the quota counts as spent. */
    private static final double EPSILON_QUOTA = 1e-3;

    final int id;
    final String pod;
    final SimComponent component;
    final SimNode node;
    final double limitCores;
    /** Fixed factor on this replica's CPU cost per request (log-normal, mean 1). */
    final double costFactor;
    /** The sidecar proxy of this replica: its outbound calls. */
    final Proxy proxy;

    private final EventCalendar calendar;
    private final ClusterModel model;
    private final boolean cfs;
    private final long periodNanos;
    private final double quotaCoreNanos;

    // Processor sharing.
    private double[] tags = new double[16];
    private Visit[] jobs = new Visit[16];
    private int jobCount;
    private double virtualWork;
    private double cores;
    private long lastNanos;

    // CFS bandwidth control.
    private long periodEndNanos;
    private double quotaUsedCoreNanos;
    private boolean throttled;
    private double throttledNanos;

    // Counters, as cAdvisor and Istio would export them.
    double cpuCoreNanos;
    long served;
    /** Served requests the scraped request metric has not counted (a metrics-undercount event). */
    double uncountedServed;
    /** The fraction of served requests the scraped metric counts: 1 but during a metrics-undercount event. */
    double metricsCountedFraction = 1;
    /** Requests at this replica: in CPU service or waiting for their own calls (its RIF). */
    int inFlight;

    // Faults and readiness (scenario events).
    /** In the component's endpoints (Ready); a policy routes only to Ready replicas. */
    boolean ready = true;
    /** Crashed: it answers nothing until it restarts. */
    boolean down;
    /** Its CPU cost per call is multiplied by {@link #coldFactor} until this instant (a cold start). */
    long coldUntilNanos = Long.MIN_VALUE;

    double coldFactor = 1;
    /** The requests at this replica (arrived, not yet answered): the ones a crash loses. */
    private Visit presentHead;
    /** Calls lost to the current crash, answered with an error when the replica restarts. */
    private java.util.List<Visit> lost = new java.util.ArrayList<>();
    /** Recent server-side latencies by RIF, kept only when a policy asks for them (Prequal's probes). */
    PrequalPolicy.ServerLatency serverLatency;

    SimReplica(
            int id,
            String pod,
            SimComponent component,
            SimNode node,
            double limitCores,
            double costFactor,
            ClusterModel model,
            long periodNanos,
            long phaseNanos,
            boolean cfs) {
        this.id = id;
        this.pod = pod;
        this.component = component;
        this.node = node;
        this.limitCores = limitCores;
        this.costFactor = costFactor;
        this.model = model;
        this.calendar = model.calendar;
        this.cfs = cfs;
        this.periodNanos = periodNanos;
        this.quotaCoreNanos = limitCores * periodNanos;
        this.periodEndNanos = phaseNanos;
        this.proxy = new Proxy(node, component, this);
    }

    /** Cores this replica would use now if the node had them free. */
    double wantCores() {
        if (jobCount == 0) {
            return 0;
        }
        if (cfs) {
            return throttled ? 0 : Math.min(jobCount, node.cores);
        }
        return Math.min(jobCount, limitCores);
    }

    /** Background CPU in cores now (a background-cpu event): measured, serving no request. */
    private double backgroundCores;

    private long backgroundSinceNanos;
    private double backgroundCoreNanos;

    /** Total CPU time in core-ns up to {@code nowNanos}, background CPU included, without changing state. */
    double cpuCoreNanosAt(long nowNanos) {
        return cpuCoreNanos
                + cores * (nowNanos - lastNanos)
                + backgroundCoreNanos
                + backgroundCores * (nowNanos - backgroundSinceNanos);
    }

    /** From {@code nowNanos} on, this replica spends {@code cores} of background CPU. */
    void setBackgroundCores(double newCores, long nowNanos) {
        backgroundCoreNanos += backgroundCores * (nowNanos - backgroundSinceNanos);
        backgroundCores = newCores;
        backgroundSinceNanos = nowNanos;
    }

    /** Nanoseconds spent throttled so far (CFS only), up to the last state change. */
    double throttledNanos() {
        return throttledNanos;
    }

    /** The factor on this replica's CPU cost per call at {@code nowNanos}: above 1 while it is cold. */
    double costMultiplier(long nowNanos) {
        return nowNanos < coldUntilNanos ? coldFactor : 1;
    }

    /** A request starts its CPU work here: {@code workNanos} reference-core ns. */
    void arrive(Visit visit, double workNanos, long nowNanos) {
        advance(nowNanos);
        push(virtualWork + workNanos, visit);
        node.reallocate(this, nowNanos);
    }

    /** {@code visit} arrived: it is at this replica until it is answered ({@link #left}). */
    void present(Visit visit) {
        visit.nextPresent = presentHead;
        visit.previousPresent = null;
        if (presentHead != null) {
            presentHead.previousPresent = visit;
        }
        presentHead = visit;
    }

    /** {@code visit} was answered. */
    void left(Visit visit) {
        if (visit.previousPresent != null) {
            visit.previousPresent.nextPresent = visit.nextPresent;
        } else {
            presentHead = visit.nextPresent;
        }
        if (visit.nextPresent != null) {
            visit.nextPresent.previousPresent = visit.previousPresent;
        }
        visit.nextPresent = null;
        visit.previousPresent = null;
    }

    /**
     * The replica crashes: every request at it is lost (its CPU work and the calls it waits for), and it
     * answers nothing until {@link #restart}. Readiness is the caller's business.
     */
    void crash(long nowNanos) {
        advance(nowNanos);
        down = true;
        for (Visit visit = presentHead; visit != null; ) {
            Visit next = visit.nextPresent;
            visit.nextPresent = null;
            visit.previousPresent = null;
            visit.lost = true;
            lost.add(visit);
            visit = next;
        }
        presentHead = null;
        Arrays.fill(jobs, 0, jobCount, null);
        jobCount = 0;
        virtualWork = 0;
        inFlight = 0;
        node.reallocate(this, nowNanos);
    }

    /** A call reached the replica while it is down: lost. */
    void lose(Visit visit) {
        visit.lost = true;
        lost.add(visit);
    }

    /**
     * The replica is back: returns the calls lost since the crash, whose callers' connections are now
     * reset (they get an error), and forgets them.
     */
    java.util.List<Visit> restart(long nowNanos) {
        advance(nowNanos);
        down = false;
        java.util.List<Visit> reset = lost;
        lost = new java.util.ArrayList<>();
        return reset;
    }

    /** Brings the replica's work up to {@code nowNanos} before its node's speed changes. */
    void beforeSpeedChange(long nowNanos) {
        advance(nowNanos);
    }

    /** Reschedules the replica's next event after its node's speed changed. */
    void afterSpeedChange(long nowNanos) {
        scheduleTimer(nowNanos);
    }

    @Override
    protected void fire(long nowNanos) {
        advance(nowNanos);
        if (cfs && !throttled && jobCount > 0 && quotaUsedCoreNanos >= quotaCoreNanos - EPSILON_QUOTA) {
            throttled = true;
        }
        Visit[] finished = model.scratch;
        int done = 0;
        double tolerance = EPSILON_WORK * Math.max(1, virtualWork);
        while (jobCount > 0 && tags[0] <= virtualWork + tolerance) {
            virtualWork = Math.max(virtualWork, tags[0]);
            if (done == finished.length) {
                finished = model.scratch = Arrays.copyOf(finished, done * 2);
            }
            finished[done++] = pop();
        }
        if (jobCount == 0) {
            virtualWork = 0;
        }
        node.reallocate(this, nowNanos);
        // Finishing a visit only schedules events (calls, responses), so the scratch array is not reused meanwhile.
        for (int i = 0; i < done; i++) {
            Visit visit = finished[i];
            finished[i] = null;
            visit.cpuDone(nowNanos);
        }
    }

    /** Called by the node with this replica's new core allocation. */
    void setCores(double newCores, long nowNanos, boolean reschedule) {
        if (newCores == cores && !reschedule) {
            return;
        }
        advance(nowNanos);
        cores = newCores;
        scheduleTimer(nowNanos);
    }

    private void advance(long nowNanos) {
        long dt = nowNanos - lastNanos;
        if (dt > 0) {
            if (cores > 0) {
                double coreNanos = cores * dt;
                cpuCoreNanos += coreNanos;
                quotaUsedCoreNanos += coreNanos;
                virtualWork += node.speedFactor * cores / jobCount * dt;
            } else if (throttled) {
                throttledNanos += dt;
            }
        }
        lastNanos = nowNanos;
        if (cfs && nowNanos >= periodEndNanos) {
            long periods = (nowNanos - periodEndNanos) / periodNanos + 1;
            periodEndNanos += periods * periodNanos;
            quotaUsedCoreNanos = 0;
            throttled = false;
        }
    }

    private void scheduleTimer(long nowNanos) {
        long next = Long.MAX_VALUE;
        if (jobCount > 0 && cores > 0) {
            double rate = node.speedFactor * cores / jobCount;
            next = nowNanos + (long) Math.ceil(Math.max(0, tags[0] - virtualWork) / rate);
        }
        if (cfs) {
            if (cores > 0) {
                long exhausted = nowNanos + (long) Math.ceil(Math.max(0, quotaCoreNanos - quotaUsedCoreNanos) / cores);
                next = Math.min(next, Math.min(exhausted, periodEndNanos));
            } else if (throttled) {
                next = Math.min(next, periodEndNanos);
            }
        }
        if (next == Long.MAX_VALUE) {
            calendar.cancel(this);
        } else {
            calendar.schedule(this, next);
        }
    }

    private void push(double tag, Visit visit) {
        if (jobCount == tags.length) {
            tags = Arrays.copyOf(tags, jobCount * 2);
            jobs = Arrays.copyOf(jobs, jobCount * 2);
        }
        int slot = jobCount++;
        while (slot > 0) {
            int parent = (slot - 1) >>> 1;
            if (tags[parent] <= tag) {
                break;
            }
            tags[slot] = tags[parent];
            jobs[slot] = jobs[parent];
            slot = parent;
        }
        tags[slot] = tag;
        jobs[slot] = visit;
    }

    private Visit pop() {
        Visit top = jobs[0];
        int last = --jobCount;
        double tag = tags[last];
        Visit visit = jobs[last];
        jobs[last] = null;
        int slot = 0;
        int half = last >>> 1;
        while (slot < half) {
            int child = 2 * slot + 1;
            if (child + 1 < last && tags[child + 1] < tags[child]) {
                child++;
            }
            if (tags[child] >= tag) {
                break;
            }
            tags[slot] = tags[child];
            jobs[slot] = jobs[child];
            slot = child;
        }
        if (last > 0) {
            tags[slot] = tag;
            jobs[slot] = visit;
        }
        return top;
    }
}
