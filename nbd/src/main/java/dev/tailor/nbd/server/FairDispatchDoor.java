package dev.tailor.nbd.server;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.FairDispatchQueue;
import dev.tailor.admission.IoCostModel;
import dev.tailor.admission.IoKind;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The fair dispatch door (docs/nbd.md, "Fair dispatch"; docs/admission.md, "Fair dispatch") in the NBD
 * proxy: one {@link FairDispatchQueue} for the whole server, each export one of its disks (they share the
 * backends' device, as they share one admission controller). At most {@code depth} READs and WRITEs are at
 * the backends at a time; the rest wait here per export, and each completion lets in the waiting request of
 * the export with the least start tag: start-time fair queueing over the exports, weighted by their
 * baselines in cost units per second, with a lag of admission's W·Δ. A request costs what admission's cost
 * model charges for it. The door refuses nothing and never holds a request while fewer than {@code depth}
 * are out.
 *
 * <p>It stands alone (admission off: the storage simulator's {@code fair-dispatch}) or behind segment
 * admission, which then sends what it admits through the door instead of straight to the backend.
 * {@code FLUSH}, {@code TRIM}, {@code WRITE_ZEROES} and zero-length requests go past it, as they go past
 * admission (see {@link AdmissionDispatcher} for why).
 *
 * <p>A waiting request whose connection closes is dropped by its connection (failed and released there,
 * {@link BlockRequest#drop}); the door cannot take it out of its queue, so it stays until its turn comes,
 * and is then skipped, never sent and not charged to its export's share: its place goes to the next one
 * at once. {@link #close} fails every waiting request with {@code NBD_ESHUTDOWN}.
 *
 * <p>Threads: {@link #dispatch} runs on connection event loops, completions arrive on whichever thread
 * completes a request's promise (its listeners run on the promise's loop). The queue is guarded by one lock
 * held only for an {@code offer} or a {@code completed}; requests are sent to their backends outside it.
 * Every request let through produces exactly one {@code completed} when its promise completes, whether it
 * succeeded, failed or was dropped on the way.
 */
public final class FairDispatchDoor implements RequestDispatcher {

    /**
     * A request at the door: let through at once, or waiting. {@link #settle} once: by whoever sends it on or
     * fails it at shutdown ({@link BlockRequest#claim} stays true once claimed, so it cannot tell them apart).
     */
    private static final class Entry extends AtomicBoolean {
        final Export export;
        final int disk;
        final BlockRequest request;
        final Promise<ByteBuf> completion;
        final long arrivalNanos;

        Entry(Export export, int disk, BlockRequest request, Promise<ByteBuf> completion, long arrivalNanos) {
            this.export = export;
            this.disk = disk;
            this.request = request;
            this.completion = completion;
            this.arrivalNanos = arrivalNanos;
        }

        /** True for the one caller that takes it on. */
        boolean settle() {
            return compareAndSet(false, true);
        }
    }

    /**
     * What the door did with one export's READs and WRITEs so far.
     *
     * @param export       the export's name
     * @param requests     READs and WRITEs that reached the door
     * @param waited       of them, those that waited at the door (let through since, skipped or still waiting)
     * @param waitNanos    total wait, arrival to sent, of those let through after waiting
     * @param maxWaitNanos the longest such wait
     */
    public record ExportCounters(String export, long requests, long waited, long waitNanos, long maxWaitNanos) {}

    private static final class Counters {
        final LongAdder requests = new LongAdder();
        final LongAdder waited = new LongAdder();
        final LongAdder waitNanos = new LongAdder();
        final LongAccumulator maxWaitNanos = new LongAccumulator(Math::max, 0);
    }

    private static final String WAITED_AT_SHUTDOWN =
            "the server is shutting down; the request was waiting at the fair dispatch door";

    private final FairDispatchQueue<Entry> queue;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Integer> diskOfExport = new HashMap<>();
    private final List<String> exportNames = new ArrayList<>();
    private final List<Counters> counters = new ArrayList<>();
    private final IoCostModel costModel;
    private final RequestDispatcher backends;
    private final LongSupplier nanoClock;
    private final int depth;
    private final double lagSeconds;
    private final double[] weights;
    private final LongAdder bypassed = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private volatile boolean closed;

    /**
     * @param exports                   the server's exports, each one disk of the door, in this order
     * @param weightsCostUnitsPerSecond per export, in the same order, its weight: its baseline in cost units
     *                                  per second; each positive and finite
     * @param depth                     the most READs and WRITEs at the backends at once, {@code >= 1}
     * @param lagSeconds                how far behind the others a returning export may start, s
     * @param costModel                 what a request costs (admission's model)
     * @param backends                  how a request let through reaches its backend
     *                                  ({@link RequestDispatcher#DIRECT}; tests pass their own)
     * @param nanoClock                 the clock of the waits, ns ({@code System::nanoTime}; tests a virtual one)
     * @throws IllegalArgumentException naming the parameter when a weight, the depth or the lag is not valid,
     *                                  or the lists differ in length
     */
    public FairDispatchDoor(
            List<Export> exports,
            double[] weightsCostUnitsPerSecond,
            int depth,
            double lagSeconds,
            IoCostModel costModel,
            RequestDispatcher backends,
            LongSupplier nanoClock) {
        if (weightsCostUnitsPerSecond.length != exports.size()) {
            throw new IllegalArgumentException("weightsCostUnitsPerSecond : " + weightsCostUnitsPerSecond.length
                    + " weights (expected: one per export, " + exports.size() + ")");
        }
        this.queue = new FairDispatchQueue<>(weightsCostUnitsPerSecond, depth, lagSeconds);
        for (int i = 0; i < exports.size(); i++) {
            diskOfExport.put(exports.get(i).name(), i);
            exportNames.add(exports.get(i).name());
            counters.add(new Counters());
        }
        this.weights = weightsCostUnitsPerSecond.clone();
        this.depth = depth;
        this.lagSeconds = lagSeconds;
        this.costModel = costModel;
        this.backends = backends;
        this.nanoClock = nanoClock;
    }

    /**
     * The door {@code config} asks for, in front of {@code exports} (in config order): weights from
     * {@link NbdConfig.AdmissionSettings#commitments} (each export's provisioned baseline in cost units per
     * second, or its part of what the provisioned ones leave of admission's budget) or, with no baseline
     * provisioned, a fair share of admission's budget; the lag W·Δ and the cost model of
     * {@link NbdConfig.AdmissionSettings#toAdmissionConfig}, as the storage simulator's {@code fair-dispatch}
     * takes them; the depth {@link NbdConfig.FairDispatchSettings#depthOr} {@code fileIoThreads}.
     *
     * @param backends how a request let through reaches its backend ({@link RequestDispatcher#DIRECT})
     * @throws IllegalArgumentException when the admission settings are not valid
     */
    public static FairDispatchDoor of(
            NbdConfig config, List<Export> exports, RequestDispatcher backends, LongSupplier nanoClock) {
        AdmissionConfig admission = config.admission().toAdmissionConfig();
        return new FairDispatchDoor(
                exports,
                weights(config.admission(), config.exports()),
                config.fairDispatch().depthOr(config.fileIoThreads()),
                admission.windowIntervals() * (admission.intervalNanos() / 1e9),
                admission.costModel(),
                backends,
                nanoClock);
    }

    /**
     * Each export's weight at the door, cost units per second, in config order: its commitment to admission
     * ({@link NbdConfig.AdmissionSettings#commitments}), admission's default (an equal share of the budget)
     * where that is empty. An export left nothing (the provisioned baselines take the whole budget) gets a
     * millionth of the budget (our reading: the door needs a positive weight; such an export is served only
     * when no other waits, or after a quiet spell for its lag).
     */
    static double[] weights(NbdConfig.AdmissionSettings admission, List<NbdConfig.ExportConfig> exports) {
        double budget = admission.toAdmissionConfig().capacityCostUnitsPerSecond();
        List<OptionalDouble> commitments = admission.commitments(exports);
        double[] out = new double[exports.size()];
        for (int i = 0; i < out.length; i++) {
            double w = commitments.get(i).orElse(budget / exports.size());
            out[i] = Math.max(w, budget * 1e-6);
        }
        return out;
    }

    @Override
    public void dispatch(Export export, BlockRequest request, Promise<ByteBuf> completion) {
        if (closed) {
            failShutdown(request, completion, "the server is shutting down");
            return;
        }
        int command = request.command();
        if ((command != NbdProtocol.CMD_READ && command != NbdProtocol.CMD_WRITE) || request.lengthBytes() == 0) {
            bypassed.increment();
            export.backend().submit(request, completion);
            return;
        }
        int disk = diskOfExport.get(export.name());
        Counters count = counters.get(disk);
        count.requests.increment();
        long cost = costModel.costUnits(
                command == NbdProtocol.CMD_READ ? IoKind.READ : IoKind.WRITE, request.lengthBytes());
        Entry entry = new Entry(export, disk, request, completion, nanoClock.getAsLong());
        boolean now;
        lock.lock();
        try {
            now = queue.offer(disk, cost, entry);
        } finally {
            lock.unlock();
        }
        if (now) {
            entry.settle();
            send(entry);
        } else {
            count.waited.increment();
        }
    }

    /** Sends a request let through to its backend; its completion frees its place. Outside the lock. */
    private void send(Entry entry) {
        entry.completion.addListener(done -> completed());
        try {
            backends.dispatch(entry.export, entry.request, entry.completion);
        } catch (RuntimeException e) {
            // Its place is freed by the listener once the completion fails.
            entry.completion.tryFailure(e);
        }
    }

    /**
     * A request let through has completed: lets in the next, skipping those dropped while they waited (and,
     * after {@link #close}, failing the rest), each of which frees its place again at once.
     */
    private void completed() {
        while (true) {
            Entry next;
            lock.lock();
            try {
                next = queue.completed(this::abandoned);
            } finally {
                lock.unlock();
            }
            if (next == null) {
                return;
            }
            if (!next.settle()) {
                continue; // failed by close()
            }
            if (closed) {
                failShutdown(next.request, next.completion, WAITED_AT_SHUTDOWN);
                continue;
            }
            long waited = nanoClock.getAsLong() - next.arrivalNanos;
            next.request.waitedAtDoor(waited);
            Counters count = counters.get(next.disk);
            count.waitNanos.add(waited);
            count.maxWaitNanos.accumulate(waited);
            send(next);
            return;
        }
    }

    /** A waiting request dropped (its connection closed) leaves the door at its turn, uncharged. */
    private boolean abandoned(Entry entry) {
        if (entry.request.dropped()) {
            skipped.increment();
            return true;
        }
        return false;
    }

    private static void failShutdown(BlockRequest request, Promise<ByteBuf> completion, String message) {
        if (request.claim()) {
            request.release();
            completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, message));
        }
    }

    /** Fails every request waiting at the door with {@code NBD_ESHUTDOWN}; later requests likewise. */
    public void close() {
        closed = true;
        List<Entry> waiting = new ArrayList<>();
        lock.lock();
        try {
            queue.forEachWaiting(waiting::add);
        } finally {
            lock.unlock();
        }
        // They stay in the queue: a later completion finds the door closed and skips them.
        for (Entry e : waiting) {
            if (e.settle()) {
                failShutdown(e.request, e.completion, WAITED_AT_SHUTDOWN);
            }
        }
    }

    /** Requests waiting at the door now (those dropped while waiting among them until their turn). */
    public int waitingRequests() {
        lock.lock();
        try {
            return queue.waiting();
        } finally {
            lock.unlock();
        }
    }

    /** Requests let through and not completed yet, {@code 0 .. depth}. */
    public int outstandingRequests() {
        lock.lock();
        try {
            return queue.outstanding();
        } finally {
            lock.unlock();
        }
    }

    /** The most READs and WRITEs at the backends at once. */
    public int depth() {
        return depth;
    }

    /** How far behind the others a returning export may start, s. */
    public double lagSeconds() {
        return lagSeconds;
    }

    /** Per export, in the order of the server's exports, its weight in cost units per second. */
    public double[] weightsCostUnitsPerSecond() {
        return weights.clone();
    }

    /** Waiting requests skipped at their turn because their connection had closed, so far. */
    public long skippedRequests() {
        return skipped.sum();
    }

    /** FLUSH, TRIM, WRITE_ZEROES and zero-length requests sent past the door so far. */
    public long bypassedRequests() {
        return bypassed.sum();
    }

    /** Per export, in the order of the server's exports: what the door did with its requests so far. */
    public List<ExportCounters> exportCounters() {
        List<ExportCounters> out = new ArrayList<>(counters.size());
        for (int i = 0; i < counters.size(); i++) {
            Counters c = counters.get(i);
            out.add(new ExportCounters(
                    exportNames.get(i), c.requests.sum(), c.waited.sum(), c.waitNanos.sum(), c.maxWaitNanos.get()));
        }
        return out;
    }
}
