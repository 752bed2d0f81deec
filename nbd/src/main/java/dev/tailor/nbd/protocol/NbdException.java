package dev.tailor.nbd.protocol;

/**
 * A request that failed with an NBD error value ({@link NbdProtocol#EINVAL}, {@link NbdProtocol#ENOSPC},
 * ...), carried through a {@link io.netty.util.concurrent.Promise} to the connection, which sends it as
 * the reply's error (and, with structured replies, the message as the error chunk's text). Without a
 * stack trace: it is an answer to the client, not a bug.
 */
public final class NbdException extends RuntimeException {

    private final int error;

    /**
     * @param error   the NBD error value, nonzero (proto.md, "Error values")
     * @param message what went wrong, for a human; at most {@link NbdProtocol#MAX_STRING_BYTES} bytes
     *                are sent
     */
    public NbdException(int error, String message) {
        super(message, null, false, false);
        if (error == 0) {
            throw new IllegalArgumentException("error: 0 (expected: a nonzero NBD error value)");
        }
        this.error = error;
    }

    /** The NBD error value sent to the client. */
    public int error() {
        return error;
    }

    /**
     * The NBD error value for any failure: an {@link NbdException}'s own, {@link NbdProtocol#ENOSPC} for
     * an I/O error that says the disk or quota is full or the file too large (proto.md asks to map
     * EDQUOT and EFBIG to ENOSPC), else {@link NbdProtocol#EIO}.
     */
    public static int errorOf(Throwable failure) {
        if (failure instanceof NbdException nbd) {
            return nbd.error;
        }
        String message = failure.getMessage();
        if (message != null
                && (message.contains("No space left")
                        || message.contains("quota exceeded")
                        || message.contains("File too large"))) {
            return NbdProtocol.ENOSPC;
        }
        return NbdProtocol.EIO;
    }
}
