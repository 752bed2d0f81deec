package dev.tailor.nbd.backend;

import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetConnectedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A virtual disk served by an upstream NBD server (proxy mode): requests are forwarded over a small
 * pool of client connections, each of which did the fixed newstyle handshake with {@code NBD_OPT_GO}
 * ({@link UpstreamClientHandler}).
 *
 * <p>The pool has {@code connections} connections when the upstream advertises
 * {@code NBD_FLAG_CAN_MULTI_CONN}, else one: proto.md says a client should not spread its requests
 * over several connections without that flag. Either way a flush sent on any one pool connection
 * covers every write the upstream has acknowledged on any of them, so the export itself offers
 * {@code NBD_FLAG_CAN_MULTI_CONN} to its own clients. The first connection is opened by
 * {@link #connect} (it learns the size, flags and block sizes); the others are opened on first use.
 *
 * <p>An upstream that stops or restarts (docs/nbd.md, "Configuration", Upstream exports):
 * <ul>
 *   <li>A connection that closes leaves the pool at once; its requests in flight fail with
 *       {@code NBD_EIO} at once (they may or may not have been done, so they are not sent again), and
 *       the other pool connections are retired as below.</li>
 *   <li>A request that finds no open connection opens one; if that fails (refused, reset, no connection
 *       and handshake within {@link #CONNECT_TIMEOUT_MILLIS}), or the request's reply timeout runs out
 *       first, the request fails with {@code NBD_EIO} and a message naming the upstream. Each request
 *       tries once: nothing waits for an upstream to come back.</li>
 *   <li>An upstream that answers {@code NBD_ESHUTDOWN} did not serve that request: it is sent again,
 *       once, on a new connection, and every pool connection is retired (soft disconnect once its
 *       requests are answered), because such an upstream waits for its clients to leave before it
 *       exits. The same goes for a request that never reached a connection whole.</li>
 *   <li>A connection without requests for {@code idleTimeoutSeconds} disconnects softly, so that an
 *       upstream stopped while the proxy is idle is not kept waiting for it either.</li>
 *   <li>A request without its whole reply {@code requestTimeoutSeconds} after the pool took it (an
 *       upstream that hangs without closing its connections) fails with {@code NBD_EIO}: the time it waited
 *       for a connection counts, so that is the longest any request waits. Written to a connection, it
 *       makes that connection lost, as if the upstream had closed it: the connection closes, its requests in
 *       flight fail with {@code NBD_EIO}, and the others retire.</li>
 * </ul>
 * Losing the upstream (a connection it closes or resets, a reply timeout, {@code NBD_ESHUTDOWN}, a
 * connection that cannot be opened) is logged once as a warning, and reaching it again once as information: the log follows
 * the upstream's state, not each connection or request.
 *
 * <p>Features are the upstream's: read-only, flush, FUA, trim and write-zeroes exactly when the
 * upstream offers them, and block status ({@code base:allocation}) passed through when the upstream
 * selects that context for the export. {@code NBD_CMD_FLAG_DF} is dropped from reads: the pool puts a
 * read's chunks together into one buffer, which the export sends on as its own reply.
 */
public final class UpstreamBackend implements BlockBackend {

    private static final System.Logger LOG = System.getLogger(UpstreamBackend.class.getName());

    /**
     * How long connecting and the handshake together may take: 10 s, qemu-nbd's handshake limit. A request
     * waiting for a new connection gives up sooner when its reply timeout runs out first.
     */
    static final int CONNECT_TIMEOUT_MILLIS = 10_000;

    /**
     * What the upstream said about its export in the handshake.
     *
     * @param blockStatus whether it selected the {@code base:allocation} metadata context for the export
     */
    record Description(long sizeBytes, int transmissionFlags, BlockSizes blockSizes, boolean blockStatus) {}

    private final ExportConfig.Upstream config;
    private final String exportName;
    private final String name;
    private final Bootstrap bootstrap;
    private final UpstreamClientHandler.Events events;
    private final Description description;
    private final Slot[] slots;
    private final AtomicInteger next = new AtomicInteger();
    /** Requests written to an upstream connection whose reply has not come yet. */
    private final AtomicInteger sent = new AtomicInteger();
    /** Whether the upstream was reachable at the last connection event: the log says when this changes. */
    private final AtomicBoolean reachable = new AtomicBoolean(true);

    private volatile boolean closed;

    private UpstreamBackend(
            ExportConfig.Upstream config,
            String exportName,
            String name,
            Bootstrap bootstrap,
            UpstreamClientHandler.Events events,
            Description description,
            Channel first,
            EventLoopGroup eventLoops) {
        this.config = config;
        this.exportName = exportName;
        this.name = name;
        this.bootstrap = bootstrap;
        this.events = events;
        this.description = description;
        int size = (description.transmissionFlags() & NbdProtocol.FLAG_CAN_MULTI_CONN) != 0 ? config.connections() : 1;
        // Spread the pool over the event loops, starting with the first connection's: a request then
        // usually finds a pool connection on its own event loop, and crosses no thread.
        List<EventLoop> loops = new ArrayList<>();
        loops.add(first.eventLoop());
        for (EventExecutor loop : eventLoops) {
            if (loop != first.eventLoop()) {
                loops.add((EventLoop) loop);
            }
        }
        this.slots = new Slot[size];
        for (int i = 0; i < size; i++) {
            slots[i] = new Slot(loops.get(i % loops.size()));
        }
        slots[0].adopt(first);
    }

    /**
     * Connects the first pool connection and does the handshake.
     *
     * @param exportName the export this upstream serves, for the log
     * @throws IOException when the upstream cannot be reached, does not speak fixed newstyle NBD, or
     *                     refuses the export
     */
    public static UpstreamBackend connect(
            String exportName, ExportConfig.Upstream config, EventLoopGroup eventLoops, ByteBufAllocator alloc)
            throws IOException {
        return connect(exportName, config, eventLoops, alloc, NioSocketChannel.class, NioDomainSocketChannel.class);
    }

    /**
     * As {@link #connect(String, ExportConfig.Upstream, EventLoopGroup, ByteBufAllocator)}, with the channel types
     * of the loops' transport: {@code socketChannel} for an upstream on TCP, {@code domainSocketChannel} for one
     * on a Unix-domain socket.
     */
    public static UpstreamBackend connect(
            String exportName,
            ExportConfig.Upstream config,
            EventLoopGroup eventLoops,
            ByteBufAllocator alloc,
            Class<? extends Channel> socketChannel,
            Class<? extends Channel> domainSocketChannel)
            throws IOException {
        Bootstrap bootstrap = new Bootstrap()
                .group(eventLoops)
                .option(ChannelOption.ALLOCATOR, alloc)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS);
        if (config.unix() != null) {
            // Netty's native transports take their own address type; NIO takes the JDK's (JDK 16 and later).
            Path socket = config.unixSocket();
            bootstrap
                    .channel(domainSocketChannel)
                    .remoteAddress(
                            io.netty.channel.unix.DomainSocketChannel.class.isAssignableFrom(domainSocketChannel)
                                    ? new DomainSocketAddress(socket.toString())
                                    : UnixDomainSocketAddress.of(socket));
        } else {
            bootstrap
                    .channel(socketChannel)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.SO_KEEPALIVE, true)
                    .remoteAddress(InetSocketAddress.createUnresolved(config.host(), config.port()));
        }
        String name = config.uri();
        // The pool's events reach the backend once it exists; the first connection has none before.
        AtomicReference<UpstreamBackend> backend = new AtomicReference<>();
        UpstreamClientHandler.Events events = new UpstreamClientHandler.Events() {
            @Override
            public void retired(Channel channel) {
                UpstreamBackend pool = backend.get();
                if (pool != null) {
                    pool.forget(channel);
                }
            }

            @Override
            public void upstreamLeaving(String cause) {
                UpstreamBackend pool = backend.get();
                if (pool != null) {
                    pool.lost("lost: " + cause);
                    pool.retireAll();
                }
            }
        };
        Future<Channel> ready =
                open(bootstrap, config, name, events, eventLoops.next()).awaitUninterruptibly();
        if (!ready.isSuccess()) {
            Throwable cause = ready.cause();
            throw new IOException("upstream " + name + ": " + message(cause), cause);
        }
        Channel first = ready.getNow();
        Description description =
                first.pipeline().get(UpstreamClientHandler.class).description();
        UpstreamBackend created =
                new UpstreamBackend(config, exportName, name, bootstrap, events, description, first, eventLoops);
        backend.set(created);
        return created;
    }

    /** Opens one connection on {@code loop}; the future succeeds once its handshake is done. */
    private static Future<Channel> open(
            Bootstrap bootstrap,
            ExportConfig.Upstream config,
            String name,
            UpstreamClientHandler.Events events,
            EventLoop loop) {
        Promise<Channel> ready = loop.newPromise();
        long idleTimeoutNanos = (long) (config.idleTimeoutSeconds() * 1e9);
        Bootstrap b = bootstrap.clone(loop).handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel channel) {
                channel.pipeline()
                        .addLast(new UpstreamClientHandler(
                                name,
                                config.export(),
                                ready,
                                TimeUnit.MILLISECONDS.toNanos(CONNECT_TIMEOUT_MILLIS),
                                idleTimeoutNanos,
                                config.requestTimeoutNanos(),
                                events));
            }
        });
        b.connect().addListener((ChannelFuture connected) -> {
            if (!connected.isSuccess()) {
                ready.tryFailure(connected.cause());
            }
        });
        return ready;
    }

    /**
     * What went wrong, in the operating system's words: Netty's native transports prefix the system call
     * ({@code io_uring connect(..) failed with error(-111): Connection refused}), which says nothing to a
     * user; only the error's own text is kept ({@link RingOps#reason}).
     */
    static String message(Throwable cause) {
        String message = cause.getMessage();
        if (cause instanceof ConnectTimeoutException) {
            // Netty's own words give milliseconds ("connection timed out after 10000 ms: ..."); the
            // handshake's timer, which counts connecting too, usually fires first and says the same.
            return "no connection within " + Numbers.written(CONNECT_TIMEOUT_MILLIS / 1e3) + " s";
        }
        if (cause instanceof FileNotFoundException && message == null) {
            // Netty's native transports tell a Unix socket path that does not exist (ENOENT) by the type alone.
            return "no such file or directory";
        }
        if (message == null) {
            // Netty tells a connection that closed before or while it was made by the exception's type alone.
            return cause instanceof ClosedChannelException || cause instanceof NotYetConnectedException
                    ? "the connection closed"
                    : IoErrors.connectionReason(cause, null);
        }
        // The transport may add the address it tried ("Connection refused: /127.0.0.1:10809", or a Unix socket's
        // path); the messages built on this name the upstream already.
        String reason = RingOps.reason(message).replaceFirst(": (?:[\\w.-]*/[\\w.:%\\[\\]-]+|/\\S*)$", "");
        return switch (reason.toLowerCase(Locale.ROOT)) {
            case "connection refused" -> "connection refused";
            case "no such file or directory" -> "no such file or directory";
            case "permission denied" -> "permission denied";
            case "connection reset", "connection reset by peer" -> "the connection was reset";
            case "broken pipe" -> "the connection closed";
            default -> reason;
        };
    }

    @Override
    public long sizeBytes() {
        return description.sizeBytes();
    }

    @Override
    public BackendFeatures features() {
        int flags = description.transmissionFlags();
        return new BackendFeatures(
                (flags & NbdProtocol.FLAG_READ_ONLY) != 0,
                (flags & NbdProtocol.FLAG_SEND_FLUSH) != 0,
                (flags & NbdProtocol.FLAG_SEND_FUA) != 0,
                (flags & NbdProtocol.FLAG_SEND_TRIM) != 0,
                (flags & NbdProtocol.FLAG_SEND_WRITE_ZEROES) != 0,
                true);
    }

    @Override
    public BlockSizes blockSizes() {
        return description.blockSizes();
    }

    /**
     * Whether block status is passed through: the first pool connection selected {@code base:allocation} on
     * the upstream. A later pool connection to an upstream that no longer offers it answers the range as
     * data itself.
     */
    @Override
    public boolean answersBlockStatus() {
        return description.blockStatus();
    }

    /** How long a request may wait for its reply before its connection is lost, in seconds; 0 for no limit. */
    public double requestTimeoutSeconds() {
        return config.requestTimeoutSeconds();
    }

    /** How many connections the pool may open: the configured number with multi-conn, else 1. */
    public int poolSize() {
        return slots.length;
    }

    @Override
    public void submit(BlockRequest request, Promise<ByteBuf> completion) {
        if (closed) {
            if (request.claim()) {
                request.release();
                completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
            }
            return;
        }
        send(request, completion, true, UpstreamClientHandler.clockNanos(slots[0].loop));
    }

    /**
     * Sends {@code request} on a pool connection, opening one if needed. The request is released once
     * its outcome is known; until then it is kept, so that a request the upstream did not serve
     * ({@link UpstreamClientHandler.Unserved}) can be sent once more. Until its bytes are handed to a
     * pool connection ({@link UpstreamClientHandler} claims it then) its own connection may drop it:
     * it is then never sent, and neither completed nor released here.
     *
     * <p>The reply timeout counts from {@code takenNanos}: a request that waits for a new connection
     * (connecting, the handshake) fails with {@code NBD_EIO} once it is up, whether or not the connection
     * is ready by then, and a request sent again after {@code NBD_ESHUTDOWN} keeps its first deadline.
     *
     * @param mayRetry   whether an unserved request is sent again (the first attempt only)
     * @param takenNanos when {@link #submit} took the request ({@link UpstreamClientHandler#clockNanos})
     */
    private void send(BlockRequest request, Promise<ByteBuf> completion, boolean mayRetry, long takenNanos) {
        Slot slot = pick();
        Future<Channel> connection = slot.channel();
        long timeoutNanos = config.requestTimeoutNanos();
        if (connection.isDone() || timeoutNanos == 0) {
            connection.addListener((Future<Channel> ready) -> sendOn(ready, request, completion, mayRetry, takenNanos));
        } else {
            whenReadyOrDue(
                    connection,
                    slot.loop,
                    takenNanos + timeoutNanos,
                    ready -> sendOn(ready, request, completion, mayRetry, takenNanos),
                    () -> {
                        String cause = "no reply to a " + NbdProtocol.commandName(request.command()) + " in "
                                + Numbers.written(config.requestTimeoutSeconds()) + " s: it waited for a new"
                                + " connection, which had not done its handshake";
                        lost("lost: " + cause);
                        if (request.claim()) {
                            request.release();
                            completion.tryFailure(new NbdException(NbdProtocol.EIO, "upstream " + name + ": " + cause));
                        }
                    });
        }
    }

    /**
     * Calls {@code ready} with {@code connection} once it is done, or {@code due} at {@code deadlineNanos} (on
     * {@link UpstreamClientHandler#clockNanos}) if it is not done by then: exactly one of the two, on {@code loop}, which must be
     * the event loop that completes {@code connection}.
     */
    static void whenReadyOrDue(
            Future<Channel> connection,
            EventLoop loop,
            long deadlineNanos,
            Consumer<Future<Channel>> ready,
            Runnable due) {
        boolean[] settled = {false}; // both run on loop
        ScheduledFuture<?> timer = loop.schedule(
                () -> {
                    if (!settled[0]) {
                        settled[0] = true;
                        due.run();
                    }
                },
                Math.max(0, deadlineNanos - UpstreamClientHandler.clockNanos(loop)),
                TimeUnit.NANOSECONDS);
        connection.addListener((Future<Channel> done) -> {
            if (!settled[0]) {
                settled[0] = true;
                timer.cancel(false);
                ready.accept(done);
            }
        });
    }

    /** Sends {@code request} on the connection {@code ready} brought, or fails it with the reason there is none. */
    private void sendOn(
            Future<Channel> ready,
            BlockRequest request,
            Promise<ByteBuf> completion,
            boolean mayRetry,
            long takenNanos) {
        if (!ready.isSuccess()) {
            // The pool's connections may all have closed before any of them told the pool: the upstream
            // was reachable until now, so this is where it is found lost.
            lost("lost: a new connection to it failed (" + message(ready.cause()) + ")");
            if (request.claim()) {
                request.release();
                completion.tryFailure(new NbdException(
                        NbdProtocol.EIO, "upstream " + name + " is unreachable: " + message(ready.cause())));
            }
            return;
        }
        Channel channel = ready.getNow();
        Promise<ByteBuf> reply = channel.eventLoop().newPromise();
        reply.addListener((Future<ByteBuf> done) -> {
            if (request.dropped()) {
                return; // its connection closed before it was sent: never sent, already failed
            }
            if (done.isSuccess()) {
                request.release();
                ByteBuf data = done.getNow();
                if (!completion.trySuccess(data) && data != null) {
                    data.release();
                }
            } else if (done.cause() instanceof UpstreamClientHandler.Unserved unserved
                    && mayRetry
                    && !closed
                    && !(unserved.shuttingDown() && request.command() == NbdProtocol.CMD_FLUSH)) {
                send(request, completion, false, takenNanos);
            } else {
                request.release();
                Throwable cause = done.cause();
                String flushNote = cause instanceof UpstreamClientHandler.Unserved u
                                && u.shuttingDown()
                                && request.command() == NbdProtocol.CMD_FLUSH
                        ? " (a FLUSH is not sent again elsewhere:"
                                + " it could not cover the writes this upstream acknowledged)"
                        : "";
                completion.tryFailure(
                        cause instanceof NbdException nbd
                                ? nbd
                                : new NbdException(NbdProtocol.EIO, message(cause) + flushNote));
            }
        });
        channel.writeAndFlush(new UpstreamClientHandler.Forward(request, reply, takenNanos))
                .addListener(written -> {
                    if (written.isSuccess()) {
                        sent.incrementAndGet();
                        reply.addListener(f -> sent.decrementAndGet());
                    } else {
                        // Not written whole, so not served: the upstream never saw a complete request.
                        reply.tryFailure(new UpstreamClientHandler.Unserved(
                                "upstream " + name + ": the request could" + " not be sent: "
                                        + message(written.cause()),
                                false));
                    }
                });
    }

    /**
     * Logs that the upstream is lost, if it was reachable until now: one line for an upstream that goes
     * away, however many pool connections and requests notice. Not while the server stops.
     *
     * @param what what happened to the upstream, in words ("lost: it closed the connection")
     */
    private void lost(String what) {
        if (!closed && reachable.compareAndSet(true, false)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    () -> "export " + exportName + ": upstream " + name + " " + what
                            + "; its requests fail with EIO (Input/output error) until a connection to it"
                            + " succeeds again (each request tries once)");
        }
    }

    /** Logs that the upstream is reachable again, if it was lost: a new pool connection did its handshake. */
    private void reconnected() {
        if (reachable.compareAndSet(false, true)) {
            LOG.log(
                    System.Logger.Level.INFO,
                    () -> "export " + exportName + ": upstream " + name + " reached again: a new connection"
                            + " did its handshake");
        }
    }

    /** A pool connection on the calling event loop if there is one (round robin among them), else any. */
    private Slot pick() {
        int start = next.getAndIncrement();
        for (int i = 0; i < slots.length; i++) {
            Slot slot = slots[Math.floorMod(start + i, slots.length)];
            if (slot.loop.inEventLoop()) {
                return slot;
            }
        }
        return slots[Math.floorMod(start, slots.length)];
    }

    /** Takes {@code channel} out of the pool (it closed or retired); the next request opens a new one. */
    private void forget(Channel channel) {
        for (Slot slot : slots) {
            slot.forget(channel);
        }
    }

    /** Retires every pool connection: each disconnects softly once its requests are answered. */
    private void retireAll() {
        for (Slot slot : slots) {
            Channel channel = slot.take();
            if (channel != null) {
                channel.pipeline().fireUserEventTriggered(UpstreamClientHandler.RETIRE);
            }
        }
    }

    /** Requests written to the upstream and not answered yet, for tests and status. */
    public int requestsAwaitingReply() {
        return sent.get();
    }

    /** Pool connections open now, for tests and status. */
    int openConnections() {
        int open = 0;
        for (Slot slot : slots) {
            open += slot.isOpen() ? 1 : 0;
        }
        return open;
    }

    /**
     * Disconnects every pool connection softly ({@code NBD_CMD_DISC}), waiting up to
     * {@link #CONNECT_TIMEOUT_MILLIS} before closing what is left. The server calls this after draining
     * its own connections; when requests are still awaiting the upstream's reply then (the drain timed
     * out: a hung upstream), nothing will wait for them any more, so the connections close at once
     * instead, failing those requests, and the server's stop takes no longer than its drain.
     */
    @Override
    public void close() {
        closed = true;
        boolean abandoned = requestsAwaitingReply() > 0;
        for (Slot slot : slots) {
            slot.close(abandoned);
        }
    }

    @Override
    public String toString() {
        return "upstream " + name;
    }

    /** One pool connection, opened on first use and again after it closed or retired. */
    private final class Slot {
        private final EventLoop loop;
        private Channel channel;
        private Future<Channel> opening;

        Slot(EventLoop loop) {
            this.loop = loop;
        }

        /** Makes {@code opened} this slot's connection, forgetting it again when it closes. */
        synchronized void adopt(Channel opened) {
            channel = opened;
            opened.closeFuture().addListener(f -> forget(opened));
            if (closed) {
                opened.pipeline().fireUserEventTriggered(UpstreamClientHandler.RETIRE);
            }
        }

        /** The open connection, or one being opened; a failed or closed one is replaced. */
        synchronized Future<Channel> channel() {
            if (channel != null && channel.isActive()) {
                return channel.eventLoop().newSucceededFuture(channel);
            }
            if (opening != null && !opening.isDone()) {
                return opening;
            }
            Future<Channel> attempt = open(bootstrap, config, name, events, loop);
            opening = attempt;
            attempt.addListener((Future<Channel> done) -> {
                synchronized (Slot.this) {
                    if (opening == attempt) {
                        opening = null;
                    }
                }
                if (done.isSuccess()) {
                    reconnected();
                    adopt(done.getNow());
                }
            });
            return attempt;
        }

        synchronized void forget(Channel gone) {
            if (channel == gone) {
                channel = null;
            }
        }

        /** Takes the connection out of the slot, returning it (null if none). */
        synchronized Channel take() {
            Channel taken = channel;
            channel = null;
            return taken;
        }

        synchronized boolean isOpen() {
            return channel != null && channel.isActive();
        }

        /** @param now close at once, failing what is in flight, instead of a soft disconnect */
        void close(boolean now) {
            Channel current;
            Future<Channel> pendingOpen;
            synchronized (this) {
                current = channel;
                pendingOpen = opening;
            }
            if (current != null && now) {
                current.close().awaitUninterruptibly(CONNECT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            } else if (current != null) {
                current.pipeline().fireUserEventTriggered(UpstreamClientHandler.RETIRE);
                if (!current.closeFuture().awaitUninterruptibly(CONNECT_TIMEOUT_MILLIS)) {
                    current.close().awaitUninterruptibly(CONNECT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
                }
            }
            if (pendingOpen != null) {
                pendingOpen.addListener((Future<Channel> done) -> {
                    if (done.isSuccess()) {
                        done.getNow().close();
                    }
                });
            }
        }
    }
}
