package dev.tailor.sim.storage;

import java.util.function.Consumer;

/**
 * {@code fifo}: no admission. Every request goes to the backend the moment it arrives, so all
 * waiting happens in the backend's one FIFO queue, where a burst's requests sit in front of
 * everyone else's. The baseline the paper compares against.
 */
final class FifoPolicy implements StoragePolicy {

    private final Proxy proxy;

    FifoPolicy(Proxy proxy) {
        this.proxy = proxy;
    }

    @Override
    public void arrive(IoRequest request, long nowNanos) {
        proxy.dispatch(request, nowNanos);
    }

    @Override
    public void forEachHeld(Consumer<IoRequest> action) {
        // Holds nothing.
    }
}
