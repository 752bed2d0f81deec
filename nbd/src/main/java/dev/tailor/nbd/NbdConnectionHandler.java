package dev.tailor.nbd;

import dev.tailor.eventloop.IoPriorityEventLoop;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One client connection of the NBD server, from the greeting to the close: the fixed newstyle handshake
 * (proto.md, "Fixed newstyle negotiation", "Option types"), then the transmission phase (proto.md,
 * "Transmission"): requests are cut from the stream, checked against the export, handed to the
 * {@link RequestDispatcher}, and answered with simple or structured replies in whatever order they
 * complete.
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
 * requests undecoded and the channel stops reading. During the handshake it stops while the channel
 * is not writable, so a client that sends options without reading the replies cannot pile them up.
 *
 * <p>Writes ({@code WRITE}, {@code WRITE_ZEROES}, {@code TRIM}) pass the export's {@link WriteOrdering}
 * first: one that overlaps an older pending write of the export, from any connection, waits for it.
 * Every request handed on is kept in a list until it completes; when the connection closes, those that
 * nothing has {@linkplain BlockRequest#claim claimed} yet (held by the ordering, queued in admission or
 * in a backend) are dropped: failed, released and counted, never executed (docs/nbd.md, "Guarantees"),
 * unless the client sent {@code NBD_CMD_DISC} first, which asks for them to be handled.
 *
 * <p>Past the handshake, a connection with no request in flight and nothing received or sent for
 * {@code limits.idleTimeoutSeconds} is closed (Netty's {@link IdleStateHandler} measures it), and the
 * closing is logged; 0 turns this off.
 *
 * <p>A byte stream that is not NBD (wrong magic, unknown client flags, an unusable
 * {@code NBD_OPT_EXPORT_NAME}) closes this connection only (a hard disconnect, which proto.md allows
 * for violations of a mandatory condition).
 *
 * <p>TLS (proto.md, "TLS support"; docs/nbd.md, "TLS"): with the server's TLS on or required,
 * {@code NBD_OPT_STARTTLS} is acknowledged in plain text and a Netty {@code SslHandler} is put in front of
 * this handler, so everything after the acknowledgement passes through TLS. Three rules against the
 * known attacks on STARTTLS protocols: bytes the client sent after STARTTLS without waiting for its
 * reply, already read in plain text, are discarded and never reach TLS or the option parser; everything
 * negotiated before the upgrade (structured replies, metadata contexts) is forgotten, so a man in the
 * middle cannot shape the TLS session with injected plain-text options; and with TLS required, every
 * option but STARTTLS and ABORT is refused with {@code NBD_REP_ERR_TLS_REQD} (its data skipped unread),
 * and {@code NBD_OPT_EXPORT_NAME}, which cannot be refused, ends the connection.
 *
 * <p>Per-request loop tracing (docs/nbd.md, "Loop tracing"), on an {@link IoPriorityEventLoop}: each request sums
 * the unrelated work its loop ran while the request waited for the loop (arrival to decoding, completion to the
 * listener, reply to flush; read from {@link IoPriorityEventLoop#unrelatedBusyNanos()}) and the loop time spent on
 * its own work, recorded once its reply is flushed ({@link IoMetrics.ForExport#traced}). On another loop (tests'
 * embedded channels) the waits read 0.
 */
final class NbdConnectionHandler extends ChannelInboundHandlerAdapter {

    /** User event: finish the requests in flight, then close (server shutdown). */
    static final Object SHUTDOWN = new Object() {
        @Override
        public String toString() {
            return "NBD server shutdown";
        }
    };

    /**
     * Longest option data buffered (an {@code NBD_OPT_GO} with a 4096-byte name and a few hundred
     * information requests fits). Longer options are skipped as they arrive and refused with
     * {@code NBD_REP_ERR_TOO_BIG}.
     */
    static final int MAX_OPTION_DATA_BYTES = 8192;

    private static final System.Logger LOG = System.getLogger(NbdConnectionHandler.class.getName());

    private enum Phase {
        CLIENT_FLAGS,
        OPTIONS,
        TRANSMISSION,
        CLOSED
    }

    private final ServerContext server;
    private ChannelHandlerContext ctx;
    private ByteBuf cumulation;
    private Phase phase = Phase.CLIENT_FLAGS;
    private ScheduledFuture<?> handshakeTimeout;

    // Handshake.
    private boolean noZeroes;
    /** The client set {@code NBD_FLAG_C_FIXED_NEWSTYLE}; TLS needs it (proto.md). */
    private boolean fixedNewstyle;
    /** STARTTLS was acknowledged: an {@code SslHandler} is in front of this handler. */
    private boolean tlsStarted;
    /** Whether this connection's first option refused for want of TLS was logged. */
    private boolean plainTextRefusalLogged;

    private boolean structuredReplies;
    private boolean optionHeaderRead;
    private int option;
    private long optionDataBytes;
    private boolean discardingOption;
    /** The export {@code NBD_OPT_SET_META_CONTEXT} selected contexts for, and whether base:allocation. */
    private Export metaContextExport;

    private boolean baseAllocation;

    // Transmission.
    private Export export;
    private RequestFramer framer;
    /** The most recent of the requests handed on and not completed (a doubly linked list). */
    private Outstanding outstanding;

    private int inFlightRequests;
    private long inFlightBytes;
    private boolean draining;
    /**
     * The client sent {@code NBD_CMD_DISC}: its outstanding requests are to be handled (proto.md), so
     * they are not dropped when the socket closes before they reach the backend.
     */
    private boolean disconnectRequested;

    // Both.
    private boolean paused;
    private boolean flushScheduled;

    // Loop tracing.
    /** The connection's loop when it is an I/O-priority loop, else null. */
    private IoPriorityEventLoop priorityLoop;
    /** A request answered at once (no {@link Outstanding}) traces here; loop thread only, used within one call. */
    private final Trace immediate = new Trace();
    /**
     * Replies written and not flushed yet: per reply, its unrelated wait so far minus the loop's unrelated busy time
     * when it was written (so that adding the busy time at the flush gives its wait until then), and its loop work.
     */
    private long[] unflushedWaitBase = new long[16];

    private long[] unflushedWorkNanos = new long[16];
    private int unflushed;

    NbdConnectionHandler(ServerContext server) {
        this.server = server;
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
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Replies.greeting(ctx.alloc()));
        handshakeTimeout = ctx.executor()
                .schedule(
                        () -> {
                            if (phase == Phase.CLIENT_FLAGS || phase == Phase.OPTIONS) {
                                hardDisconnect("no transmission phase within "
                                        + server.limits().handshakeTimeoutSeconds() + " s");
                            }
                        },
                        server.limits().handshakeTimeoutNanos(),
                        TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (phase == Phase.CLOSED || draining) {
            in.release();
            return;
        }
        if (inHandshake()) {
            server.admission().active(ctx.channel());
        }
        cumulation =
                cumulation == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
        process();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (inHandshake()) {
            updateReading();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event == SHUTDOWN) {
            if (phase == Phase.TRANSMISSION) {
                startDraining();
            } else {
                ctx.close();
            }
            return;
        }
        if (event instanceof SslHandshakeCompletionEvent tls) {
            server.io().tlsHandshake(tls.isSuccess());
            if (!tls.isSuccess()) {
                // The SslHandler closes the connection; an operator wants to see why a client could not connect.
                LOG.log(
                        System.Logger.Level.INFO,
                        () -> ctx.channel() + ": TLS handshake failed: " + tlsReason(tls.cause()));
            }
            return;
        }
        if (event instanceof IdleStateEvent idle) {
            // Nothing received or sent for the idle timeout. A request still in flight (waiting for
            // admission, a slow backend) is not idleness: the next event comes one timeout later.
            if (idle.state() == IdleState.ALL_IDLE
                    && phase == Phase.TRANSMISSION
                    && inFlightRequests == 0
                    && !draining) {
                LOG.log(
                        System.Logger.Level.INFO,
                        () -> ctx.channel() + " (" + export.name() + "): closed after "
                                + NbdConfig.number(server.limits().idleTimeoutSeconds()) + " s without a request"
                                + " (limits.idleTimeoutSeconds)");
                server.admission().closedIdle(ctx.channel());
                phase = Phase.CLOSED;
                releaseInput();
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        phase = Phase.CLOSED;
        if (export != null) {
            export.io().disconnected();
        }
        if (!disconnectRequested) {
            dropOutstanding();
        }
        releaseInput();
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseInput();
    }

    /**
     * Closes this connection and passes the failure on, to be logged by the last handler; a TLS failure
     * (a failed handshake, a record that is not TLS) is the client's, said once at the handshake event or at
     * DEBUG.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        phase = Phase.CLOSED;
        releaseInput();
        ctx.close();
        if (tlsStarted
                && (cause instanceof javax.net.ssl.SSLException
                        || cause instanceof DecoderException
                                && cause.getCause() instanceof javax.net.ssl.SSLException)) {
            LOG.log(System.Logger.Level.DEBUG, () -> ctx.channel() + ": closed after a TLS failure: " + cause);
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    /** The innermost message of a TLS failure, for the log. */
    private static String tlsReason(Throwable cause) {
        if (cause instanceof java.nio.channels.ClosedChannelException) {
            return "the client closed the connection (does it trust the server's certificate, and does it have a"
                    + " certificate of the CA when the server verifies clients?)";
        }
        Throwable innermost = cause;
        while (innermost.getCause() != null && innermost.getCause() != innermost) {
            innermost = innermost.getCause();
        }
        return innermost.getMessage() == null ? innermost.toString() : innermost.getMessage();
    }

    private void releaseInput() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        if (framer != null) {
            framer.release();
        }
    }

    private boolean inHandshake() {
        return phase == Phase.CLIENT_FLAGS || phase == Phase.OPTIONS;
    }

    // ---------------------------------------------------------------- the input loop

    /** Decodes what the cumulation holds until it runs out, the phase ends, or in-flight work is at its limit. */
    private void process() {
        try {
            while (cumulation != null
                    && cumulation.isReadable()
                    && !paused
                    && !draining
                    && phase != Phase.CLOSED
                    && ctx.channel().isActive()) {
                boolean progressed = switch (phase) {
                    case CLIENT_FLAGS -> readClientFlags();
                    case OPTIONS -> readOption();
                    case TRANSMISSION -> readRequest();
                    case CLOSED -> false;
                };
                if (!progressed) {
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
            } else {
                cumulation.discardSomeReadBytes();
            }
        }
    }

    private void hardDisconnect(String reason) {
        LOG.log(System.Logger.Level.DEBUG, () -> ctx.channel() + ": hard disconnect: " + reason);
        phase = Phase.CLOSED;
        releaseInput();
        ctx.close();
    }

    /** Stops or resumes reading from the socket according to the phase's limit. */
    private void updateReading() {
        boolean over = inHandshake()
                ? !ctx.channel().isWritable()
                : inFlightRequests >= server.limits().maxInFlightRequestsPerConnection()
                        || inFlightBytes
                                >= server.limits().maxInFlightPerConnection().bytes();
        if (over && !paused) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        } else if (!over && paused) {
            paused = false;
            process();
            if (!paused && !draining && phase != Phase.CLOSED) {
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
        for (int i = 0; i < n; i++) {
            export.io().traced(unflushedWaitBase[i] + busyNanos, unflushedWorkNanos[i] + shareNanos);
        }
    }

    /** A reply of {@code trace}'s request was written: its loop trace is recorded at the flush. */
    private void awaitFlush(Trace trace) {
        if (unflushed == unflushedWaitBase.length) {
            unflushedWaitBase = java.util.Arrays.copyOf(unflushedWaitBase, unflushed * 2);
            unflushedWorkNanos = java.util.Arrays.copyOf(unflushedWorkNanos, unflushed * 2);
        }
        unflushedWaitBase[unflushed] = trace.loopWaitNanos - unrelatedBusyNanos();
        unflushedWorkNanos[unflushed] = trace.loopWorkNanos;
        unflushed++;
    }

    // ---------------------------------------------------------------- handshake

    private boolean readClientFlags() throws RequestFramer.ProtocolViolation {
        if (cumulation.readableBytes() < 4) {
            return false;
        }
        int flags = cumulation.readInt();
        if ((flags & ~(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES)) != 0) {
            // proto.md, "Client flags": the server MUST drop the connection on an unknown flag.
            throw new RequestFramer.ProtocolViolation(String.format("unknown client flags 0x%08x", flags));
        }
        noZeroes = (flags & NbdProtocol.FLAG_C_NO_ZEROES) != 0;
        fixedNewstyle = (flags & NbdProtocol.FLAG_C_FIXED_NEWSTYLE) != 0;
        if (!fixedNewstyle && tlsRequired()) {
            // proto.md: without fixed newstyle the server MUST operate without TLS, which it refuses to.
            throw new RequestFramer.ProtocolViolation(
                    "TLS is required and the client cannot start it (no" + " FIXED_NEWSTYLE flag)");
        }
        phase = Phase.OPTIONS;
        return true;
    }

    private boolean readOption() throws RequestFramer.ProtocolViolation {
        if (!optionHeaderRead) {
            if (cumulation.readableBytes() < NbdProtocol.OPTION_HEADER_BYTES) {
                return false;
            }
            long magic = cumulation.readLong();
            if (magic != NbdProtocol.IHAVEOPT) {
                throw new RequestFramer.ProtocolViolation(
                        String.format("option magic 0x%016x (expected IHAVEOPT)", magic));
            }
            option = cumulation.readInt();
            optionDataBytes = cumulation.readUnsignedInt();
            optionHeaderRead = true;
            if (tlsRequired() && option == NbdProtocol.OPT_EXPORT_NAME) {
                // proto.md, FORCEDTLS: it cannot be refused, so the session ends.
                throw new RequestFramer.ProtocolViolation("EXPORT_NAME before STARTTLS, and TLS is required");
            }
            // Options we do not know are skipped without buffering: their length says how far. So are the
            // options refused because TLS is required: their data is never parsed.
            discardingOption = !buffered(option)
                    || optionDataBytes > MAX_OPTION_DATA_BYTES
                    || tlsRequired() && option != NbdProtocol.OPT_STARTTLS && option != NbdProtocol.OPT_ABORT;
            // Go on: an option without data is complete now, even if no more bytes arrive.
        }
        if (discardingOption) {
            int skip = (int) Math.min(optionDataBytes, cumulation.readableBytes());
            cumulation.skipBytes(skip);
            optionDataBytes -= skip;
            if (optionDataBytes > 0) {
                return false;
            }
            optionHeaderRead = false;
            refuseSkippedOption();
        } else {
            if (cumulation.readableBytes() < optionDataBytes) {
                return false;
            }
            ByteBuf data = cumulation.readSlice((int) optionDataBytes);
            optionHeaderRead = false;
            handleOption(data);
        }
        if (inHandshake()) {
            updateReading();
        }
        return true;
    }

    /** Whether options other than STARTTLS and ABORT are refused now: TLS is required and not running yet. */
    private boolean tlsRequired() {
        return server.tls() != null && server.tls().mode() == ServerTls.Mode.REQUIRE && !tlsStarted;
    }

    private static boolean buffered(int option) {
        return switch (option) {
            case NbdProtocol.OPT_EXPORT_NAME,
                    NbdProtocol.OPT_ABORT,
                    NbdProtocol.OPT_LIST,
                    NbdProtocol.OPT_STARTTLS,
                    NbdProtocol.OPT_INFO,
                    NbdProtocol.OPT_GO,
                    NbdProtocol.OPT_STRUCTURED_REPLY,
                    NbdProtocol.OPT_LIST_META_CONTEXT,
                    NbdProtocol.OPT_SET_META_CONTEXT -> true;
            default -> false;
        };
    }

    private void refuseSkippedOption() throws RequestFramer.ProtocolViolation {
        if (tlsRequired() && option != NbdProtocol.OPT_STARTTLS && option != NbdProtocol.OPT_ABORT) {
            if (!plainTextRefusalLogged) {
                // Once per connection: libnbd tells its user only "operation not supported", so the
                // server's log is where an operator learns that a client did not start TLS.
                plainTextRefusalLogged = true;
                int refused = option;
                LOG.log(
                        System.Logger.Level.INFO,
                        () -> ctx.channel() + ": NBD_OPT_" + NbdProtocol.optionName(refused)
                                + " refused before STARTTLS: TLS is required (a client without TLS, e.g. nbd:// instead of"
                                + " nbds://)");
            }
            writeOptionError(NbdProtocol.REP_ERR_TLS_REQD, "TLS is required: send STARTTLS first");
            return;
        }
        if (option == NbdProtocol.OPT_EXPORT_NAME) {
            // No error reply is possible for EXPORT_NAME: proto.md says terminate the session.
            throw new RequestFramer.ProtocolViolation(
                    "EXPORT_NAME with a name over " + MAX_OPTION_DATA_BYTES + " bytes");
        }
        if (buffered(option)) {
            writeOptionError(
                    NbdProtocol.REP_ERR_TOO_BIG,
                    NbdProtocol.optionName(option) + " with " + "more than " + MAX_OPTION_DATA_BYTES
                            + " bytes of data");
        } else {
            writeOptionError(
                    NbdProtocol.REP_ERR_UNSUP,
                    "option " + NbdProtocol.optionName(option) + " is not supported by this server");
        }
    }

    private void handleOption(ByteBuf data) throws RequestFramer.ProtocolViolation {
        switch (option) {
            case NbdProtocol.OPT_EXPORT_NAME -> exportName(data);
            case NbdProtocol.OPT_ABORT -> {
                // proto.md: reply ACK; the client then drops the connection, and so do we.
                phase = Phase.CLOSED;
                releaseInput();
                ctx.writeAndFlush(Replies.optionReply(ctx.alloc(), option, NbdProtocol.REP_ACK, 0))
                        .addListener(ChannelFutureListener.CLOSE);
            }
            case NbdProtocol.OPT_LIST -> list(data);
            case NbdProtocol.OPT_STARTTLS -> startTls(data);
            case NbdProtocol.OPT_INFO, NbdProtocol.OPT_GO -> infoOrGo(data);
            case NbdProtocol.OPT_STRUCTURED_REPLY -> {
                if (data.isReadable()) {
                    writeOptionError(NbdProtocol.REP_ERR_INVALID, "STRUCTURED_REPLY takes no data");
                } else {
                    structuredReplies = true;
                    write(Replies.optionReply(ctx.alloc(), option, NbdProtocol.REP_ACK, 0));
                }
            }
            case NbdProtocol.OPT_LIST_META_CONTEXT, NbdProtocol.OPT_SET_META_CONTEXT -> metaContext(data);
            default -> throw new IllegalStateException("option " + option + " is not buffered");
        }
    }

    /**
     * {@code NBD_OPT_STARTTLS} (proto.md, "TLS support"): refused with {@code NBD_REP_ERR_POLICY} when TLS
     * is off or the client is not fixed newstyle, {@code NBD_REP_ERR_INVALID} with data or when TLS runs
     * already; else acknowledged in plain text, and TLS starts: what the client sent after STARTTLS without
     * waiting for the reply is discarded, what was negotiated before is forgotten, and an {@code SslHandler}
     * goes in front of this handler before anything else is read.
     */
    private void startTls(ByteBuf data) {
        ServerTls tls = server.tls();
        if (tls == null) {
            writeOptionError(NbdProtocol.REP_ERR_POLICY, "TLS is off on this server");
            return;
        }
        if (tlsStarted) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, "STARTTLS when TLS runs already");
            return;
        }
        if (data.isReadable()) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, "STARTTLS takes no data");
            return;
        }
        if (!fixedNewstyle) {
            writeOptionError(
                    NbdProtocol.REP_ERR_POLICY,
                    "STARTTLS needs fixed newstyle negotiation (the client did" + " not set FIXED_NEWSTYLE)");
            return;
        }
        // The acknowledgement goes out in plain text, with any replies still waiting for their flush.
        ctx.writeAndFlush(Replies.optionReply(ctx.alloc(), option, NbdProtocol.REP_ACK, 0));
        int pipelined = cumulation.readableBytes();
        if (pipelined > 0) {
            // A client must wait for the reply before its TLS handshake: these bytes came in plain text and
            // could be anyone's (an injected option, a forged handshake). They are never read.
            cumulation.skipBytes(pipelined);
            server.io().tlsDiscarded(pipelined);
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> ctx.channel() + ": " + pipelined + " bytes sent after STARTTLS"
                            + " before its reply were discarded");
        }
        structuredReplies = false;
        metaContextExport = null;
        baseAllocation = false;
        tlsStarted = true;
        ctx.pipeline().addBefore(ctx.name(), "tls", tls.newHandler(ctx.alloc()));
    }

    /**
     * {@code NBD_OPT_LIST_META_CONTEXT} and {@code NBD_OPT_SET_META_CONTEXT} (proto.md, "Metadata
     * querying"): name length (4), export name, query count (4), queries (length (4) and string each).
     * The one context is {@code base:allocation}: listed for no query, {@code base:} or its name; selected
     * by its name only. SET needs structured replies first ({@code NBD_REP_ERR_INVALID} otherwise) and
     * replaces any earlier selection; a later GO or EXPORT_NAME of another export drops it.
     */
    private void metaContext(ByteBuf data) {
        boolean set = option == NbdProtocol.OPT_SET_META_CONTEXT;
        String name = NbdProtocol.optionName(option);
        if (set && !structuredReplies) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    name + " before STRUCTURED_REPLY (block status replies are" + " structured)");
            return;
        }
        if (data.readableBytes() < 8) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    name + " with " + data.readableBytes() + " bytes of data" + " (expected at least 8)");
            return;
        }
        long nameBytes = data.readUnsignedInt();
        if (nameBytes > data.readableBytes() - 4) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, "name length " + nameBytes + " exceeds the option data");
            return;
        }
        String exportName = exportName(data, (int) nameBytes);
        long queries = data.readUnsignedInt();
        boolean matched = queries == 0 && !set;
        for (long i = 0; i < queries; i++) {
            if (data.readableBytes() < 4) {
                writeOptionError(NbdProtocol.REP_ERR_INVALID, queries + " queries, but the data ends after " + i);
                return;
            }
            long queryBytes = data.readUnsignedInt();
            if (queryBytes > data.readableBytes()) {
                writeOptionError(
                        NbdProtocol.REP_ERR_INVALID, "query length " + queryBytes + " exceeds the option data");
                return;
            }
            String query = exportName(data, (int) queryBytes);
            if (query == null) {
                writeOptionError(NbdProtocol.REP_ERR_INVALID, "a query is not valid UTF-8 or contains NUL");
                return;
            }
            matched |= query.equals(NbdProtocol.BASE_ALLOCATION) || !set && query.equals("base:");
        }
        if (data.isReadable()) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, data.readableBytes() + " bytes after the last query");
            return;
        }
        if (exportName == null) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    "the export name is not valid UTF-8, contains NUL or is" + " longer than 4096 bytes");
            return;
        }
        Export chosen = server.export(exportName);
        if (chosen == null) {
            writeOptionError(NbdProtocol.REP_ERR_UNKNOWN, "no export named \"" + exportName + "\"");
            return;
        }
        if (set) {
            metaContextExport = chosen;
            baseAllocation = matched;
        }
        if (matched) {
            write(Replies.metaContext(
                    ctx.alloc(), option, NbdProtocol.BASE_ALLOCATION_ID, NbdProtocol.BASE_ALLOCATION));
        }
        write(Replies.optionReply(ctx.alloc(), option, NbdProtocol.REP_ACK, 0));
    }

    private void exportName(ByteBuf data) throws RequestFramer.ProtocolViolation {
        String name = exportName(data, data.readableBytes());
        Export chosen = name == null ? null : server.export(name);
        if (chosen == null) {
            throw new RequestFramer.ProtocolViolation("EXPORT_NAME of an unknown or invalid export");
        }
        write(Replies.exportNameReply(
                ctx.alloc(), chosen.sizeBytes(), chosen.transmissionFlags(structuredReplies), noZeroes));
        enterTransmission(chosen);
    }

    private void list(ByteBuf data) {
        if (data.isReadable()) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, "LIST takes no data");
            return;
        }
        for (Export each : server.exports().values()) {
            write(Replies.server(ctx.alloc(), each.name(), each.description()));
        }
        write(Replies.optionReply(ctx.alloc(), option, NbdProtocol.REP_ACK, 0));
    }

    /** {@code NBD_OPT_INFO} and {@code NBD_OPT_GO}: name length (4), name, request count (2), requests (2 each). */
    private void infoOrGo(ByteBuf data) {
        if (data.readableBytes() < 6) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    "option data of " + data.readableBytes() + " bytes (expected at least 6)");
            return;
        }
        long nameBytes = data.readUnsignedInt();
        if (nameBytes > data.readableBytes() - 2) {
            writeOptionError(NbdProtocol.REP_ERR_INVALID, "name length " + nameBytes + " exceeds the option data");
            return;
        }
        String name = exportName(data, (int) nameBytes);
        int requests = data.readUnsignedShort();
        if (data.readableBytes() != 2 * requests) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    requests + " information requests in " + data.readableBytes() + " bytes (expected 2 bytes each)");
            return;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int type = data.readUnsignedShort();
            wantName |= type == NbdProtocol.INFO_NAME;
            wantDescription |= type == NbdProtocol.INFO_DESCRIPTION;
        }
        if (name == null) {
            writeOptionError(
                    NbdProtocol.REP_ERR_INVALID,
                    "the export name is not valid UTF-8, contains NUL or is" + " longer than 4096 bytes");
            return;
        }
        Export chosen = server.export(name);
        if (chosen == null) {
            writeOptionError(
                    NbdProtocol.REP_ERR_UNKNOWN,
                    "no export named \"" + name + "\" (this server has: "
                            + server.exports().keySet().stream().limit(20).collect(Collectors.joining(", "))
                            + (server.exports().size() > 20 ? ", ..." : "") + ")");
            return;
        }
        ByteBufAllocator alloc = ctx.alloc();
        write(Replies.infoExport(alloc, option, chosen.sizeBytes(), chosen.transmissionFlags(structuredReplies)));
        // Sent even unrequested (allowed): a client that did not ask gets clean EINVALs past the maximum.
        write(Replies.infoBlockSize(alloc, option, chosen.blockSizes()));
        if (wantName) {
            write(Replies.infoText(alloc, option, NbdProtocol.INFO_NAME, chosen.name()));
        }
        if (wantDescription) {
            write(Replies.infoText(alloc, option, NbdProtocol.INFO_DESCRIPTION, chosen.description()));
        }
        write(Replies.optionReply(alloc, option, NbdProtocol.REP_ACK, 0));
        if (option == NbdProtocol.OPT_GO) {
            enterTransmission(chosen);
        }
    }

    /**
     * The export name in the next {@code length} bytes of {@code data} (consumed), or null when it is
     * not a valid protocol string: valid UTF-8, no NUL, at most 4096 bytes (proto.md, "Conventions").
     */
    static String exportName(ByteBuf data, int length) {
        ByteBuffer bytes = data.nioBuffer(data.readerIndex(), length);
        data.skipBytes(length);
        if (length > NbdProtocol.MAX_STRING_BYTES) {
            return null;
        }
        try {
            String name = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(bytes)
                    .toString();
            return name.indexOf('\0') >= 0 ? null : name;
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private void writeOptionError(int replyType, String message) {
        write(Replies.optionError(ctx.alloc(), option, replyType, message));
    }

    private ChannelFuture write(ByteBuf message) {
        ChannelFuture future = ctx.write(message);
        scheduleFlush();
        return future;
    }

    private void enterTransmission(Export chosen) {
        export = chosen;
        chosen.io().connected();
        if (chosen != metaContextExport) {
            baseAllocation = false; // contexts were selected for another export
        }
        framer = new RequestFramer(chosen.blockSizes().maximumBytes());
        phase = Phase.TRANSMISSION;
        server.admission().handshakeDone(ctx.channel());
        long idleNanos = server.limits().idleTimeoutNanos();
        if (idleNanos > 0) {
            ctx.pipeline().addBefore(ctx.name(), "idle", new IdleStateHandler(0, 0, idleNanos, TimeUnit.NANOSECONDS));
        }
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (paused) {
            paused = false;
            ctx.channel().config().setAutoRead(true);
        }
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
        /** Unrelated work its loop ran while it waited for the loop, so far. */
        long loopWaitNanos;
        /** Loop time spent on its own work, so far. */
        long loopWorkNanos;
        /** Its time on the backend, once completed. */
        long backendNanos;

        void start(long startNanos, long loopWaitNanos) {
            this.startNanos = startNanos;
            this.loopWaitNanos = loopWaitNanos;
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
                BlockRequest request, TracedPromise completion, long costBytes, long startNanos, long loopWaitNanos) {
            start(startNanos, loopWaitNanos);
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
            loopWaitNanos += Math.max(0, unrelatedBusyNanos() - completion.completedUnrelatedNanos());
            backendNanos = Math.max(0, completedNanos - dispatchNanos - request.admissionWaitNanos());
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
        export.io()
                .answered(
                        command,
                        trace.startNanos,
                        offsetBytes,
                        doneBytes,
                        error == null ? 0 : error.error(),
                        traced == null ? 0 : traced.admissionWaitNanos(),
                        trace.backendNanos,
                        traced == null ? SlowSegments.NOT_ADMITTED : traced.admittedClass());
        if (phase == Phase.CLOSED || !ctx.channel().isActive()) {
            if (data != null) {
                data.release();
            }
            finished(costBytes);
            export.io()
                    .traced(
                            trace.loopWaitNanos,
                            trace.loopWorkNanos + server.io().nowNanos() - workStartNanos);
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
        trace.loopWorkNanos += server.io().nowNanos() - workStartNanos;
        awaitFlush(trace);
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
        } else if (phase == Phase.TRANSMISSION) {
            updateReading();
        }
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
