package dev.tailor.admission;

/**
 * The outcome of {@link AdmissionController#acquire}: admitted now, queued, or refused. Nothing is
 * dropped silently: a queued request is admitted later and handed out by
 * {@link AdmissionController#onInterval} in {@link IntervalReport#admitted()}.
 *
 * <pre>{@code
 * switch (controller.acquire(disk, IoKind.READ, offset, length, arrivalNanos)) {
 *     case Admission.Admitted a -> dispatch(a.ticket());        // complete the ticket when the I/O ends
 *     case Admission.Queued q -> remember(q.ticket());          // dispatched when onInterval admits it
 *     case Admission.Refused r -> failToClient(r.message());
 * }
 * }</pre>
 */
public sealed interface Admission {

    /**
     * Admitted now: send the I/O to the backend, then complete the ticket with its latency and
     * outcome.
     *
     * @param ticket the admitted request
     */
    record Admitted(Ticket ticket) implements Admission {}

    /**
     * Waiting in its segment's queue. The ticket is admitted by a later
     * {@link AdmissionController#onInterval} call and listed in that call's report; until then it
     * must not be sent to the backend or completed.
     *
     * @param ticket   the waiting request
     * @param position its place in its segment's queue for its class ({@link Ticket#arrivedAs}), 1 for
     *                 the head
     */
    record Queued(Ticket ticket, int position) implements Admission {}

    /**
     * Refused: the request was neither admitted nor queued and the controller holds no ticket for it.
     *
     * @param reason  why
     * @param segment global segment whose queue was full (see {@link SegmentMap#describeSegment})
     * @param message a sentence naming the disk, the segment and the limit
     */
    record Refused(RefusalReason reason, int segment, String message) implements Admission {}
}
