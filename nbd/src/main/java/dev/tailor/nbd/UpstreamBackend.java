package dev.tailor.nbd;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
 * {@link #connect} (it learns the size, flags and block sizes); the others, and replacements for
 * connections that broke, are opened on first use. A request whose connection breaks fails with
 * {@code NBD_EIO}; it is not retried (a write may or may not have reached the upstream).
 *
 * <p>Features are the upstream's: read-only, flush, FUA, trim and write-zeroes exactly when the
 * upstream offers them. {@code NBD_CMD_FLAG_DF} is dropped from reads: the pool does not negotiate
 * structured replies, so the upstream answers every read with one simple reply.
 */
public final class UpstreamBackend implements BlockBackend {

    /** How long connecting and the handshake may take. */
    static final int CONNECT_TIMEOUT_MILLIS = 10_000;

    /** What the upstream said about its export in the handshake. */
    record Description(long sizeBytes, int transmissionFlags, BlockSizes blockSizes) {
    }

    private final NbdConfig.Upstream config;
    private final Bootstrap bootstrap;
    private final Description description;
    private final Slot[] slots;
    private final AtomicInteger next = new AtomicInteger();
    private volatile boolean closed;

    private UpstreamBackend(NbdConfig.Upstream config, Bootstrap bootstrap, Description description, Channel first,
            EventLoopGroup eventLoops) {
        this.config = config;
        this.bootstrap = bootstrap;
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
        slots[0].channel = first;
    }

    /**
     * Connects the first pool connection and does the handshake.
     *
     * @throws IOException when the upstream cannot be reached, does not speak fixed newstyle NBD, or
     *                     refuses the export
     */
    public static UpstreamBackend connect(NbdConfig.Upstream config, EventLoopGroup eventLoops, ByteBufAllocator alloc)
            throws IOException {
        Bootstrap bootstrap = new Bootstrap()
                .group(eventLoops)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.ALLOCATOR, alloc)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .remoteAddress(InetSocketAddress.createUnresolved(config.host(), config.port()));
        EventLoop loop = eventLoops.next();
        Future<Channel> ready = open(bootstrap, config, loop).awaitUninterruptibly();
        if (!ready.isSuccess()) {
            Throwable cause = ready.cause();
            throw new IOException("upstream nbd://" + config.host() + ":" + config.port() + "/" + config.export()
                    + ": " + (cause.getMessage() == null ? cause.toString() : cause.getMessage()), cause);
        }
        Channel first = ready.getNow();
        Description description = first.pipeline().get(UpstreamClientHandler.class).description();
        return new UpstreamBackend(config, bootstrap, description, first, eventLoops);
    }

    /** Opens one connection on {@code loop}; the future succeeds once its handshake is done. */
    private static Future<Channel> open(Bootstrap bootstrap, NbdConfig.Upstream config, EventLoop loop) {
        Promise<Channel> ready = loop.newPromise();
        Bootstrap b = bootstrap.clone(loop).handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel channel) {
                channel.pipeline().addLast(new UpstreamClientHandler(config.export(), ready, CONNECT_TIMEOUT_MILLIS));
            }
        });
        b.connect().addListener((ChannelFuture connected) -> {
            if (!connected.isSuccess()) {
                ready.tryFailure(connected.cause());
            }
        });
        return ready;
    }

    @Override
    public long sizeBytes() {
        return description.sizeBytes();
    }

    @Override
    public BackendFeatures features() {
        int flags = description.transmissionFlags();
        return new BackendFeatures((flags & NbdProtocol.FLAG_READ_ONLY) != 0,
                (flags & NbdProtocol.FLAG_SEND_FLUSH) != 0, (flags & NbdProtocol.FLAG_SEND_FUA) != 0,
                (flags & NbdProtocol.FLAG_SEND_TRIM) != 0, (flags & NbdProtocol.FLAG_SEND_WRITE_ZEROES) != 0, true);
    }

    @Override
    public BlockSizes blockSizes() {
        return description.blockSizes();
    }

    /** How many connections the pool may open: the configured number with multi-conn, else 1. */
    public int poolSize() {
        return slots.length;
    }

    @Override
    public void submit(BlockRequest request, Promise<ByteBuf> completion) {
        if (closed) {
            request.release();
            completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
            return;
        }
        Slot slot = pick();
        slot.channel().addListener((Future<Channel> ready) -> {
            if (!ready.isSuccess()) {
                request.release();
                completion.tryFailure(new NbdException(NbdProtocol.EIO, "upstream nbd://" + config.host() + ":"
                        + config.port() + " unavailable: " + ready.cause().getMessage()));
                return;
            }
            UpstreamClientHandler.Forward forward = new UpstreamClientHandler.Forward(request, completion);
            ready.getNow().writeAndFlush(forward).addListener(written -> {
                if (!written.isSuccess()) {
                    completion.tryFailure(new NbdException(NbdProtocol.EIO, "upstream connection lost: "
                            + written.cause().getMessage()));
                }
            });
        });
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

    @Override
    public void close() {
        closed = true;
        for (Slot slot : slots) {
            slot.close();
        }
    }

    @Override
    public String toString() {
        return "upstream nbd://" + config.host() + ":" + config.port() + "/" + config.export();
    }

    /** One pool connection, opened on first use and again after it broke. */
    private final class Slot {
        private final EventLoop loop;
        private Channel channel;
        private Future<Channel> opening;

        Slot(EventLoop loop) {
            this.loop = loop;
        }

        synchronized Future<Channel> channel() {
            if (channel != null && channel.isActive()) {
                return channel.eventLoop().newSucceededFuture(channel);
            }
            if (opening == null || (opening.isDone() && (!opening.isSuccess() || !opening.getNow().isActive()))) {
                opening = open(bootstrap, config, loop);
                opening.addListener((Future<Channel> done) -> {
                    if (done.isSuccess()) {
                        synchronized (Slot.this) {
                            channel = done.getNow();
                        }
                        if (closed) {
                            done.getNow().close();
                        }
                    }
                });
            }
            return opening;
        }

        synchronized void close() {
            if (channel != null) {
                channel.close().awaitUninterruptibly(CONNECT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            }
            if (opening != null) {
                opening.addListener((Future<Channel> done) -> {
                    if (done.isSuccess()) {
                        done.getNow().close();
                    }
                });
            }
        }
    }
}
