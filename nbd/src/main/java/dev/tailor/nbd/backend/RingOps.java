package dev.tailor.nbd.backend;

import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.channel.unix.Errors;
import io.netty.util.concurrent.Promise;
import java.io.IOException;

/**
 * A file export's read, write or flush on an event loop's ring ({@link FileRing}): claimed when submitted (a request
 * whose connection closed before is dropped and never reaches the file), answered once the kernel completed it.
 * A short read or write is continued from where it stopped; a read that reaches the end of the file (it shrank under
 * us) fills the rest with zeroes, as the thread path does; a failure fails the request with the system's reason, which
 * {@link NbdException#errorOf} turns into the NBD error ({@code ENOSPC} for a full disk, else {@code EIO}). Runs on
 * the ring's loop only.
 */
final class RingOps implements FileRing.Completion {

    private final FileBackend file;
    private final FileRing.Ring ring;
    private final BlockRequest request;
    private final Promise<ByteBuf> completion;
    private final int command;
    /** The write payload (or its direct copy), or the read's buffer. */
    private final ByteBuf buffer;
    /** Whether {@link #buffer} is ours to release (a read's buffer before it is handed over, a payload's copy). */
    private boolean ownsBuffer;

    private final long address;
    private final int lengthBytes;
    private int doneBytes;

    private RingOps(
            FileBackend file,
            FileRing.Ring ring,
            BlockRequest request,
            Promise<ByteBuf> completion,
            ByteBuf buffer,
            boolean ownsBuffer) {
        this.file = file;
        this.ring = ring;
        this.request = request;
        this.completion = completion;
        this.command = request.command();
        this.buffer = buffer;
        this.ownsBuffer = ownsBuffer;
        this.lengthBytes = buffer == null ? 0 : buffer.readableBytes();
        this.address = buffer == null
                ? 0
                : FileRing.address(buffer, buffer.readerIndex(), Math.max(1, buffer.readableBytes()));
    }

    /** Claims {@code request} and submits it; nothing happens when its connection dropped it already. */
    static void start(FileBackend file, FileRing.Ring ring, BlockRequest request, Promise<ByteBuf> completion) {
        if (!request.claim()) {
            return; // its connection closed while it waited: dropped, never written
        }
        RingOps op;
        try {
            switch (request.command()) {
                case NbdProtocol.CMD_READ -> {
                    int length = (int) request.lengthBytes();
                    ByteBuf data = file.alloc().directBuffer(length, length);
                    data.writerIndex(length);
                    op = new RingOps(file, ring, request, completion, data, true);
                }
                case NbdProtocol.CMD_WRITE -> {
                    ByteBuf payload = request.payload();
                    if (payload.isDirect() && payload.nioBufferCount() == 1) {
                        op = new RingOps(file, ring, request, completion, payload, false);
                    } else {
                        int length = payload.readableBytes();
                        ByteBuf copy = file.alloc().directBuffer(length, length);
                        copy.writeBytes(payload, payload.readerIndex(), length);
                        op = new RingOps(file, ring, request, completion, copy, true);
                    }
                }
                case NbdProtocol.CMD_FLUSH -> {
                    if (file.readOnly()) {
                        request.release();
                        completion.trySuccess(null);
                        return;
                    }
                    op = new RingOps(file, ring, request, completion, null, false);
                }
                default ->
                    throw new IllegalArgumentException(
                            "not a ring command: " + NbdProtocol.commandName(request.command()));
            }
        } catch (RuntimeException e) {
            request.release();
            completion.tryFailure(e);
            return;
        }
        op.next();
    }

    private void next() {
        if (lengthBytes == 0 && command != NbdProtocol.CMD_FLUSH) {
            succeed(); // nothing to move: a write of 0 bytes is done, as pwrite of nothing is
            return;
        }
        int remaining = lengthBytes - doneBytes;
        long offset = request.offsetBytes() + doneBytes;
        switch (command) {
            case NbdProtocol.CMD_READ ->
                ring.submit(FileRing.OP_READ, file.ringFd(), offset, address + doneBytes, remaining, 0, this);
            case NbdProtocol.CMD_WRITE ->
                ring.submit(
                        FileRing.OP_WRITE,
                        file.ringFd(),
                        offset,
                        address + doneBytes,
                        remaining,
                        request.fua() ? FileRing.RWF_DSYNC : 0,
                        this);
            default -> ring.submit(FileRing.OP_FSYNC, file.ringFd(), 0, 0, 0, FileRing.FSYNC_DATASYNC, this);
        }
    }

    @Override
    public void completed(int res) {
        try {
            if (res == Integer.MIN_VALUE) {
                fail(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
                return;
            }
            if (res < 0) {
                fail(new IOException(systemCall() + " failed: "
                        + reason(Errors.newIOException(systemCall(), res).getMessage())));
                return;
            }
            if (command == NbdProtocol.CMD_FLUSH) {
                succeed();
                return;
            }
            if (res == 0) {
                if (command == NbdProtocol.CMD_WRITE) {
                    fail(new NbdException(NbdProtocol.EIO, "pwrite wrote nothing at " + request.offsetBytes()));
                    return;
                }
                // The file shrank under us: what is past its end reads as zeroes.
                buffer.setZero(doneBytes, lengthBytes - doneBytes);
                succeed();
                return;
            }
            doneBytes += res;
            if (doneBytes < lengthBytes) {
                next();
            } else {
                succeed();
            }
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    /**
     * The system's reason alone, as the JDK gives it: Netty's native transports (epoll, io_uring) name their system
     * call first ({@code "recvAddress(..) failed with error(-104): "}, {@code "io_uring read(..) failed with
     * error(-104): "}, {@code "connect(..) failed: "}).
     */
    static String reason(String nativeMessage) {
        return nativeMessage.replaceFirst("^[\\w ]+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ", "");
    }

    private String systemCall() {
        return switch (command) {
            case NbdProtocol.CMD_READ -> "pread";
            case NbdProtocol.CMD_WRITE -> "pwrite";
            default -> "fdatasync";
        };
    }

    private void succeed() {
        ByteBuf data = null;
        if (command == NbdProtocol.CMD_READ) {
            data = buffer;
            ownsBuffer = false;
        } else if (ownsBuffer) {
            buffer.release();
            ownsBuffer = false;
        }
        request.release();
        if (!completion.trySuccess(data) && data != null) {
            data.release();
        }
    }

    private void fail(Throwable cause) {
        if (ownsBuffer) {
            buffer.release();
            ownsBuffer = false;
        }
        request.release();
        completion.tryFailure(cause);
    }
}
