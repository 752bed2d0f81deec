package dev.tailor.nbd.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * Cuts the transmission-phase byte stream into requests (proto.md, "Request message"): a 28-byte
 * header, then for {@code NBD_CMD_WRITE} {@code length} bytes of payload. Not thread-safe: one per
 * connection, used on its event loop.
 *
 * <p>A write's payload that is in the input whole is a slice of it (no copy) when it fills at least a quarter of
 * the input buffer ({@link #SLICE_SHARE}); otherwise it is copied into a buffer of exactly its length as it arrives,
 * so the connection never accumulates more than one request's bytes beyond what it has dispatched. A write longer than
 * {@code maxPayloadBytes} is returned at once with an empty payload (the server answers it with
 * {@code NBD_EINVAL}: longer than the advertised maximum block size) and its payload is skipped as it
 * arrives, never held: so even a 4 GiB - 1 write costs no memory.
 */
public final class RequestFramer {

    /** A byte stream that is not NBD: the connection is closed (a hard disconnect). */
    public static final class ProtocolViolation extends Exception {
        public ProtocolViolation(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A payload that arrived whole is sliced out of the receive buffer, not copied, when it fills at least
     * 1/{@value} of that buffer: a slice keeps the whole buffer alive until the write completes, so a buffer is never
     * held for a payload much smaller than itself.
     */
    static final int SLICE_SHARE = 4;

    private final int maxPayloadBytes;
    private int flags;
    private int command;
    private long cookie;
    private long offsetBytes;
    private long lengthBytes;
    private ByteBuf payload;
    private long discardBytes;

    /** @param maxPayloadBytes the longest write payload that is buffered, at least 0 */
    public RequestFramer(int maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /**
     * The next complete request, or {@code null} when {@code in} holds too few bytes (they stay in
     * {@code in}, or in the framer's payload buffer).
     *
     * @throws ProtocolViolation when a header does not start with {@link NbdProtocol#REQUEST_MAGIC}
     */
    public BlockRequest next(ByteBuf in, ByteBufAllocator alloc) throws ProtocolViolation {
        if (discardBytes > 0) {
            int skip = (int) Math.min(discardBytes, in.readableBytes());
            in.skipBytes(skip);
            discardBytes -= skip;
            if (discardBytes > 0) {
                return null;
            }
        }
        if (payload == null) {
            // The magic is checked as soon as it is there, so a stranger is turned away without waiting.
            if (in.readableBytes() >= 4 && in.getInt(in.readerIndex()) != NbdProtocol.REQUEST_MAGIC) {
                throw new ProtocolViolation(String.format(
                        "request magic 0x%08x (expected 0x%08x)",
                        in.getInt(in.readerIndex()), NbdProtocol.REQUEST_MAGIC));
            }
            if (in.readableBytes() < NbdProtocol.REQUEST_HEADER_BYTES) {
                return null;
            }
            in.skipBytes(4);
            flags = in.readUnsignedShort();
            command = in.readUnsignedShort();
            cookie = in.readLong();
            offsetBytes = in.readLong();
            lengthBytes = in.readUnsignedInt();
            if (command != NbdProtocol.CMD_WRITE || lengthBytes == 0) {
                return new BlockRequest(command, flags, cookie, offsetBytes, lengthBytes, Unpooled.EMPTY_BUFFER);
            }
            if (lengthBytes > maxPayloadBytes) {
                discardBytes = lengthBytes;
                int skip = (int) Math.min(discardBytes, in.readableBytes());
                in.skipBytes(skip);
                discardBytes -= skip;
                return new BlockRequest(command, flags, cookie, offsetBytes, lengthBytes, Unpooled.EMPTY_BUFFER);
            }
            if (in.readableBytes() >= lengthBytes && lengthBytes * SLICE_SHARE >= in.capacity()) {
                // The whole payload is here already: it is passed on as a slice of the receive buffer, not copied.
                ByteBuf slice = in.readRetainedSlice((int) lengthBytes);
                return new BlockRequest(command, flags, cookie, offsetBytes, lengthBytes, slice);
            }
            payload = alloc.directBuffer((int) lengthBytes, (int) lengthBytes);
        }
        payload.writeBytes(in, Math.min(in.readableBytes(), payload.writableBytes()));
        if (payload.isWritable()) {
            return null;
        }
        BlockRequest request = new BlockRequest(command, flags, cookie, offsetBytes, lengthBytes, payload);
        payload = null;
        return request;
    }

    /** Whether the framer is between requests: no payload half received, nothing left to skip. */
    boolean betweenRequests() {
        return payload == null && discardBytes == 0;
    }

    /** Releases a half-received payload (the connection closed mid-write). */
    public void release() {
        if (payload != null) {
            payload.release();
            payload = null;
        }
    }
}
