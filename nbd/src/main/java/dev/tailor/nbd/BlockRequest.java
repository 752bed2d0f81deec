package dev.tailor.nbd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;

/**
 * One transmission-phase request as the client sent it (proto.md, "Request message"), after the
 * server has checked it against the export: the command type, its flags, the client's cookie
 * (called <em>handle</em> in proto.md), the offset and length in bytes, and for {@code NBD_CMD_WRITE}
 * the payload.
 *
 * <p>Reference counting is the payload's: whoever holds the request releases it once (the backend,
 * after writing the payload). Requests without payload hold {@link Unpooled#EMPTY_BUFFER}, whose
 * release does nothing.
 */
public final class BlockRequest implements ReferenceCounted {

    private final int command;
    private final int flags;
    private final long cookie;
    private final long offsetBytes;
    private final long lengthBytes;
    private final ByteBuf payload;

    /**
     * @param command     the command type, {@link NbdProtocol#CMD_READ} etc.
     * @param flags       the command flags, {@link NbdProtocol#CMD_FLAG_FUA} etc.
     * @param cookie      the client's opaque 64-bit cookie, echoed in the reply
     * @param offsetBytes offset in bytes, unsigned 64-bit
     * @param lengthBytes length in bytes, unsigned 32-bit: 0 to 2^32 - 1
     * @param payload     the data of a write ({@code lengthBytes} readable bytes), else
     *                    {@link Unpooled#EMPTY_BUFFER}; ownership passes to the request
     */
    public BlockRequest(int command, int flags, long cookie, long offsetBytes, long lengthBytes, ByteBuf payload) {
        if (lengthBytes < 0 || lengthBytes > 0xffff_ffffL) {
            throw new IllegalArgumentException("lengthBytes: " + lengthBytes + " (expected: 0 to 2^32 - 1)");
        }
        this.command = command;
        this.flags = flags;
        this.cookie = cookie;
        this.offsetBytes = offsetBytes;
        this.lengthBytes = lengthBytes;
        this.payload = payload;
    }

    /** The command type, {@link NbdProtocol#CMD_READ} etc. */
    public int command() {
        return command;
    }

    /** The command flags. */
    public int flags() {
        return flags;
    }

    /** Whether {@link NbdProtocol#CMD_FLAG_FUA} is set: durable before the reply. */
    public boolean fua() {
        return (flags & NbdProtocol.CMD_FLAG_FUA) != 0;
    }

    /** The client's cookie ("handle" in proto.md). */
    public long cookie() {
        return cookie;
    }

    /** Offset in bytes from the start of the export; unsigned, already checked to lie within it. */
    public long offsetBytes() {
        return offsetBytes;
    }

    /** Length in bytes, 0 to 2^32 - 1. */
    public long lengthBytes() {
        return lengthBytes;
    }

    /** The write's data ({@link #lengthBytes()} readable bytes); empty for other commands. */
    public ByteBuf payload() {
        return payload;
    }

    @Override
    public int refCnt() {
        return payload.refCnt();
    }

    @Override
    public BlockRequest retain() {
        payload.retain();
        return this;
    }

    @Override
    public BlockRequest retain(int increment) {
        payload.retain(increment);
        return this;
    }

    @Override
    public BlockRequest touch() {
        payload.touch();
        return this;
    }

    @Override
    public BlockRequest touch(Object hint) {
        payload.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return payload.release();
    }

    @Override
    public boolean release(int decrement) {
        return payload.release(decrement);
    }

    @Override
    public String toString() {
        return NbdProtocol.commandName(command) + " cookie " + Long.toUnsignedString(cookie) + " offset "
                + Long.toUnsignedString(offsetBytes) + " length " + lengthBytes + " flags 0x"
                + Integer.toHexString(flags);
    }
}
