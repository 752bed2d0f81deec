package dev.tailor.nbd.backend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.unix.Buffer;
import io.netty.channel.unix.Errors;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.uring.IoUringIoEvent;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoOps;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * File reads, writes and flushes submitted to the io_uring of the event loop that decoded the request, their
 * completions handled on that loop: no hand-off to a file I/O thread and back (docs/nbd.md, "Performance"; docs/nbd-record.md has the runs).
 * Needs loops on Netty's io_uring transport ({@code IoUringIoHandler}); one {@link Ring} is registered on each
 * loop, and every file of every export is served by whichever loop's ring the submitting thread belongs to.
 *
 * <p>An operation is handed to {@link #execute}: on a loop thread it runs at once on that loop's ring, from any
 * other thread (an admission tick, a write released by {@code WriteOrdering} elsewhere) it is queued to one of the
 * loops. The submission queue is flushed to the kernel when the loop next polls its ring, together with the
 * sockets' operations.
 */
public final class FileRing {

    /** {@code IORING_OP_FSYNC}, {@code IORING_OP_OPENAT}, {@code IORING_OP_READ}, {@code IORING_OP_WRITE}. */
    static final byte OP_FSYNC = 3;

    static final byte OP_OPENAT = 18;
    static final byte OP_READ = 22;
    static final byte OP_WRITE = 23;
    /** {@code IORING_FSYNC_DATASYNC}: {@code fdatasync}. */
    static final int FSYNC_DATASYNC = 1;
    /** {@code RWF_DSYNC}: this write is durable when it completes, as through an {@code O_DSYNC} descriptor. */
    static final int RWF_DSYNC = 2;

    private static final int AT_FDCWD = -100;
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;

    /** What a submitted operation does with its result ({@code res}: bytes, a descriptor, or {@code -errno}). */
    @FunctionalInterface
    interface Completion {
        void completed(int res);
    }

    private final EventLoopGroup loops;
    private final FastThreadLocal<Ring> current = new FastThreadLocal<>();
    private final List<Ring> rings;

    private FileRing(EventLoopGroup loops, List<Ring> rings) {
        this.loops = loops;
        this.rings = rings;
    }

    /**
     * Registers a ring handle on every loop of {@code loops}, which must run on the io_uring transport.
     *
     * @throws IOException when a loop refuses the registration (not io_uring, or shutting down)
     */
    public static FileRing start(EventLoopGroup loops) throws IOException {
        List<Ring> rings = new ArrayList<>();
        FileRing fileRing = new FileRing(loops, rings);
        try {
            for (EventExecutor executor : loops) {
                if (!(executor instanceof IoEventLoop loop)) {
                    throw new IOException("the event loop " + executor + " cannot register I/O handles");
                }
                Ring ring = new Ring(loop);
                ring.registration = loop.register(ring).get();
                rings.add(ring);
                loop.submit(() -> fileRing.current.set(ring)).get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fileRing.close();
            throw new InterruptedIOException("interrupted while registering the file rings");
        } catch (ExecutionException e) {
            fileRing.close();
            throw new IOException("cannot register a file ring on the event loops: " + e.getCause(), e.getCause());
        } catch (IOException | RuntimeException e) {
            fileRing.close();
            throw e;
        }
        return fileRing;
    }

    /**
     * Runs {@code operation} on a loop's ring: this thread's, else one loop's (queued to it).
     *
     * @throws RejectedExecutionException when the loops are shutting down
     */
    void execute(Consumer<Ring> operation) {
        Ring ring = current.getIfExists();
        if (ring != null) {
            operation.accept(ring);
            return;
        }
        loops.next().execute(() -> operation.accept(current.get()));
    }

    /**
     * Opens {@code file} through a ring ({@code openat}); blocks until it is open.
     *
     * @return the descriptor, to be closed with {@link #close(int)}
     * @throws IOException when the file cannot be opened, with the system's reason
     */
    int open(Path file, boolean readOnly) throws IOException {
        byte[] name = file.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer path = ByteBuffer.allocateDirect(name.length + 1);
        path.put(name).put((byte) 0).flip();
        long address = Buffer.memoryAddress(path);
        Promise<Integer> opened = ImmediateEventExecutor.INSTANCE.newPromise();
        int flags = (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
        try {
            execute(ring -> ring.submit(OP_OPENAT, AT_FDCWD, 0, address, 0, flags, res -> {
                Reference.reachabilityFence(path); // the kernel has read the name
                opened.setSuccess(res);
            }));
        } catch (RejectedExecutionException e) {
            throw new IOException("cannot open " + file + ": the event loops are shutting down", e);
        }
        int res;
        try {
            res = opened.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while opening " + file);
        } catch (ExecutionException e) {
            throw new IOException("cannot open " + file + ": " + e.getCause(), e.getCause());
        }
        if (res < 0) {
            throw Errors.newIOException("open " + file, res);
        }
        return res;
    }

    /** Closes a descriptor {@link #open} returned. */
    static void close(int fd) throws IOException {
        new FileDescriptor(fd).close();
    }

    /** The memory address of {@code buffer}'s bytes from {@code index} ({@code length} of them); it must be direct. */
    static long address(ByteBuf buffer, int index, int length) {
        if (buffer.hasMemoryAddress()) {
            return buffer.memoryAddress() + index;
        }
        return Buffer.memoryAddress(buffer.nioBuffer(index, length));
    }

    /** Cancels the rings' registrations (the loops complete what is in flight before they stop). */
    public void close() {
        for (Ring ring : rings) {
            if (ring.registration != null) {
                ring.registration.cancel();
            }
        }
    }

    /**
     * The file operations of one event loop: submitted and completed on its thread only. Each operation in flight
     * has a slot, whose number travels as the submission's user data and comes back with its completion.
     */
    static final class Ring implements IoUringIoHandle {
        private final IoEventLoop loop;
        IoRegistration registration;
        private Completion[] slots = new Completion[64];
        private int[] free = new int[64];
        private int freeCount;
        private int used;

        Ring(IoEventLoop loop) {
            this.loop = loop;
        }

        /**
         * Queues one operation; its completion runs on this loop. When the ring no longer takes operations (its
         * loop is shutting down) the completion is called at once with {@code -ECANCELED}'s stand-in, {@code
         * Integer.MIN_VALUE}.
         */
        void submit(byte opcode, int fd, long offset, long address, int length, int opFlags, Completion completion) {
            assert loop.inEventLoop();
            int slot = take(completion);
            IoUringIoOps ops = new IoUringIoOps(
                    opcode, (byte) 0, (short) 0, fd, offset, address, length, opFlags, slot, (short) 0, (short) 0, 0,
                    0L);
            // Netty answers 0 for a registration that was cancelled (its loop is shutting down).
            if (!registration.isValid() || registration.submit(ops) == 0) {
                slots[slot] = null;
                free[freeCount++] = slot;
                completion.completed(Integer.MIN_VALUE);
            }
        }

        private int take(Completion completion) {
            int slot;
            if (freeCount > 0) {
                slot = free[--freeCount];
            } else {
                if (used == slots.length) {
                    slots = Arrays.copyOf(slots, used * 2);
                    free = Arrays.copyOf(free, used * 2);
                }
                slot = used++;
            }
            slots[slot] = completion;
            return slot;
        }

        @Override
        public void handle(IoRegistration registration, IoEvent ioEvent) {
            IoUringIoEvent event = (IoUringIoEvent) ioEvent;
            int slot = (int) event.userData();
            Completion completion = slot >= 0 && slot < used ? slots[slot] : null;
            if (completion == null) {
                return;
            }
            slots[slot] = null;
            free[freeCount++] = slot;
            completion.completed(event.res());
        }

        @Override
        public void close() {
            if (registration != null) {
                registration.cancel();
            }
        }
    }
}
