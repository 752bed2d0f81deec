package dev.tailor.nbd.backend;

import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdException;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Promise;

/**
 * Where an export's bytes live: a local file ({@link FileBackend}) or an upstream NBD server
 * ({@link UpstreamBackend}). The server hands it requests that are already valid for the export
 * (known command and flags, within bounds, within the block size constraints, not a write to a
 * read-only export), so a backend only fails for its own reasons (I/O errors: {@code NBD_EIO}; a full
 * disk: {@code NBD_ENOSPC}).
 *
 * <p>Threads: {@link #submit} is called on a connection's event loop and must not block it; the
 * backend completes the promise from any thread, and the promise's listeners run on that event loop.
 * Durability is the backend's contract: a write with {@code FUA} is durable when its promise
 * succeeds, and a flush succeeds only once every write whose promise had succeeded before the flush
 * was submitted is durable (proto.md, "Ordering of messages and writes").
 */
public interface BlockBackend extends AutoCloseable {

    /** The size of the virtual disk in bytes. */
    long sizeBytes();

    /** What the backend can do; becomes the export's transmission flags. */
    BackendFeatures features();

    /** The block size constraints the backend itself needs (the server may tighten the maximum). */
    BlockSizes blockSizes();

    /**
     * Whether {@link #submit} takes {@code NBD_CMD_BLOCK_STATUS}: it then succeeds with the descriptors
     * of the {@code base:allocation} context (pairs of 32-bit length and flags, consecutive from the
     * request's offset, within its length, at least one; proto.md, "Metadata querying"). When false (the
     * default) the server answers such a request itself with one descriptor of status 0 (data) over the
     * whole range, which proto.md allows for any block.
     */
    default boolean answersBlockStatus() {
        return false;
    }

    /**
     * Runs one request. For {@code NBD_CMD_READ} the promise succeeds with a buffer of exactly
     * {@code lengthBytes} readable bytes, which the caller releases; for the other commands it
     * succeeds with {@code null}. Failures are {@link NbdException}s (others count as {@code NBD_EIO}).
     * The backend takes ownership of the request and releases it (the write's payload) exactly once,
     * with one exception: wherever the request waits inside the backend, the backend
     * {@linkplain BlockRequest#claim claims} it when it begins to execute it (or before failing it),
     * and a request whose claim fails was dropped by its closing connection, which has completed and
     * released it: the backend then forgets it, and it never reaches the disk or the upstream.
     *
     * @param request    READ, WRITE, FLUSH, TRIM or WRITE_ZEROES, already validated; BLOCK_STATUS when
     *                   {@link #answersBlockStatus()}
     * @param completion completed exactly once, from any thread
     */
    void submit(BlockRequest request, Promise<ByteBuf> completion);

    /**
     * Waits for the requests already submitted to finish, then releases files, connections and threads.
     * Requests submitted afterwards fail with {@code NBD_ESHUTDOWN}.
     */
    @Override
    void close();

    /**
     * Closes the backend of a server whose start failed, also undoing what opening it created: a file
     * export removes the file it created, never one that existed before. The default just closes.
     */
    default void discard() {
        close();
    }
}
