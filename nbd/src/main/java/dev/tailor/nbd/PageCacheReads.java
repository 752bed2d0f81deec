package dev.tailor.nbd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads that never wait for the disk: {@code preadv2(2)} with {@code RWF_NOWAIT} on a read-only descriptor
 * of its own, which copies what the page cache holds and returns at once, short or with {@code EAGAIN},
 * where it would have to wait for the device. So a read can be tried on an event loop: when the whole
 * range is cached it is done there, without the two thread handoffs (to a file I/O thread and back) that
 * cost more than the copy itself; otherwise the caller hands the read to a thread as before.
 *
 * <p>Where it is not {@link #supported()} (no {@link LinuxFileCalls}, a file system that refuses
 * {@code RWF_NOWAIT}, found by a probe read at the end of the file at open), every read goes to a thread.
 *
 * <p>Threads: any; the calls are positional. The caller's buffer must have a native address
 * ({@link ByteBuf#hasMemoryAddress()}).
 */
final class PageCacheReads implements AutoCloseable {

    private static final int IOVEC_BYTES = 16;
    /**
     * Each thread's {@code struct iovec}, in native memory of its own (one per thread, kept for its life:
     * not tracked as a leak), so the data buffers keep the exact sizes the pooled allocator serves fastest.
     */
    private static final FastThreadLocal<ByteBuf> IOVEC = new FastThreadLocal<>() {
        @Override
        protected ByteBuf initialValue() {
            return new UnpooledByteBufAllocator(true, true).directBuffer(IOVEC_BYTES, IOVEC_BYTES);
        }

        @Override
        protected void onRemoval(ByteBuf iovec) {
            iovec.release();
        }
    };
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int RWF_NOWAIT = 0x8;
    private static final LinuxFileCalls CALLS = LinuxFileCalls.INSTANCE;

    private final int fd;
    private volatile boolean closed;

    private PageCacheReads(int fd) {
        this.fd = fd;
    }

    /** Opens {@code file} for reads that do not wait. Never fails; the result may not be supported. */
    static PageCacheReads open(Path file) {
        if (CALLS == null || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            return new PageCacheReads(-1);
        }
        PageCacheReads reads = new PageCacheReads(CALLS.open(file.toAbsolutePath().toString(),
                O_RDONLY | O_CLOEXEC));
        // At the end of the file a supported read returns 0 without touching a page; else -1 (EOPNOTSUPP).
        ByteBuf probe = Unpooled.directBuffer(1, 1);
        try {
            if (reads.supported() && reads.read(probe, Files.size(file), 1) != 0) {
                reads.close();
            }
        } catch (IOException e) {
            reads.close();
        } finally {
            probe.release();
        }
        return reads;
    }

    /** Whether reads can be tried without waiting. */
    boolean supported() {
        return fd >= 0 && !closed;
    }

    /**
     * Copies {@code [offsetBytes, offsetBytes + lengthBytes)} into {@code target} at index 0 if the page
     * cache holds it, without waiting for the device.
     *
     * @param target a buffer with a native address and a capacity of at least {@code lengthBytes}; its
     *               indexes are not moved
     * @return the bytes copied: {@code lengthBytes} when all of it was cached, fewer (maybe 0) when the
     *         rest would have to wait, or ends the file; -1 when not supported or refused
     */
    long read(ByteBuf target, long offsetBytes, int lengthBytes) {
        if (!supported() || !target.hasMemoryAddress() || target.capacity() < lengthBytes) {
            return -1;
        }
        ByteBuf iovec = IOVEC.get();
        if (!iovec.hasMemoryAddress()) {
            return -1;
        }
        iovec.setLongLE(0, target.memoryAddress());
        iovec.setLongLE(8, lengthBytes);
        return CALLS.preadv2(fd, iovec.memoryAddress(), 1, offsetBytes, RWF_NOWAIT);
    }

    @Override
    public void close() {
        if (supported()) {
            closed = true;
            CALLS.close(fd);
        }
    }
}
