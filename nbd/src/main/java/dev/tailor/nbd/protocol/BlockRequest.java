package dev.tailor.nbd.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One transmission-phase request as the client sent it (proto.md, "Request message"), after the
 * server has checked it against the export: the command type, its flags, the client's cookie
 * (called <em>handle</em> in proto.md), the offset and length in bytes, and for {@code NBD_CMD_WRITE}
 * the payload.
 *
 * <p>Reference counting is the payload's: whoever holds the request releases it once (the backend,
 * after writing the payload). Requests without payload hold {@link Unpooled#EMPTY_BUFFER}, whose
 * release does nothing.
 *
 * <p>Who owns it (docs/nbd.md, "Guarantees"): a request is <em>pending</em> from its decoding until
 * either the server {@linkplain #claim claims} it, which a backend does when it begins to execute it
 * (or before failing it), or the connection that sent it closes first and {@linkplain #drop drops} it.
 * Exactly one of the two happens; the side that wins completes the request and releases its payload,
 * and the other leaves it alone. So wherever a request waits on its way to the backend (admission's
 * queue, a file export's I/O queue, an upstream pool connection still opening), a closed connection's
 * request that has not started is never executed.
 */
public final class BlockRequest implements ReferenceCounted {

    /** A request's class in the slow-request attribution: not through admission. */
    public static final int NOT_ADMITTED = 0;

    /** Admitted while its segment was steady. */
    public static final int STEADY = 1;

    /** Admitted while its segment was hot. */
    public static final int HOT = 2;

    private static final int PENDING = 0;
    private static final int CLAIMED = 1;
    private static final int DROPPED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(BlockRequest.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int command;
    private final int flags;
    private final long cookie;
    private final long offsetBytes;
    private final long lengthBytes;
    private final ByteBuf payload;
    /** PENDING, then CLAIMED or DROPPED, once; through STATE. */
    private volatile int state;
    /**
     * For the slow-request attribution: its time queued in admission (ns) and its class when admitted
     * ({@link #NOT_ADMITTED}, {@link #STEADY}, {@link #HOT}). Written by the dispatcher before it hands the
     * request to its backend, read by the connection after the completion, which the backend's completion of the
     * promise orders after the write.
     */
    private long admissionWaitNanos;

    /** Its time waiting at the fair dispatch door (ns); written and read as {@link #admissionWaitNanos}. */
    private long doorWaitNanos;

    private int admittedClass;

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

    /**
     * Claims the request for execution (or for failing it): from now on a closing connection no longer
     * drops it. Called by a backend as it begins the request, and by any path that fails it before;
     * calling it again (a request sent once more) is harmless. Any thread.
     *
     * @return true when the request is the caller's to run or fail (and then to release); false when
     *         its connection dropped it first, which has completed it and released it: forget it
     */
    public boolean claim() {
        return state == CLAIMED || STATE.compareAndSet(this, PENDING, CLAIMED) || state == CLAIMED;
    }

    /**
     * Drops the request if nothing has claimed it yet: its connection closed. The caller then fails its
     * completion and releases it. Any thread.
     *
     * @return true when it was pending and is now dropped
     */
    public boolean drop() {
        return STATE.compareAndSet(this, PENDING, DROPPED);
    }

    /** Whether its connection dropped it before anything claimed it. */
    public boolean dropped() {
        return state == DROPPED;
    }

    /** Records the request's passage through admission: queued for {@code waitNanos}, admitted as {@code hot}. */
    public void admitted(long waitNanos, boolean hot) {
        admissionWaitNanos = waitNanos;
        admittedClass = hot ? HOT : STEADY;
    }

    /** Time it waited in admission's queue, ns; 0 when admitted at once or not through admission. */
    public long admissionWaitNanos() {
        return admissionWaitNanos;
    }

    /** Records its wait at the fair dispatch door, arrival there to sent to the backend, ns. */
    public void waitedAtDoor(long waitNanos) {
        doorWaitNanos = waitNanos;
    }

    /** Time it waited at the fair dispatch door, ns; 0 when let through at once or with no door. */
    public long doorWaitNanos() {
        return doorWaitNanos;
    }

    /** Its class when admitted: {@link #NOT_ADMITTED}, {@link #STEADY} or {@link #HOT}. */
    public int admittedClass() {
        return admittedClass;
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
