package dev.tailor.nbd;

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
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client side of one upstream connection of {@link UpstreamBackend}: the fixed newstyle handshake
 * with {@code NBD_OPT_GO} (asking for {@code NBD_INFO_BLOCK_SIZE}), then requests out and simple
 * replies in (proto.md, "Request message", "Simple reply message"). A simple reply to a read carries
 * data only when its error is zero, and its length is the request's, which the handler remembers
 * per cookie.
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
 * </ul>
 * A request that never reached the upstream whole (the write failed, or the connection was retiring)
 * fails with {@link Unserved} too.
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
     * @param request what to send
     * @param reply   completed with the upstream's answer: a read's data, null, an {@link NbdException},
     *                or {@link Unserved}
     */
    record Forward(BlockRequest request, Promise<ByteBuf> reply) {
    }

    /** What the pool learns from a connection; called on the connection's event loop. */
    interface Events {
        /** {@code channel} takes no more requests: forget it, so that the next request opens another. */
        void retired(Channel channel);

        /**
         * The upstream answered {@code NBD_ESHUTDOWN}, or closed this connection: it is probably going away,
         * and every pool connection to it should go.
         */
        void upstreamLeaving();
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

    /**
     * A request sent and not answered yet.
     *
     * @param writesBefore for a FLUSH, the writes acknowledged when it was sent (those it covers)
     */
    private record Pending(int command, int lengthBytes, Promise<ByteBuf> completion, long writesBefore) {
    }

    private enum Phase { GREETING, OPTION_REPLIES, TRANSMISSION, CLOSED }

    private final String upstream;
    private final String exportName;
    private final Promise<Channel> ready;
    private final long handshakeTimeoutMillis;
    private final long idleTimeoutNanos;
    private final Events events;
    private final LongObjectMap<Pending> pending = new LongObjectHashMap<>();
    private ByteBuf cumulation;
    private Phase phase = Phase.GREETING;
    private ScheduledFuture<?> timeout;
    private ScheduledFuture<?> idleCheck;
    private long lastActiveNanos;
    private long nextCookie;
    private boolean retiring;
    /** Writes (WRITE, TRIM, WRITE_ZEROES) the upstream acknowledged on this connection. */
    private long writesAcknowledged;
    /** Of those, how many a successful FLUSH on this connection covers. */
    private long writesFlushed;

    // Handshake results.
    private long sizeBytes = -1;
    private int transmissionFlags;
    private BlockSizes blockSizes;

    // A read reply whose data is arriving.
    private Pending reading;
    private ByteBuf readData;

    /**
     * @param upstream               the upstream as {@code nbd://host:port/export}, for messages
     * @param exportName             the upstream's export to ask for
     * @param ready                  succeeds with the channel once it is in transmission; fails with the reason
     * @param handshakeTimeoutMillis time for connecting and the handshake, in milliseconds
     * @param idleTimeoutNanos       time without a request in flight after which the connection retires
     * @param events                 what the pool learns from this connection
     */
    UpstreamClientHandler(String upstream, String exportName, Promise<Channel> ready, long handshakeTimeoutMillis,
            long idleTimeoutNanos, Events events) {
        this.upstream = upstream;
        this.exportName = exportName;
        this.ready = ready;
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        this.idleTimeoutNanos = idleTimeoutNanos;
        this.events = events;
    }

    /** The export as the upstream described it; valid once {@code ready} succeeded. */
    UpstreamBackend.Description description() {
        return new UpstreamBackend.Description(sizeBytes, transmissionFlags, blockSizes);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        timeout = ctx.executor().schedule(() -> fail(ctx, "no handshake within " + handshakeTimeoutMillis + " ms"),
                handshakeTimeoutMillis, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (phase == Phase.CLOSED) {
            in.release();
            return;
        }
        cumulation = cumulation == null ? in
                : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
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
            NbdException dropped = new NbdException(NbdProtocol.EIO, "the client's connection closed before the"
                    + " request was sent upstream");
            forward.reply().tryFailure(dropped);
            promise.setFailure(dropped);
            return;
        }
        if (phase != Phase.TRANSMISSION || retiring) {
            Unserved unserved = new Unserved("upstream " + upstream + ": the connection was "
                    + (retiring ? "closing" : "closed") + " before the request was sent", false);
            forward.reply().tryFailure(unserved);
            promise.setFailure(unserved);
            return;
        }
        long cookie = nextCookie++;
        pending.put(cookie, new Pending(request.command(), (int) request.lengthBytes(), forward.reply(),
                writesAcknowledged));
        lastActiveNanos = ctx.executor().ticker().nanoTime();
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
                write(ctx, new Forward(new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 0, 0, 0, Unpooled.EMPTY_BUFFER),
                        flushed), ctx.newPromise());
                ctx.flush();
            } else {
                retire(ctx);
            }
        } else {
            idleCheck = ctx.executor().schedule(() -> checkIdle(ctx), Math.max(idleTimeoutNanos - idleNanos,
                    idleTimeoutNanos / 8), TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        boolean lost = phase == Phase.TRANSMISSION && !retiring;
        closeDown(phase == Phase.TRANSMISSION || phase == Phase.CLOSED ? "the connection closed"
                : "the connection closed during the handshake");
        if (lost) {
            events.upstreamLeaving();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        boolean lost = phase == Phase.TRANSMISSION && !retiring;
        fail(ctx, cause.getMessage() == null ? cause.toString() : cause.getMessage());
        if (lost) {
            events.upstreamLeaving();
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
    }

    private void closeDown(String reason) {
        phase = Phase.CLOSED;
        cancelTimers();
        ready.tryFailure(new UpstreamException(reason));
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        if (readData != null) {
            readData.release();
            readData = null;
        }
        List<Pending> failed = new ArrayList<>(pending.values());
        pending.clear();
        if (reading != null) {
            failed.add(reading);
            reading = null;
        }
        for (Pending p : failed) {
            p.completion().tryFailure(new NbdException(NbdProtocol.EIO, "upstream " + upstream + ": " + reason
                    + " with the request in flight"));
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
        byte[] name = exportName.getBytes(StandardCharsets.UTF_8);
        ByteBuf out = ctx.alloc().buffer(4 + NbdProtocol.OPTION_HEADER_BYTES + 4 + name.length + 4);
        out.writeInt(clientFlags);
        out.writeLong(NbdProtocol.IHAVEOPT);
        out.writeInt(NbdProtocol.OPT_GO);
        out.writeInt(4 + name.length + 2 + 2);
        out.writeInt(name.length);
        out.writeBytes(name);
        out.writeShort(1);
        out.writeShort(NbdProtocol.INFO_BLOCK_SIZE);
        ctx.writeAndFlush(out);
        phase = Phase.OPTION_REPLIES;
        return true;
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
        if (magic != NbdProtocol.OPTION_REPLY_MAGIC || option != NbdProtocol.OPT_GO) {
            throw new UpstreamException("unexpected option reply");
        }
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
        } else if (type == NbdProtocol.REP_ERR_SHUTDOWN) {
            throw new UpstreamException("the upstream is shutting down");
        } else if ((type & NbdProtocol.REP_FLAG_ERROR) != 0) {
            String message = data.toString(StandardCharsets.UTF_8);
            throw new UpstreamException(String.format("the upstream refused export \"%s\" (reply type 0x%08x%s)",
                    exportName, type, message.isEmpty() ? "" : ": " + message));
        } else {
            throw new UpstreamException(String.format("unexpected reply type 0x%08x to GO", type));
        }
        return true;
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
                blockSizes = new BlockSizes(minimum, Math.max(preferred, Math.max(512, minimum)),
                        Math.max(cappedMaximum, Math.max(preferred, Math.max(512, minimum))));
            } catch (IllegalArgumentException e) {
                throw new UpstreamException("unusable block sizes " + minimum + "/" + preferred + "/" + maximum + ": "
                        + e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- transmission

    private boolean reply(ChannelHandlerContext ctx) throws UpstreamException {
        if (reading != null) {
            readData.writeBytes(cumulation, Math.min(cumulation.readableBytes(), readData.writableBytes()));
            if (readData.isWritable()) {
                return false;
            }
            Pending done = reading;
            ByteBuf data = readData;
            reading = null;
            readData = null;
            if (!done.completion().trySuccess(data)) {
                data.release();
            }
            answered(ctx);
            return true;
        }
        if (cumulation.readableBytes() < NbdProtocol.SIMPLE_REPLY_HEADER_BYTES) {
            return false;
        }
        int magic = cumulation.readInt();
        int error = cumulation.readInt();
        long cookie = cumulation.readLong();
        if (magic != NbdProtocol.SIMPLE_REPLY_MAGIC) {
            throw new UpstreamException(String.format("reply magic 0x%08x (expected a simple reply)", magic));
        }
        Pending request = pending.remove(cookie);
        if (request == null) {
            throw new UpstreamException("reply to an unknown cookie " + Long.toUnsignedString(cookie));
        }
        if (error == NbdProtocol.ESHUTDOWN) {
            // proto.md: the server is shutting down and did not serve it; the client must disconnect softly.
            // The pool lets go of every connection first, so that sending the request again opens a new one.
            if (!retiring) {
                retire(ctx);
                events.upstreamLeaving();
            }
            request.completion().tryFailure(new Unserved("upstream " + upstream + " is shutting down", true));
        } else if (error != 0) {
            request.completion().tryFailure(new NbdException(error, "upstream " + upstream + " answered "
                    + NbdProtocol.commandName(request.command()) + " with error " + error));
        } else if (request.command() == NbdProtocol.CMD_READ && request.lengthBytes() > 0) {
            reading = request;
            readData = cumulation.alloc().directBuffer(request.lengthBytes(), request.lengthBytes());
            return true;
        } else {
            if (request.command() == NbdProtocol.CMD_FLUSH) {
                writesFlushed = Math.max(writesFlushed, request.writesBefore());
            } else if (request.command() != NbdProtocol.CMD_READ) {
                writesAcknowledged++;
            }
            request.completion().trySuccess(null);
        }
        answered(ctx);
        return true;
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
