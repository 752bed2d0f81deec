package dev.tailor.nbd.server;

import dev.tailor.common.Numbers;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.protocol.Replies;
import dev.tailor.nbd.protocol.RequestFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The first phase of one client connection: the fixed newstyle handshake (proto.md, "Fixed newstyle
 * negotiation", "Option types"), from the greeting to the option that ends negotiation. When
 * {@code NBD_OPT_GO} or {@code NBD_OPT_EXPORT_NAME} chooses an export, the handler replaces itself in the
 * pipeline with a {@link TransmissionHandler} (Netty's idiom for a protocol that changes phase, as in
 * {@code SniHandler} and {@code HttpServerUpgradeHandler}), handing it the {@link Negotiated} session and the
 * bytes it has read past the end of negotiation (a client may pipeline its first requests behind
 * {@code NBD_OPT_GO}): they are fired from this handler's context, which Netty links to its replacement.
 *
 * <p>Threads: every method runs on the channel's event loop. Nothing here blocks.
 *
 * <p>The handler keeps its own cumulation buffer and stops reading while the channel is not writable, so
 * a client that sends options without reading the replies cannot pile them up (docs/nbd.md, "Limits").
 * A handshake that has not reached the transmission phase within {@code limits.handshakeTimeoutSeconds}
 * is closed.
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
 */
final class HandshakeHandler extends ChannelInboundHandlerAdapter {

    /**
     * Longest option data buffered (an {@code NBD_OPT_GO} with a 4096-byte name and a few hundred
     * information requests fits). Longer options are skipped as they arrive and refused with
     * {@code NBD_REP_ERR_TOO_BIG}.
     */
    static final int MAX_OPTION_DATA_BYTES = 8192;

    private static final System.Logger LOG = System.getLogger(HandshakeHandler.class.getName());

    private enum Phase {
        CLIENT_FLAGS,
        OPTIONS,
        /** An export was chosen: the handler hands over to the transmission phase. */
        NEGOTIATED,
        /** Replaced by the {@link TransmissionHandler}. */
        HANDED_OVER,
        CLOSED
    }

    private final ServerContext server;
    private ChannelHandlerContext ctx;
    private ByteBuf cumulation;
    private Phase phase = Phase.CLIENT_FLAGS;
    private ScheduledFuture<?> handshakeTimeout;
    private boolean paused;
    private boolean flushScheduled;

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
    /** What the negotiation settled, once an export is chosen. */
    private Negotiated negotiated;

    HandshakeHandler(ServerContext server) {
        this.server = server;
    }

    // ---------------------------------------------------------------- channel events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Replies.greeting(ctx.alloc()));
        handshakeTimeout = ctx.executor()
                .schedule(
                        () -> {
                            if (inHandshake()) {
                                hardDisconnect("no transmission phase within "
                                        + Numbers.written(server.limits().handshakeTimeoutSeconds()) + " s");
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
        if (!inHandshake()) {
            in.release();
            return;
        }
        server.admission().active(ctx.channel());
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
        if (event == TransmissionHandler.SHUTDOWN) {
            phase = Phase.CLOSED;
            releaseInput();
            ctx.close();
            return;
        }
        if (event instanceof SslHandshakeCompletionEvent tls) {
            tlsHandshakeCompleted(ctx, server, tls);
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    /** Counts a finished TLS handshake; a failed one is logged (the {@code SslHandler} closes the connection). */
    static void tlsHandshakeCompleted(
            ChannelHandlerContext ctx, ServerContext server, SslHandshakeCompletionEvent tls) {
        server.io().tlsHandshake(tls.isSuccess());
        if (!tls.isSuccess()) {
            // An operator wants to see why a client could not connect.
            LOG.log(
                    System.Logger.Level.INFO,
                    () -> ctx.channel() + ": TLS handshake failed: " + tlsReason(tls.cause()));
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        phase = Phase.CLOSED;
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

    /** Closes this connection and passes the failure on ({@link ConnectionErrors#exceptionCaught}). */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        phase = Phase.CLOSED;
        releaseInput();
        ConnectionErrors.closeAfter(ctx, cause, tlsStarted);
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
    }

    private boolean inHandshake() {
        return phase == Phase.CLIENT_FLAGS || phase == Phase.OPTIONS;
    }

    // ---------------------------------------------------------------- the input loop

    /** Decodes options until the cumulation runs out, negotiation ends, or the channel is not writable. */
    private void process() {
        try {
            while (cumulation != null
                    && cumulation.isReadable()
                    && !paused
                    && inHandshake()
                    && ctx.channel().isActive()) {
                boolean progressed = phase == Phase.CLIENT_FLAGS ? readClientFlags() : readOption();
                if (!progressed) {
                    break;
                }
            }
        } catch (RequestFramer.ProtocolViolation e) {
            hardDisconnect(e.getMessage());
        }
        if (phase == Phase.NEGOTIATED) {
            handOver();
            return;
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

    /** Stops reading from the socket while it is not writable, and resumes when it is. */
    private void updateReading() {
        boolean over = !ctx.channel().isWritable();
        if (over && !paused) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        } else if (!over && paused) {
            paused = false;
            process();
            if (!paused && inHandshake()) {
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

    private void flushNow() {
        flushScheduled = false;
        if (!ctx.isRemoved()) {
            ctx.flush();
        }
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

    /** {@code chosen} ends negotiation: the transmission phase starts once the current input is decoded. */
    private void enterTransmission(Export chosen) {
        boolean contexts = baseAllocation && chosen == metaContextExport; // else selected for another export
        negotiated = new Negotiated(
                chosen, chosen.transmissionFlags(structuredReplies), structuredReplies, contexts, tlsStarted);
        phase = Phase.NEGOTIATED;
    }

    /**
     * Replaces this handler with the {@link TransmissionHandler}: the replies that ended negotiation are
     * flushed, the idle timeout starts (an {@link IdleStateHandler} in front), and the bytes read past the
     * end of negotiation are fired to the new handler, whose framer reads them as requests.
     */
    private void handOver() {
        phase = Phase.HANDED_OVER;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        ByteBuf leftover = cumulation;
        cumulation = null;
        Export export = negotiated.export();
        export.io().connected();
        // Past its handshake before the reply that ends it leaves: a client that has read it may connect
        // again at once, and admission must count this connection as a session by then, not as a handshake
        // it may evict to make room.
        server.admission().handshakeDone(ctx.channel());
        ctx.flush();
        long idleNanos = server.limits().idleTimeoutNanos();
        if (idleNanos > 0) {
            ctx.pipeline().addBefore(ctx.name(), "idle", new IdleStateHandler(0, 0, idleNanos, TimeUnit.NANOSECONDS));
        }
        ctx.pipeline().replace(this, "transmission", new TransmissionHandler(server, negotiated));
        if (paused) {
            paused = false;
            ctx.channel().config().setAutoRead(true);
        }
        if (leftover == null) {
            return;
        }
        if (leftover.isReadable()) {
            // This context now leads to the replacement (Netty links a replaced context to its successor).
            ctx.fireChannelRead(leftover);
        } else {
            leftover.release();
        }
    }
}
