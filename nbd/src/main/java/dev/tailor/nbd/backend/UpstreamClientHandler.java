package dev.tailor.nbd.backend;

import dev.tailor.common.Numbers;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.collection.LongObjectMap;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client side of one upstream connection of {@link UpstreamBackend}: the fixed newstyle handshake,
 * then requests out and replies in (proto.md, "Request message", "Simple reply message", "Structured
 * reply chunk message").
 *
 * <p>The handshake asks for structured replies ({@code NBD_OPT_STRUCTURED_REPLY}) and, if the upstream
 * takes them, for the {@code base:allocation} metadata context of the export
 * ({@code NBD_OPT_SET_META_CONTEXT}), then {@code NBD_OPT_GO} (asking for {@code NBD_INFO_BLOCK_SIZE}).
 * An upstream that refuses either option is used without it: simple replies only, and
 * {@code NBD_CMD_BLOCK_STATUS} answered here with one data descriptor over the range (status 0, which
 * proto.md allows for any block), as before. With the context selected, a {@code BLOCK_STATUS} request
 * is forwarded and the upstream's descriptors are passed on, cut to the request's range and to
 * {@link #MAX_DESCRIPTORS} (the client asks again from where they end).
 *
 * <p>Replies: a simple reply to a read carries data only when its error is zero, and its length is the
 * request's, which the handler remembers per cookie. Structured replies may come as several chunks,
 * interleaved with other cookies' chunks; a read's {@code OFFSET_DATA} and {@code OFFSET_HOLE} chunks are
 * put together into one buffer of the request's length, which the chunks must cover exactly once the
 * {@code DONE} flag arrives; an error chunk fails the request with its error (the first one counts).
 *
 * <p>How a connection ends (proto.md, "Terminating the transmission phase"):
 * <ul>
 *   <li>The upstream closes it (stopped, restarted, crashed): the requests in flight fail at once with
 *       {@code NBD_EIO}, since they may or may not have been done, the pool forgets the connection and
 *       retires the others (an upstream that closes one connection is usually going away; nbdkit, stopped,
 *       resets a connection whose request arrives as it handles the signal, and keeps the idle ones).</li>
 *   <li>The upstream answers {@code NBD_ESHUTDOWN}: it is shutting down and did not serve that request,
 *       which fails with {@link Unserved} (the backend sends it again once, on a new connection). The
 *       connection is <em>retired</em>, and the backend retires every other pool connection too: the
 *       upstream waits for its clients to leave (nbdkit answers every request {@code ESHUTDOWN} and
 *       exits only when the last client has gone).</li>
 *   <li>Retired ({@link #RETIRE}, or idle for the pool's idle timeout): it takes no new request
 *       (those fail with {@link Unserved}), answers the ones in flight, then sends {@code NBD_CMD_DISC}
 *       (the soft disconnect proto.md asks of a client after {@code ESHUTDOWN}) and closes.</li>
 *   <li>A request waits longer than the reply timeout for its whole reply, counted from when the pool
 *       took it ({@link Forward#takenNanos}: waiting for this connection counts), and the pool's own
 *       {@code FLUSH} before an idle disconnect from when it is sent (an upstream that hangs without
 *       closing the connection: stopped with {@code SIGSTOP}, deadlocked, a network that drops
 *       everything): the connection is taken as lost, exactly as if the upstream had closed it. It
 *       closes, its requests in flight fail with {@code NBD_EIO}, and the pool retires the others. One
 *       check is scheduled on the connection's event loop at a time, for the earliest deadline.</li>
 * </ul>
 * A request that never reached the upstream whole (the write failed, or the connection was retiring)
 * fails with {@link Unserved} too. Connecting and the handshake together have one timeout, from the
 * handler's addition to the channel, before it connects.
 *
 * <p>Threads: runs on the upstream channel's event loop; {@link Forward}s are written to the channel
 * from any thread. Anything unexpected from the upstream closes the connection and fails its requests
 * with {@code NBD_EIO}.
 */
final class UpstreamClientHandler extends ChannelDuplexHandler {

    /** User event: take no new request, answer those in flight, then disconnect softly. */
    static final Object RETIRE = new Object() {
        @Override
        public String toString() {
            return "retire the upstream connection";
        }
    };

    /**
     * A request to forward, written to the channel. The handler sends a duplicate of the write's payload
     * and never releases the request: the backend keeps it until the reply, so that it can send it again.
     *
     * @param request    what to send
     * @param reply      completed with the upstream's answer: a read's data, null, an {@link NbdException},
     *                   or {@link Unserved}
     * @param takenNanos when the pool took the request ({@link #clockNanos}): its reply timeout counts
     *                   from then, so the time it waited for a connection (connecting, the handshake, an
     *                   earlier attempt) is part of it
     * @param idleFlush  whether it is the pool's own FLUSH before an idle connection disconnects, not a
     *                   client's request (the reply timeout's message says which)
     */
    record Forward(BlockRequest request, Promise<ByteBuf> reply, long takenNanos, boolean idleFlush) {

        /** A client's request. */
        Forward(BlockRequest request, Promise<ByteBuf> reply, long takenNanos) {
            this(request, reply, takenNanos, false);
        }
    }

    /** What the pool learns from a connection; called on the connection's event loop. */
    interface Events {
        /** {@code channel} takes no more requests: forget it, so that the next request opens another. */
        void retired(Channel channel);

        /**
         * The upstream answered {@code NBD_ESHUTDOWN}, or closed this connection: it is probably going away,
         * and every pool connection to it should go.
         *
         * @param cause what happened, in words, for the log
         */
        void upstreamLeaving(String cause);
    }

    /**
     * The upstream did not serve the request: it was refused with {@code NBD_ESHUTDOWN}, or never
     * written whole to the connection. Sending it again is safe for what it does itself; a FLUSH,
     * whose meaning is every write acknowledged before it, is not sent again to an upstream that is
     * shutting down (a new connection reaches another instance, which cannot vouch for those).
     */
    static final class Unserved extends Exception {
        private final boolean shuttingDown;

        /** @param shuttingDown whether the upstream said it is shutting down ({@code NBD_ESHUTDOWN}) */
        Unserved(String message, boolean shuttingDown) {
            super(message, null, false, false);
            this.shuttingDown = shuttingDown;
        }

        /** Whether the upstream said it is shutting down. */
        boolean shuttingDown() {
            return shuttingDown;
        }
    }

    /** Most descriptors passed on in one block status reply, as the file exports answer. */
    static final int MAX_DESCRIPTORS = 2_048;

    /** Largest structured chunk payload taken whole (block status, errors): 1 MiB, far above any real one. */
    private static final int MAX_WHOLE_CHUNK_BYTES = 1 << 20;

    /** A request sent and not answered yet, with what its structured reply chunks have brought so far. */
    private static final class Pending {
        final long cookie;
        final int command;
        final int flags;
        final long offsetBytes;
        final long lengthBytes;
        final Promise<ByteBuf> completion;
        /** For a FLUSH, the writes acknowledged when it was sent (those it covers). */
        final long writesBefore;
        /** When the pool took it ({@link Forward#takenNanos}): its reply timeout counts from then. */
        final long takenNanos;
        /** Whether it is the pool's own FLUSH before an idle disconnect. */
        final boolean idleFlush;
        /** A read's data or a block status's descriptors, assembled from chunks; null before the first. */
        ByteBuf data;
        /** Bytes of a read the chunks have covered. */
        long coveredBytes;
        /** The first error chunk's error, 0 for none; with its message. */
        int error;

        String errorMessage;

        Pending(
                long cookie,
                int command,
                int flags,
                long offsetBytes,
                long lengthBytes,
                Promise<ByteBuf> completion,
                long writesBefore,
                long takenNanos,
                boolean idleFlush) {
            this.cookie = cookie;
            this.command = command;
            this.flags = flags;
            this.offsetBytes = offsetBytes;
            this.lengthBytes = lengthBytes;
            this.completion = completion;
            this.writesBefore = writesBefore;
            this.takenNanos = takenNanos;
            this.idleFlush = idleFlush;
        }

        void releaseData() {
            if (data != null) {
                data.release();
                data = null;
            }
        }
    }

    private enum Phase {
        GREETING,
        OPTION_REPLIES,
        TRANSMISSION,
        CLOSED
    }

    /** Where the payload of a data chunk or a simple read reply being received goes. */
    private enum Payload {
        NONE,
        SIMPLE_READ,
        OFFSET_DATA
    }

    private final String upstream;
    private final String exportName;
    private final Promise<Channel> ready;
    private final long handshakeTimeoutNanos;
    private final long idleTimeoutNanos;
    private final long requestTimeoutNanos;
    private final Events events;
    private final LongObjectMap<Pending> pending = new LongObjectHashMap<>();
    private ByteBuf cumulation;
    private Phase phase = Phase.GREETING;
    private ScheduledFuture<?> timeout;
    private ScheduledFuture<?> idleCheck;
    /** The reply timeout's check, scheduled for the oldest request in flight's deadline; null when none. */
    private ScheduledFuture<?> replyCheck;
    /** When {@link #replyCheck} runs ({@link #clockNanos}). */
    private long replyCheckNanos;

    private long lastActiveNanos;
    private long nextCookie;
    private boolean retiring;
    /** Writes (WRITE, TRIM, WRITE_ZEROES) the upstream acknowledged on this connection. */
    private long writesAcknowledged;
    /** Of those, how many a successful FLUSH on this connection covers. */
    private long writesFlushed;

    // Handshake state and results.
    /** The option whose replies are awaited. */
    private int optionSent;

    private boolean structuredReplies;
    /** The upstream's ID of {@code base:allocation}, or -1 when it is not selected. */
    private long baseAllocationId = -1;

    private long sizeBytes = -1;
    private int transmissionFlags;
    private BlockSizes blockSizes;

    // A reply whose payload is arriving: a simple read reply's data, or an OFFSET_DATA chunk's.
    private Payload payload = Payload.NONE;
    private Pending reading;
    /** Bytes of the payload still to come, and where the next goes in {@code reading.data}. */
    private int payloadRemaining;

    private int payloadWriteIndex;
    /** For an OFFSET_DATA chunk: whether it ends its reply. */
    private boolean payloadDone;

    /**
     * @param upstream               the upstream as {@code nbd://host:port/export}, for messages
     * @param exportName             the upstream's export to ask for
     * @param ready                  succeeds with the channel once it is in transmission; fails with the reason
     * @param handshakeTimeoutNanos  time for connecting and the handshake together, counted from the
     *                               handler's addition to the new channel (before it connects)
     * @param idleTimeoutNanos       time without a request in flight after which the connection retires
     * @param requestTimeoutNanos    time a request may wait for its whole reply, from when the pool took it
     *                               ({@link Forward#takenNanos}), before the connection is taken as lost; 0
     *                               for no limit
     * @param events                 what the pool learns from this connection
     */
    UpstreamClientHandler(
            String upstream,
            String exportName,
            Promise<Channel> ready,
            long handshakeTimeoutNanos,
            long idleTimeoutNanos,
            long requestTimeoutNanos,
            Events events) {
        this.upstream = upstream;
        this.exportName = exportName;
        this.ready = ready;
        this.handshakeTimeoutNanos = handshakeTimeoutNanos;
        this.idleTimeoutNanos = idleTimeoutNanos;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.events = events;
    }

    /** The export as the upstream described it; valid once {@code ready} succeeded. */
    UpstreamBackend.Description description() {
        return new UpstreamBackend.Description(sizeBytes, transmissionFlags, blockSizes, baseAllocationId >= 0);
    }

    /**
     * Starts the one timer for connecting and the handshake together: the handler is added when the channel
     * is registered, before it connects, so a connect that takes most of the time leaves the handshake only
     * the rest, and a connection attempt never takes longer than the timeout.
     */
    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timeout = ctx.executor()
                .schedule(
                        () -> fail(
                                ctx,
                                (ctx.channel().isActive() ? "no handshake within " : "no connection within ")
                                        + Numbers.written(handshakeTimeoutNanos / 1e9) + " s"),
                        handshakeTimeoutNanos,
                        TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (phase == Phase.CLOSED) {
            in.release();
            return;
        }
        cumulation =
                cumulation == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
        try {
            boolean progressed = true;
            while (progressed && cumulation != null && cumulation.isReadable() && phase != Phase.CLOSED) {
                progressed = switch (phase) {
                    case GREETING -> greeting(ctx);
                    case OPTION_REPLIES -> optionReply(ctx);
                    case TRANSMISSION -> reply(ctx);
                    case CLOSED -> false;
                };
            }
        } catch (UpstreamException e) {
            fail(ctx, e.getMessage());
        }
        if (cumulation != null) {
            if (!cumulation.isReadable()) {
                cumulation.release();
                cumulation = null;
            } else {
                cumulation.discardSomeReadBytes();
            }
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof Forward forward)) {
            ctx.write(msg, promise);
            return;
        }
        BlockRequest request = forward.request();
        if (!request.claim()) {
            // Its connection closed while it waited for this one: it is not sent.
            NbdException dropped = new NbdException(
                    NbdProtocol.EIO, "the client's connection closed before the" + " request was sent upstream");
            forward.reply().tryFailure(dropped);
            promise.setFailure(dropped);
            return;
        }
        if (phase != Phase.TRANSMISSION || retiring) {
            Unserved unserved = new Unserved(
                    "upstream " + upstream + ": the connection was " + (retiring ? "closing" : "closed")
                            + " before the request was sent",
                    false);
            forward.reply().tryFailure(unserved);
            promise.setFailure(unserved);
            return;
        }
        if (request.command() == NbdProtocol.CMD_BLOCK_STATUS && baseAllocationId < 0) {
            // This connection has no metadata context (an upstream restarted without one): status 0, data,
            // is always a safe answer.
            ByteBuf allData = ctx.alloc().buffer(8);
            allData.writeInt((int) request.lengthBytes());
            allData.writeInt(0);
            if (!forward.reply().trySuccess(allData)) {
                allData.release();
            }
            promise.setSuccess();
            return;
        }
        long cookie = nextCookie++;
        long now = ctx.executor().ticker().nanoTime();
        pending.put(
                cookie,
                new Pending(
                        cookie,
                        request.command(),
                        request.flags(),
                        request.offsetBytes(),
                        request.lengthBytes(),
                        forward.reply(),
                        writesAcknowledged,
                        forward.takenNanos(),
                        forward.idleFlush()));
        lastActiveNanos = now;
        long deadline = forward.takenNanos() + requestTimeoutNanos;
        // A request that waited for this connection may be due before the check scheduled for an older one.
        if (requestTimeoutNanos > 0 && (replyCheck == null || deadline - replyCheckNanos < 0)) {
            if (replyCheck != null) {
                replyCheck.cancel(false);
            }
            scheduleReplyCheck(ctx, deadline, clockNanos(ctx.executor()));
        }
        ByteBuf header = ctx.alloc().buffer(NbdProtocol.REQUEST_HEADER_BYTES);
        header.writeInt(NbdProtocol.REQUEST_MAGIC);
        header.writeShort(request.flags() & ~NbdProtocol.CMD_FLAG_DF);
        header.writeShort(request.command());
        header.writeLong(cookie);
        header.writeLong(request.offsetBytes());
        header.writeInt((int) request.lengthBytes());
        if (request.command() == NbdProtocol.CMD_WRITE) {
            ctx.write(header);
            ctx.write(request.payload().retainedDuplicate(), promise);
        } else {
            ctx.write(header, promise);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event == RETIRE) {
            retire(ctx);
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    /** Takes no new request; once those in flight are answered, sends {@code NBD_CMD_DISC} and closes. */
    private void retire(ChannelHandlerContext ctx) {
        if (!retiring) {
            retiring = true;
            events.retired(ctx.channel());
        }
        if (phase != Phase.TRANSMISSION) {
            fail(ctx, "retired before the transmission phase");
        } else if (pending.isEmpty() && reading == null) {
            phase = Phase.CLOSED;
            cancelTimers();
            ByteBuf disc = ctx.alloc().buffer(NbdProtocol.REQUEST_HEADER_BYTES);
            disc.writeInt(NbdProtocol.REQUEST_MAGIC);
            disc.writeShort(0);
            disc.writeShort(NbdProtocol.CMD_DISC);
            disc.writeLong(nextCookie++);
            disc.writeLong(0);
            disc.writeInt(0);
            ctx.writeAndFlush(disc).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /**
     * Retires the connection once it has had no request in flight for the idle timeout. If writes it
     * acknowledged are not covered by a FLUSH on it yet, it sends one first: without
     * {@code NBD_FLAG_CAN_MULTI_CONN}, a flush on the connection that replaces it need not cover them.
     */
    private void checkIdle(ChannelHandlerContext ctx) {
        if (phase != Phase.TRANSMISSION || retiring) {
            return;
        }
        long idleNanos = ctx.executor().ticker().nanoTime() - lastActiveNanos;
        if (pending.isEmpty() && reading == null && idleNanos >= idleTimeoutNanos) {
            if (writesAcknowledged > writesFlushed && (transmissionFlags & NbdProtocol.FLAG_SEND_FLUSH) != 0) {
                Promise<ByteBuf> flushed = ctx.executor().newPromise();
                flushed.addListener(f -> retire(ctx));
                write(
                        ctx,
                        new Forward(
                                new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 0, 0, 0, Unpooled.EMPTY_BUFFER),
                                flushed,
                                clockNanos(ctx.executor()),
                                true),
                        ctx.newPromise());
                ctx.flush();
            } else {
                retire(ctx);
            }
        } else {
            idleCheck = ctx.executor()
                    .schedule(
                            () -> checkIdle(ctx),
                            Math.max(idleTimeoutNanos - idleNanos, idleTimeoutNanos / 8),
                            TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The time of {@code executor}'s clock, in ns, comparable across event loops: each loop's ticker counts
     * from its own start ({@code initialNanoTime}), so a time taken on one loop is only comparable on another
     * with that start added back. {@link Forward#takenNanos} is such a time.
     */
    static long clockNanos(EventExecutor executor) {
        Ticker ticker = executor.ticker();
        return ticker.initialNanoTime() + ticker.nanoTime();
    }

    /** @param atNanos when to check, on {@link #clockNanos} */
    private void scheduleReplyCheck(ChannelHandlerContext ctx, long atNanos, long nowNanos) {
        replyCheckNanos = atNanos;
        replyCheck =
                ctx.executor().schedule(() -> checkReplies(ctx), Math.max(0, atNanos - nowNanos), TimeUnit.NANOSECONDS);
    }

    /**
     * The reply timeout: when the oldest request in flight has waited {@code requestTimeoutNanos} for its whole
     * reply since the pool took it, the connection is lost; otherwise the check comes back at that request's
     * deadline. Requests are answered in any order, so the oldest is looked for among them all (at most the
     * connection's requests in flight, once per timeout).
     */
    private void checkReplies(ChannelHandlerContext ctx) {
        replyCheck = null;
        if (phase != Phase.TRANSMISSION) {
            return;
        }
        Pending oldest = reading;
        for (Pending p : pending.values()) {
            if (oldest == null || p.takenNanos - oldest.takenNanos < 0) {
                oldest = p;
            }
        }
        if (oldest == null) {
            return; // all answered: the next request schedules the check again
        }
        long now = clockNanos(ctx.executor());
        if (now - oldest.takenNanos < requestTimeoutNanos) {
            scheduleReplyCheck(ctx, oldest.takenNanos + requestTimeoutNanos, now);
            return;
        }
        String timeout = Numbers.written(requestTimeoutNanos / 1e9) + " s";
        String cause = oldest.idleFlush
                ? "no reply in " + timeout + " to the FLUSH the proxy sends before closing an idle connection"
                : "no reply to a " + NbdProtocol.commandName(oldest.command) + " in " + timeout;
        fail(ctx, cause + ": the connection was closed");
        events.upstreamLeaving(cause);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        boolean lost = phase == Phase.TRANSMISSION && !retiring;
        closeDown(
                phase == Phase.TRANSMISSION || phase == Phase.CLOSED
                        ? "the connection closed"
                        : "the connection closed during the handshake");
        if (lost) {
            events.upstreamLeaving("it closed the connection");
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        boolean lost = phase == Phase.TRANSMISSION && !retiring;
        String reason = UpstreamBackend.message(cause);
        fail(ctx, reason);
        if (lost) {
            events.upstreamLeaving(reason);
        }
    }

    private void fail(ChannelHandlerContext ctx, String reason) {
        closeDown(reason);
        ctx.close();
    }

    private void cancelTimers() {
        if (timeout != null) {
            timeout.cancel(false);
        }
        if (idleCheck != null) {
            idleCheck.cancel(false);
        }
        if (replyCheck != null) {
            replyCheck.cancel(false);
            replyCheck = null;
        }
    }

    private void closeDown(String reason) {
        phase = Phase.CLOSED;
        cancelTimers();
        ready.tryFailure(new UpstreamException(reason));
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        List<Pending> failed = new ArrayList<>(pending.values());
        pending.clear();
        if (reading != null && !failed.contains(reading)) {
            failed.add(reading);
        }
        reading = null;
        payload = Payload.NONE;
        for (Pending p : failed) {
            p.releaseData();
            p.completion.tryFailure(new NbdException(
                    NbdProtocol.EIO, "upstream " + upstream + ": " + reason + " with the request in flight"));
        }
    }

    // ---------------------------------------------------------------- handshake

    private boolean greeting(ChannelHandlerContext ctx) throws UpstreamException {
        if (cumulation.readableBytes() < 18) {
            return false;
        }
        long magic = cumulation.readLong();
        long haveOpt = cumulation.readLong();
        int flags = cumulation.readUnsignedShort();
        if (magic != NbdProtocol.NBDMAGIC || haveOpt != NbdProtocol.IHAVEOPT) {
            throw new UpstreamException("not a newstyle NBD server");
        }
        if ((flags & NbdProtocol.FLAG_FIXED_NEWSTYLE) == 0) {
            throw new UpstreamException("the upstream does not speak fixed newstyle (needed for NBD_OPT_GO)");
        }
        int clientFlags = NbdProtocol.FLAG_C_FIXED_NEWSTYLE
                | ((flags & NbdProtocol.FLAG_NO_ZEROES) != 0 ? NbdProtocol.FLAG_C_NO_ZEROES : 0);
        ByteBuf out = ctx.alloc().buffer(4);
        out.writeInt(clientFlags);
        ctx.write(out);
        sendOption(ctx, NbdProtocol.OPT_STRUCTURED_REPLY, Unpooled.EMPTY_BUFFER);
        phase = Phase.OPTION_REPLIES;
        return true;
    }

    /** Sends one option and awaits its replies; fixed newstyle options go one at a time here. */
    private void sendOption(ChannelHandlerContext ctx, int option, ByteBuf data) {
        ByteBuf out = ctx.alloc().buffer(NbdProtocol.OPTION_HEADER_BYTES + data.readableBytes());
        out.writeLong(NbdProtocol.IHAVEOPT);
        out.writeInt(option);
        out.writeInt(data.readableBytes());
        out.writeBytes(data);
        data.release();
        optionSent = option;
        ctx.writeAndFlush(out);
    }

    private void sendSetMetaContext(ChannelHandlerContext ctx) {
        byte[] name = exportName.getBytes(StandardCharsets.UTF_8);
        byte[] query = NbdProtocol.BASE_ALLOCATION.getBytes(StandardCharsets.UTF_8);
        ByteBuf data = ctx.alloc().buffer(4 + name.length + 4 + 4 + query.length);
        data.writeInt(name.length);
        data.writeBytes(name);
        data.writeInt(1);
        data.writeInt(query.length);
        data.writeBytes(query);
        sendOption(ctx, NbdProtocol.OPT_SET_META_CONTEXT, data);
    }

    private void sendGo(ChannelHandlerContext ctx) {
        byte[] name = exportName.getBytes(StandardCharsets.UTF_8);
        ByteBuf data = ctx.alloc().buffer(4 + name.length + 4);
        data.writeInt(name.length);
        data.writeBytes(name);
        data.writeShort(1);
        data.writeShort(NbdProtocol.INFO_BLOCK_SIZE);
        sendOption(ctx, NbdProtocol.OPT_GO, data);
    }

    private boolean optionReply(ChannelHandlerContext ctx) throws UpstreamException {
        if (cumulation.readableBytes() < NbdProtocol.OPTION_REPLY_HEADER_BYTES) {
            return false;
        }
        int start = cumulation.readerIndex();
        long length = cumulation.getUnsignedInt(start + 16);
        if (length > 65_536) {
            throw new UpstreamException("option reply of " + length + " bytes");
        }
        if (cumulation.readableBytes() < NbdProtocol.OPTION_REPLY_HEADER_BYTES + length) {
            return false;
        }
        long magic = cumulation.readLong();
        int option = cumulation.readInt();
        int type = cumulation.readInt();
        cumulation.skipBytes(4);
        ByteBuf data = cumulation.readSlice((int) length);
        if (magic != NbdProtocol.OPTION_REPLY_MAGIC || option != optionSent) {
            throw new UpstreamException("unexpected option reply");
        }
        if (type == NbdProtocol.REP_ERR_SHUTDOWN) {
            throw new UpstreamException("the upstream is shutting down");
        }
        switch (option) {
            case NbdProtocol.OPT_STRUCTURED_REPLY -> {
                if (type == NbdProtocol.REP_ACK) {
                    structuredReplies = true;
                    sendSetMetaContext(ctx);
                } else if ((type & NbdProtocol.REP_FLAG_ERROR) != 0) {
                    sendGo(ctx); // an upstream without structured replies: simple replies, no block status
                } else {
                    throw new UpstreamException(
                            String.format("unexpected reply type 0x%08x to STRUCTURED_REPLY", type));
                }
            }
            case NbdProtocol.OPT_SET_META_CONTEXT -> {
                if (type == NbdProtocol.REP_META_CONTEXT) {
                    if (data.readableBytes() < 4) {
                        throw new UpstreamException("NBD_REP_META_CONTEXT of length " + data.readableBytes());
                    }
                    long id = data.readUnsignedInt();
                    if (data.toString(StandardCharsets.UTF_8).equals(NbdProtocol.BASE_ALLOCATION)) {
                        baseAllocationId = id;
                    }
                } else if (type == NbdProtocol.REP_ACK || (type & NbdProtocol.REP_FLAG_ERROR) != 0) {
                    if (type != NbdProtocol.REP_ACK) {
                        baseAllocationId = -1; // refused: block status is answered here
                    }
                    sendGo(ctx);
                } else {
                    throw new UpstreamException(
                            String.format("unexpected reply type 0x%08x to SET_META_CONTEXT", type));
                }
            }
            default -> goReply(ctx, type, data);
        }
        return true;
    }

    private void goReply(ChannelHandlerContext ctx, int type, ByteBuf data) throws UpstreamException {
        if (type == NbdProtocol.REP_INFO) {
            info(data);
        } else if (type == NbdProtocol.REP_ACK) {
            if (sizeBytes < 0) {
                throw new UpstreamException("GO succeeded without NBD_INFO_EXPORT");
            }
            if (blockSizes == null) {
                // proto.md's defaults for a server that advertises none, with 32 MiB as the maximum
                // clients may always use.
                blockSizes = new BlockSizes(1, 4096, 32 << 20);
            }
            phase = Phase.TRANSMISSION;
            timeout.cancel(false);
            lastActiveNanos = ctx.executor().ticker().nanoTime();
            idleCheck = ctx.executor().schedule(() -> checkIdle(ctx), idleTimeoutNanos, TimeUnit.NANOSECONDS);
            ready.trySuccess(ctx.channel());
        } else if ((type & NbdProtocol.REP_FLAG_ERROR) != 0) {
            String message = data.toString(StandardCharsets.UTF_8);
            throw new UpstreamException(String.format(
                    "the upstream refused export \"%s\" (reply type 0x%08x%s)",
                    exportName, type, message.isEmpty() ? "" : ": " + message));
        } else {
            throw new UpstreamException(String.format("unexpected reply type 0x%08x to GO", type));
        }
    }

    private void info(ByteBuf data) throws UpstreamException {
        if (data.readableBytes() < 2) {
            throw new UpstreamException("empty NBD_REP_INFO");
        }
        int type = data.readUnsignedShort();
        if (type == NbdProtocol.INFO_EXPORT) {
            if (data.readableBytes() != 10) {
                throw new UpstreamException("NBD_INFO_EXPORT of length " + (data.readableBytes() + 2));
            }
            sizeBytes = data.readLong();
            transmissionFlags = data.readUnsignedShort();
            if (sizeBytes < 0) {
                throw new UpstreamException("export size over 2^63 bytes");
            }
        } else if (type == NbdProtocol.INFO_BLOCK_SIZE) {
            if (data.readableBytes() != 12) {
                throw new UpstreamException("NBD_INFO_BLOCK_SIZE of length " + (data.readableBytes() + 2));
            }
            int minimum = data.readInt();
            int preferred = data.readInt();
            long maximum = data.readUnsignedInt();
            try {
                int cappedMaximum = (int) Math.min(maximum, BlockSizes.LARGEST_MAXIMUM_BYTES);
                cappedMaximum -= cappedMaximum % Math.max(1, minimum);
                blockSizes = new BlockSizes(
                        minimum,
                        Math.max(preferred, Math.max(512, minimum)),
                        Math.max(cappedMaximum, Math.max(preferred, Math.max(512, minimum))));
            } catch (IllegalArgumentException e) {
                throw new UpstreamException(
                        "unusable block sizes " + minimum + "/" + preferred + "/" + maximum + ": " + e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- transmission

    private boolean reply(ChannelHandlerContext ctx) throws UpstreamException {
        if (payload != Payload.NONE) {
            return payloadBytes(ctx);
        }
        if (cumulation.readableBytes() < 4) {
            return false;
        }
        int magic = cumulation.getInt(cumulation.readerIndex());
        if (magic == NbdProtocol.SIMPLE_REPLY_MAGIC) {
            return simpleReply(ctx);
        }
        if (magic == NbdProtocol.STRUCTURED_REPLY_MAGIC && structuredReplies) {
            return chunk(ctx);
        }
        throw new UpstreamException(String.format(
                "reply magic 0x%08x (expected a %s)",
                magic, structuredReplies ? "simple reply or a structured reply chunk" : "simple reply"));
    }

    private boolean simpleReply(ChannelHandlerContext ctx) throws UpstreamException {
        if (cumulation.readableBytes() < NbdProtocol.SIMPLE_REPLY_HEADER_BYTES) {
            return false;
        }
        cumulation.skipBytes(4);
        int error = cumulation.readInt();
        long cookie = cumulation.readLong();
        Pending request = pending.remove(cookie);
        if (request == null) {
            throw new UpstreamException("reply to an unknown cookie " + Long.toUnsignedString(cookie));
        }
        if (error == 0 && request.command == NbdProtocol.CMD_READ && request.lengthBytes > 0) {
            if (structuredReplies) {
                // proto.md: with structured replies negotiated, a read's data comes only in chunks.
                pending.put(cookie, request);
                throw new UpstreamException("a simple reply with data to a READ after structured replies");
            }
            reading = request;
            request.data = cumulation.alloc().directBuffer((int) request.lengthBytes, (int) request.lengthBytes);
            payload = Payload.SIMPLE_READ;
            payloadRemaining = (int) request.lengthBytes;
            payloadWriteIndex = 0;
            return true;
        }
        finish(ctx, request, error, "error " + error);
        return true;
    }

    /** Copies what has arrived of the payload being received; ends the reply or chunk once it is all there. */
    private boolean payloadBytes(ChannelHandlerContext ctx) throws UpstreamException {
        int n = Math.min(cumulation.readableBytes(), payloadRemaining);
        reading.data.setBytes(payloadWriteIndex, cumulation, cumulation.readerIndex(), n);
        cumulation.skipBytes(n);
        payloadWriteIndex += n;
        payloadRemaining -= n;
        if (payloadRemaining > 0) {
            return false;
        }
        Pending done = reading;
        Payload was = payload;
        reading = null;
        payload = Payload.NONE;
        if (was == Payload.SIMPLE_READ) {
            done.coveredBytes = done.lengthBytes;
            finish(ctx, done, 0, null);
        } else if (payloadDone) {
            pending.remove(done.cookie);
            finish(ctx, done, done.error, done.errorMessage);
        }
        return true;
    }

    /** One structured reply chunk (proto.md, "Structured reply chunk message"). */
    private boolean chunk(ChannelHandlerContext ctx) throws UpstreamException {
        if (cumulation.readableBytes() < NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES) {
            return false;
        }
        int start = cumulation.readerIndex();
        int flags = cumulation.getUnsignedShort(start + 4);
        int type = cumulation.getUnsignedShort(start + 6);
        long cookie = cumulation.getLong(start + 8);
        long length = cumulation.getUnsignedInt(start + 16);
        Pending request = pending.get(cookie);
        if (request == null) {
            throw new UpstreamException("reply chunk to an unknown cookie " + Long.toUnsignedString(cookie));
        }
        boolean done = (flags & NbdProtocol.REPLY_FLAG_DONE) != 0;
        if (type == NbdProtocol.REPLY_TYPE_OFFSET_DATA) {
            // Streamed: the header and offset first, then the data straight into the read's buffer.
            if (cumulation.readableBytes() < NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + 8) {
                return false;
            }
            long offset = cumulation.getLong(start + NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES);
            long dataBytes = length - 8;
            long at = offset - request.offsetBytes;
            if (request.command != NbdProtocol.CMD_READ
                    || length <= 8
                    || at < 0
                    || at + dataBytes > request.lengthBytes) {
                throw new UpstreamException("an OFFSET_DATA chunk of " + length + " bytes at " + offset
                        + " for " + NbdProtocol.commandName(request.command) + " of " + request.lengthBytes
                        + " bytes at " + request.offsetBytes);
            }
            cumulation.skipBytes(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + 8);
            readBuffer(request);
            request.coveredBytes += dataBytes;
            reading = request;
            payload = Payload.OFFSET_DATA;
            payloadRemaining = (int) dataBytes;
            payloadWriteIndex = (int) at;
            payloadDone = done;
            return true;
        }
        if (length > MAX_WHOLE_CHUNK_BYTES) {
            throw new UpstreamException("a reply chunk of type " + type + " and " + length + " bytes");
        }
        if (cumulation.readableBytes() < NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + length) {
            return false;
        }
        cumulation.skipBytes(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES);
        ByteBuf body = cumulation.readSlice((int) length);
        if ((type & (1 << 15)) != 0) {
            errorChunk(request, type, body);
        } else if (type == NbdProtocol.REPLY_TYPE_OFFSET_HOLE) {
            if (request.command != NbdProtocol.CMD_READ || length != 12) {
                throw new UpstreamException(
                        "an OFFSET_HOLE chunk of " + length + " bytes for " + NbdProtocol.commandName(request.command));
            }
            long at = body.readLong() - request.offsetBytes;
            long holeBytes = body.readUnsignedInt();
            if (at < 0 || holeBytes == 0 || at + holeBytes > request.lengthBytes) {
                throw new UpstreamException("an OFFSET_HOLE chunk outside the read");
            }
            readBuffer(request).setZero((int) at, (int) holeBytes);
            request.coveredBytes += holeBytes;
        } else if (type == NbdProtocol.REPLY_TYPE_BLOCK_STATUS) {
            blockStatusChunk(request, body);
        } else if (type != NbdProtocol.REPLY_TYPE_NONE || length != 0) {
            throw new UpstreamException("a reply chunk of type " + type + " and " + length + " bytes for "
                    + NbdProtocol.commandName(request.command));
        }
        if (done) {
            pending.remove(cookie);
            finish(ctx, request, request.error, request.errorMessage);
        }
        return true;
    }

    private ByteBuf readBuffer(Pending request) {
        if (request.data == null) {
            request.data = cumulation.alloc().directBuffer((int) request.lengthBytes, (int) request.lengthBytes);
        }
        return request.data;
    }

    private void errorChunk(Pending request, int type, ByteBuf body) throws UpstreamException {
        if (body.readableBytes() < 6) {
            throw new UpstreamException("an error chunk of " + body.readableBytes() + " bytes");
        }
        int error = body.readInt();
        int messageBytes = body.readUnsignedShort();
        String message = body.readableBytes() >= messageBytes
                ? body.readCharSequence(messageBytes, StandardCharsets.UTF_8).toString()
                : "";
        if (error == 0) {
            throw new UpstreamException("an error chunk (type " + type + ") with error 0");
        }
        if (request.error == 0) {
            request.error = error;
            request.errorMessage = "error " + error + (message.isEmpty() ? "" : " (" + message + ")");
        }
    }

    /**
     * Keeps the {@code base:allocation} descriptors of a block status chunk, cut to the request's range
     * (one with {@code REQ_ONE}, at most {@link #MAX_DESCRIPTORS}); other contexts' chunks are skipped.
     */
    private void blockStatusChunk(Pending request, ByteBuf body) throws UpstreamException {
        if (request.command != NbdProtocol.CMD_BLOCK_STATUS
                || body.readableBytes() < 12
                || (body.readableBytes() - 4) % 8 != 0) {
            throw new UpstreamException("a BLOCK_STATUS chunk of " + body.readableBytes() + " bytes for "
                    + NbdProtocol.commandName(request.command));
        }
        long id = body.readUnsignedInt();
        if (id != baseAllocationId || request.data != null) {
            return;
        }
        int most = (request.flags & NbdProtocol.CMD_FLAG_REQ_ONE) != 0 ? 1 : MAX_DESCRIPTORS;
        ByteBuf descriptors = body.alloc().buffer(Math.min(body.readableBytes(), most * 8));
        long covered = 0;
        while (body.isReadable() && covered < request.lengthBytes && descriptors.readableBytes() < most * 8) {
            long extent = body.readUnsignedInt();
            int status = body.readInt();
            if (extent == 0) {
                continue;
            }
            extent = Math.min(extent, request.lengthBytes - covered);
            descriptors.writeInt((int) extent);
            descriptors.writeInt(status);
            covered += extent;
        }
        if (covered == 0) {
            descriptors.release();
            throw new UpstreamException("a BLOCK_STATUS chunk without a descriptor");
        }
        request.data = descriptors;
    }

    /** Completes a request whose whole reply has arrived. */
    private void finish(ChannelHandlerContext ctx, Pending request, int error, String errorMessage)
            throws UpstreamException {
        if (error == NbdProtocol.ESHUTDOWN) {
            request.releaseData();
            // proto.md: the server is shutting down and did not serve it; the client must disconnect softly.
            // The pool lets go of every connection first, so that sending the request again opens a new one.
            if (!retiring) {
                retire(ctx);
                events.upstreamLeaving("it answered a request with NBD_ESHUTDOWN (it is shutting down)");
            }
            request.completion.tryFailure(new Unserved("upstream " + upstream + " is shutting down", true));
        } else if (error != 0) {
            request.releaseData();
            request.completion.tryFailure(new NbdException(
                    error,
                    "upstream " + upstream + " answered " + NbdProtocol.commandName(request.command) + " with "
                            + errorMessage));
        } else if (request.command == NbdProtocol.CMD_READ && request.lengthBytes > 0) {
            if (request.data == null || request.coveredBytes != request.lengthBytes) {
                request.releaseData();
                throw new UpstreamException(
                        "a READ of " + request.lengthBytes + " bytes answered with " + request.coveredBytes);
            }
            ByteBuf data = request.data;
            request.data = null;
            data.writerIndex((int) request.lengthBytes);
            if (!request.completion.trySuccess(data)) {
                data.release();
            }
        } else if (request.command == NbdProtocol.CMD_BLOCK_STATUS) {
            ByteBuf descriptors = request.data;
            request.data = null;
            if (descriptors == null) {
                throw new UpstreamException("a BLOCK_STATUS answered without base:allocation descriptors");
            }
            if (!request.completion.trySuccess(descriptors)) {
                descriptors.release();
            }
        } else {
            if (request.command == NbdProtocol.CMD_FLUSH) {
                writesFlushed = Math.max(writesFlushed, request.writesBefore);
            } else if (request.command != NbdProtocol.CMD_READ) {
                writesAcknowledged++;
            }
            request.completion.trySuccess(null);
        }
        answered(ctx);
    }

    /** After each complete reply: a retiring connection disconnects once nothing is in flight. */
    private void answered(ChannelHandlerContext ctx) {
        lastActiveNanos = ctx.executor().ticker().nanoTime();
        if (retiring && phase == Phase.TRANSMISSION) {
            retire(ctx);
        }
    }

    /** The upstream broke the protocol or refused us. */
    static final class UpstreamException extends Exception {
        UpstreamException(String message) {
            super(message, null, false, false);
        }
    }
}
