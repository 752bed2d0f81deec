package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The reply timeout of one upstream pool connection ({@link UpstreamClientHandler}) in an
 * {@link EmbeddedChannel} whose clock only moves when the test moves it: the upstream's side of the wire is
 * written by the test, which answers a request, or does not. And the same deadline for a request that waits
 * for a new connection ({@link UpstreamBackend#whenReadyOrDue}), and the connect timeout's message.
 */
class UpstreamReplyTimeoutTest {

    private static final String UPSTREAM = "nbd://127.0.0.1:10809/";
    private static final long TIMEOUT_MILLIS = 200;

    private final List<String> leaving = new ArrayList<>();
    private final List<Channel> retired = new ArrayList<>();
    private EmbeddedChannel channel;
    private long nextCookie;

    private final UpstreamClientHandler.Events events = new UpstreamClientHandler.Events() {
        @Override
        public void retired(Channel c) {
            retired.add(c);
        }

        @Override
        public void upstreamLeaving(String cause) {
            leaving.add(cause);
        }
    };

    /** A connection past its handshake (simple replies only), with the clock frozen. */
    private void connect(long requestTimeoutNanos) {
        connect(requestTimeoutNanos, TimeUnit.DAYS.toNanos(1));
    }

    /** As {@link #connect(long)}, retiring after {@code idleTimeoutNanos} without a request in flight. */
    private void connect(long requestTimeoutNanos, long idleTimeoutNanos) {
        connect(requestTimeoutNanos, idleTimeoutNanos, null);
    }

    /** As {@link #connect(long, long)}, on {@code ticker}'s time when not null (the test moves it). */
    private void connect(long requestTimeoutNanos, long idleTimeoutNanos, Ticker ticker) {
        Promise<Channel> ready = ImmediateEventExecutor.INSTANCE.newPromise();
        UpstreamClientHandler handler = new UpstreamClientHandler(
                UPSTREAM, "", ready, TimeUnit.SECONDS.toNanos(10), idleTimeoutNanos, requestTimeoutNanos, events);
        if (ticker == null) {
            channel = new EmbeddedChannel(handler);
            channel.freezeTime();
        } else {
            channel = EmbeddedChannel.builder().ticker(ticker).handlers(handler).build();
        }
        ByteBuf greeting = Unpooled.buffer();
        greeting.writeLong(NbdProtocol.NBDMAGIC);
        greeting.writeLong(NbdProtocol.IHAVEOPT);
        greeting.writeShort(NbdProtocol.FLAG_FIXED_NEWSTYLE | NbdProtocol.FLAG_NO_ZEROES);
        channel.writeInbound(greeting);
        // Structured replies refused: the handler goes on to GO.
        channel.writeInbound(optionReply(NbdProtocol.OPT_STRUCTURED_REPLY, NbdProtocol.REP_ERR_UNSUP, new byte[0]));
        ByteBuf export = Unpooled.buffer();
        export.writeShort(NbdProtocol.INFO_EXPORT);
        export.writeLong(1 << 20);
        export.writeShort(NbdProtocol.FLAG_HAS_FLAGS | NbdProtocol.FLAG_SEND_FLUSH);
        channel.writeInbound(optionReply(NbdProtocol.OPT_GO, NbdProtocol.REP_INFO, bytes(export)));
        channel.writeInbound(optionReply(NbdProtocol.OPT_GO, NbdProtocol.REP_ACK, new byte[0]));
        assertThat(ready.isSuccess()).as("handshake done").isTrue();
        discardOutbound();
    }

    private static byte[] bytes(ByteBuf buf) {
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        return bytes;
    }

    private static ByteBuf optionReply(int option, int type, byte[] data) {
        ByteBuf reply = Unpooled.buffer();
        reply.writeLong(NbdProtocol.OPTION_REPLY_MAGIC);
        reply.writeInt(option);
        reply.writeInt(type);
        reply.writeInt(data.length);
        reply.writeBytes(data);
        return reply;
    }

    private void discardOutbound() {
        Object out;
        while ((out = channel.readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(out);
        }
    }

    /** Sends a request through the handler; returns its reply's promise. Its cookie upstream is the next one. */
    private Promise<ByteBuf> send(int command) {
        return send(command, 0);
    }

    /**
     * As {@link #send(int)}, for a request the pool took {@code waitedMillis} ago: it waited that long for
     * this connection (connecting, the handshake).
     */
    private Promise<ByteBuf> send(int command, long waitedMillis) {
        Promise<ByteBuf> reply = ImmediateEventExecutor.INSTANCE.newPromise();
        long length = command == NbdProtocol.CMD_FLUSH ? 0 : 4096;
        long taken =
                UpstreamClientHandler.clockNanos(channel.eventLoop()) - TimeUnit.MILLISECONDS.toNanos(waitedMillis);
        channel.writeAndFlush(new UpstreamClientHandler.Forward(
                new BlockRequest(command, 0, nextCookie++, 0, length, Unpooled.EMPTY_BUFFER), reply, taken));
        discardOutbound();
        return reply;
    }

    /** The commands of the requests the handler wrote since the last look, in order. */
    private List<Integer> commandsSent() {
        List<Integer> commands = new ArrayList<>();
        ByteBuf out;
        while ((out = channel.readOutbound()) != null) {
            if (out.readableBytes() >= NbdProtocol.REQUEST_HEADER_BYTES
                    && out.getInt(out.readerIndex()) == NbdProtocol.REQUEST_MAGIC) {
                commands.add(out.getUnsignedShort(out.readerIndex() + 6));
            }
            out.release();
        }
        return commands;
    }

    /** The upstream's simple reply to the request with cookie {@code cookie}: a READ's 4 KiB of zeroes. */
    private void answer(long cookie, boolean read) {
        ByteBuf reply = Unpooled.buffer();
        reply.writeInt(NbdProtocol.SIMPLE_REPLY_MAGIC);
        reply.writeInt(0);
        reply.writeLong(cookie);
        if (read) {
            reply.writeZero(4096);
        }
        channel.writeInbound(reply);
    }

    private void advanceMillis(long millis) {
        channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();
    }

    private static void release(Promise<ByteBuf> reply) {
        if (reply.isSuccess() && reply.getNow() != null) {
            reply.getNow().release();
        }
    }

    @AfterEach
    void close() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void aRequestWithoutAReply_losesTheConnectionAtItsDeadline_andFailsWithEio() {
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS));
        Promise<ByteBuf> read = send(NbdProtocol.CMD_READ);

        advanceMillis(TIMEOUT_MILLIS - 1);
        assertThat(read.isDone())
                .as("answered or failed 1 ms before the deadline")
                .isFalse();
        assertThat(channel.isOpen()).isTrue();

        advanceMillis(1);
        assertThat(read.isDone()).as("failed at the deadline").isTrue();
        assertThat(read.cause())
                .isInstanceOf(NbdException.class)
                .hasMessage("upstream " + UPSTREAM + ": no reply to a READ in 0.2 s: the connection was closed"
                        + " with the request in flight");
        assertThat(((NbdException) read.cause()).error()).isEqualTo(NbdProtocol.EIO);
        assertThat(channel.isOpen()).as("the connection is closed").isFalse();
        assertThat(leaving).as("the pool is told once, with the cause").containsExactly("no reply to a READ in 0.2 s");
    }

    @Test
    void everyRequestInFlightFails_andTheOldestNamesTheCause() {
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS));
        Promise<ByteBuf> flush = send(NbdProtocol.CMD_FLUSH);
        advanceMillis(50);
        Promise<ByteBuf> read = send(NbdProtocol.CMD_READ);
        Promise<ByteBuf> answered = send(NbdProtocol.CMD_READ);
        answer(2, true);
        assertThat(answered.isSuccess()).isTrue();
        release(answered);

        advanceMillis(TIMEOUT_MILLIS - 50);
        assertThat(leaving).containsExactly("no reply to a FLUSH in 0.2 s");
        assertThat(flush.cause()).isInstanceOf(NbdException.class);
        assertThat(read.cause())
                .as("the younger request fails with it: the connection is gone")
                .isInstanceOf(NbdException.class)
                .hasMessageContaining("no reply to a FLUSH in 0.2 s");
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void repliesWithinTheTimeout_keepTheConnection_howeverLongItIsBusy() {
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS));
        // Each request is answered just inside its own timeout, and the next is sent before: the
        // connection always has one in flight, for ten times the timeout.
        Promise<ByteBuf> previous = send(NbdProtocol.CMD_READ);
        for (long cookie = 1; cookie <= 10; cookie++) {
            advanceMillis(TIMEOUT_MILLIS - 10);
            Promise<ByteBuf> next = send(NbdProtocol.CMD_READ);
            answer(cookie - 1, true);
            assertThat(previous.isSuccess())
                    .as("request %d answered", cookie - 1)
                    .isTrue();
            release(previous);
            previous = next;
        }
        advanceMillis(TIMEOUT_MILLIS - 10);
        answer(10, true);
        assertThat(previous.isSuccess()).isTrue();
        release(previous);
        advanceMillis(10 * TIMEOUT_MILLIS);
        assertThat(channel.isOpen()).as("never lost").isTrue();
        assertThat(leaving).isEmpty();
    }

    @Test
    void aRequestThatWaitedForItsConnection_isDueATimeoutAfterThePoolTookIt_notAfterItWasWritten() {
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS));
        // A FLUSH taken now schedules the check for 200 ms from now; the READ written after it waited 150 ms
        // for the connection, so it is due 50 ms from now, and the check must come for it then.
        Promise<ByteBuf> flush = send(NbdProtocol.CMD_FLUSH);
        Promise<ByteBuf> read = send(NbdProtocol.CMD_READ, 150);

        advanceMillis(TIMEOUT_MILLIS - 150 - 1);
        assertThat(read.isDone()).as("failed 1 ms before its deadline").isFalse();
        assertThat(channel.isOpen()).isTrue();

        advanceMillis(1);
        assertThat(read.cause())
                .as("failed 200 ms after the pool took it")
                .isInstanceOf(NbdException.class)
                .hasMessage("upstream " + UPSTREAM + ": no reply to a READ in 0.2 s: the connection was closed"
                        + " with the request in flight");
        assertThat(flush.cause()).as("the connection is gone").isInstanceOf(NbdException.class);
        assertThat(leaving).containsExactly("no reply to a READ in 0.2 s");
    }

    @Test
    void aRequestTakenOnAnotherEventLoop_isDueOnTheSameClock_whateverEachLoopsTickerCountsFrom() {
        // Each of the server's event loops has a ticker counting from the loop's own start; the pool takes a
        // request on one loop and may send it on another. Here the connection's loop started 5 s after the
        // one that took the request.
        MockTicker taking = Ticker.newMockTicker();
        Ticker later = new Ticker() {
            @Override
            public long initialNanoTime() {
                return taking.initialNanoTime() + TimeUnit.SECONDS.toNanos(5);
            }

            @Override
            public long nanoTime() {
                return taking.initialNanoTime() + taking.nanoTime() - initialNanoTime();
            }

            @Override
            public void sleep(long delay, TimeUnit unit) throws InterruptedException {
                taking.sleep(delay, unit);
            }
        };
        taking.advance(10, TimeUnit.SECONDS);
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS), TimeUnit.DAYS.toNanos(1), later);
        long taken = taking.initialNanoTime() + taking.nanoTime() - TimeUnit.MILLISECONDS.toNanos(150);
        Promise<ByteBuf> read = ImmediateEventExecutor.INSTANCE.newPromise();
        channel.writeAndFlush(new UpstreamClientHandler.Forward(
                new BlockRequest(NbdProtocol.CMD_READ, 0, 0, 0, 4096, Unpooled.EMPTY_BUFFER), read, taken));
        discardOutbound();

        taking.advance(TIMEOUT_MILLIS - 150 - 1, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(read.isDone()).as("failed 1 ms before its deadline").isFalse();
        taking.advance(1, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(read.cause()).as("failed 200 ms after it was taken").isInstanceOf(NbdException.class);
    }

    @Test
    void theIdleFlushWithoutAReply_isNamedAsTheProxysOwn() {
        connect(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS), TimeUnit.SECONDS.toNanos(1));
        Promise<ByteBuf> write = send(NbdProtocol.CMD_WRITE);
        answer(0, false);
        assertThat(write.isSuccess()).isTrue();

        // Idle for a second with a write not covered by a flush: the connection flushes before it retires.
        advanceMillis(1_000);
        assertThat(commandsSent()).as("the proxy's own FLUSH").containsExactly(NbdProtocol.CMD_FLUSH);
        advanceMillis(TIMEOUT_MILLIS);
        assertThat(channel.isOpen()).isFalse();
        assertThat(leaving)
                .as("no client sent a FLUSH: the cause says whose it was")
                .containsExactly("no reply in 0.2 s to the FLUSH the proxy sends before closing an idle connection");
    }

    @Test
    void noHandshake_failsTheConnectionAfterTheConnectTimeout_inSeconds() {
        MockTicker ticker = Ticker.newMockTicker();
        Promise<Channel> ready = ImmediateEventExecutor.INSTANCE.newPromise();
        channel = EmbeddedChannel.builder()
                .ticker(ticker)
                .handlers(new UpstreamClientHandler(
                        UPSTREAM,
                        "",
                        ready,
                        TimeUnit.SECONDS.toNanos(10),
                        TimeUnit.DAYS.toNanos(1),
                        TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS),
                        events))
                .build();

        ticker.advance(10_000 - 1, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(ready.isDone()).as("failed 1 ms early").isFalse();

        ticker.advance(1, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(ready.cause()).hasMessage("no handshake within 10 s");
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aRequestWaitingForAConnection_isDueAtItsDeadline_andOnlyOnceWhateverTheConnectionDoesLater() {
        channel = new EmbeddedChannel();
        channel.freezeTime();
        EventLoop loop = channel.eventLoop();
        Promise<Channel> connection = loop.newPromise();
        List<String> outcomes = new ArrayList<>();
        UpstreamBackend.whenReadyOrDue(
                connection,
                loop,
                UpstreamClientHandler.clockNanos(loop) + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS),
                ready -> outcomes.add("ready"),
                () -> outcomes.add("due"));

        advanceMillis(TIMEOUT_MILLIS - 1);
        assertThat(outcomes).as("1 ms before the deadline").isEmpty();
        advanceMillis(1);
        assertThat(outcomes).containsExactly("due");

        connection.setSuccess(channel);
        advanceMillis(TIMEOUT_MILLIS);
        assertThat(outcomes)
                .as("the connection's handshake done later changes nothing")
                .containsExactly("due");
    }

    @Test
    void aConnectionReadyInTime_isUsed_andTheDeadlineIsForgotten() {
        channel = new EmbeddedChannel();
        channel.freezeTime();
        EventLoop loop = channel.eventLoop();
        Promise<Channel> connection = loop.newPromise();
        List<String> outcomes = new ArrayList<>();
        UpstreamBackend.whenReadyOrDue(
                connection,
                loop,
                UpstreamClientHandler.clockNanos(loop) + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS),
                ready -> outcomes.add(ready.isSuccess() ? "ready" : "failed"),
                () -> outcomes.add("due"));

        advanceMillis(TIMEOUT_MILLIS - 1);
        connection.setSuccess(channel);
        assertThat(outcomes).containsExactly("ready");
        advanceMillis(TIMEOUT_MILLIS);
        assertThat(outcomes).containsExactly("ready");
    }

    @Test
    void aRequestPastItsDeadlineAlready_isDueAtOnce() {
        channel = new EmbeddedChannel();
        channel.freezeTime();
        EventLoop loop = channel.eventLoop();
        List<String> outcomes = new ArrayList<>();
        // Sent again after NBD_ESHUTDOWN with its whole timeout spent on the first attempt.
        UpstreamBackend.whenReadyOrDue(
                loop.newPromise(),
                loop,
                UpstreamClientHandler.clockNanos(loop) - 1,
                ready -> outcomes.add("ready"),
                () -> outcomes.add("due"));
        advanceMillis(0);
        assertThat(outcomes).containsExactly("due");
    }

    @Test
    void timeoutOff_waitsForAReplyForever() {
        connect(0);
        Promise<ByteBuf> read = send(NbdProtocol.CMD_READ);
        advanceMillis(TimeUnit.HOURS.toMillis(12));
        assertThat(read.isDone()).isFalse();
        assertThat(channel.isOpen()).isTrue();
        answer(0, true);
        assertThat(read.isSuccess()).isTrue();
        release(read);
        assertThat(leaving).isEmpty();
    }
}
