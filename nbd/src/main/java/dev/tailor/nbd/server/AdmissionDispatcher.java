package dev.tailor.nbd.server;

import dev.tailor.admission.Admission;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.AdmissionController;
import dev.tailor.admission.AdmissionStats;
import dev.tailor.admission.IntervalReport;
import dev.tailor.admission.IoKind;
import dev.tailor.admission.SegmentClass;
import dev.tailor.admission.Ticket;
import dev.tailor.admission.VirtualDisk;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Segment admission (docs/design.md#segment-admission) in the NBD proxy: every READ and WRITE of every
 * export passes one {@link AdmissionController} for the whole server (one proxy, one token pool)
 * before it reaches its backend. Each export is a virtual disk of its tenant, committed its provisioned
 * baseline ({@code exports[].baseline}) or admission's default, a fair share. An admitted request
 * goes to the backend at once; a queued one when a later {@link #tick} admits it; a refused one (its
 * segment's queue full) fails with {@code NBD_EIO} and a message naming the segment and the limit,
 * and is logged as a warning like a refused connection ({@link ConnectionAdmission}): the first at
 * once, further ones within 10 s counted and summed up, per export, 10 s later.
 * Every request sent to the backend is timed from submission to completion, and that latency feeds
 * the controller's headroom model (the backend's measured P95).
 *
 * <p>Our reading: {@code FLUSH}, {@code TRIM} and {@code WRITE_ZEROES} bypass admission. They move
 * no data over the wire, the backends serve them as metadata operations, and a large
 * {@code WRITE_ZEROES} (qemu-img sends whole zero regions as one) priced as a write of its length
 * would hold a disk's queue for seconds.
 *
 * <p>A queued request whose connection closes leaves its queue at once ({@link AdmissionController#cancel}):
 * its connection drops it ({@link BlockRequest#drop}), and its completion's listener here withdraws it,
 * so a dead client's queued work neither reaches the backend nor takes budget from anyone.
 *
 * <p>Threads: {@link #dispatch} runs on connection event loops, {@link #tick} on whichever loop runs
 * the proxy's statistics task (every millisecond); both are thread-safe. A queued request is handed
 * to its backend exactly once, by whichever of the two threads sees it admitted second (see the
 * maintainer note).
 */
/*
 * Maintainer note. The race: acquire() returns Queued, and before the dispatching thread has put the
 * request into `waiting`, a tick on another loop may already pass a boundary that admits it. Both
 * sides therefore try `waiting.remove(ticket)` once they know the ticket is admitted: the tick after
 * reading the report (the ticket is admitted before the report exists), the dispatcher right after
 * its put (it reads the ticket's volatile class). ConcurrentHashMap.remove returns the entry to
 * exactly one of them. A withdrawal (its connection closed) is a third party to the same remove: when
 * it wins, the request never goes; when a tick wins, the backend finds the request dropped and skips
 * it, and the ticket is completed as ignored by the listener submit() added.
 */
public final class AdmissionDispatcher implements RequestDispatcher {

    private static final System.Logger LOG = System.getLogger(AdmissionDispatcher.class.getName());

    private record Waiting(Export export, BlockRequest request, Promise<ByteBuf> completion, long arrivalNanos) {}

    /**
     * What admission did with one export's READs and WRITEs so far (the requests that bypass
     * admission are not counted): for the metrics export, and to see which tenants were classified
     * hot and how long their requests waited.
     *
     * @param export          the export's name
     * @param requests        READs and WRITEs that reached admission
     * @param arrivedHot      of them, those whose segments were hot when they arrived
     * @param queued          of them, those that waited in a segment queue (admitted since or still waiting)
     * @param refused         of them, those refused because their segment's queue was full
     * @param queueWaitNanos  total wait, arrival to dispatch, of the queued requests dispatched so far
     * @param maxQueueWaitNanos the longest such wait since the server started (not over a window: for reports
     *                          of a run and {@code tailor nbd top}; {@link #waitHistogram} is the one to alert on)
     * @param waiting         of them, those waiting in a segment queue now: with disk order across the
     *                        guarantee, what a new request of the export waits behind (docs/admission.md,
     *                        Where it stands, has the bound on its wait)
     */
    public record ExportCounters(
            String export,
            long requests,
            long arrivedHot,
            long queued,
            long refused,
            long queueWaitNanos,
            long maxQueueWaitNanos,
            long waiting) {}

    private static final class Counters {
        /** Every READ and WRITE sent on, its wait in seconds: 0 when admitted at once. */
        final DistributionDataPoint waitSeconds;

        final LongAdder requests = new LongAdder();
        final LongAdder arrivedHot = new LongAdder();
        final LongAdder queued = new LongAdder();
        final LongAdder refused = new LongAdder();
        final LongAdder queueWaitNanos = new LongAdder();
        final LongAccumulator maxQueueWaitNanos = new LongAccumulator(Math::max, 0);
        final LongAdder waiting = new LongAdder();

        Counters(DistributionDataPoint waitSeconds) {
            this.waitSeconds = waitSeconds;
        }
    }

    /** The wait of every READ and WRITE admission sent on, per export: docs/nbd.md, "Metrics". */
    private final Histogram waitHistogram = IoMetrics.waitHistogram(
            "tailor_nbd_admission_wait_seconds",
            "Per READ and WRITE sent on by admission, its wait from arrival to dispatch (0: admitted at once)",
            "export");

    private final AdmissionController controller;
    private final Map<String, Integer> diskOfExport = new HashMap<>();
    private final List<String> exportNames = new ArrayList<>();
    private final List<Counters> counters = new ArrayList<>();
    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<Ticket, Waiting> waiting = new ConcurrentHashMap<>();
    private final LongAdder bypassed = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder withdrawn = new LongAdder();
    private final ReentrantLock ticking = new ReentrantLock();
    private final RequestDispatcher next;
    /** Refusal warnings, counted per export (by disk index); the summary goes out from {@link #tick}. */
    private final RefusalWarnings refusalWarnings;

    private volatile boolean closed;

    /**
     * @param config    the controller's constants; its capacity should be what the backends serve,
     *                  in cost units per second
     * @param exports   the server's exports, each one virtual disk, in this order
     * @param nanoClock the proxy's clock ({@code System::nanoTime}; tests pass a virtual one)
     * @throws IllegalArgumentException when the config or an export's size is not valid for admission
     */
    public AdmissionDispatcher(AdmissionConfig config, List<Export> exports, LongSupplier nanoClock) {
        this(config, exports, java.util.Collections.nCopies(exports.size(), OptionalDouble.empty()), nanoClock);
    }

    /**
     * @param config      the controller's constants; its capacity should be what the backends serve,
     *                    in cost units per second
     * @param exports     the server's exports, each one virtual disk, in this order
     * @param commitments per export, in the same order, its commitment in cost units per second (its
     *                    provisioned baseline, {@link AdmissionSettings#commitments}), or empty for
     *                    admission's default, a fair share of the budget
     * @param nanoClock   the proxy's clock ({@code System::nanoTime}; tests pass a virtual one)
     * @throws IllegalArgumentException when the config, an export's size or a commitment is not valid for
     *                                  admission, or the lists differ in length
     */
    public AdmissionDispatcher(
            AdmissionConfig config, List<Export> exports, List<OptionalDouble> commitments, LongSupplier nanoClock) {
        this(config, exports, commitments, RequestDispatcher.DIRECT, nanoClock);
    }

    /**
     * As above, sending what it admits through {@code next} (the {@link FairDispatchDoor}) instead of straight
     * to the export's backend. The latency that feeds the headroom model is the backend's: from the door
     * on, less the request's wait there ({@link BlockRequest#doorWaitNanos}), as the storage simulator
     * measures it.
     *
     * @param next how an admitted request reaches its backend ({@link RequestDispatcher#DIRECT}, or the door)
     */
    public AdmissionDispatcher(
            AdmissionConfig config,
            List<Export> exports,
            List<OptionalDouble> commitments,
            RequestDispatcher next,
            LongSupplier nanoClock) {
        this.next = next;
        if (commitments.size() != exports.size()) {
            throw new IllegalArgumentException(
                    "commitments : " + commitments.size() + " (expected: one per export, " + exports.size() + ")");
        }
        List<VirtualDisk> disks = new ArrayList<>();
        for (int i = 0; i < exports.size(); i++) {
            Export e = exports.get(i);
            diskOfExport.put(e.name(), disks.size());
            exportNames.add(e.name());
            counters.add(new Counters(waitHistogram.labelValues(e.name())));
            disks.add(new VirtualDisk(e.tenant() + "/" + e.name(), e.sizeBytes(), commitments.get(i)));
        }
        this.nanoClock = nanoClock;
        this.refusalWarnings = new RefusalWarnings(exports.size(), nanoClock);
        this.controller = new AdmissionController(config, disks, nanoClock.getAsLong());
    }

    @Override
    public void dispatch(Export export, BlockRequest request, Promise<ByteBuf> completion) {
        int command = request.command();
        if (closed) {
            if (request.claim()) {
                request.release();
                completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, "the server is shutting down"));
            }
            return;
        }
        if ((command != NbdProtocol.CMD_READ && command != NbdProtocol.CMD_WRITE) || request.lengthBytes() == 0) {
            bypassed.increment();
            export.backend().submit(request, completion);
            return;
        }
        Integer disk = diskOfExport.get(export.name());
        Counters count = counters.get(disk);
        count.requests.increment();
        IoKind kind = command == NbdProtocol.CMD_READ ? IoKind.READ : IoKind.WRITE;
        long arrivalNanos = nanoClock.getAsLong();
        switch (controller.acquire(disk, kind, request.offsetBytes(), request.lengthBytes(), arrivalNanos)) {
            case Admission.Admitted a -> {
                if (a.ticket().arrivedAs() == SegmentClass.HOT) {
                    count.arrivedHot.increment();
                }
                submit(export, request, completion, a.ticket(), 0);
            }
            case Admission.Queued q -> {
                if (q.ticket().arrivedAs() == SegmentClass.HOT) {
                    count.arrivedHot.increment();
                }
                count.queued.increment();
                count.waiting.increment();
                Ticket ticket = q.ticket();
                waiting.put(ticket, new Waiting(export, request, completion, arrivalNanos));
                // Its connection may close while it waits: then it leaves the queue at once.
                completion.addListener(done -> {
                    if (request.dropped()) {
                        withdraw(ticket);
                    }
                });
                if (ticket.isAdmitted()) {
                    sendIfStillWaiting(ticket);
                }
            }
            case Admission.Refused r -> {
                refused.increment();
                count.refused.increment();
                warnRefused(export, disk, r);
                if (request.claim()) {
                    request.release();
                    completion.tryFailure(
                            new NbdException(NbdProtocol.EIO, "admission refused the request: " + r.message()));
                }
            }
        }
    }

    /**
     * Passes the controller's interval boundaries up to now and sends the requests it admits; between
     * boundaries, lends the reserve and serves the queues (docs/admission.md). The proxy runs this as
     * its per-segment statistics task, every millisecond, on every loop; a call while another loop's
     * tick runs returns at once.
     *
     * @return the controller's report, or null when another thread was ticking
     */
    public IntervalReport tick() {
        // One tick at a time, reading the clock once it is its turn: every loop runs the statistics
        // task, and a reading taken before waiting for another loop's tick would be behind the time
        // that tick passed in (a step back, to the controller).
        if (!ticking.tryLock()) {
            return null;
        }
        IntervalReport report;
        try {
            report = controller.onInterval(nanoClock.getAsLong());
        } finally {
            ticking.unlock();
        }
        for (Ticket t : report.admitted()) {
            sendIfStillWaiting(t);
        }
        long[] counted = refusalWarnings.summarizeIfDue();
        if (counted != null) {
            summarizeRefusals(counted);
        }
        return report;
    }

    /**
     * Logs a refused request (its client is answered {@code NBD_EIO}): at once when none was logged
     * in the last 10 s, else counted, and summed up by {@link #tick} 10 s later or by {@link #close}.
     */
    private void warnRefused(Export export, int disk, Admission.Refused r) {
        if (refusalWarnings.refused(disk) == RefusalWarnings.LOG_NOW) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    () -> "export " + export.name() + ": segment admission refused a request, the client was"
                            + " answered EIO: " + r.message()
                            + "; give admission.queueCapacityPerSegment a larger value in the config, or have"
                            + " the clients keep fewer requests in flight; further refusals within 10 s are"
                            + " counted and summed up then");
        }
    }

    /** Logs the refusals counted since the last warning, per export, if any. */
    private void summarizeRefusals(long[] counted) {
        long total = RefusalWarnings.total(counted);
        if (total == 0) {
            return;
        }
        StringBuilder perExport = new StringBuilder();
        for (int i = 0; i < counted.length; i++) {
            if (counted[i] > 0) {
                perExport
                        .append(perExport.isEmpty() ? "" : ", ")
                        .append(exportNames.get(i))
                        .append(' ')
                        .append(counted[i]);
            }
        }
        LOG.log(
                System.Logger.Level.WARNING,
                () -> total + (total == 1 ? " more request" : " more requests")
                        + " refused by segment admission in the last 10 s, answered EIO (per export: "
                        + perExport + "); see admission.queueCapacityPerSegment");
    }

    /**
     * A queued request whose connection closed (it was dropped: completed and released by the
     * connection) leaves admission: withdrawn from its queue, or, when a tick admitted it just now,
     * completed as ignored.
     */
    private void withdraw(Ticket ticket) {
        if (waiting.remove(ticket) == null) {
            return; // a tick took it first; the backend will not run it, and submit() completes the ticket
        }
        counters.get(ticket.disk()).waiting.decrement();
        if (controller.cancel(ticket)) {
            withdrawn.increment();
        } else {
            ticket.onIgnore();
        }
    }

    private void sendIfStillWaiting(Ticket ticket) {
        Waiting w = waiting.remove(ticket);
        if (w != null) {
            long waited = nanoClock.getAsLong() - w.arrivalNanos();
            Counters count = counters.get(ticket.disk());
            count.waiting.decrement();
            count.queueWaitNanos.add(waited);
            count.maxQueueWaitNanos.accumulate(waited);
            submit(w.export(), w.request(), w.completion(), ticket, waited);
        }
    }

    private void submit(
            Export export, BlockRequest request, Promise<ByteBuf> completion, Ticket ticket, long waitedNanos) {
        counters.get(ticket.disk()).waitSeconds.observe(waitedNanos / 1e9);
        request.admitted(waitedNanos, ticket.admittedAs() == SegmentClass.HOT);
        long startNanos = nanoClock.getAsLong();
        completion.addListener((Future<ByteBuf> done) -> {
            if (done.isSuccess()) {
                ticket.onSuccess(nanoClock.getAsLong() - startNanos - request.doorWaitNanos());
            } else {
                ticket.onIgnore();
            }
        });
        next.dispatch(export, request, completion);
    }

    /** Fails every request still waiting with {@code NBD_ESHUTDOWN}; later requests likewise. */
    public void close() {
        closed = true;
        // Nothing is admitted any more: the refusals still waiting for their summary are logged now.
        summarizeRefusals(refusalWarnings.summarize());
        for (Ticket t : List.copyOf(waiting.keySet())) {
            Waiting w = waiting.remove(t);
            if (w != null) {
                counters.get(t.disk()).waiting.decrement();
            }
            if (w != null && w.request().claim()) {
                w.request().release();
                w.completion()
                        .tryFailure(new NbdException(
                                NbdProtocol.ESHUTDOWN,
                                "the server is shutting down; the request was waiting for admission"));
            }
        }
    }

    /** The controller's counters. */
    public AdmissionStats stats() {
        return controller.stats();
    }

    /** Requests waiting for admission now. */
    public int waitingRequests() {
        return waiting.size();
    }

    /** Per export, in the order of the server's exports: what admission did with its requests so far. */
    public List<ExportCounters> exportCounters() {
        List<ExportCounters> out = new ArrayList<>(counters.size());
        for (int i = 0; i < counters.size(); i++) {
            Counters c = counters.get(i);
            out.add(new ExportCounters(
                    exportNames.get(i),
                    c.requests.sum(),
                    c.arrivedHot.sum(),
                    c.queued.sum(),
                    c.refused.sum(),
                    c.queueWaitNanos.sum(),
                    c.maxQueueWaitNanos.get(),
                    c.waiting.sum()));
        }
        return out;
    }

    /**
     * The histogram {@code tailor_nbd_admission_wait_seconds{export}}, now: per export, the wait of every READ and
     * WRITE admission sent on, from its arrival to its dispatch, in seconds; 0 for those admitted at once. A request
     * is observed when it leaves admission for the backend (or the door): those refused, withdrawn (their connection
     * closed) or failed at shutdown are not, nor those still waiting ({@code tailor_nbd_admission_waiting}).
     */
    public HistogramSnapshot waitHistogram() {
        return waitHistogram.collect();
    }

    /** Queued requests withdrawn because their connection closed, so far. */
    public long withdrawnRequests() {
        return withdrawn.sum();
    }

    /** Requests refused (queue full) so far. */
    public long refusedRequests() {
        return refused.sum();
    }

    /** FLUSH, TRIM, WRITE_ZEROES and zero-length requests sent past admission so far. */
    public long bypassedRequests() {
        return bypassed.sum();
    }

    /** The controller, for its class and queue queries. */
    public AdmissionController controller() {
        return controller;
    }
}
