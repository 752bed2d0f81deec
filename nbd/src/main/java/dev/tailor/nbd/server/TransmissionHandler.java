package dev.tailor.nbd.server;

import dev.tailor.common.Numbers;
import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.nbd.backend.BackendFeatures;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.protocol.Replies;
import dev.tailor.nbd.protocol.RequestFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.concurrent.Promise;
import java.util.concurrent.RejectedExecutionException;

/**
 * The second phase of one client connection, from the end of the handshake to the close (proto.md,
 * "Transmission"): put in the pipeline by the {@link HandshakeHandler} in its own place, with the
 * {@link Negotiated} session. Requests are cut from the stream by a {@link RequestFramer}, checked against
 * the export, handed to the {@link RequestDispatcher}, and answered with simple or structured replies in
 * whatever order they complete.
 *
 * <p>Threads: every method runs on the channel's event loop; backend completions arrive there through
 * their {@link Promise}. Nothing here blocks.
 *
 * <p>Memory per connection is bounded (docs/nbd.md, "Limits"): the handler keeps its own cumulation
 * buffer instead of extending {@link ByteToMessageDecoder} because it must be able to stop
 * <em>decoding</em>, not only reading, when too much is in flight: a stream of 28-byte reads of 32 MiB
 * each would otherwise turn one receive buffer into gigabytes of replies. A request counts as in
 * flight, with the bytes of its payload or read data, from its decoding until its reply has been
 * written to the socket; while the count or the bytes are at their limit the handler leaves further
 * requests undecoded and the channel stops reading.
 *
 * <p>Writes ({@code WRITE}, {@code WRITE_ZEROES}, {@code TRIM}) pass the export's {@link WriteOrdering}
 * first: one that overlaps an older pending write of the export, from any connection, waits for it.
 * Every request handed on is kept in a list until it completes; when the connection closes, those that
 * nothing has {@linkplain BlockRequest#claim claimed} yet (held by the ordering, queued in admission or
 * in a backend) are dropped: failed, released and counted, never executed (docs/nbd.md, "Guarantees"),
 * unless the client sent {@code NBD_CMD_DISC} first, which asks for them to be handled.
 *
 * <p>A connection with no request in flight and nothing received or sent for
 * {@code limits.idleTimeoutSeconds} is closed (Netty's {@link IdleStateHandler}, put in front by the
 * handshake, measures it), and the closing is logged; 0 turns this off. A request header without the
 * request magic closes the connection (a hard disconnect).
 *
 * <p>Per-request loop tracing (docs/nbd.md, "Loop tracing"), on an {@link IoPriorityEventLoop}: each request sums
 * the unrelated work its loop ran while the request waited for the loop (arrival to decoding, completion to the
 * listener, reply to flush; read from {@link IoPriorityEventLoop#unrelatedBusyNanos()}), the wall time it waited for
 * its loop where both ends are known (completion to the listener, reply to flush; from clock readings the request
 * takes anyway), and the loop time spent on its own work, recorded once its reply is flushed
 * ({@link IoMetrics.ForExport#traced}). On another loop (tests' embedded channels) the unrelated waits read 0.
 */
final class TransmissionHandler extends ChannelInboundHandlerAdapter {

    /** User event: finish the requests in flight, then close (server shutdown); a handshake just closes. */
    static final Object SHUTDOWN = new Object() {
        @Override
        public String toString() {
            return "NBD server shutdown";
        }
    };

    private static final System.Logger LOG = System.getLogger(TransmissionHandler.class.getName());

    /** Longs per reply in {@link #unflushedTraces}. */
    private static final int UNFLUSHED_STRIDE = 4;

    private final ServerContext server;
    private final Export export;
    private final boolean structuredReplies;
    private final boolean baseAllocation;
    private final boolean tls;
    private final RequestFramer framer;
    private ChannelHandlerContext ctx;
    private ByteBuf cumulation;
    private boolean closed;

    /** The most recent of the requests handed on and not completed (a doubly linked list). */
    private Outstanding outstanding;

    /** Changed on the event loop only; volatile so that a stopping server can count them ({@link #requestsInFlight}). */
    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer, the connection's event loop
    private volatile int inFlightRequests;

    private long inFlightBytes;
    private boolean draining;
    /**
     * The client sent {@code NBD_CMD_DISC}: its outstanding requests are to be handled (proto.md), so
     * they are not dropped when the socket closes before they reach the backend.
     */
    private boolean disconnectRequested;

    private boolean paused;
    private boolean flushScheduled;

    // Loop tracing.
    /** The connection's loop when it is an I/O-priority loop, else null. */
    private IoPriorityEventLoop priorityLoop;
    /** A request answered at once (no {@link Outstanding}) traces here; loop thread only, used within one call. */
    private final Trace immediate = new Trace();
    /**
     * Replies written and not flushed yet, {@link #UNFLUSHED_STRIDE} longs per reply: its unrelated wait so far minus
     * the loop's unrelated busy time when it was written (so that adding the busy time at the flush gives its wait until
     * then); the arrival part of that wait; its loop work; its wall wait for the loop so far minus the clock when it was
     * written (so that adding the flush's start gives its wait until then).
     */
    private long[] unflushedTraces = new long[16 * UNFLUSHED_STRIDE];

    private int unflushed;

    TransmissionHandler(ServerContext server, Negotiated negotiated) {
        this.server = server;
        this.export = negotiated.export();
        this.structuredReplies = negotiated.structuredReplies();
        this.baseAllocation = negotiated.baseAllocation();
        this.tls = negotiated.tls();
        this.framer = new RequestFramer(export.blockSizes().maximumBytes());
    }

    // ---------------------------------------------------------------- channel events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        priorityLoop = ctx.channel().eventLoop() instanceof IoPriorityEventLoop loop ? loop : null;
    }

    /** The loop's unrelated busy time now (0 on another loop). */
    private long unrelatedBusyNanos() {
        return priorityLoop == null ? 0 : priorityLoop.unrelatedBusyNanos();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (closed || draining) {
            in.release();
            return;
        }
        cumulation =
                cumulation == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
        process();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event == SHUTDOWN) {
            startDraining();
            return;
        }
        if (event instanceof SslHandshakeCompletionEvent completion) {
            HandshakeHandler.tlsHandshakeCompleted(ctx, server, completion);
            return;
        }
        if (event instanceof IdleStateEvent idle) {
            // Nothing received or sent for the idle timeout. A request still in flight (waiting for
            // admission, a slow backend) is not idleness: the next event comes one timeout later.
            if (idle.state() == IdleState.ALL_IDLE && !closed && inFlightRequests == 0 && !draining) {
                LOG.log(
                        System.Logger.Level.INFO,
                        () -> ctx.channel() + " (" + export.name() + "): closed after "
                                + Numbers.written(server.limits().idleTimeoutSeconds()) + " s without a request"
                                + " (limits.idleTimeoutSeconds, --idle-timeout)");
                server.admission().closedIdle(ctx.channel());
                closed = true;
                releaseInput();
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        export.io().disconnected();
        if (!disconnectRequested) {
            dropOutstanding();
        }
        releaseInput();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseInput();
    }

    /** Closes this connection and passes the failure on ({@link ConnectionErrors#exceptionCaught}). */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        closed = true;
        releaseInput();
        ConnectionErrors.closeAfter(ctx, cause, tls);
    }

    private void releaseInput() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        framer.release();
    }

    // ---------------------------------------------------------------- the input loop

    /** Decodes requests until the cumulation runs out or in-flight work is at its limit. */
    private void process() {
        try {
            while (cumulation != null
                    && cumulation.isReadable()
                    && !paused
                    && !draining
                    && !closed
                    && ctx.channel().isActive()) {
                if (!readRequest()) {
                    break;
                }
            }
        } catch (RequestFramer.ProtocolViolation e) {
            hardDisconnect(e.getMessage());
        }
        if (cumulation != null) {
            if (!cumulation.isReadable()) {
                cumulation.release();
                cumulation = null;
            } else if (cumulation.refCnt() == 1) {
                // Not while write payloads sliced from it are alive: moving the unread bytes would overwrite them.
                cumulation.discardSomeReadBytes();
            }
        }
    }

    private void hardDisconnect(String reason) {
        LOG.log(System.Logger.Level.DEBUG, () -> ctx.channel() + ": hard disconnect: " + reason);
        closed = true;
        releaseInput();
        ctx.close();
    }

    /** Stops or resumes reading from the socket according to the in-flight limits. */
    private void updateReading() {
        boolean over = inFlightRequests >= server.limits().maxInFlightRequestsPerConnection()
                || inFlightBytes >= server.limits().maxInFlightPerConnection().bytes();
        if (over && !paused) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        } else if (!over && paused) {
            paused = false;
            process();
            if (!paused && !draining && !closed) {
                ctx.channel().config().setAutoRead(true);
            }
        }
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(this::flushNow);
        }
    }

    /** The flush task: flushes, then records the loop trace of every reply it sent. */
    private void flushNow() {
        flushScheduled = false;
        if (unflushed == 0) {
            ctx.flush();
            return;
        }
        long busyNanos = unrelatedBusyNanos();
        long startNanos = server.io().nowNanos();
        ctx.flush();
        int n = unflushed;
        unflushed = 0;
        long shareNanos = (server.io().nowNanos() - startNanos) / n;
        long[] traces = unflushedTraces;
        for (int i = 0, at = 0; i < n; i++, at += UNFLUSHED_STRIDE) {
            export.io()
                    .traced(
                            traces[at] + busyNanos,
                            traces[at + 1],
                            traces[at + 2] + shareNanos,
                            traces[at + 3] + startNanos);
        }
    }

    /**
     * A reply of {@code trace}'s request was written: its loop trace is recorded at the flush.
     *
     * @param writtenNanos the request-timing clock when the reply was written
     */
    private void awaitFlush(Trace trace, long writtenNanos) {
        int at = unflushed * UNFLUSHED_STRIDE;
        if (at == unflushedTraces.length) {
            unflushedTraces = java.util.Arrays.copyOf(unflushedTraces, at * 2);
        }
        long[] traces = unflushedTraces;
        traces[at] = trace.unrelatedWaitNanos - unrelatedBusyNanos();
        traces[at + 1] = trace.arrivalUnrelatedNanos;
        traces[at + 2] = trace.loopWorkNanos;
        traces[at + 3] = trace.loopWaitNanos - writtenNanos;
        unflushed++;
    }

    // ---------------------------------------------------------------- transmission

    private boolean readRequest() throws RequestFramer.ProtocolViolation {
        BlockRequest request = framer.next(cumulation, ctx.alloc());
        if (request == null) {
            return false;
        }
        handleRequest(request);
        return true;
    }

    /**
     * Where one request's time went, for the slow-request attribution and loop tracing, in ns of the request-timing
     * clock ({@link IoMetrics#nowNanos()}). Loop thread only.
     */
    private static class Trace {
        /** When its header was decoded. */
        long startNanos;
        /** Unrelated work its loop ran while it waited for the loop, so far (arrival included). */
        long unrelatedWaitNanos;
        /** The arrival part of {@link #unrelatedWaitNanos} (an upper bound). */
        long arrivalUnrelatedNanos;
        /**
         * Wall time it waited for its loop, so far, where both ends are known: completion to taken, then reply to
         * flush. Arrival is not in it (when its bytes arrived is not known).
         */
        long loopWaitNanos;
        /** Loop time spent on its own work, so far. */
        long loopWorkNanos;
        /** Its time on the backend, once completed. */
        long backendNanos;

        void start(long startNanos, long arrivalUnrelatedNanos) {
            this.startNanos = startNanos;
            this.unrelatedWaitNanos = arrivalUnrelatedNanos;
            this.arrivalUnrelatedNanos = arrivalUnrelatedNanos;
            this.loopWaitNanos = 0;
            this.loopWorkNanos = 0;
            this.backendNanos = 0;
        }
    }

    /**
     * A request handed on towards the backend and not completed yet: a node of the connection's list of
     * them (so that a closing connection finds the ones to drop in O(1) each), and the listener of its
     * completion. Touched on the connection's event loop only.
     */
    private final class Outstanding extends Trace implements GenericFutureListener<Future<ByteBuf>> {
        final BlockRequest request;
        final TracedPromise completion;
        final long costBytes;
        /** When it was handed to the dispatcher (a held write: when it was released). */
        long dispatchNanos;
        /** Its completion's listener has run (possibly within the dispatch, when a backend completes at once). */
        boolean taken;
        /** Its place in the export's write ordering, for writes; null for reads and flushes. */
        WriteOrdering.Entry ordering;

        Outstanding previous;
        Outstanding next;

        Outstanding(
                BlockRequest request,
                TracedPromise completion,
                long costBytes,
                long startNanos,
                long arrivalUnrelatedNanos) {
            start(startNanos, arrivalUnrelatedNanos);
            this.dispatchNanos = startNanos;
            this.request = request;
            this.completion = completion;
            this.costBytes = costBytes;
        }

        @Override
        public void operationComplete(Future<ByteBuf> done) {
            taken = true;
            long takenNanos = server.io().nowNanos();
            long completedNanos = completion.completedNanos() != 0 ? completion.completedNanos() : takenNanos;
            unrelatedWaitNanos += Math.max(0, unrelatedBusyNanos() - completion.completedUnrelatedNanos());
            loopWaitNanos += takenNanos - completedNanos;
            backendNanos = Math.max(
                    0, completedNanos - dispatchNanos - request.admissionWaitNanos() - request.doorWaitNanos());
            unlink(this);
            if (ordering != null) {
                export.writeOrdering().finish(ordering);
            }
            completed(
                    request.command(),
                    request.cookie(),
                    request.offsetBytes(),
                    costBytes,
                    done,
                    this,
                    takenNanos,
                    request.lengthBytes());
        }
    }

    private void link(Outstanding node) {
        node.next = outstanding;
        if (outstanding != null) {
            outstanding.previous = node;
        }
        outstanding = node;
    }

    private void unlink(Outstanding node) {
        if (node.previous != null) {
            node.previous.next = node.next;
        } else if (outstanding == node) {
            outstanding = node.next;
        }
        if (node.next != null) {
            node.next.previous = node.previous;
        }
        node.previous = null;
        node.next = null;
    }

    /**
     * The connection closed without {@code NBD_CMD_DISC}: every request it handed on that nothing has
     * claimed yet (waiting for an older overlapping write, in admission's queue, in a backend's queue)
     * is dropped: failed, its payload released, counted. It never reaches the backend (docs/nbd.md,
     * "Guarantees").
     */
    private void dropOutstanding() {
        int dropped = 0;
        for (Outstanding node = outstanding; node != null; ) {
            Outstanding next = node.next;
            if (node.request.drop()) {
                node.request.release();
                node.completion.tryFailure(new NbdException(
                        NbdProtocol.EIO, "the connection closed before the" + " request reached the backend"));
                dropped++;
            }
            node = next;
        }
        if (dropped > 0) {
            export.countDropped(dropped);
            int count = dropped;
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> ctx.channel() + ": closed; " + count + " of its requests"
                            + " had not reached the backend and were dropped");
        }
    }

    private static boolean isWrite(int command) {
        return command == NbdProtocol.CMD_WRITE
                || command == NbdProtocol.CMD_WRITE_ZEROES
                || command == NbdProtocol.CMD_TRIM;
    }

    private void dispatch(Outstanding node) {
        try {
            server.dispatcher().dispatch(export, node.request, node.completion);
        } catch (RuntimeException e) {
            node.completion.tryFailure(e);
        }
    }

    /** A held write may go now; called on whichever thread finished the write it waited for. */
    private void releaseHeld(Outstanding node) {
        try {
            ctx.executor().execute(() -> {
                if (!node.request.dropped()) {
                    node.dispatchNanos = server.io().nowNanos();
                    dispatch(node);
                }
            });
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down, and so is the server.
            if (node.request.claim()) {
                node.request.release();
                node.completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
            }
        }
    }

    private void handleRequest(BlockRequest request) {
        if (request.command() == NbdProtocol.CMD_DISC) {
            // proto.md: handle all outstanding requests, then close; no reply. They are handled even if
            // the client closes its socket first: it asked for them, and their replies are then dropped.
            request.release();
            disconnectRequested = true;
            startDraining();
            return;
        }
        long startNanos = server.io().nowNanos();
        // The unrelated work the loop ran since it last looked at the socket: what these bytes may have waited behind.
        long arrivalWaitNanos = priorityLoop == null
                ? 0
                : priorityLoop.unrelatedBusyNanos() - priorityLoop.receiveWindowUnrelatedNanos();
        NbdException invalid = check(request, export, structuredReplies, baseAllocation);
        int command = request.command();
        long cookie = request.cookie();
        long offsetBytes = request.offsetBytes();
        long lengthBytes = request.lengthBytes();
        long costBytes = invalid == null && (command == NbdProtocol.CMD_READ || command == NbdProtocol.CMD_WRITE)
                ? request.lengthBytes()
                : 0;
        inFlightRequests++;
        inFlightBytes += costBytes;
        if (invalid != null) {
            request.release();
            immediate.start(startNanos, arrivalWaitNanos);
            reply(command, cookie, offsetBytes, null, invalid, costBytes, immediate, startNanos, lengthBytes);
        } else if (request.lengthBytes() == 0 && command != NbdProtocol.CMD_FLUSH) {
            // Zero-length reads, writes, trims: proto.md leaves them unspecified; they succeed, touching nothing.
            request.release();
            immediate.start(startNanos, arrivalWaitNanos);
            reply(command, cookie, offsetBytes, null, null, costBytes, immediate, startNanos, lengthBytes);
        } else if (command == NbdProtocol.CMD_BLOCK_STATUS && !export.backend().answersBlockStatus()) {
            // proto.md: status 0 (data) is always a safe answer; one descriptor over the whole range.
            ByteBuf allData = ctx.alloc().buffer(8);
            allData.writeInt((int) request.lengthBytes());
            allData.writeInt(0);
            request.release();
            immediate.start(startNanos, arrivalWaitNanos);
            reply(command, cookie, offsetBytes, allData, null, costBytes, immediate, startNanos, lengthBytes);
        } else {
            TracedPromise completion =
                    new TracedPromise(ctx.executor(), server.io()::nowNanos, this::unrelatedBusyNanos);
            Outstanding node = new Outstanding(request, completion, costBytes, startNanos, arrivalWaitNanos);
            link(node);
            completion.addListener(node);
            if (isWrite(command)) {
                node.ordering =
                        export.writeOrdering().register(offsetBytes, request.lengthBytes(), () -> releaseHeld(node));
            }
            if (node.ordering == null || node.ordering.immediate) {
                dispatch(node);
            }
            if (!node.taken) {
                node.loopWorkNanos += server.io().nowNanos() - startNanos;
            }
        }
        updateReading();
    }

    private void completed(
            int command,
            long cookie,
            long offsetBytes,
            long costBytes,
            Future<ByteBuf> done,
            Trace trace,
            long workStartNanos,
            long lengthBytes) {
        assert ctx.executor().inEventLoop() : "completions run on the connection's event loop";
        if (done.isSuccess()) {
            reply(command, cookie, offsetBytes, done.getNow(), null, costBytes, trace, workStartNanos, lengthBytes);
        } else {
            Throwable cause = done.cause();
            NbdException failure = cause instanceof NbdException nbd
                    ? nbd
                    : new NbdException(NbdException.errorOf(cause), String.valueOf(cause.getMessage()));
            if (!(cause instanceof NbdException)) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        () -> export + ": " + NbdProtocol.commandName(command) + " at offset "
                                + Long.toUnsignedString(offsetBytes) + " failed: " + cause);
            }
            reply(command, cookie, offsetBytes, null, failure, costBytes, trace, workStartNanos, lengthBytes);
        }
    }

    /**
     * Sends the reply to one request: an error, a read's data, or a bare success. Structured replies
     * (when negotiated) carry reads and errors; other successes use a simple reply, which proto.md
     * allows for requests without payload.
     *
     * @param trace          where the request's time went so far; its loop work is counted from
     *                       {@code workStartNanos} to the end of this call
     * @param workStartNanos when the loop began the work that ends with this reply
     */
    private void reply(
            int command,
            long cookie,
            long offsetBytes,
            ByteBuf data,
            NbdException error,
            long costBytes,
            Trace trace,
            long workStartNanos,
            long lengthBytes) {
        if (error == null && command == NbdProtocol.CMD_READ && data == null && costBytes > 0) {
            error = new NbdException(NbdProtocol.EIO, "the backend returned no data");
        }
        long doneBytes = error != null
                ? 0
                : switch (command) {
                    case NbdProtocol.CMD_READ -> data == null ? 0 : data.readableBytes();
                    case NbdProtocol.CMD_WRITE, NbdProtocol.CMD_TRIM, NbdProtocol.CMD_WRITE_ZEROES -> lengthBytes;
                    default -> 0;
                };
        BlockRequest traced = trace instanceof Outstanding node ? node.request : null;
        // The connection closed (the client reset or was killed, or broke the protocol): no reply can be sent, so the
        // request counts as dropped, not as an error reply, though one dropped before the backend fails with EIO.
        boolean sendable = !closed && ctx.channel().isActive();
        export.io()
                .answered(
                        command,
                        trace.startNanos,
                        offsetBytes,
                        doneBytes,
                        error == null ? 0 : error.error(),
                        traced == null ? 0 : traced.admissionWaitNanos() + traced.doorWaitNanos(),
                        trace.backendNanos,
                        traced == null ? SlowSegments.NOT_ADMITTED : traced.admittedClass(),
                        sendable);
        if (!sendable) {
            if (data != null) {
                data.release();
            }
            finished(costBytes);
            export.io()
                    .traced(
                            trace.unrelatedWaitNanos,
                            trace.arrivalUnrelatedNanos,
                            trace.loopWorkNanos + server.io().nowNanos() - workStartNanos,
                            trace.loopWaitNanos);
            return;
        }
        ByteBufAllocator alloc = ctx.alloc();
        ChannelFuture last;
        if (error != null) {
            if (data != null) {
                data.release();
            }
            last = ctx.write(
                    structuredReplies
                            ? Replies.error(alloc, cookie, error.error(), error.getMessage())
                            : Replies.simple(alloc, cookie, error.error()));
        } else if (command == NbdProtocol.CMD_BLOCK_STATUS && data != null && data.readableBytes() >= 8) {
            ctx.write(Replies.blockStatus(alloc, cookie, NbdProtocol.BASE_ALLOCATION_ID, data.readableBytes()));
            last = ctx.write(data);
        } else if (command == NbdProtocol.CMD_BLOCK_STATUS) {
            if (data != null) {
                data.release();
            }
            last = ctx.write(Replies.error(alloc, cookie, NbdProtocol.EIO, "the backend returned no block status"));
        } else if (command == NbdProtocol.CMD_READ) {
            int dataBytes = data == null ? 0 : data.readableBytes();
            if (structuredReplies) {
                if (dataBytes == 0) {
                    last = ctx.write(Replies.none(alloc, cookie));
                } else {
                    ctx.write(Replies.offsetData(alloc, cookie, offsetBytes, dataBytes));
                    last = ctx.write(data);
                    data = null;
                }
            } else {
                last = ctx.write(Replies.simple(alloc, cookie, 0));
                if (dataBytes > 0) {
                    last = ctx.write(data);
                    data = null;
                }
            }
            if (data != null) {
                data.release();
            }
        } else {
            if (data != null) {
                data.release();
            }
            last = ctx.write(Replies.simple(alloc, cookie, 0));
        }
        last.addListener(f -> finished(costBytes));
        long writtenNanos = server.io().nowNanos();
        trace.loopWorkNanos += writtenNanos - workStartNanos;
        awaitFlush(trace, writtenNanos);
        scheduleFlush();
    }

    private void finished(long costBytes) {
        assert ctx.executor().inEventLoop() : "write completions run on the connection's event loop";
        inFlightRequests--;
        inFlightBytes -= costBytes;
        if (draining) {
            if (inFlightRequests == 0 && ctx.channel().isActive()) {
                ctx.close();
            }
        } else if (!closed) {
            updateReading();
        }
    }

    /** The requests received and not yet answered, as last seen from any thread. */
    int requestsInFlight() {
        return inFlightRequests;
    }

    private void startDraining() {
        draining = true;
        ctx.channel().config().setAutoRead(false);
        releaseInput();
        if (inFlightRequests == 0) {
            ctx.close();
        }
    }

    /**
     * Why {@code request} cannot run on {@code export}, or null if it can (proto.md, "Request types" and
     * "Error values"; the order of the checks is our reading):
     * <ol>
     *   <li>an unknown command (CACHE included: not offered) → {@code EINVAL};</li>
     *   <li>BLOCK_STATUS without a metadata context selected for the export → {@code EINVAL} (proto.md: the
     *       client MUST NOT send it then; structured replies are a prerequisite of the selection);</li>
     *   <li>a flag not documented for the command or not offered ({@code FUA} without
     *       {@code NBD_FLAG_SEND_FUA}, {@code DF} without structured replies, {@code FAST_ZERO}) →
     *       {@code EINVAL};</li>
     *   <li>WRITE, TRIM, WRITE_ZEROES on a read-only export → {@code EPERM};</li>
     *   <li>a command the export does not offer (FLUSH, TRIM, WRITE_ZEROES) → {@code EINVAL};</li>
     *   <li>FLUSH with a nonzero offset or length (reserved, MUST be zero) → {@code EINVAL};</li>
     *   <li>an offset or length not a multiple of the minimum block size → {@code EINVAL};</li>
     *   <li>READ and WRITE longer than the maximum block size → {@code EINVAL};</li>
     *   <li>BLOCK_STATUS of length 0 → {@code EINVAL}: its reply needs at least one descriptor, and a
     *       descriptor at least one byte;</li>
     *   <li>a range ending past the end: WRITE, WRITE_ZEROES → {@code ENOSPC}; READ, TRIM, BLOCK_STATUS →
     *       {@code EINVAL}.</li>
     * </ol>
     * TRIM and WRITE_ZEROES carry no payload and are not bound by the maximum block size. For TRIM
     * proto.md agrees (its list of bounded commands is READ, WRITE, CACHE and WRITE_ZEROES; qemu sends
     * trims of up to 2 GiB). For WRITE_ZEROES it says the server SHOULD answer {@code EINVAL}; we
     * serve them instead, because nbdcopy (libnbd 1.14) zeroes a whole hole in one request whatever
     * the advertised maximum, and a zero request costs no memory here.
     */
    static NbdException check(BlockRequest request, Export export, boolean structuredReplies) {
        return check(request, export, structuredReplies, false);
    }

    /** As above, with {@code baseAllocation}: whether the connection selected base:allocation for the export. */
    static NbdException check(BlockRequest request, Export export, boolean structuredReplies, boolean baseAllocation) {
        int command = request.command();
        String name = NbdProtocol.commandName(command);
        BackendFeatures features = export.features();
        int allowedFlags = switch (command) {
            case NbdProtocol.CMD_READ -> structuredReplies ? NbdProtocol.CMD_FLAG_DF : 0;
            case NbdProtocol.CMD_WRITE, NbdProtocol.CMD_FLUSH, NbdProtocol.CMD_TRIM -> 0;
            case NbdProtocol.CMD_WRITE_ZEROES -> NbdProtocol.CMD_FLAG_NO_HOLE;
            case NbdProtocol.CMD_BLOCK_STATUS -> NbdProtocol.CMD_FLAG_REQ_ONE;
            default -> -1;
        };
        if (allowedFlags < 0) {
            return new NbdException(NbdProtocol.EINVAL, "unknown command " + name);
        }
        if (command == NbdProtocol.CMD_BLOCK_STATUS && !baseAllocation) {
            return new NbdException(
                    NbdProtocol.EINVAL,
                    "BLOCK_STATUS without a metadata context (expected:"
                            + " STRUCTURED_REPLY, then SET_META_CONTEXT with " + NbdProtocol.BASE_ALLOCATION + ")");
        }
        if (features.fua() && command != NbdProtocol.CMD_BLOCK_STATUS) {
            allowedFlags |= NbdProtocol.CMD_FLAG_FUA;
        }
        if ((request.flags() & ~allowedFlags) != 0) {
            return new NbdException(
                    NbdProtocol.EINVAL,
                    String.format("%s with flags 0x%04x (allowed: 0x%04x)", name, request.flags(), allowedFlags));
        }
        boolean writes = command == NbdProtocol.CMD_WRITE
                || command == NbdProtocol.CMD_TRIM
                || command == NbdProtocol.CMD_WRITE_ZEROES;
        if (writes && export.readOnly()) {
            return new NbdException(NbdProtocol.EPERM, name + " on the read-only export " + export.name());
        }
        boolean offered = switch (command) {
            case NbdProtocol.CMD_FLUSH -> features.flush();
            case NbdProtocol.CMD_TRIM -> features.trim();
            case NbdProtocol.CMD_WRITE_ZEROES -> features.writeZeroes();
            default -> true;
        };
        if (!offered) {
            return new NbdException(NbdProtocol.EINVAL, name + " is not offered by the export " + export.name());
        }
        long offset = request.offsetBytes();
        long length = request.lengthBytes();
        if (command == NbdProtocol.CMD_FLUSH) {
            return offset == 0 && length == 0
                    ? null
                    : new NbdException(NbdProtocol.EINVAL, "FLUSH with a nonzero offset or length");
        }
        int minimum = export.blockSizes().minimumBytes();
        if (minimum > 1 && (Long.remainderUnsigned(offset, minimum) != 0 || length % minimum != 0)) {
            return new NbdException(
                    NbdProtocol.EINVAL,
                    name + " at offset " + Long.toUnsignedString(offset) + " length " + length
                            + " is not aligned to the minimum block size " + minimum);
        }
        if (command == NbdProtocol.CMD_BLOCK_STATUS && length == 0) {
            return new NbdException(NbdProtocol.EINVAL, "BLOCK_STATUS of length 0 (expected: at least 1 byte)");
        }
        int maximum = export.blockSizes().maximumBytes();
        if (length > maximum && (command == NbdProtocol.CMD_READ || command == NbdProtocol.CMD_WRITE)) {
            return new NbdException(
                    NbdProtocol.EINVAL,
                    name + " of " + length + " bytes exceeds the maximum block" + " size " + maximum);
        }
        long size = export.sizeBytes();
        if (Long.compareUnsigned(offset, size) > 0 || length > size - offset) {
            int error = command == NbdProtocol.CMD_WRITE || command == NbdProtocol.CMD_WRITE_ZEROES
                    ? NbdProtocol.ENOSPC
                    : NbdProtocol.EINVAL;
            return new NbdException(
                    error,
                    name + " at offset " + Long.toUnsignedString(offset) + " length " + length
                            + " ends past the end of the export (" + size + " bytes)");
        }
        return null;
    }
}
