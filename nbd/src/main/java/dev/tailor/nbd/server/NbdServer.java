package dev.tailor.nbd.server;

import dev.tailor.common.Problem;
import dev.tailor.eventloop.EventLoopConfig;
import dev.tailor.eventloop.IoPriorityEventLoopGroup;
import dev.tailor.eventloop.LoopMode;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.backend.FileRing;
import dev.tailor.nbd.backend.UpstreamBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.TlsSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringDomainSocketChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerDomainSocketChannel;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The NBD server: listens, speaks the protocol ({@link HandshakeHandler}, then {@link TransmissionHandler}) and serves
 * the configured
 * exports from their backends. {@link #start} binds and returns; {@link #close} shuts down cleanly.
 *
 * <p>Threads: one acceptor thread, {@code eventLoopThreads} Netty event loops for the connections (and
 * the upstream connections of proxied exports), and a fixed pool of {@code fileIoThreads} for the
 * blocking file I/O, whose queue is bounded by {@code maxConnections × maxInFlightRequestsPerConnection}
 * (the most requests that can be outstanding at once). With {@code fileIo} io_uring ({@link Transport#IO_URING})
 * file reads, writes and flushes are submitted to io_uring from the loops instead ({@link FileRing}); the pool
 * keeps the rest.
 *
 * <p>Listeners: TCP ({@code address}, {@code port}) and/or a Unix-domain socket ({@code unix}). The loops
 * run on Netty's native io_uring transport for {@code fileIo} io_uring, else on its epoll transport
 * ({@link Transport#EPOLL}: every channel of a loop must be of its transport, so the listeners and upstream
 * connections too), or on NIO where the native library cannot load (NIO's domain sockets for a Unix socket). Epoll for TCP too: NIO's selector wakes a loop under a
 * lock that the waking thread holds through its {@code write} to the wake-up descriptor, and a loop that
 * a file I/O thread woke then blocked on that lock (docs/nbd-record.md, "Performance"). The socket
 * file is created at start and removed on close; a socket left by a server that is gone (nothing
 * accepts on it) is replaced.
 */
public final class NbdServer implements AutoCloseable {

    static {
        // Netty 4.2.18's io_uring channels, with a multishot POLLIN (their default), miss a peer's FIN or RST that
        // arrives together with its last bytes: the read that takes those bytes finds the socket empty and ends
        // the read loop, and the armed poll sees no new edge, so the connection is never closed (a client
        // resetting mid-write stayed open; ConnectionLifecycleTest). A one-shot POLLIN per read loop sees it.
        // Set before the transport's class reads it; an explicit setting wins.
        if (System.getProperty("io.netty.iouring.pollAddMultishotEnabled") == null) {
            System.setProperty("io.netty.iouring.pollAddMultishotEnabled", "false");
        }
    }

    /** How long {@link #close} lets connections finish their requests before closing them anyway. */
    public static final long DRAIN_TIMEOUT_MILLIS = 10_000;

    /**
     * Opens the backend of one export.
     */
    @FunctionalInterface
    public interface BackendFactory {
        /**
         * @throws IOException              when the backend cannot be reached or opened
         * @throws IllegalArgumentException when the export's configuration does not fit the backend
         */
        BlockBackend open(ExportConfig export, BackendContext context) throws IOException;
    }

    /**
     * What backends may use.
     *
     * @param fileIoExecutor the bounded pool for blocking file I/O
     * @param eventLoops     the connections' event loops, for backends with connections of their own
     * @param alloc          the allocator for read buffers
     * @param transport      the loops' transport, whose socket channels a backend's connections must use
     * @param fileRing       the loops' rings for file reads, writes and flushes, or null: all file I/O on
     *                       {@code fileIoExecutor}
     */
    public record BackendContext(
            Executor fileIoExecutor,
            EventLoopGroup eventLoops,
            ByteBufAllocator alloc,
            Transport transport,
            FileRing fileRing) {

        /** A context on the NIO transport. */
        public BackendContext(Executor fileIoExecutor, EventLoopGroup eventLoops, ByteBufAllocator alloc) {
            this(fileIoExecutor, eventLoops, alloc, Transport.NIO, null);
        }
    }

    /** The loops' transport and its channel types. */
    public enum Transport {
        /** The JDK's NIO (TCP, and Unix-domain sockets since JDK 16). */
        NIO(
                NioServerSocketChannel.class,
                NioServerDomainSocketChannel.class,
                NioSocketChannel.class,
                NioDomainSocketChannel.class),
        /** Netty's native epoll transport (Linux). */
        EPOLL(
                EpollServerSocketChannel.class,
                EpollServerDomainSocketChannel.class,
                EpollSocketChannel.class,
                EpollDomainSocketChannel.class),
        /** Netty's native io_uring transport (Linux 5.14 or later), with file I/O on the loops' rings. */
        IO_URING(
                IoUringServerSocketChannel.class,
                IoUringServerDomainSocketChannel.class,
                IoUringSocketChannel.class,
                IoUringDomainSocketChannel.class);

        final Class<? extends ServerChannel> tcpServer;
        final Class<? extends ServerChannel> unixServer;
        /** The client socket channel, for upstream connections on TCP. */
        public final Class<? extends Channel> tcpClient;
        /** The client domain socket channel, for upstream connections on a Unix socket. */
        public final Class<? extends Channel> unixClient;

        Transport(
                Class<? extends ServerChannel> tcpServer,
                Class<? extends ServerChannel> unixServer,
                Class<? extends Channel> tcpClient,
                Class<? extends Channel> unixClient) {
            this.tcpServer = tcpServer;
            this.unixServer = unixServer;
            this.tcpClient = tcpClient;
            this.unixClient = unixClient;
        }

        IoHandlerFactory ioHandlerFactory() {
            return switch (this) {
                case EPOLL -> EpollIoHandler.newFactory();
                case IO_URING -> IoUringIoHandler.newFactory();
                case NIO -> NioIoHandler.newFactory();
            };
        }

        SocketAddress unixAddress(Path path) {
            return this == NIO ? UnixDomainSocketAddress.of(path) : new DomainSocketAddress(path.toString());
        }

        /**
         * For {@code config.fileIo()}: io_uring when asked for, or by default when it is available and an export
         * is a file; else epoll when the native library loads (Linux), else NIO; for TCP and Unix sockets alike.
         *
         * @throws IllegalArgumentException when io_uring is asked for and cannot be used here
         */
        static Transport of(NbdConfig config) {
            boolean files = config.exports().stream().anyMatch(e -> e != null && e.file() != null);
            switch (config.fileIo()) {
                case NbdConfig.FILE_IO_URING -> {
                    if (!IoUring.isAvailable()) {
                        throw new IllegalArgumentException("fileIo: io_uring is not available here ("
                                + IoUring.unavailabilityCause().getMessage() + "; expected: auto or threads)");
                    }
                    return IO_URING;
                }
                case NbdConfig.FILE_IO_AUTO -> {
                    if (files && IoUring.isAvailable()) {
                        return IO_URING;
                    }
                }
                default -> {
                    // threads
                }
            }
            return Epoll.isAvailable() ? EPOLL : NIO;
        }
    }

    /** File exports on {@link FileBackend}, upstream exports on {@link UpstreamBackend}. */
    public static final BackendFactory DEFAULT_BACKENDS = (export, context) -> {
        if (export.file() != null) {
            return FileBackend.open(
                    export.file(),
                    export.size() == null ? null : export.size().bytes(),
                    export.readOnly(),
                    context.fileIoExecutor(),
                    context.fileRing(),
                    context.alloc());
        }
        return UpstreamBackend.connect(
                export.name(),
                export.upstream(),
                context.eventLoops(),
                context.alloc(),
                context.transport().tcpClient,
                context.transport().unixClient);
    };

    /**
     * The largest socket read, in bytes. Netty's default stops at 64 KiB, so a 128 KiB write took two or
     * three {@code read}s; with room for several requests per read, a stream of large writes costs about
     * one (fio's 128 KiB sequential writes at QD 8, counted with strace: 0.86 {@code read}s per request
     * instead of 2.5). The server CPU per request was lower in two of three paired runs (by 30–33 %) and
     * 22 % higher in one, on a machine loaded by other work; the undecoded bytes a paused connection holds grow
     * by at most this much.
     */
    static final int MAX_READ_BYTES = 512 << 10;

    private final EventLoopGroup acceptor;
    private final IoPriorityEventLoopGroup eventLoops;
    private final ThreadPoolExecutor fileIo;
    private final FileRing fileRing;
    private final AdmissionDispatcher segmentAdmission;
    private final FairDispatchDoor door;
    private final ProxyBackgroundWork background;
    private final MetricsEndpoint metrics;
    private final LoopMode loopMode;
    private final Map<String, Export> exports;
    private final ChannelGroup connections;
    private final ConnectionAdmission admission;
    private final Channel listener;
    private final Channel unixListener;
    private final Path unixSocket;
    private final Transport transport;
    private final TlsSettings tls;
    private final IoMetrics io;
    private boolean closed;

    private NbdServer(
            EventLoopGroup acceptor,
            IoPriorityEventLoopGroup eventLoops,
            ThreadPoolExecutor fileIo,
            FileRing fileRing,
            Map<String, Export> exports,
            ChannelGroup connections,
            ConnectionAdmission admission,
            Channel listener,
            Channel unixListener,
            Path unixSocket,
            Transport transport,
            AdmissionDispatcher segmentAdmission,
            FairDispatchDoor door,
            ProxyBackgroundWork background,
            MetricsEndpoint metrics,
            LoopMode loopMode,
            TlsSettings tls,
            IoMetrics io) {
        this.tls = tls;
        this.io = io;
        this.unixListener = unixListener;
        this.unixSocket = unixSocket;
        this.transport = transport;
        this.segmentAdmission = segmentAdmission;
        this.door = door;
        this.background = background;
        this.metrics = metrics;
        this.loopMode = loopMode;
        this.acceptor = acceptor;
        this.eventLoops = eventLoops;
        this.fileIo = fileIo;
        this.fileRing = fileRing;
        this.exports = exports;
        this.connections = connections;
        this.admission = admission;
        this.listener = listener;
    }

    /** Starts a server with the default backends and the direct dispatcher. */
    public static NbdServer start(NbdConfig config) throws IOException {
        return start(config, RequestDispatcher.DIRECT, DEFAULT_BACKENDS);
    }

    /**
     * Opens every export's backend, then listens. When anything fails, what this start opened is closed
     * again and the files it created are removed ({@link BlockBackend#discard}); files that existed
     * before are never touched.
     *
     * @throws IllegalArgumentException when the config has problems (all listed, with what loading the TLS
     *                                  credentials finds: a file that is not PEM, a key that is not the
     *                                  certificate's) or an export does not fit its backend (the message
     *                                  starts with {@code export NAME: })
     * @throws IOException              when a backend cannot be opened or the address is not available
     */
    public static NbdServer start(NbdConfig config, RequestDispatcher dispatcher, BackendFactory backends)
            throws IOException {
        return start(config, dispatcher, backends, System::nanoTime);
    }

    /**
     * As above, with the request-timing clock ({@link IoMetrics#nowNanos()}; tests drive it by hand).
     *
     * @param requestClock the clock of request durations and loop tracing, ns
     */
    static NbdServer start(
            NbdConfig config, RequestDispatcher dispatcher, BackendFactory backends, LongSupplier requestClock)
            throws IOException {
        List<String> problems =
                new ArrayList<>(config.problems().stream().map(Problem::message).toList());
        config.listenerProblems().forEach(problem -> problems.add(problem.message()));
        ServerTls tls = null;
        if (config.tls().enabled() && config.tls().problems().isEmpty()) {
            // The fields fit: the credentials are loaded now, before anything is opened or created.
            try {
                tls = ServerTls.load(config.tls());
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        Limits limits = config.limits();
        Transport transport = Transport.of(config);
        EventLoopGroup acceptor = new MultiThreadIoEventLoopGroup(
                1, new DefaultThreadFactory("tailor-nbd-accept", true), transport.ioHandlerFactory());
        // The connections' loops: I/O first, the proxy's background work within an allowance, or one
        // FIFO queue as a plain loop (config loop.mode; docs/eventloop.md).
        IoPriorityEventLoopGroup eventLoops = new IoPriorityEventLoopGroup(
                config.eventLoopThreads(),
                EventLoopConfig.DEFAULTS.toBuilder()
                        .mode(config.loop().loopMode())
                        .ioHandlerFactory(transport.ioHandlerFactory())
                        .threadFactory(new DefaultThreadFactory("tailor-nbd-io", true))
                        .build());
        int queueCapacity = (int) Math.min(Integer.MAX_VALUE, limits.maxRequestsInFlight());
        ThreadPoolExecutor fileIo = new ThreadPoolExecutor(
                config.fileIoThreads(),
                config.fileIoThreads(),
                0,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(queueCapacity),
                new DefaultThreadFactory("tailor-nbd-file", true));
        ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
        Map<String, Export> exports = new LinkedHashMap<>();
        IoMetrics io = new IoMetrics(
                requestClock,
                true,
                config.loop().slowRequestThresholdNanos(),
                config.loop().slowTopWindowNanos(),
                config.admission().segmentSize().bytes());
        AdmissionDispatcher segmentAdmission = null;
        FairDispatchDoor door = null;
        ProxyBackgroundWork background = null;
        MetricsEndpoint metrics = null;
        Channel unixListener = null;
        Path unixSocket = null;
        boolean unixCreated = false;
        FileRing fileRing = null;
        try {
            if (transport == Transport.IO_URING) {
                fileRing = FileRing.start(eventLoops);
            }
            BackendContext context = new BackendContext(fileIo, eventLoops, alloc, transport, fileRing);
            for (ExportConfig exportConfig : config.exports()) {
                BlockBackend backend;
                try {
                    backend = backends.open(exportConfig, context);
                } catch (IOException e) {
                    throw new IOException("export " + exportConfig.name() + ": " + e.getMessage(), e);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("export " + exportConfig.name() + ": " + e.getMessage(), e);
                }
                if (exportConfig.size() != null
                        && exportConfig.upstream() != null
                        && exportConfig.size().bytes() != backend.sizeBytes()) {
                    backend.discard();
                    throw new IllegalArgumentException("export " + exportConfig.name() + ": size " + exportConfig.size()
                            + " but the upstream export is " + backend.sizeBytes() + " bytes (expected: equal, or"
                            + " leave size out)");
                }
                try {
                    exports.put(exportConfig.name(), new Export(exportConfig, backend, limits.maxRequestBytes(), io));
                } catch (RuntimeException e) {
                    backend.discard();
                    throw e;
                }
            }
            Map<String, Export> frozen = Collections.unmodifiableMap(exports);
            if (dispatcher == RequestDispatcher.DIRECT) {
                // Exports are in config order (a LinkedHashMap), as their commitments.
                if (config.fairDispatch().on(config.admission())) {
                    door = FairDispatchDoor.of(
                            config, List.copyOf(frozen.values()), RequestDispatcher.DIRECT, System::nanoTime);
                    dispatcher = door;
                }
                if (config.admission().enabled()) {
                    segmentAdmission = new AdmissionDispatcher(
                            config.admission().toAdmissionConfig(limits),
                            List.copyOf(frozen.values()),
                            config.admission().commitments(config.exports()),
                            door == null ? RequestDispatcher.DIRECT : door,
                            System::nanoTime);
                    dispatcher = segmentAdmission;
                }
            }
            ConnectionAdmission admission = new ConnectionAdmission(
                    limits.maxConnections(), limits.maxHandshakes(), limits.maxConnectionsPerAddress());
            background = new ProxyBackgroundWork(
                    eventLoops,
                    segmentAdmission,
                    List.copyOf(frozen.values()),
                    config.loop().background(),
                    System::nanoTime,
                    admission,
                    io,
                    door);
            ServerContext server = new ServerContext(frozen, limits, dispatcher, admission, io, tls);
            ChannelGroup connections = new DefaultChannelGroup("tailor-nbd", GlobalEventExecutor.INSTANCE);
            ChannelInitializer<Channel> initializer = new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel channel) {
                    if (!admission.admit(channel)) {
                        channel.close();
                        return;
                    }
                    channel.closeFuture().addListener(f -> admission.closed(channel));
                    connections.add(channel);
                    channel.pipeline().addLast("handshake", new HandshakeHandler(server));
                    channel.pipeline().addLast("errors", ConnectionErrors.INSTANCE);
                }
            };
            if (config.unixSocket() != null) {
                unixSocket = config.unixSocket().toAbsolutePath();
                removeStaleSocket(unixSocket);
                ServerBootstrap unixBootstrap = new ServerBootstrap()
                        .group(acceptor, eventLoops)
                        .channel(transport.unixServer)
                        .childOption(ChannelOption.ALLOCATOR, alloc)
                        .childOption(ChannelOption.RCVBUF_ALLOCATOR, receiveBuffers())
                        .childHandler(initializer);
                unixListener = bind(unixBootstrap, transport.unixAddress(unixSocket), "unix socket " + unixSocket);
                unixCreated = true;
            }
            Channel listener = null;
            if (config.listensOnTcp()) {
                ServerBootstrap bootstrap = new ServerBootstrap()
                        .group(acceptor, eventLoops)
                        .channel(transport.tcpServer)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childOption(ChannelOption.SO_KEEPALIVE, true)
                        .childOption(ChannelOption.ALLOCATOR, alloc)
                        .childOption(ChannelOption.RCVBUF_ALLOCATOR, receiveBuffers())
                        .childHandler(initializer);
                try {
                    listener = bind(
                            bootstrap,
                            new InetSocketAddress(config.address(), config.port()),
                            config.address() + ":" + config.port());
                } catch (IOException e) {
                    if (unixListener != null) {
                        unixListener.close().awaitUninterruptibly();
                    }
                    throw e;
                }
            }
            InetSocketAddress metricsAddress = config.loop().metricsAddress();
            if (metricsAddress != null) {
                try {
                    metrics = MetricsEndpoint.start(
                            metricsAddress, background, config.loop().healthCheckPeriodMillis());
                } catch (IOException e) {
                    if (listener != null) {
                        listener.close().awaitUninterruptibly();
                    }
                    if (unixListener != null) {
                        unixListener.close().awaitUninterruptibly();
                    }
                    throw e;
                }
            }
            return new NbdServer(
                    acceptor,
                    eventLoops,
                    fileIo,
                    fileRing,
                    frozen,
                    connections,
                    admission,
                    listener,
                    unixListener,
                    unixSocket,
                    transport,
                    segmentAdmission,
                    door,
                    background,
                    metrics,
                    config.loop().loopMode(),
                    config.tls(),
                    io);
        } catch (IOException | RuntimeException e) {
            if (background != null) {
                background.close();
            }
            if (unixCreated) {
                Files.deleteIfExists(unixSocket);
            }
            // Files this start created go again; files that existed before are never touched.
            shutDown(acceptor, eventLoops, fileIo, fileRing, exports.values(), true);
            throw e;
        }
    }

    /** Netty's adaptive receive buffers (they grow while reads fill them), up to {@link #MAX_READ_BYTES}. */
    private static RecvByteBufAllocator receiveBuffers() {
        return new AdaptiveRecvByteBufAllocator(64, 16 << 10, MAX_READ_BYTES);
    }

    private static Channel bind(ServerBootstrap bootstrap, SocketAddress address, String what) throws IOException {
        try {
            return bootstrap.bind(address).sync().channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while binding " + what, e);
        } catch (Exception e) {
            // Netty's native transports say "bind(..) failed with error(-98): Address already in use"; the JDK's
            // and nbdkit's say the reason alone.
            String reason = String.valueOf(e.getMessage())
                    .replaceFirst("^\\w+\\(\\.\\.\\) failed with error\\(-?\\d+\\): ", "");
            throw new IOException("cannot listen on " + what + " (" + reason + ")", e);
        }
    }

    /**
     * Removes a socket file at {@code path} that nothing accepts on any more (a server that was killed
     * leaves its socket behind).
     *
     * @throws IOException when something still accepts on it (another server: it is left alone)
     */
    private static void removeStaleSocket(Path path) throws IOException {
        if (!Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!NbdConfig.unixProblems("unix", path.toString()).isEmpty()) {
            return; // not a socket: the bind fails and says so
        }
        boolean live;
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            live = probe.connect(UnixDomainSocketAddress.of(path));
        } catch (IOException e) {
            live = false; // refused: nothing listens any more
        }
        if (live) {
            throw new IOException("cannot listen on unix socket " + path + " (a server is accepting on it already)");
        }
        Files.deleteIfExists(path);
    }

    /**
     * The TCP address the server listens on (with the actual port when the config asked for port 0), or
     * {@code null} when it listens on a Unix socket only.
     */
    public InetSocketAddress localAddress() {
        return listener == null ? null : (InetSocketAddress) listener.localAddress();
    }

    /** The Unix-domain socket the server listens on (absolute), or {@code null}. */
    public Path unixSocket() {
        return unixSocket;
    }

    /** The TLS settings: {@code off}, or {@code on} / {@code require} with the certificate folder. */
    public TlsSettings tls() {
        return tls;
    }

    /** The server's I/O metrics (also on {@code /metrics}). */
    public IoMetrics ioMetrics() {
        return io;
    }

    /** The loops' transport. */
    public Transport transport() {
        return transport;
    }

    /** The exports in configuration order. */
    public List<Export> exports() {
        return new ArrayList<>(exports.values());
    }

    /** Segment admission in front of the backends, or {@code null} when it is off. */
    public AdmissionDispatcher admission() {
        return segmentAdmission;
    }

    /** The fair dispatch door in front of the backends, or {@code null} when it is off. */
    public FairDispatchDoor fairDispatch() {
        return door;
    }

    /** Where {@code /metrics} and {@code /healthz} are served, or {@code null} without {@code loop.metricsListen}. */
    public InetSocketAddress metricsAddress() {
        return metrics == null ? null : metrics.address();
    }

    /** The proxy's background work on its event loops (statistics, metrics, health checks, maintenance). */
    public ProxyBackgroundWork backgroundWork() {
        return background;
    }

    /** The connections' event loops. */
    public IoPriorityEventLoopGroup eventLoops() {
        return eventLoops;
    }

    /** The event loops' mode. */
    public LoopMode loopMode() {
        return loopMode;
    }

    /** How many client connections are open now. */
    public int connections() {
        return connections.size();
    }

    /**
     * The requests the server has received and not yet answered, over every connection: what {@link #close}
     * waits for, up to {@link #DRAIN_TIMEOUT_MILLIS}. Read from any thread; a moment's count.
     */
    public int requestsInFlight() {
        int requests = 0;
        for (Channel connection : connections) {
            if (connection.pipeline().get(TransmissionHandler.class) instanceof TransmissionHandler transmission) {
                requests += transmission.requestsInFlight();
            }
        }
        return requests;
    }

    /**
     * Stops accepting, lets every connection finish the requests it has in flight (up to 10 s; new
     * requests are not read, and connections still in the handshake are closed), then closes the
     * connections, the backends and the threads, and logs the connection refusals not yet summed up.
     * Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (listener != null) {
            listener.close().awaitUninterruptibly();
        }
        if (unixListener != null) {
            unixListener.close().awaitUninterruptibly();
            try {
                Files.deleteIfExists(unixSocket);
            } catch (IOException e) {
                System.getLogger(NbdServer.class.getName())
                        .log(System.Logger.Level.WARNING, () -> "could not remove the socket " + unixSocket + ": " + e);
            }
        }
        for (Channel connection : connections) {
            connection.pipeline().fireUserEventTriggered(TransmissionHandler.SHUTDOWN);
        }
        // What waits in admission or at the door fails with NBD_ESHUTDOWN now, as the protocol has it for
        // a server going away; only what is at the backends is drained.
        if (segmentAdmission != null) {
            segmentAdmission.close();
        }
        if (door != null) {
            door.close();
        }
        if (!connections.newCloseFuture().awaitUninterruptibly(DRAIN_TIMEOUT_MILLIS)) {
            connections.close().awaitUninterruptibly();
        }
        if (metrics != null) {
            metrics.close();
        }
        background.close();
        try {
            shutDown(acceptor, eventLoops, fileIo, fileRing, exports.values(), false);
        } finally {
            // Nothing is accepted any more: the refusals still waiting for their summary are logged now.
            admission.summarizeRefusals();
        }
    }

    /**
     * The order matters: the file I/O pool finishes first (its completions run listeners on the event
     * loops, which release buffers), then the backends, then the event loops.
     */
    private static void shutDown(
            EventLoopGroup acceptor,
            EventLoopGroup eventLoops,
            ThreadPoolExecutor fileIo,
            FileRing fileRing,
            Iterable<Export> exports,
            boolean failedStart) {
        fileIo.shutdown();
        try {
            if (!fileIo.awaitTermination(DRAIN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                fileIo.shutdownNow();
            }
        } catch (InterruptedException e) {
            fileIo.shutdownNow();
            Thread.currentThread().interrupt();
        }
        for (Export export : exports) {
            if (failedStart) {
                export.backend().discard();
            } else {
                export.backend().close();
            }
        }
        if (fileRing != null) {
            fileRing.close();
        }
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        eventLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    @Override
    public String toString() {
        return "NBD server on " + (listener == null ? unixSocket : localAddress()) + " with " + exports.size()
                + " export(s)";
    }
}
