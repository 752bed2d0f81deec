package dev.tailor.sim.storage;

import dev.tailor.admission.VirtualDisk;
import dev.tailor.sim.des.EventCalendar;
import java.util.List;

/**
 * One storage proxy of the simulator, as its policy sees it: its tenants' disks (disk {@code d} is
 * the {@code d}-th of {@link #tenants()}), its capacity, the interval, the calendar, and the two
 * ways out for a request. Not thread-safe.
 */
final class Proxy {

    private final int index;
    private final StorageRun run;
    private final List<StorageSetup.Tenant> tenants;
    private final List<VirtualDisk> disks;
    private final double capacityCostUnitsPerSecond;
    StoragePolicy policy;
    long held;

    Proxy(
            int index,
            StorageRun run,
            List<StorageSetup.Tenant> tenants,
            List<VirtualDisk> disks,
            double capacityCostUnitsPerSecond) {
        this.index = index;
        this.run = run;
        this.tenants = List.copyOf(tenants);
        this.disks = List.copyOf(disks);
        this.capacityCostUnitsPerSecond = capacityCostUnitsPerSecond;
    }

    int index() {
        return index;
    }

    /** The tenants of this proxy, in disk order. */
    List<StorageSetup.Tenant> tenants() {
        return tenants;
    }

    /** Their virtual disks with their commitments, in disk order. */
    List<VirtualDisk> disks() {
        return disks;
    }

    /** This proxy's share of what the backend serves, cost units per second. */
    double capacityCostUnitsPerSecond() {
        return capacityCostUnitsPerSecond;
    }

    long intervalNanos() {
        return run.intervalNanos();
    }

    EventCalendar calendar() {
        return run.calendar();
    }

    int backendParallelism() {
        return run.backendParallelism();
    }

    StorageSetup setup() {
        return run.setup();
    }

    /** Sends a held request to the backend now. */
    void dispatch(IoRequest request, long nowNanos) {
        run.dispatch(this, request, nowNanos);
    }

    /** Refuses a held request: it leaves the simulation without completing. */
    void refuse(IoRequest request, long nowNanos) {
        run.refuse(this, request, nowNanos);
    }
}
