package dev.tailor.admission;

/** Why a request was refused rather than admitted or queued. */
public enum RefusalReason {
    /**
     * The request could not be admitted at once and its segment's queue already held
     * {@link AdmissionConfig#queueCapacityPerSegment()} requests (docs/design.md#queues: a full queue refuses
     * with a clear error, nothing is dropped silently). The caller should fail the I/O back to its client (for NBD, an
     * error reply such as {@code EAGAIN}) or retry later; the controller keeps nothing of it except
     * its cost in the segment's classifier window.
     */
    QUEUE_FULL
}
