package dev.tailor.nbd.server;

import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Promise;

/**
 * The seam between the protocol and the backends: every valid request of every connection passes
 * through {@link #dispatch} on its way to the export's {@link BlockBackend}. {@link #DIRECT} submits at
 * once; admission control (docs/design.md#block-requests-to-the-backend) plugs in here to hold back or refuse the
 * requests of hot segments, and can read the tenant and the virtual disk from the {@link Export}.
 *
 * <p>Threads: called on the connection's event loop; must not block it. The dispatcher owns the
 * request from the call on: it submits it to {@code export.backend()} later, or completes the promise
 * itself (e.g. with an {@link NbdException}) and releases the request.
 */
@FunctionalInterface
public interface RequestDispatcher {

    /** Submits every request to its export's backend immediately. */
    RequestDispatcher DIRECT = (export, request, completion) -> export.backend().submit(request, completion);

    /**
     * @param export     the export (virtual disk) the connection is bound to
     * @param request    a valid READ, WRITE, FLUSH, TRIM or WRITE_ZEROES
     * @param completion as in {@link BlockBackend#submit}: the read's data, or {@code null}
     */
    void dispatch(Export export, BlockRequest request, Promise<ByteBuf> completion);
}
