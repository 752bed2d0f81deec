package dev.tailor.nbd.server;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.FairDispatchQueue;
import dev.tailor.admission.IoCostModel;
import dev.tailor.admission.IoKind;
import dev.tailor.common.Numbers;
import dev.tailor.nbd.backend.UpstreamBackend;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.FairDispatchSettings;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.NbdException;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Promise;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The fair dispatch door (docs/nbd.md, "Fair dispatch"; docs/admission.md, "Fair dispatch") in the NBD
 * proxy: one door per backend, each a {@link FairDispatchQueue} whose disks are the exports on that backend
 * ({@link #backendOf}: a file export's file system device, an upstream export's upstream address, or the
 * export's {@code backend} name). At most {@code depth} READs and WRITEs are at one backend at a time; the
 * rest wait at its door per export, and each completion there lets in the waiting request of the export with
 * the least start tag among that door's: start-time fair queueing over the exports on the backend, weighted by
 * their baselines in cost units per second, with a lag of admission's W·Δ (or, with the finish-tag order, an
 * option, the least finish tag, start + cost ÷ weight). Exports on different backends
 * never wait for each other. A request costs what admission's cost model charges for it. A door refuses
 * nothing and never holds a request while fewer than {@code depth} of its backend's are out.
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
 * completes a request's promise (its listeners run on the promise's loop). Each door's queue is guarded by a
 * lock of its own held only for an {@code offer} or a {@code completed}; requests are sent to their backends
 * outside it.
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
        final Slot slot;
        final BlockRequest request;
        final Promise<ByteBuf> completion;
        final long arrivalNanos;

        Entry(Export export, Slot slot, BlockRequest request, Promise<ByteBuf> completion, long arrivalNanos) {
            this.export = export;
            this.slot = slot;
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
     * @param backend      the backend whose door it passes ({@link #backendOf})
     * @param requests     READs and WRITEs that reached the door
     * @param waited       of them, those that waited at the door (let through since, skipped or still waiting)
     * @param waitNanos    total wait, arrival to sent, of those let through after waiting
     * @param maxWaitNanos the longest such wait since the server started (not over a window: for reports of a run
     *                     and {@code tailor nbd top}; {@link #waitHistogram} is the one to alert on)
     */
    public record ExportCounters(
            String export, String backend, long requests, long waited, long waitNanos, long maxWaitNanos) {}

    /**
     * One backend's door now.
     *
     * @param backend     its name ({@link #backendOf})
     * @param exports     the exports on it, in the order of the server's exports
     * @param depth       the most of its READs and WRITEs at the backend at once
     * @param waiting     requests waiting at it now (those dropped while waiting among them until their turn)
     * @param outstanding requests it let through that have not completed, {@code 0 .. depth}
     * @param skipped     waiting requests skipped at their turn because their connection had closed, so far
     */
    public record DoorCounters(
            String backend, List<String> exports, int depth, int waiting, int outstanding, long skipped) {}

    private static final class Counters {
        /** Every READ and WRITE let through, its wait in seconds: 0 when let through at once. */
        final DistributionDataPoint waitSeconds;

        final LongAdder requests = new LongAdder();
        final LongAdder waited = new LongAdder();
        final LongAdder waitNanos = new LongAdder();
        final LongAccumulator maxWaitNanos = new LongAccumulator(Math::max, 0);

        Counters(DistributionDataPoint waitSeconds) {
            this.waitSeconds = waitSeconds;
        }
    }

    /** One backend's door: its queue, whose disks are the exports on the backend, and its lock. */
    private static final class Door {
        final String backend;
        final List<String> exports = new ArrayList<>();
        final List<Double> weights = new ArrayList<>();
        final ReentrantLock lock = new ReentrantLock();
        final LongAdder skipped = new LongAdder();
        /** A waiting request dropped (its connection closed) leaves the door at its turn, uncharged. */
        final Predicate<Entry> abandoned = entry -> {
            if (entry.request.dropped()) {
                skipped.increment();
                return true;
            }
            return false;
        };

        FairDispatchQueue<Entry> queue;
        int depth;

        Door(String backend) {
            this.backend = backend;
        }
    }

    /** One export's place: its backend's door, its disk there, its counters. */
    private record Slot(String export, Door door, int disk, Counters counters) {}

    private static final String WAITED_AT_SHUTDOWN =
            "the server is shutting down; the request was waiting at the fair dispatch door";

    /** The wait of every READ and WRITE let through, per backend and export: docs/nbd.md, "Metrics". */
    private final Histogram waitHistogram = IoMetrics.waitHistogram(
            "tailor_nbd_fair_dispatch_wait_seconds",
            "Per READ and WRITE let through the backend's door, its wait there (0: let through at once)",
            "backend",
            "export");

    private final Map<String, Slot> slotOfExport = new HashMap<>();
    private final List<Slot> slots = new ArrayList<>();
    private final List<Door> doors = new ArrayList<>();
    private final IoCostModel costModel;
    private final RequestDispatcher backends;
    private final LongSupplier nanoClock;
    private final double lagSeconds;
    private final boolean finishTag;
    private final double[] weights;
    private final LongAdder bypassed = new LongAdder();
    private volatile boolean closed;

    /**
     * @param exports                   the server's exports, in this order
     * @param backendOfExport           per export, in the same order, its backend ({@link #backendOf}):
     *                                  exports with the same one share a door, each backend has its own
     * @param weightsCostUnitsPerSecond per export, in the same order, its weight: its baseline in cost units
     *                                  per second; each positive and finite
     * @param depth                     the most READs and WRITEs at one backend at once, {@code >= 1}
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
            List<String> backendOfExport,
            double[] weightsCostUnitsPerSecond,
            int depth,
            double lagSeconds,
            IoCostModel costModel,
            RequestDispatcher backends,
            LongSupplier nanoClock) {
        this(
                exports,
                backendOfExport,
                weightsCostUnitsPerSecond,
                backend -> depth,
                lagSeconds,
                costModel,
                backends,
                nanoClock);
    }

    /**
     * As above, each door with its own depth.
     *
     * @param depthOfBackend per backend ({@code backendOfExport}'s values), the most READs and WRITEs at it at
     *                       once, {@code >= 1}
     */
    public FairDispatchDoor(
            List<Export> exports,
            List<String> backendOfExport,
            double[] weightsCostUnitsPerSecond,
            ToIntFunction<String> depthOfBackend,
            double lagSeconds,
            IoCostModel costModel,
            RequestDispatcher backends,
            LongSupplier nanoClock) {
        this(
                exports,
                backendOfExport,
                weightsCostUnitsPerSecond,
                depthOfBackend,
                lagSeconds,
                false,
                costModel,
                backends,
                nanoClock);
    }

    /**
     * As above, and with {@code finishTag} each door lets in the waiting export whose head has the least finish
     * tag, start + cost ÷ weight, instead of the least start tag ({@link FairDispatchSettings#finishTag}, the
     * queue's option {@link FairDispatchQueue#FairDispatchQueue(double[], int, double, boolean)}).
     *
     * @param finishTag whether the doors go by finish tag rather than start tag
     */
    public FairDispatchDoor(
            List<Export> exports,
            List<String> backendOfExport,
            double[] weightsCostUnitsPerSecond,
            ToIntFunction<String> depthOfBackend,
            double lagSeconds,
            boolean finishTag,
            IoCostModel costModel,
            RequestDispatcher backends,
            LongSupplier nanoClock) {
        if (weightsCostUnitsPerSecond.length != exports.size()) {
            throw new IllegalArgumentException("weightsCostUnitsPerSecond : " + weightsCostUnitsPerSecond.length
                    + " weights (expected: one per export, " + exports.size() + ")");
        }
        if (backendOfExport.size() != exports.size()) {
            throw new IllegalArgumentException("backendOfExport : " + backendOfExport.size()
                    + " backends (expected: one per export, " + exports.size() + ")");
        }
        for (int i = 0; i < weightsCostUnitsPerSecond.length; i++) {
            double w = weightsCostUnitsPerSecond[i];
            if (!(w > 0) || Double.isInfinite(w)) {
                // Named here: each door's queue numbers only its own exports.
                throw new IllegalArgumentException("weightsCostUnitsPerSecond[" + i + "] : " + Numbers.written(w)
                        + " (expected: a finite number of cost units per second > 0)");
            }
        }
        Map<String, Door> byBackend = new HashMap<>();
        for (int i = 0; i < exports.size(); i++) {
            String name = exports.get(i).name();
            Door door = byBackend.computeIfAbsent(backendOfExport.get(i), Door::new);
            if (door.exports.isEmpty()) {
                doors.add(door);
            }
            Slot slot = new Slot(
                    name,
                    door,
                    door.exports.size(),
                    new Counters(waitHistogram.labelValues(backendOfExport.get(i), name)));
            door.exports.add(name);
            door.weights.add(weightsCostUnitsPerSecond[i]);
            slotOfExport.put(name, slot);
            slots.add(slot);
        }
        for (Door door : doors) {
            door.depth = depthOfBackend.applyAsInt(door.backend);
            door.queue = new FairDispatchQueue<>(
                    door.weights.stream().mapToDouble(Double::doubleValue).toArray(),
                    door.depth,
                    lagSeconds,
                    finishTag);
        }
        this.weights = weightsCostUnitsPerSecond.clone();
        this.lagSeconds = lagSeconds;
        this.finishTag = finishTag;
        this.costModel = costModel;
        this.backends = backends;
        this.nanoClock = nanoClock;
    }

    /**
     * The doors {@code config} asks for, in front of {@code exports} (in config order), one per backend
     * ({@link #backendOf}): weights from {@link AdmissionSettings#commitments} (each export's
     * provisioned baseline in cost units per second, or its part of what the provisioned ones leave of
     * admission's budget) or, with no baseline provisioned, a fair share of admission's budget; the lag W·Δ and
     * the cost model of {@link AdmissionSettings#toAdmissionConfig}, as the storage simulator's
     * {@code fair-dispatch} takes them; each door's depth {@link FairDispatchSettings#depthOf} its
     * exports, an upstream export's pool counted as opened (one connection without multi-conn); start-tag
     * order, or finish-tag order as {@link FairDispatchSettings#finishTagOrder} says.
     *
     * @param backends how a request let through reaches its backend ({@link RequestDispatcher#DIRECT})
     * @throws IllegalArgumentException when the admission settings are not valid
     */
    public static FairDispatchDoor of(
            NbdConfig config, List<Export> exports, RequestDispatcher backends, LongSupplier nanoClock) {
        AdmissionConfig admission = config.admission().toAdmissionConfig();
        List<String> backendOfExport =
                config.exports().stream().map(FairDispatchDoor::backendOf).toList();
        Map<String, List<ExportConfig>> exportsOfBackend = new HashMap<>();
        Map<String, Integer> poolOfExport = new HashMap<>();
        for (int i = 0; i < backendOfExport.size(); i++) {
            ExportConfig e = config.exports().get(i);
            exportsOfBackend
                    .computeIfAbsent(backendOfExport.get(i), b -> new ArrayList<>())
                    .add(e);
            if (e.upstream() != null) {
                // The pool as opened: one connection when the upstream does not offer multi-conn.
                poolOfExport.put(
                        e.name(),
                        i < exports.size() && exports.get(i).backend() instanceof UpstreamBackend upstream
                                ? upstream.poolSize()
                                : e.upstream().connections());
            }
        }
        return new FairDispatchDoor(
                exports,
                backendOfExport,
                weights(config.admission(), config.exports()),
                backend -> config.fairDispatch()
                        .depthOf(
                                exportsOfBackend.get(backend), e -> poolOfExport.get(e.name()), config.fileIoThreads()),
                admission.windowIntervals() * (admission.intervalNanos() / 1e9),
                config.fairDispatch().finishTagOrder(config.admission()),
                admission.costModel(),
                backends,
                nanoClock);
    }

    /**
     * The backend an export's requests reach, whose door they pass (docs/nbd.md, "Fair dispatch"; our
     * reading): the export's {@code backend} when given; else for an upstream export its upstream's address,
     * {@code upstream:HOST:PORT} (every export of one upstream server shares its threads), or for one on a Unix
     * socket {@code upstream:unix:/PATH} (the path made absolute and normalized, so that two ways of writing one
     * socket are one backend); else for a file
     * export the device of the file system holding its file, {@code device:MAJOR:MINOR} as {@code lsblk} and
     * {@code /proc/self/mountinfo} show it (the file's {@code st_dev}; for a file not created yet, its
     * folder's). A file whose device cannot be read (no such attribute on this platform, or the file and its
     * folder cannot be looked at) is on {@code device:unknown}, which all such files share.
     */
    public static String backendOf(ExportConfig export) {
        if (export.backend() != null) {
            return export.backend();
        }
        if (export.upstream() != null && export.upstream().unix() != null) {
            return "upstream:unix:" + export.upstream().unixSocket();
        }
        if (export.upstream() != null) {
            String host = export.upstream().host();
            boolean ipv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
            return "upstream:" + (ipv6 ? "[" + host + "]" : host) + ":"
                    + export.upstream().port();
        }
        Path file = export.file().toAbsolutePath();
        Path looked = Files.exists(file) || file.getParent() == null ? file : file.getParent();
        try {
            long dev = ((Number) Files.getAttribute(looked, "unix:dev")).longValue();
            return "device:" + major(dev) + ":" + minor(dev);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return "device:unknown";
        }
    }

    /** The major number of a Linux {@code dev_t}, as glibc's {@code gnu_dev_major}. */
    static long major(long dev) {
        return ((dev >>> 32) & 0xfffff000L) | ((dev >>> 8) & 0xfffL);
    }

    /** The minor number of a Linux {@code dev_t}, as glibc's {@code gnu_dev_minor}. */
    static long minor(long dev) {
        return ((dev >>> 12) & 0xffffff00L) | (dev & 0xffL);
    }

    /**
     * Each export's weight at its door, cost units per second, in config order: its commitment to admission
     * ({@link AdmissionSettings#commitments}), admission's default (an equal share of the budget)
     * where that is empty. An export left nothing (the provisioned baselines take the whole budget) gets a
     * millionth of the budget (our reading: the door needs a positive weight; such an export is served only
     * when no other on its backend waits, or after a quiet spell for its lag).
     */
    static double[] weights(AdmissionSettings admission, List<ExportConfig> exports) {
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
        Slot slot = slotOfExport.get(export.name());
        slot.counters.requests.increment();
        long cost = costModel.costUnits(
                command == NbdProtocol.CMD_READ ? IoKind.READ : IoKind.WRITE, request.lengthBytes());
        Entry entry = new Entry(export, slot, request, completion, nanoClock.getAsLong());
        Door door = slot.door;
        boolean now;
        door.lock.lock();
        try {
            now = door.queue.offer(slot.disk, cost, entry);
        } finally {
            door.lock.unlock();
        }
        if (now) {
            entry.settle();
            slot.counters.waitSeconds.observe(0);
            send(entry);
        } else {
            slot.counters.waited.increment();
        }
    }

    /** Sends a request let through to its backend; its completion frees its place. Outside the lock. */
    private void send(Entry entry) {
        Door door = entry.slot.door;
        entry.completion.addListener(done -> completed(door));
        try {
            backends.dispatch(entry.export, entry.request, entry.completion);
        } catch (RuntimeException e) {
            // Its place is freed by the listener once the completion fails.
            entry.completion.tryFailure(e);
        }
    }

    /**
     * A request let through {@code door} has completed: lets in its next, skipping those dropped while they
     * waited (and, after {@link #close}, failing the rest), each of which frees its place again at once.
     */
    private void completed(Door door) {
        while (true) {
            Entry next;
            door.lock.lock();
            try {
                next = door.queue.completed(door.abandoned);
            } finally {
                door.lock.unlock();
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
            Counters count = next.slot.counters;
            count.waitNanos.add(waited);
            count.maxWaitNanos.accumulate(waited);
            count.waitSeconds.observe(waited / 1e9);
            send(next);
            return;
        }
    }

    private static void failShutdown(BlockRequest request, Promise<ByteBuf> completion, String message) {
        if (request.claim()) {
            request.release();
            completion.tryFailure(new NbdException(NbdProtocol.ESHUTDOWN, message));
        }
    }

    /** Fails every request waiting at the doors with {@code NBD_ESHUTDOWN}; later requests likewise. */
    public void close() {
        closed = true;
        List<Entry> waiting = new ArrayList<>();
        for (Door door : doors) {
            door.lock.lock();
            try {
                door.queue.forEachWaiting(waiting::add);
            } finally {
                door.lock.unlock();
            }
        }
        // They stay in the queues: a later completion finds the door closed and skips them.
        for (Entry e : waiting) {
            if (e.settle()) {
                failShutdown(e.request, e.completion, WAITED_AT_SHUTDOWN);
            }
        }
    }

    /** Requests waiting at the doors now, all backends' (those dropped while waiting among them until their turn). */
    public int waitingRequests() {
        int sum = 0;
        for (DoorCounters d : doorCounters()) {
            sum += d.waiting();
        }
        return sum;
    }

    /** Requests let through and not completed yet, all backends', {@code 0 .. depth} per backend. */
    public int outstandingRequests() {
        int sum = 0;
        for (DoorCounters d : doorCounters()) {
            sum += d.outstanding();
        }
        return sum;
    }

    /**
     * The most READs and WRITEs at {@code backend} at once: its door's depth.
     *
     * @throws IllegalArgumentException when no export is on {@code backend}
     */
    public int depth(String backend) {
        for (Door door : doors) {
            if (door.backend.equals(backend)) {
                return door.depth;
            }
        }
        throw new IllegalArgumentException(
                "backend : " + backend + " (expected: the backend of one of the exports, " + backends() + ")");
    }

    /** The backends, one per door, in the order of their first export. */
    public List<String> backends() {
        return doors.stream().map(d -> d.backend).toList();
    }

    /** How many doors: one per backend. */
    public int doors() {
        return doors.size();
    }

    /** How far behind the others a returning export may start, s. */
    public double lagSeconds() {
        return lagSeconds;
    }

    /** Whether the doors let in the least finish tag rather than the least start tag. */
    public boolean finishTag() {
        return finishTag;
    }

    /** Per export, in the order of the server's exports, its weight in cost units per second. */
    public double[] weightsCostUnitsPerSecond() {
        return weights.clone();
    }

    /** Waiting requests skipped at their turn because their connection had closed, so far, all backends'. */
    public long skippedRequests() {
        long sum = 0;
        for (Door door : doors) {
            sum += door.skipped.sum();
        }
        return sum;
    }

    /** FLUSH, TRIM, WRITE_ZEROES and zero-length requests sent past the door so far. */
    public long bypassedRequests() {
        return bypassed.sum();
    }

    /** Per backend, in the order its first export comes among the server's: its door now. */
    public List<DoorCounters> doorCounters() {
        List<DoorCounters> out = new ArrayList<>(doors.size());
        for (Door door : doors) {
            int waiting;
            int outstanding;
            door.lock.lock();
            try {
                waiting = door.queue.waiting();
                outstanding = door.queue.outstanding();
            } finally {
                door.lock.unlock();
            }
            out.add(new DoorCounters(
                    door.backend, List.copyOf(door.exports), door.depth, waiting, outstanding, door.skipped.sum()));
        }
        return out;
    }

    /**
     * The histogram {@code tailor_nbd_fair_dispatch_wait_seconds{backend,export}}, now: per export, the wait at its
     * backend's door of every READ and WRITE let through, from its arrival at the door to its sending, in seconds; 0
     * for those let through at once. Those skipped (their connection closed) or failed at shutdown are not
     * observed, nor those still waiting ({@code tailor_nbd_fair_dispatch_waiting}).
     */
    public HistogramSnapshot waitHistogram() {
        return waitHistogram.collect();
    }

    /** Per export, in the order of the server's exports: what its door did with its requests so far. */
    public List<ExportCounters> exportCounters() {
        List<ExportCounters> out = new ArrayList<>(slots.size());
        for (Slot slot : slots) {
            Counters c = slot.counters;
            out.add(new ExportCounters(
                    slot.export,
                    slot.door.backend,
                    c.requests.sum(),
                    c.waited.sum(),
                    c.waitNanos.sum(),
                    c.maxWaitNanos.get()));
        }
        return out;
    }
}
