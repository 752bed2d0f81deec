package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The loop on its own thread with real NIO and loopback sockets: an echo server registered on it, a plain blocking
 * client, and a flood of background tasks submitted from another thread. Waits are bounded by latches and socket
 * timeouts; nothing sleeps. Timing assertions compare the two modes on the same machine rather than fixing numbers.
 */
class IoPriorityEventLoopSocketTest {

    private final List<IoPriorityEventLoop> loops = new ArrayList<>();
    private final List<Channel> servers = new ArrayList<>();
    private final List<Thread> flooders = new ArrayList<>();
    private volatile boolean stopFlood;

    @AfterEach
    void tearDown() throws InterruptedException {
        stopFlood = true;
        for (Thread t : flooders) {
            t.interrupt();
            t.join(10_000);
        }
        for (Channel server : servers) {
            server.close().awaitUninterruptibly(10_000);
        }
        for (IoPriorityEventLoop loop : loops) {
            assertThat(loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS))
                    .isTrue();
        }
    }

    private IoPriorityEventLoop start(EventLoopConfig config) {
        IoPriorityEventLoop loop = IoPriorityEventLoop.start(config);
        loops.add(loop);
        return loop;
    }

    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg);
        }
    }

    /** An echo server on the loop (the loop is its only EventLoopGroup); returns the port. */
    private int echoServer(IoPriorityEventLoop loop) {
        Channel server = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new Echo())
                .bind(InetAddress.getLoopbackAddress(), 0)
                .syncUninterruptibly()
                .channel();
        servers.add(server);
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static void busyNanos(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /** From another thread, keeps {@code depth} background tasks of {@code taskNanos} busy CPU pending. */
    private void flood(IoPriorityEventLoop loop, int depth, long taskNanos) {
        Semaphore slots = new Semaphore(depth);
        Thread flooder = new Thread(
                () -> {
                    try {
                        while (!stopFlood) {
                            slots.acquire();
                            loop.executeUnrelated(() -> {
                                busyNanos(taskNanos);
                                slots.release();
                            });
                        }
                    } catch (InterruptedException | RejectedExecutionException e) {
                        // stopped
                    }
                },
                "flooder");
        flooders.add(flooder);
        flooder.start();
    }

    /** {@code n} 8-byte request/echo round trips on a blocking socket, each bounded by a 10 s read timeout. */
    private static long[] roundTripsNanos(int port, int n) throws IOException {
        long[] rtts = new long[n];
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            byte[] request = new byte[8];
            for (int i = 0; i < n; i++) {
                Arrays.fill(request, (byte) i);
                long start = System.nanoTime();
                out.write(request);
                out.flush();
                byte[] reply = in.readNBytes(8);
                rtts[i] = System.nanoTime() - start;
                assertThat(reply).as("echo %d", i).isEqualTo(request);
            }
        }
        Arrays.sort(rtts);
        return rtts;
    }

    @Test
    void priority_floodOfUnrelatedTasks_socketReadsStillServed() throws IOException {
        // 500 pending background tasks of 20 µs each, refilled from another thread as they run: the loop is busy all
        // the time. Every read must still be echoed (no starvation), background work and health checks keep going.
        IoPriorityEventLoop loop = start(EventLoopConfig.DEFAULTS);
        int port = echoServer(loop);
        AtomicInteger healthChecks = new AtomicInteger();
        loop.scheduleHealthCheck(healthChecks::incrementAndGet, 10, TimeUnit.MILLISECONDS);
        flood(loop, 500, 20_000);

        long[] rtts = roundTripsNanos(port, 300);
        long unrelatedBefore = loop.metrics().tasks().unrelated();
        roundTripsNanos(port, 100);

        EventLoopMetrics m = loop.metrics();
        assertThat(rtts).hasSize(300);
        assertThat(m.tasks().unrelated())
                .as("background kept running during the echoes: %s", m)
                .isGreaterThan(unrelatedBefore);
        assertThat(m.unrelatedPending()).as("the flood was on: %s", m).isGreaterThan(0);
        assertThat(m.tasks().ioEvents()).isGreaterThanOrEqualTo(400);
        assertThat(m.dispatchDelay().count()).isGreaterThan(0);
    }

    @Test
    void floodOfUnrelatedTasks_priorityEchoesFasterThanFifo() throws IOException {
        // The same flood against both modes. FIFO (given a 20 ms quantum instead of Netty's 1 s so the test stays
        // short) looks at the socket only between quanta of background work; priority looks before every background
        // task. What is asserted is that structure, counted by the loops themselves, and its direction on the echo
        // times: how much faster priority echoes depends on how busy the machine is (4x and more on a quiet one).
        IoPriorityEventLoop priority = start(EventLoopConfig.DEFAULTS);
        IoPriorityEventLoop fifo = start(EventLoopConfig.DEFAULTS.toBuilder()
                .mode(LoopMode.FIFO)
                .fifoTaskQuantumNanos(20_000_000)
                .build());
        int priorityPort = echoServer(priority);
        int fifoPort = echoServer(fifo);
        flood(priority, 500, 20_000);
        flood(fifo, 500, 20_000);

        EventLoopMetrics priorityBefore = priority.metrics();
        long[] priorityRtts = roundTripsNanos(priorityPort, 50);
        EventLoopMetrics priorityAfter = priority.metrics();
        EventLoopMetrics fifoBefore = fifo.metrics();
        long[] fifoRtts = roundTripsNanos(fifoPort, 10);
        EventLoopMetrics fifoAfter = fifo.metrics();

        long priorityLooks = priorityAfter.dispatchDelay().receiveChecks()
                - priorityBefore.dispatchDelay().receiveChecks();
        long priorityTasks =
                priorityAfter.tasks().unrelated() - priorityBefore.tasks().unrelated();
        long fifoLooks = fifoAfter.dispatchDelay().receiveChecks()
                - fifoBefore.dispatchDelay().receiveChecks();
        long fifoTasks = fifoAfter.tasks().unrelated() - fifoBefore.tasks().unrelated();
        assertThat(priorityTasks).as("the flood ran on the priority loop").isGreaterThan(0);
        assertThat(priorityLooks)
                .as("priority: a look at the socket before every background task (%d tasks)", priorityTasks)
                .isGreaterThanOrEqualTo(priorityTasks);
        assertThat(fifoTasks).as("the flood ran on the FIFO loop").isGreaterThan(0);
        assertThat(fifoLooks)
                .as("FIFO: looks only between quanta of background work (%d tasks)", fifoTasks)
                .isLessThan(fifoTasks / 10);
        long priorityMedian = priorityRtts[priorityRtts.length / 2];
        long fifoMedian = fifoRtts[fifoRtts.length / 2];
        assertThat(priorityMedian)
                .as("median echo ns, priority %d vs fifo %d", priorityMedian, fifoMedian)
                .isLessThan(fifoMedian);
    }

    @Test
    void timers_realClockWokenEarlyManyTimes_fireNotBeforeDeadline() throws InterruptedException {
        // A Netty timer and a periodic unrelated task, both 30 ms out, while another thread keeps waking the loop
        // with background submissions: neither fires early, both fire. What that shows needs wakeups before the
        // deadline; a machine too busy to make any within the 30 ms (the test's thread kept off the CPU) gets
        // another try, on a new loop.
        int early = 0;
        for (int attempt = 0; attempt < 20 && early == 0; attempt++) {
            early = wakeupsBeforeTheDeadline(start(EventLoopConfig.DEFAULTS));
        }
        assertThat(early).as("wakeups before the timers' deadline (20 tries)").isPositive();
    }

    /**
     * Schedules the two timers 30 ms out on {@code loop} and wakes it until both fired, asserting neither fired
     * before its deadline; returns how many wakeups came before the deadline.
     */
    private static int wakeupsBeforeTheDeadline(IoPriorityEventLoop loop) throws InterruptedException {
        CountDownLatch fired = new CountDownLatch(2);
        AtomicLong timerAt = new AtomicLong();
        AtomicLong periodicAt = new AtomicLong();
        long t0 = System.nanoTime();
        loop.schedule(
                () -> {
                    timerAt.set(System.nanoTime());
                    fired.countDown();
                },
                30,
                TimeUnit.MILLISECONDS);
        loop.scheduleUnrelatedAtFixedRate(
                () -> {
                    if (periodicAt.compareAndSet(0, System.nanoTime())) {
                        fired.countDown();
                    }
                },
                30,
                1_000,
                TimeUnit.MILLISECONDS);
        // Wake the loop at once a burst of times, then every 200 µs: how many wakeups fit in the 30 ms
        // depends on how busy the machine is, so the test counts those that came before the deadline
        // rather than asking for a number of them.
        int early = 0;
        for (int i = 0; i < 20; i++) {
            loop.executeUnrelated(() -> {});
            early += System.nanoTime() - t0 < 30_000_000L ? 1 : 0;
        }
        while (!fired.await(200, TimeUnit.MICROSECONDS)) {
            loop.executeUnrelated(() -> {});
            early += System.nanoTime() - t0 < 30_000_000L ? 1 : 0;
            assertThat(System.nanoTime() - t0).as("timers fired within 10 s").isLessThan(10_000_000_000L);
        }
        assertThat(timerAt.get() - t0).isGreaterThanOrEqualTo(30_000_000L);
        assertThat(periodicAt.get() - t0).isGreaterThanOrEqualTo(30_000_000L);
        return early;
    }

    @Test
    void group_twoLoops_channelsSpreadOverLoopsAndAllTerminate() throws IOException, InterruptedException {
        // The group as a server's only EventLoopGroup: the acceptor and the connections are spread round-robin, each
        // loop serves its own, and shutting the group down terminates every loop.
        IoPriorityEventLoopGroup group = new IoPriorityEventLoopGroup(2, EventLoopConfig.DEFAULTS);
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new Echo())
                    .bind(InetAddress.getLoopbackAddress(), 0)
                    .syncUninterruptibly()
                    .channel();
            int port = ((InetSocketAddress) server.localAddress()).getPort();
            assertThat(server.eventLoop().parent()).isSameAs(group);
            roundTripsNanos(port, 20);
            roundTripsNanos(port, 20);
            assertThat(group.metrics())
                    .allSatisfy(m -> assertThat(m.tasks().ioEvents()).isGreaterThan(0));
            server.close().syncUninterruptibly();
        } finally {
            assertThat(group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS))
                    .isTrue();
        }
        assertThat(group.isTerminated()).isTrue();
        assertThat(group.loops())
                .allSatisfy(loop -> assertThat(loop.isTerminated()).isTrue());
    }

    @Test
    void start_ownThread_namedAndStopsOnShutdown() throws InterruptedException {
        IoPriorityEventLoop loop = IoPriorityEventLoop.start(EventLoopConfig.DEFAULTS);
        CountDownLatch ran = new CountDownLatch(1);
        String[] thread = {null};
        loop.executeUnrelated(() -> {
            thread[0] = Thread.currentThread().getName();
            ran.countDown();
        });
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(thread[0]).startsWith("tailor-eventloop-");
        assertThat(loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS))
                .isTrue();
        assertThat(loop.isTerminated()).isTrue();
    }
}
