package dev.tailor.sim.cluster;

import dev.tailor.sim.des.EventCalendar;

/**
 * One call: travels from the caller's proxy to a replica, is served there (CPU work, then its own
 * calls stage by stage), and travels back. The same object is the calendar event of both trips.
 *
 * <p>A call that a crash loses (at the replica when it crashed, or sent to it while it was down) is
 * {@linkplain #lost lost}: nothing more happens to it until the replica restarts, when its caller's
 * connection is reset and it travels back as an error. Its user request then counts as failed.
 */
final class Visit extends EventCalendar.Event {

    private static final int TO_CALLEE = 0;
    private static final int TO_CALLER = 1;

    private final ClusterModel model;
    final UserRequest request;
    /** The visit that made this call, or {@code null} for the user request's entry call. */
    final Visit parent;

    final Proxy from;
    final SimReplica replica;
    /** When the caller's proxy sent the call, simulated ns. */
    final long sentNanos;

    private int phase = TO_CALLEE;
    private int stage;
    private int pendingCalls;
    /** When the call reached the replica, simulated ns. */
    private long arrivedNanos;
    /** Requests in flight at the replica when the call arrived, itself not counted. */
    private int rifAtArrival;
    /** Lost to a crash of its replica. */
    boolean lost;
    /** Neighbours in the replica's list of present requests ({@link SimReplica#present}). */
    Visit previousPresent;

    Visit nextPresent;

    Visit(ClusterModel model, UserRequest request, Visit parent, Proxy from, SimReplica replica, long sentNanos) {
        this.model = model;
        this.request = request;
        this.parent = parent;
        this.from = from;
        this.replica = replica;
        this.sentNanos = sentNanos;
    }

    @Override
    protected void fire(long nowNanos) {
        if (phase == TO_CALLEE) {
            if (replica.down) {
                replica.lose(this);
                return;
            }
            arrivedNanos = nowNanos;
            rifAtArrival = replica.inFlight;
            replica.inFlight++;
            replica.present(this);
            replica.arrive(this, model.workNanos(replica) * replica.costMultiplier(nowNanos), nowNanos);
        } else {
            from.active[replica.id]--;
            from.callsAnswered[replica.component.index]++;
            from.overcountedCalls[replica.component.index] += from.callsCountedFactor - 1;
            model.policy.onResponse(from, replica, sentNanos, nowNanos);
            if (lost) {
                request.failed = true;
            }
            if (parent == null) {
                model.complete(request, nowNanos);
            } else {
                parent.callAnswered(nowNanos);
            }
        }
    }

    /** The replica finished this call's CPU work. */
    void cpuDone(long nowNanos) {
        stage = 0;
        startStage(nowNanos);
    }

    private void startStage(long nowNanos) {
        SimComponent component = replica.component;
        while (stage < component.calleesByStage.length) {
            int[] callees = component.calleesByStage[stage];
            double[] counts = component.countsByStage[stage];
            int sent = 0;
            for (int k = 0; k < callees.length; k++) {
                int calls = model.callCount(counts[k]);
                for (int c = 0; c < calls; c++) {
                    model.send(request, this, replica.proxy, model.components[callees[k]], nowNanos);
                    sent++;
                }
            }
            if (sent > 0) {
                pendingCalls = sent;
                return;
            }
            stage++; // every call of this stage was drawn away: go on
        }
        respond(nowNanos);
    }

    private void callAnswered(long nowNanos) {
        if (lost) {
            return; // this request died with its replica; its own calls still come back
        }
        if (--pendingCalls == 0) {
            stage++;
            startStage(nowNanos);
        }
    }

    private void respond(long nowNanos) {
        replica.inFlight--;
        replica.served++;
        replica.uncountedServed += 1 - replica.metricsCountedFraction;
        replica.left(this);
        if (replica.serverLatency != null) {
            replica.serverLatency.record(rifAtArrival, nowNanos - arrivedNanos);
        }
        phase = TO_CALLER;
        model.calendar.schedule(this, nowNanos + model.delayNanos(replica.node, from.node));
    }

    /** The replica restarted: this lost call's connection is reset, and the error travels back. */
    void resetAfterCrash(long nowNanos) {
        phase = TO_CALLER;
        model.calendar.schedule(this, nowNanos + model.delayNanos(replica.node, from.node));
    }
}
