package dev.tailor.sim.cluster;

import dev.tailor.sim.des.EventCalendar;

/**
 * One call: travels from the caller's proxy to a replica, is served there (CPU work, then its own
 * calls stage by stage), and travels back. The same object is the calendar event of both trips.
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
    private int phase = TO_CALLEE;
    private int stage;
    private int pendingCalls;

    Visit(ClusterModel model, UserRequest request, Visit parent, Proxy from, SimReplica replica) {
        this.model = model;
        this.request = request;
        this.parent = parent;
        this.from = from;
        this.replica = replica;
    }

    @Override
    protected void fire(long nowNanos) {
        if (phase == TO_CALLEE) {
            replica.inFlight++;
            replica.arrive(this, model.workNanos(replica), nowNanos);
        } else {
            from.active[replica.id]--;
            from.callsAnswered[replica.component.index]++;
            model.policy.onResponse(from, replica, nowNanos);
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
            stage++;   // every call of this stage was drawn away: go on
        }
        respond(nowNanos);
    }

    private void callAnswered(long nowNanos) {
        if (--pendingCalls == 0) {
            stage++;
            startStage(nowNanos);
        }
    }

    private void respond(long nowNanos) {
        replica.inFlight--;
        replica.served++;
        phase = TO_CALLER;
        model.calendar.schedule(this, nowNanos + model.delayNanos(replica.node, from.node));
    }
}
