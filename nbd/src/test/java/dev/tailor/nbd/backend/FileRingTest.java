package dev.tailor.nbd.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.tailor.eventloop.EventLoopConfig;
import dev.tailor.eventloop.IoPriorityEventLoopGroup;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileBackend}'s reads, writes and flushes on the event loops' rings ({@link FileRing}), below the
 * protocol: what the kernel returns (data, the end of the file, an error) and what is claimed when. The same
 * commands through real clients run in {@code RealClientsTest}, {@code UnixSocketTest} and
 * {@code FioVerifyWithResetsTest}, on both file I/O paths.
 */
class FileRingTest {

    private static final int SIZE_BYTES = 1 << 20;

    /** File commands other than read, write and flush must not come here: the tests below send none. */
    private static final Executor NO_THREADS = task -> {
        throw new AssertionError("a read, write or flush went to the thread pool");
    };

    @TempDir
    Path dir;

    private IoPriorityEventLoopGroup loops;
    private FileRing ring;
    private FileBackend backend;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(IoUring.isAvailable(), () -> "io_uring is not available here: " + IoUring.unavailabilityCause());
        loops = new IoPriorityEventLoopGroup(
                1,
                EventLoopConfig.DEFAULTS.toBuilder()
                        .ioHandlerFactory(IoUringIoHandler.newFactory())
                        .build());
        ring = FileRing.start(loops);
        Files.write(dir.resolve("disk.img"), new byte[SIZE_BYTES]);
    }

    @AfterEach
    void stop() {
        if (backend != null) {
            backend.close();
        }
        if (ring != null) {
            ring.close();
        }
        if (loops != null) {
            loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    private FileBackend open(boolean readOnly) throws Exception {
        backend = FileBackend.open(dir.resolve("disk.img"), null, readOnly, NO_THREADS, ring, ByteBufAllocator.DEFAULT);
        return backend;
    }

    private static ByteBuf run(FileBackend backend, BlockRequest request) throws Exception {
        Promise<ByteBuf> completion = ImmediateEventExecutor.INSTANCE.newPromise();
        backend.submit(request, completion);
        return completion.get();
    }

    private static BlockRequest write(long offset, byte[] data, int flags) {
        return new BlockRequest(
                NbdProtocol.CMD_WRITE,
                flags,
                1,
                offset,
                data.length,
                Unpooled.directBuffer().writeBytes(data));
    }

    private static BlockRequest read(long offset, int length) {
        return new BlockRequest(NbdProtocol.CMD_READ, 0, 2, offset, length, Unpooled.EMPTY_BUFFER);
    }

    private static byte[] bytes(ByteBuf data) {
        try {
            byte[] out = new byte[data.readableBytes()];
            data.readBytes(out);
            return out;
        } finally {
            data.release();
        }
    }

    @Test
    void writesThenReads_theSameBytes_inTheFile() throws Exception {
        FileBackend file = open(false);
        byte[] data = new byte[200_000];
        new Random(7).nextBytes(data);
        byte[] durable = new byte[4096];
        Arrays.fill(durable, (byte) 0x5a);

        assertThat(run(file, write(4096, data, 0))).isNull();
        assertThat(run(file, write(SIZE_BYTES - 4096, durable, NbdProtocol.CMD_FLAG_FUA)))
                .isNull();
        assertThat(run(file, new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 3, 0, 0, Unpooled.EMPTY_BUFFER)))
                .isNull();

        assertThat(bytes(run(file, read(4096, data.length)))).isEqualTo(data);
        byte[] onDisk = Files.readAllBytes(dir.resolve("disk.img"));
        assertThat(Arrays.copyOfRange(onDisk, 4096, 4096 + data.length)).isEqualTo(data);
        assertThat(Arrays.copyOfRange(onDisk, SIZE_BYTES - 4096, SIZE_BYTES)).isEqualTo(durable);
    }

    @Test
    void zeroLengthWriteAndRead_succeedWithoutTouchingTheFile() throws Exception {
        FileBackend file = open(false);

        assertThat(run(file, write(4096, new byte[0], 0))).isNull();
        assertThat(bytes(run(file, read(4096, 0)))).isEmpty();

        assertThat(Files.readAllBytes(dir.resolve("disk.img"))).isEqualTo(new byte[SIZE_BYTES]);
    }

    @Test
    void heapPayload_isCopiedToDirectMemoryAndWritten() throws Exception {
        FileBackend file = open(false);
        byte[] data = new byte[8192];
        new Random(11).nextBytes(data);
        BlockRequest request =
                new BlockRequest(NbdProtocol.CMD_WRITE, 0, 1, 0, data.length, Unpooled.wrappedBuffer(data));

        run(file, request);

        assertThat(request.payload().refCnt()).isZero();
        assertThat(Arrays.copyOf(Files.readAllBytes(dir.resolve("disk.img")), data.length))
                .isEqualTo(data);
    }

    @Test
    void readPastTheEndOfAFileThatShrank_isZeroesBeyondIt() throws Exception {
        FileBackend file = open(false);
        byte[] data = new byte[8192];
        Arrays.fill(data, (byte) 7);
        run(file, write(SIZE_BYTES - 8192, data, 0));
        try (RandomAccessFile shrink =
                new RandomAccessFile(dir.resolve("disk.img").toFile(), "rw")) {
            shrink.setLength(SIZE_BYTES - 4096);
        }

        byte[] read = bytes(run(file, read(SIZE_BYTES - 8192, 8192)));

        byte[] expected = new byte[8192];
        Arrays.fill(expected, 0, 4096, (byte) 7);
        assertThat(read).isEqualTo(expected);
    }

    @Test
    void failedWrite_failsWithTheSystemsReason_andReleasesThePayload() throws Exception {
        // A read-only export's descriptor is opened O_RDONLY: the kernel refuses the write (EBADF).
        FileBackend file = open(true);
        BlockRequest request = write(0, new byte[4096], 0);

        assertThatThrownBy(() -> run(file, request))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .hasMessage("pwrite failed: Bad file descriptor")
                .satisfies(cause -> assertThat(NbdException.errorOf(cause)).isEqualTo(NbdProtocol.EIO));
        assertThat(request.payload().refCnt()).isZero();
        assertThat(Files.readAllBytes(dir.resolve("disk.img"))).isEqualTo(new byte[SIZE_BYTES]);
    }

    @Test
    void nativeErrors_areToldByTheSystemsReasonAlone() {
        assertThat(RingOps.reason("io_uring read(..) failed with error(-104): Connection reset by peer"))
                .isEqualTo("Connection reset by peer");
        assertThat(RingOps.reason("recvAddress(..) failed with error(-104): Connection reset by peer"))
                .isEqualTo("Connection reset by peer");
        assertThat(RingOps.reason("Connection refused")).isEqualTo("Connection refused");
    }

    @Test
    void flushOfAReadOnlyExport_succeedsWithoutTheKernel() throws Exception {
        FileBackend file = open(true);

        assertThat(run(file, new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 3, 0, 0, Unpooled.EMPTY_BUFFER)))
                .isNull();
    }

    @Test
    void droppedWrite_neverReachesTheFile() throws Exception {
        FileBackend file = open(false);
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x33);
        BlockRequest dropped = write(0, data, 0);
        // Its connection closed before the loop took it: the connection fails it and releases it.
        assertThat(dropped.drop()).isTrue();
        dropped.release();
        Promise<ByteBuf> never = ImmediateEventExecutor.INSTANCE.newPromise();

        file.submit(dropped, never);
        // The loop runs the submissions in order: by the flush's reply the dropped write was passed over.
        run(file, new BlockRequest(NbdProtocol.CMD_FLUSH, 0, 3, 0, 0, Unpooled.EMPTY_BUFFER));

        assertThat(never.isDone()).isFalse();
        assertThat(Files.readAllBytes(dir.resolve("disk.img"))).isEqualTo(new byte[SIZE_BYTES]);
    }

    @Test
    void requestsFromTheLoopItself_runOnItsRing() throws Exception {
        FileBackend file = open(false);
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x42);
        Promise<ByteBuf> completion = ImmediateEventExecutor.INSTANCE.newPromise();
        Promise<Boolean> onLoop = ImmediateEventExecutor.INSTANCE.newPromise();

        loops.next().execute(() -> {
            file.submit(write(0, data, 0), completion);
            onLoop.setSuccess(loops.next().inEventLoop());
        });

        assertThat(completion.get()).isNull();
        assertThat(onLoop.get()).isTrue();
        assertThat(Arrays.copyOf(Files.readAllBytes(dir.resolve("disk.img")), 4096))
                .isEqualTo(data);
    }
}
