package dev.tailor.admission;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One block request's passage through admission, shaped like Netflix concurrency-limits'
 * {@code Limiter.Listener}: once admitted and sent to the backend, it must be completed with exactly
 * one of {@link #onSuccess}, {@link #onDropped} or {@link #onIgnore}. The latencies so reported are
 * what the headroom model measures.
 *
 * <p>Thread-safety: the accessors and the completion methods may be called from any thread;
 * completion is wait-free (an HdrHistogram recorder and adders) and never takes the controller's
 * lock. A ticket that {@link AdmissionController#acquire} returned as {@link Admission.Queued} is
 * not admitted yet: completing it before the report of {@link AdmissionController#onInterval} lists
 * it throws.
 */
public final class Ticket {

    private static final int OPEN = 0;
    static final int SUCCESS = 1;
    static final int DROPPED = 2;
    static final int IGNORED = 3;
    private static final VarHandle OUTCOME;

    static {
        try {
            OUTCOME = MethodHandles.lookup().findVarHandle(Ticket.class, "outcome", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final AdmissionController controller;
    private final long id;
    private final int disk;
    private final IoKind kind;
    private final long offsetBytes;
    private final long lengthBytes;
    private final long costUnits;
    private final int segment;
    /** All segments touched, when more than one; null for a single-segment request. */
    private final int[] segments;

    private final SegmentClass arrivedAs;
    /** Cost units collected so far while queued; guarded by the controller's lock. */
    long fundedCostUnits;
    /** Fifo deadline (ns, the controller's clock) while queued; guarded by the controller's lock. */
    long fifoDeadlineNanos;
    /**
     * Whether it may take an overlapping advance (false with {@link AdmissionConfig#creditGatedAdvances} when
     * its disk was beyond its credits at its arrival); guarded by the controller's lock.
     */
    boolean mayOverlapAdvance = true;
    /** Withdrawn by {@link AdmissionController#cancel}; guarded by the controller's lock. */
    boolean withdrawn;

    private volatile SegmentClass admittedAs;
    /** OPEN until completed; written once, through OUTCOME. */
    private volatile int outcome;

    Ticket(
            AdmissionController controller,
            long id,
            int disk,
            IoKind kind,
            long offsetBytes,
            long lengthBytes,
            long costUnits,
            int segment,
            int[] segments,
            SegmentClass arrivedAs) {
        this.controller = controller;
        this.id = id;
        this.disk = disk;
        this.kind = kind;
        this.offsetBytes = offsetBytes;
        this.lengthBytes = lengthBytes;
        this.costUnits = costUnits;
        this.segment = segment;
        this.segments = segments;
        this.arrivedAs = arrivedAs;
    }

    /** The controller that issued it. */
    AdmissionController controller() {
        return controller;
    }

    /** Sequence number of the request at its controller, from 0, in order of {@code acquire}. */
    public long id() {
        return id;
    }

    /** Disk number ({@link SegmentMap#diskIndex}). */
    public int disk() {
        return disk;
    }

    /** Read or write. */
    public IoKind kind() {
        return kind;
    }

    /** First byte of the request on its disk. */
    public long offsetBytes() {
        return offsetBytes;
    }

    /** Bytes of the request. */
    public long lengthBytes() {
        return lengthBytes;
    }

    /**
     * Cost of the request in cost units: the sum over the segments it touches of
     * {@code a + b × bytes there}, each rounded up ({@link IoCostModel#costUnits}).
     */
    public long costUnits() {
        return costUnits;
    }

    /** Global segment of the request's first byte; its queue is where the request waits. */
    public int segment() {
        return segment;
    }

    /** Number of segments the request touches. */
    public int segmentCount() {
        return segments == null ? 1 : segments.length;
    }

    /** Whether the request has been admitted (now or from its queue). */
    public boolean isAdmitted() {
        return admittedAs != null;
    }

    /**
     * The request's class when it arrived: {@link SegmentClass#STEADY} only when every segment it
     * touches was steady after its cost was charged. A request keeps this class while it waits.
     */
    public SegmentClass arrivedAs() {
        return arrivedAs;
    }

    /**
     * The class the request was admitted as: its {@linkplain #arrivedAs class on arrival}, or steady
     * when it arrived hot, waited, and every segment it touches had calmed down to steady by the time
     * it was admitted; null while it waits.
     */
    public SegmentClass admittedAs() {
        return admittedAs;
    }

    /** Whether one of the completion methods has been called. */
    public boolean isCompleted() {
        return (int) OUTCOME.getVolatile(this) != OPEN;
    }

    /**
     * The backend served the request.
     *
     * @param latencyNanos backend latency in ns (dispatch to completion), {@code >= 0}
     * @throws IllegalArgumentException when the latency is negative
     * @throws IllegalStateException    when the ticket is not admitted or already completed
     */
    public void onSuccess(long latencyNanos) {
        complete(SUCCESS, latencyNanos);
    }

    /**
     * The backend failed the request or it timed out: a loss signal. The latency is recorded (for a
     * timeout, the time waited) and the next headroom window allows no borrowing.
     *
     * @param latencyNanos time from dispatch to the failure in ns, {@code >= 0}
     * @throws IllegalArgumentException when the latency is negative
     * @throws IllegalStateException    when the ticket is not admitted or already completed
     */
    public void onDropped(long latencyNanos) {
        complete(DROPPED, latencyNanos);
    }

    /**
     * The request gave no valid latency sample (cancelled by the client, never sent, served without
     * the backend): nothing is recorded.
     *
     * @throws IllegalStateException when the ticket is not admitted or already completed
     */
    public void onIgnore() {
        complete(IGNORED, 0);
    }

    private void complete(int how, long latencyNanos) {
        if (latencyNanos < 0) {
            throw new IllegalArgumentException("latencyNanos : " + latencyNanos + " (expected: >= 0)");
        }
        if (admittedAs == null) {
            throw new IllegalStateException(
                    "ticket " + id + " is still queued (expected: complete it only after " + "it has been admitted)");
        }
        if (!OUTCOME.compareAndSet(this, OPEN, how)) {
            throw new IllegalStateException("ticket " + id + " was already completed as "
                    + name((int) OUTCOME.getVolatile(this)) + " (expected: exactly one completion)");
        }
        controller.completed(this, how, latencyNanos);
    }

    private static String name(int how) {
        return switch (how) {
            case SUCCESS -> "success";
            case DROPPED -> "dropped";
            default -> "ignore";
        };
    }

    /** Marks the ticket admitted; called by the controller under its lock. */
    void admit(SegmentClass asClass) {
        admittedAs = asClass;
    }

    /** Whether every segment the request touches is steady now. */
    boolean allSteady(SegmentClassifier classifier) {
        if (segments == null) {
            return classifier.isSteady(segment);
        }
        for (int s : segments) {
            if (!classifier.isSteady(s)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "Ticket[" + id + ", disk " + disk + ", " + kind + " " + offsetBytes + "+" + lengthBytes + ", "
                + costUnits + " cost units, " + (admittedAs == null ? "queued" : "admitted as " + admittedAs) + "]";
    }
}
