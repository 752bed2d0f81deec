package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.TestServers;
import dev.tailor.nbd.testing.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Map;

/**
 * One server connection in an {@link EmbeddedChannel}: deterministic, single-threaded, no sockets.
 * Everything the server writes is collected into {@link #received}.
 */
final class Embedded implements AutoCloseable {

    final EmbeddedChannel channel;
    final ByteBuf received = Unpooled.buffer();

    Embedded(BlockBackend backend, Limits limits) {
        this(backend, limits, RequestDispatcher.DIRECT);
    }

    Embedded(BlockBackend backend, Limits limits, RequestDispatcher dispatcher) {
        this(backend, limits, dispatcher, new IoMetrics(System::nanoTime, false));
    }

    /** With the test's I/O metrics (and so its request-timing clock). */
    Embedded(BlockBackend backend, Limits limits, RequestDispatcher dispatcher, IoMetrics io) {
        ExportConfig config = TestServers.export("disk", false);
        Export export = new Export(config, backend, limits.maxRequestBytes(), io);
        channel = new EmbeddedChannel(new HandshakeHandler(new ServerContext(
                Map.of("disk", export),
                limits,
                dispatcher,
                new ConnectionAdmission(limits.maxConnections(), limits.maxHandshakes()),
                io)));
        drain();
    }

    /** Feeds bytes to the server, runs what it scheduled, and collects what it wrote. */
    Embedded feed(ByteBuf bytes) {
        channel.writeInbound(bytes);
        drain();
        return this;
    }

    Embedded feed(Wire wire) {
        return feed(wire.toBuf());
    }

    /** Runs pending tasks (flushes, promise listeners) and collects the server's output. */
    Embedded drain() {
        channel.runPendingTasks();
        Object message;
        while ((message = channel.readOutbound()) != null) {
            ByteBuf buf = (ByteBuf) message;
            received.writeBytes(buf);
            buf.release();
        }
        channel.checkException();
        return this;
    }

    /** Skips the greeting and the option replies up to and including the ACK that ends GO. */
    Embedded skipHandshake() {
        received.skipBytes(18);
        while (true) {
            assertThat(received.readLong()).isEqualTo(NbdProtocol.OPTION_REPLY_MAGIC);
            int option = received.readInt();
            int type = received.readInt();
            received.skipBytes(received.readInt());
            if (option == NbdProtocol.OPT_GO && type == NbdProtocol.REP_ACK) {
                return this;
            }
        }
    }

    /** The cookie of the next simple reply, checking it succeeded, and skipping {@code dataBytes}. */
    long simpleReplyCookie(int dataBytes) {
        assertThat(received.readInt()).isEqualTo(NbdProtocol.SIMPLE_REPLY_MAGIC);
        assertThat(received.readInt()).as("error").isZero();
        long cookie = received.readLong();
        received.skipBytes(dataBytes);
        return cookie;
    }

    @Override
    public void close() {
        channel.finishAndReleaseAll();
        received.release();
    }
}
