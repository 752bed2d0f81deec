package dev.tailor.sim.storage;

import dev.tailor.admission.IoKind;
import dev.tailor.admission.Ticket;

/**
 * One block request in the storage simulator, from its arrival at a proxy to its completion at the
 * backend. Its service time and cost are fixed at arrival, so every policy of a comparison sees the
 * same work. Mutable only in the fields a policy or the backend fills in. Not thread-safe: one run,
 * one thread.
 */
final class IoRequest {

    /** Tenant number in the setup. */
    final int tenant;
    /** Proxy number. */
    final int proxy;
    /** Disk number on its proxy (the order of the proxy's tenants). */
    final int disk;

    final long offsetBytes;
    final int lengthBytes;
    final boolean write;
    /** Arrival at the proxy, simulated ns. */
    final long arrivalNanos;
    /** Time a backend channel takes to serve it, ns. */
    final long serviceNanos;
    /** Its cost in the setup's cost model (mean service time ÷ parallelism), cost units. */
    final long costUnits;
    /** Ground truth: its tenant has bursts. */
    final boolean hot;
    /** It arrived during one of its tenant's bursts. */
    final boolean burst;
    /** It arrived in the measured period. */
    final boolean measured;
    /** Admission's classifier called its segments steady when it arrived (under every policy). */
    boolean steadySegment;
    /**
     * It was within its tenant's baseline when it arrived: the shipped segment admission's guarantee
     * bucket held its cost (under every policy).
     */
    boolean withinBaseline;

    /** When the policy sent it to the backend, ns; -1 while held. */
    long dispatchNanos = -1;
    /** When the backend completed it, ns; -1 before. */
    long completionNanos = -1;
    /** The admission ticket (segment-admission policies only). */
    Ticket ticket;
    /** mclock: the client (segment, or disk per client) and the request's tags, ns. */
    int client;

    double reservationTagNanos;
    double proportionTagNanos;

    IoRequest(
            int tenant,
            int proxy,
            int disk,
            long offsetBytes,
            int lengthBytes,
            boolean write,
            long arrivalNanos,
            long serviceNanos,
            long costUnits,
            boolean hot,
            boolean burst,
            boolean measured) {
        this.tenant = tenant;
        this.proxy = proxy;
        this.disk = disk;
        this.offsetBytes = offsetBytes;
        this.lengthBytes = lengthBytes;
        this.write = write;
        this.arrivalNanos = arrivalNanos;
        this.serviceNanos = serviceNanos;
        this.costUnits = costUnits;
        this.hot = hot;
        this.burst = burst;
        this.measured = measured;
    }

    IoKind kind() {
        return write ? IoKind.WRITE : IoKind.READ;
    }

    @Override
    public String toString() {
        return "IoRequest[tenant " + tenant + ", " + (write ? "write " : "read ") + lengthBytes + " B at " + offsetBytes
                + ", arrived " + arrivalNanos + " ns, cost " + costUnits + "]";
    }
}
