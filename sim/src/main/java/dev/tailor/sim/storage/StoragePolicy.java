package dev.tailor.sim.storage;

import java.util.function.Consumer;

/**
 * What a proxy does with the block requests of its tenants: send them to the backend at once, hold
 * them, or refuse them. One instance per proxy. Every request handed to {@link #arrive} must end up
 * {@linkplain Proxy#dispatch dispatched} or {@linkplain Proxy#refuse refused}, now or later; what is
 * held in between is listed by {@link #forEachHeld}. Called from the simulation's one thread only.
 */
interface StoragePolicy {

    /** A request arrived at the proxy at {@code nowNanos}. */
    void arrive(IoRequest request, long nowNanos);

    /** An interval boundary ({@code nowNanos} = k·Δ, k ≥ 1). */
    default void interval(long nowNanos) {}

    /** The backend completed {@code request}, which this policy dispatched. */
    default void completed(IoRequest request, long nowNanos) {}

    /** Every request held (arrived, neither dispatched nor refused). */
    void forEachHeld(Consumer<IoRequest> action);
}
