package dev.tailor.nbd.backend;

import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.Promise;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A virtual disk in a local file, read and written with positional {@link FileChannel} I/O on a
 * bounded executor, never on an event loop.
 *
 * <p>Durability (proto.md, "Ordering of messages and writes"): a write's promise succeeds once
 * {@code pwrite} has returned, so its data is in the page cache; {@code NBD_CMD_FLUSH} calls
 * {@link FileChannel#force force(false)} ({@code fdatasync}), which makes every write that had returned
 * before it durable, from any connection (hence {@code NBD_FLAG_CAN_MULTI_CONN}). A write with
 * {@code FUA} goes through a second descriptor of the same file opened with {@code O_DSYNC}, so it is
 * durable when {@code pwrite} returns, without flushing the rest of the file.
 *
 * <p>While it serves the file it holds an advisory lock on it, exclusive when writable and shared when
 * read-only, so that a second server of the same file fails to start instead of writing over this one's
 * data ({@link FileInUseException}).
 *
 * <p>A request waits in the executor's queue until a thread takes it; one whose connection closed
 * meanwhile was dropped ({@link BlockRequest#claim}) and is skipped, so a dead client's queued
 * writes never reach the file.
 *
 * <p>Holes ({@link SparseFile}, where the JDK and the file system allow): {@code NBD_CMD_TRIM} punches
 * a hole ({@code fallocate(PUNCH_HOLE)}), else does nothing (proto.md: the server MAY discard, is not
 * required to). {@code NBD_CMD_WRITE_ZEROES} without {@code NBD_CMD_FLAG_NO_HOLE} punches a hole too;
 * where it cannot, and with {@code NO_HOLE}, it reads the range first and writes zeroes only over the
 * parts that do not already read as zero, so zeroing a hole keeps it a hole unless {@code NO_HOLE}
 * asks for the space. {@code NBD_CMD_BLOCK_STATUS} reports the file's holes ({@code SEEK_DATA} /
 * {@code SEEK_HOLE}) as {@code NBD_STATE_HOLE | NBD_STATE_ZERO} and the rest as data (status 0);
 * without hole support, the whole range as data.
 */
public final class FileBackend implements BlockBackend {

    private static final int ZERO_CHUNK_BYTES = 1 << 20;
    /** Most descriptors in one block status reply; the client asks again from where it ends. */
    static final int MAX_EXTENTS = 2048;

    private static final ByteBuffer ZEROES =
            ByteBuffer.allocateDirect(ZERO_CHUNK_BYTES).asReadOnlyBuffer();

    private final Path file;
    private final long sizeBytes;
    private final boolean readOnly;
    private final boolean created;
    private final FileChannel channel;
    private final FileChannel durableChannel;
    private final Executor executor;
    private final ByteBufAllocator alloc;
    private final SparseFile sparse;
    /** The loops' rings for reads, writes and flushes, or null: everything on {@link #executor}. */
    private final FileRing ring;
    /** The file's descriptor for {@link #ring} ({@code O_RDWR}, or {@code O_RDONLY}), or -1. */
    private final int ringFd;

    private FileBackend(
            Path file,
            long sizeBytes,
            boolean readOnly,
            boolean created,
            FileChannel channel,
            FileChannel durableChannel,
            Executor executor,
            FileRing ring,
            int ringFd,
            ByteBufAllocator alloc) {
        this.sparse = SparseFile.open(file, !readOnly);
        this.ring = ring;
        this.ringFd = ringFd;
        this.file = file;
        this.sizeBytes = sizeBytes;
        this.readOnly = readOnly;
        this.created = created;
        this.channel = channel;
        this.durableChannel = durableChannel;
        this.executor = executor;
        this.alloc = alloc;
    }

    /**
     * Opens (or creates) the file of an export.
     *
     * @param file      the backing file; created sparse when it does not exist (then {@code sizeBytes}
     *                  is required, {@code readOnly} must be false, and its parent directory must exist)
     * @param sizeBytes the export's size, or null for the file's length; at most the file's length
     * @param readOnly  open for reading only
     * @param executor  runs the blocking I/O; bounded, shared by all file exports
     * @param alloc     allocates the buffers of read replies
     * @throws IOException              when the file cannot be opened or created (permissions, I/O)
     * @throws IllegalArgumentException when the configuration does not fit the file: no size to create it
     *                                  with, a missing parent directory, a size larger than the file system
     *                                  allows for one file (the message gives the limit), or a size larger
     *                                  than an existing file; a file created here is removed again
     */
    public static FileBackend open(
            Path file, Long sizeBytes, boolean readOnly, Executor executor, ByteBufAllocator alloc) throws IOException {
        return open(file, sizeBytes, readOnly, executor, null, alloc);
    }

    /**
     * Opens (or creates) the file of an export, as {@link #open(Path, Long, boolean, Executor, ByteBufAllocator)},
     * with its reads, writes and flushes submitted to {@code ring} from the event loops when it is not null; the
     * other commands (trim, zeroes, block status) still run on {@code executor}.
     */
    public static FileBackend open(
            Path file, Long sizeBytes, boolean readOnly, Executor executor, FileRing ring, ByteBufAllocator alloc)
            throws IOException {
        boolean created = false;
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(file + " is a directory (expected: a file, or a path to create one)");
        }
        if (!Files.exists(file)) {
            if (readOnly) {
                throw new IllegalArgumentException(file + " does not exist (a read-only export needs its file)");
            }
            if (sizeBytes == null) {
                throw new IllegalArgumentException(
                        file + " does not exist, and the export has no size to create" + " it with");
            }
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                throw new IllegalArgumentException("cannot create " + file + ": its parent directory " + parent
                        + (Files.exists(parent) ? " is not a directory" : " does not exist"));
            }
            createSparse(file, sizeBytes);
            created = true;
        }
        try {
            return open(file, sizeBytes, readOnly, created, executor, ring, alloc);
        } catch (IOException | RuntimeException e) {
            if (created) {
                Files.deleteIfExists(file);
            }
            throw e;
        }
    }

    private static FileBackend open(
            Path file,
            Long sizeBytes,
            boolean readOnly,
            boolean created,
            Executor executor,
            FileRing ring,
            ByteBufAllocator alloc)
            throws IOException {
        if (!Files.isRegularFile(file)) {
            // A block device's length is not its file size, and its holes are not the file system's.
            throw new IllegalArgumentException(file + " is not a regular file (a block or character device?); block"
                    + " devices are not served yet (expected: a regular file, e.g. a raw disk image)");
        }
        long fileBytes = Files.size(file);
        long size = sizeBytes == null ? fileBytes : sizeBytes;
        if (size > fileBytes) {
            throw new IllegalArgumentException(file + " is " + fileBytes + " bytes, shorter than the export size "
                    + size + " (expected: a size at most the file's length)");
        }
        if (size == 0) {
            throw new IllegalArgumentException(file + " is empty (expected: an export of at least 1 byte)");
        }
        FileChannel channel = readOnly
                ? FileChannel.open(file, StandardOpenOption.READ)
                : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            lock(channel, file, readOnly);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        FileChannel durable = null;
        if (!readOnly) {
            try {
                durable = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        }
        int ringFd = -1;
        if (ring != null) {
            try {
                ringFd = ring.open(file, readOnly);
            } catch (IOException | RuntimeException e) {
                channel.close();
                if (durable != null) {
                    durable.close();
                }
                throw e;
            }
        }
        return new FileBackend(file, size, readOnly, created, channel, durable, executor, ring, ringFd, alloc);
    }

    /**
     * Takes the advisory lock that keeps two servers from serving one file, on all of it: exclusive for a writable
     * export, shared for a read-only one (servers may share a file read-only, not with a writer). It is held on
     * {@code channel}, the file's first descriptor, until the backend closes (the JVM's locks are POSIX record
     * locks, which the process loses when it closes any descriptor of the file: this backend closes its descriptors
     * only when it stops serving). qemu's locks on the same file conflict with it too.
     *
     * @throws FileInUseException when another process holds a conflicting lock, or this process serves the file
     *                            already
     */
    private static void lock(FileChannel channel, Path file, boolean readOnly) throws IOException {
        FileLock lock;
        try {
            lock = channel.tryLock(0, Long.MAX_VALUE, readOnly);
        } catch (OverlappingFileLockException e) {
            throw new FileInUseException(ExportConfig.shownPath(file) + " is served already by this process (another"
                    + " export of the same file, or a link to it; expected: one export per file)");
        }
        if (lock == null) {
            Path shown = ExportConfig.shownPath(file);
            throw new FileInUseException("cannot get a " + (readOnly ? "shared" : "write") + " lock on " + shown
                    + ": another process holds " + (readOnly ? "a write lock on it" : "a lock on it")
                    + " (another tailor nbd serve, or qemu using it); two servers of one file write over each other's"
                    + " data (expected: a file no other process is serving; stop the other, or serve a copy of "
                    + shown + ")");
        }
    }

    /** A file export's file is served by another process, or already by this one: the start fails (exit 1). */
    public static final class FileInUseException extends IOException {
        private static final long serialVersionUID = 1L;

        FileInUseException(String message) {
            super(message);
        }
    }

    /**
     * Creates {@code file} (which must not exist) as a sparse file of {@code sizeBytes}: its length is
     * set ({@code ftruncate}) and no block is written. When the file system refuses the length
     * ({@code EFBIG}: ext4 with 4 KiB blocks stops at 16 TiB − 4 KiB), the largest length it takes is
     * found by bisection on the same empty file (at most 63 {@code ftruncate}s, no data) and named in the
     * error. The file is removed again on any failure.
     *
     * @throws IllegalArgumentException when {@code sizeBytes} is more than the file system allows for one file
     * @throws IOException              when the file cannot be created
     */
    private static void createSparse(Path file, long sizeBytes) throws IOException {
        try (FileChannel ignored = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            // Created empty; CREATE_NEW makes sure it is ours to remove.
        }
        try (RandomAccessFile created = new RandomAccessFile(file.toFile(), "rw")) {
            try {
                created.setLength(sizeBytes);
            } catch (IOException refused) {
                long largest = largestLength(created, sizeBytes);
                if (largest >= sizeBytes || largest == 0) {
                    throw refused; // not about the length
                }
                long usable = largest - largest % NbdConfig.SECTOR_BYTES;
                String size = ByteSize.format(sizeBytes);
                throw new IllegalArgumentException(
                        "size " + size + (size.endsWith("iB") ? " (" + sizeBytes + " bytes)" : "")
                                + " is more than the file system of "
                                + file.toAbsolutePath().getParent()
                                + " allows for one file (" + refused.getMessage() + "; expected: at most " + usable
                                + " bytes there, about " + ByteSize.approximate(usable) + ")");
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /** The largest length below {@code refusedBytes} that {@code file} can be set to (leaves it at 0 bytes). */
    private static long largestLength(RandomAccessFile file, long refusedBytes) throws IOException {
        long taken = 0;
        long refused = refusedBytes;
        while (refused - taken > 1) {
            long middle = taken + (refused - taken) / 2;
            try {
                file.setLength(middle);
                taken = middle;
            } catch (IOException e) {
                refused = middle;
            }
        }
        file.setLength(0);
        return taken;
    }

    /** The backing file. */
    public Path file() {
        return file;
    }

    /** Whether {@link #open} created the file (it did not exist before). */
    public boolean created() {
        return created;
    }

    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public BackendFeatures features() {
        return new BackendFeatures(readOnly, true, !readOnly, !readOnly, !readOnly, true);
    }

    @Override
    public BlockSizes blockSizes() {
        return new BlockSizes(1, 4096, BlockSizes.LARGEST_MAXIMUM_BYTES);
    }

    /** Yes: from the file's holes where they can be found, else all data. */
    @Override
    public boolean answersBlockStatus() {
        return true;
    }

    /** Whether this file's holes can be found and punched (see {@link SparseFile}). */
    public boolean findsHoles() {
        return sparse.supported();
    }

    @Override
    public void submit(BlockRequest request, Promise<ByteBuf> completion) {
        int command = request.command();
        boolean onRing = ring != null
                && (command == NbdProtocol.CMD_READ
                        || command == NbdProtocol.CMD_WRITE
                        || command == NbdProtocol.CMD_FLUSH);
        try {
            if (onRing) {
                ring.execute(loopRing -> RingOps.start(this, loopRing, request, completion));
            } else {
                executor.execute(() -> run(request, completion));
            }
        } catch (RejectedExecutionException e) {
            if (request.claim()) {
                request.release();
                completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
            }
        }
    }

    private void run(BlockRequest request, Promise<ByteBuf> completion) {
        if (!request.claim()) {
            return; // its connection closed while it waited for a thread: dropped, never written
        }
        try {
            switch (request.command()) {
                case NbdProtocol.CMD_READ -> read(request.offsetBytes(), (int) request.lengthBytes(), completion);
                case NbdProtocol.CMD_WRITE -> {
                    write(request.payload(), request.offsetBytes(), request.fua());
                    completion.trySuccess(null);
                }
                case NbdProtocol.CMD_FLUSH -> {
                    if (!readOnly) {
                        channel.force(false);
                    }
                    completion.trySuccess(null);
                }
                case NbdProtocol.CMD_TRIM -> {
                    sparse.punchHole(request.offsetBytes(), request.lengthBytes());
                    completion.trySuccess(null);
                }
                case NbdProtocol.CMD_BLOCK_STATUS -> {
                    ByteBuf extents = extents(
                            request.offsetBytes(),
                            request.lengthBytes(),
                            (request.flags() & NbdProtocol.CMD_FLAG_REQ_ONE) != 0);
                    if (!completion.trySuccess(extents)) {
                        extents.release();
                    }
                }
                case NbdProtocol.CMD_WRITE_ZEROES -> {
                    writeZeroes(
                            request.offsetBytes(),
                            request.lengthBytes(),
                            request.fua(),
                            (request.flags() & NbdProtocol.CMD_FLAG_NO_HOLE) != 0);
                    completion.trySuccess(null);
                }
                default ->
                    completion.tryFailure(new NbdException(
                            NbdProtocol.EINVAL, "unknown command " + NbdProtocol.commandName(request.command())));
            }
        } catch (IOException | RuntimeException e) {
            completion.tryFailure(e);
        } finally {
            request.release();
        }
    }

    private void read(long offsetBytes, int lengthBytes, Promise<ByteBuf> completion) throws IOException {
        ByteBuf data = alloc.directBuffer(lengthBytes, lengthBytes);
        try {
            ByteBuffer target = data.nioBuffer(0, lengthBytes);
            long position = offsetBytes;
            while (target.hasRemaining()) {
                int read = channel.read(target, position);
                if (read < 0) {
                    // The file shrank under us: what is past its end reads as zeroes.
                    data.setZero(target.position(), target.remaining());
                    break;
                }
                position += read;
            }
            data.writerIndex(lengthBytes);
        } catch (IOException | RuntimeException e) {
            data.release();
            throw e;
        }
        if (!completion.trySuccess(data)) {
            data.release();
        }
    }

    private void write(ByteBuf payload, long offsetBytes, boolean fua) throws IOException {
        FileChannel target = fua ? durableChannel : channel;
        long position = offsetBytes;
        for (ByteBuffer source : payload.nioBuffers()) {
            while (source.hasRemaining()) {
                position += target.write(source, position);
            }
        }
    }

    /**
     * The block status descriptors of {@code [offsetBytes, offsetBytes + lengthBytes)} (within the export):
     * pairs of 32-bit length and 32-bit {@code base:allocation} flags, consecutive from {@code offsetBytes},
     * adjacent ones of different status, at most {@link #MAX_EXTENTS} of them ({@code reqOne}: one),
     * covering at most the range.
     */
    ByteBuf extents(long offsetBytes, long lengthBytes, boolean reqOne) {
        long end = offsetBytes + lengthBytes;
        ByteBuf out = alloc.buffer(reqOne ? 8 : 64);
        long position = offsetBytes;
        int count = 0;
        while (position < end && count < (reqOne ? 1 : MAX_EXTENTS)) {
            long data = sparse.nextData(position);
            long next;
            int flags;
            if (data < 0 || data > position) {
                // A hole up to the next data, or to the end when there is none (ENXIO).
                next = data < 0 ? end : Math.min(data, end);
                flags = NbdProtocol.STATE_HOLE | NbdProtocol.STATE_ZERO;
            } else {
                long hole = sparse.nextHole(position);
                next = hole <= position ? end : Math.min(hole, end);
                flags = 0;
            }
            out.writeInt((int) (next - position));
            out.writeInt(flags);
            count++;
            position = next;
        }
        return out;
    }

    private void writeZeroes(long offsetBytes, long lengthBytes, boolean fua, boolean noHole) throws IOException {
        if (!noHole && sparse.punchHole(offsetBytes, lengthBytes)) {
            if (fua) {
                channel.force(false);
            }
            return;
        }
        FileChannel target = fua ? durableChannel : channel;
        int scratchBytes = (int) Math.min(ZERO_CHUNK_BYTES, lengthBytes);
        ByteBuf scratch = noHole ? null : alloc.directBuffer(scratchBytes, scratchBytes);
        try {
            boolean skipped = false;
            long end = offsetBytes + lengthBytes;
            for (long position = offsetBytes; position < end; ) {
                int chunk = (int) Math.min(ZERO_CHUNK_BYTES, end - position);
                if (scratch != null && readsAsZeroes(scratch.nioBuffer(0, chunk), position)) {
                    skipped = true;
                    position += chunk;
                    continue;
                }
                ByteBuffer zeroes = ZEROES.duplicate().limit(chunk);
                while (zeroes.hasRemaining()) {
                    position += target.write(zeroes, position);
                }
            }
            if (fua && skipped) {
                // Ranges that already read as zero may be zero only in the page cache.
                channel.force(false);
            }
        } finally {
            if (scratch != null) {
                scratch.release();
            }
        }
    }

    private boolean readsAsZeroes(ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, at);
            if (read < 0) {
                return false;
            }
            at += read;
        }
        buffer.flip();
        while (buffer.remaining() >= 8) {
            if (buffer.getLong() != 0) {
                return false;
            }
        }
        while (buffer.hasRemaining()) {
            if (buffer.get() != 0) {
                return false;
            }
        }
        return true;
    }

    /** The descriptor reads, writes and flushes use on the rings. */
    int ringFd() {
        return ringFd;
    }

    boolean readOnly() {
        return readOnly;
    }

    ByteBufAllocator alloc() {
        return alloc;
    }

    /** Closes the file; the caller has stopped the executor first, so no request is still running. */
    @Override
    public void close() {
        sparse.close();
        try {
            if (ringFd >= 0) {
                FileRing.close(ringFd);
            }
            channel.close();
            if (durableChannel != null) {
                durableChannel.close();
            }
        } catch (IOException e) {
            // Nothing a client was promised is lost: flushes and FUA writes were durable when acknowledged.
        }
    }

    /** Closes the file and, if {@link #open} created it, removes it: a file that existed before stays. */
    @Override
    public void discard() {
        close();
        if (created) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                System.getLogger(FileBackend.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                () -> "could not remove " + file + ", created by a start that failed: " + e);
            }
        }
    }

    @Override
    public String toString() {
        return "file " + file;
    }
}
