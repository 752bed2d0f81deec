package dev.tailor.admission;

/**
 * Direction of a block request, which selects the coefficients of the {@link IoCostModel}.
 * Requests that move no data (flush, trim, write-zeroes) are the caller's to map: the admission
 * library only prices reads and writes of a byte range.
 */
public enum IoKind {
    /** Data flows from the backend to the client. */
    READ,
    /** Data flows from the client to the backend. */
    WRITE
}
