package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.backend.BackendFeatures;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Promise;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Holds every request until the test lets it through, so a test decides the order in which requests
 * complete and can see how many the server has dispatched. Passed requests run on a {@link MemoryBackend},
 * which claims them as a real backend does: a held request whose connection closed was dropped, and
 * passing it does nothing.
 */
final class GatedBackend implements BlockBackend {

    record Held(BlockRequest request, Promise<ByteBuf> completion) {}

    final MemoryBackend memory;
    private final LinkedBlockingQueue<Held> held = new LinkedBlockingQueue<>();

    GatedBackend(int sizeBytes) {
        this.memory = new MemoryBackend(sizeBytes);
    }

    @Override
    public long sizeBytes() {
        return memory.sizeBytes();
    }

    @Override
    public BackendFeatures features() {
        return memory.features();
    }

    @Override
    public BlockSizes blockSizes() {
        return memory.blockSizes();
    }

    @Override
    public void submit(BlockRequest request, Promise<ByteBuf> completion) {
        held.add(new Held(request, completion));
    }

    /** The next held request, waiting up to 10 s for it. */
    Held next() throws InterruptedException {
        Held next = held.poll(10, TimeUnit.SECONDS);
        assertThat(next).as("a request reached the backend within 10 s").isNotNull();
        return next;
    }

    /** How many requests are held now. */
    int heldCount() {
        return held.size();
    }

    /** Runs a held request on the memory backend, completing it. */
    void pass(Held request) {
        memory.submit(request.request(), request.completion());
    }

    /** Completes every held request. */
    void passAll() {
        Held next;
        while ((next = held.poll()) != null) {
            pass(next);
        }
    }

    @Override
    public void close() {
        Held next;
        while ((next = held.poll()) != null) {
            if (next.request().claim()) {
                next.request().release();
                next.completion().tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "closed"));
            }
        }
    }
}
