package dev.tailor.sim.storage;

import dev.tailor.admission.Admission;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.AdmissionController;
import dev.tailor.admission.AdmissionStats;
import dev.tailor.admission.BaseLatency;
import dev.tailor.admission.FairDispatchQueue;
import dev.tailor.admission.IntervalReport;
import dev.tailor.admission.IoKind;
import dev.tailor.admission.LatencyAdaptiveBudget;
import dev.tailor.admission.Ticket;
import dev.tailor.sim.des.EventCalendar;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code segment-admission} (ours, {@link AdmissionConfig#DEFAULTS}), {@code segment-admission-paper}
 * (the paper's mechanism as first built, {@link AdmissionConfig#PAPER}) and the ablations of ours
 * {@code no-reserve}, {@code no-borrow}, {@code no-repay}, {@code no-lending},
 * {@code no-baseline-guarantee}, {@code paced-release}, {@code fixed-reserve},
 * {@code round-robin-hot}, {@code bounded-overdraft}, {@code virtual-clock-hot}, {@code fifo-deadline},
 * {@code late-first-hot}, {@code late-first-clock-hot}, {@code round-robin-within-disk},
 * {@code bounded-lag-hot}, {@code unscaled-baselines}, {@code tick-refilled-baselines},
 * {@code no-fair-dispatch}, {@code no-oversize-advance}, {@code overlapping-advances},
 * {@code credit-gated-advances}, {@code start-tag-door-admission}, {@code spare-exchange}: the real
 * {@link AdmissionController} of the {@code admission} module, driven in simulated time. An arriving request is acquired at its arrival time: admitted requests go
 * to the backend at once, queued ones when an {@link IntervalReport} admits them, refused ones leave
 * counted; with {@link AdmissionConfig#fairDispatch} (on but in the paper's variant), "go to the backend" is through
 * the door {@code fair-dispatch} uses ({@link FairDispatchPolicy#door}), which keeps at most the
 * backend's parallelism there and lets the rest in fairly over the disks. Every
 * dispatched request's ticket is completed with its backend latency (dispatch to completion), which
 * is what the headroom model measures.
 *
 * <p>Configuration (our reading, docs/storage-simulator.md): the proxy's budget is its share of what
 * the backend serves ({@link StorageSetup}), priced in the cost model derived from the backend; each
 * tenant's disk is committed at its commitment; the other constants come from the scenario's
 * {@code admission} block or admission's defaults. The ablations change one thing each:
 * {@code no-reserve} r = 0, {@code no-borrow} {@link AdmissionConfig#borrowing borrowing(false)},
 * {@code no-repay} {@link AdmissionConfig#repayment repayment(false)}, {@code no-lending}
 * {@link AdmissionConfig#reserveLending reserveLending(false)} (the strict reserve), one each
 * of {@link AdmissionConfig#baselineGuarantee}, {@link AdmissionConfig#adaptiveReserve} and
 * {@link AdmissionConfig#weightedHotService} off ({@code no-reserve} also fixes the reserve at 0), and
 * {@code paced-release} with {@link AdmissionConfig#pacedRelease} on (off by default), {@code bounded-overdraft}
 * with {@link AdmissionConfig#boundedOverdraft} on and {@code virtual-clock-hot} with it and
 * {@link AdmissionConfig#virtualClockHotService} on (both off by default), {@code fifo-deadline} with
 * {@link AdmissionConfig#fifoDeadline} on (off by default), {@code late-first-hot} with
 * {@link AdmissionConfig#lateFirstHotService} on (off by default) and {@code late-first-clock-hot} with it and
 * {@link AdmissionConfig#virtualClockHotService} on, without the bounded overdraft, and
 * {@code round-robin-within-disk} with {@link AdmissionConfig#arrivalOrderWithinDisk} off (on by default), and
 * {@code bounded-lag-hot} with {@link AdmissionConfig#boundedLagHotService} on (off by default), and
 * {@code unscaled-baselines} with {@link AdmissionConfig#scaledBaselines} off (on by default), and
 * {@code tick-refilled-baselines} with {@link AdmissionConfig#baselineRefillOnArrival} off (on by
 * default: the guarantee's buckets refilled at the controller's calls only), and
 * {@code no-fair-dispatch} with {@link AdmissionConfig#fairDispatch} off (on by default), and
 * {@code no-oversize-advance} with {@link AdmissionConfig#oversizeAdvance} off (on by default: a request
 * costing more than the proxy's budget per interval collects its whole cost before it is admitted), and
 * {@code overlapping-advances} with {@link AdmissionConfig#overlappingAdvances} on (off by default: at most
 * one advance outstanding, so a second such request waits until the first's is repaid), and
 * {@code credit-gated-advances} with it and {@link AdmissionConfig#creditGatedAdvances} on (off by default:
 * an overlapping advance only for a request whose disk is within its credits over the last R·Δ), and
 * {@code start-tag-door-admission} with {@link AdmissionConfig#finishTagDoor} off (on by default: the
 * door lets waiting requests in by finish tag), and {@code spare-exchange}, {@code segment-admission} whose
 * proxies pass on unused budget at every boundary (the run does the exchange: {@link #expiredCostUnits},
 * {@link #waiting}, {@link #grantSpare}; with fixed shares, as in {@code fixed-shares}), and
 * {@code fixed-shares}, each proxy budgeting its fixed share of the backend, and {@code measured-base-latency},
 * whose proxies take a request's slowdown as the NBD proxy does, its latency over the least seen for its kind and
 * size ({@link BaseLatency}), instead of over its known unqueued service time. Every other variant but the
 * paper's adapts each proxy's budget ({@link LatencyAdaptiveBudget}: between its share and the whole
 * backend, growing while its requests' mean slowdown at the backend is at most
 * {@code admission.targetSlowdown}, default 2, γ {@value #ADAPTIVE_GAMMA}; what exceeds the share is
 * granted to the running interval); with one proxy the share is the whole backend and nothing changes.
 * Between
 * boundaries the policy calls the controller {@code admission.callsPerInterval − 1} more times per
 * interval (default every millisecond), as a proxy's statistics task would.
 */
/*
 * Maintainer note. The controller is used exactly as a proxy would use it: nothing here reaches into
 * its internals, and its start time is the simulation's 0, so its interval grid coincides with the
 * run's ticks. Queued tickets are kept in an identity map to find their requests when a report admits
 * them. The latency reported to a ticket is the backend's (dispatch to completion), not the request's
 * (arrival to completion): the headroom model estimates the backend's spare capacity, and the time a
 * request waited in admission's own queue says nothing about that. Nor does the time it waited at the
 * door: a request is dispatched when the door lets it through.
 */
final class SegmentAdmissionPolicy implements StoragePolicy {

    private static final String SPARE_EXCHANGE = "spare-exchange";
    private static final String MEASURED_BASE_LATENCY = "measured-base-latency";

    /**
     * One configuration of segment admission under a policy name: the shipped one, the paper's, or an
     * ablation, each a change to the shipped configuration (or to the paper's, for the paper's own).
     *
     * @param name          the policy name
     * @param paper         whether it starts from {@link AdmissionConfig#PAPER} instead of {@link
     *                      AdmissionConfig#DEFAULTS}
     * @param adaptsBudget  whether each proxy adapts its budget from the backend's latency
     * @param change        what it changes in the controller's configuration
     */
    record Variant(String name, boolean paper, boolean adaptsBudget, UnaryOperator<AdmissionConfig.Builder> change) {

        static Variant of(String name, UnaryOperator<AdmissionConfig.Builder> change) {
            return new Variant(name, false, true, change);
        }

        static Variant fixedBudget(String name) {
            return new Variant(name, false, false, b -> b);
        }
    }

    /** Every variant this class implements, in the order the simulator lists them. */
    static final List<Variant> VARIANTS = List.of(
            Variant.of("segment-admission", b -> b),
            new Variant("segment-admission-paper", true, false, b -> b),
            Variant.of("no-reserve", b -> b.reserveFraction(0).adaptiveReserve(false)),
            Variant.of("no-borrow", b -> b.borrowing(false)),
            Variant.of("no-repay", b -> b.repayment(false)),
            Variant.of("no-lending", b -> b.reserveLending(false)),
            Variant.of("no-baseline-guarantee", b -> b.baselineGuarantee(false)),
            Variant.of("paced-release", b -> b.pacedRelease(true)),
            Variant.of("fixed-reserve", b -> b.adaptiveReserve(false)),
            Variant.of("round-robin-hot", b -> b.weightedHotService(false)),
            Variant.of("bounded-overdraft", b -> b.boundedOverdraft(true)),
            Variant.of("virtual-clock-hot", b -> b.boundedOverdraft(true).virtualClockHotService(true)),
            Variant.of("fifo-deadline", b -> b.fifoDeadline(true)),
            Variant.of("late-first-hot", b -> b.lateFirstHotService(true)),
            Variant.of(
                    "late-first-clock-hot", b -> b.virtualClockHotService(true).lateFirstHotService(true)),
            Variant.of("round-robin-within-disk", b -> b.arrivalOrderWithinDisk(false)),
            Variant.of("bounded-lag-hot", b -> b.boundedLagHotService(true)),
            Variant.of("unscaled-baselines", b -> b.scaledBaselines(false)),
            Variant.of("tick-refilled-baselines", b -> b.baselineRefillOnArrival(false)),
            Variant.of("no-fair-dispatch", b -> b.fairDispatch(false)),
            Variant.of("no-oversize-advance", b -> b.oversizeAdvance(false)),
            Variant.of("overlapping-advances", b -> b.overlappingAdvances(true)),
            Variant.of("credit-gated-advances", b -> b.overlappingAdvances(true).creditGatedAdvances(true)),
            Variant.of("start-tag-door-admission", b -> b.finishTagDoor(false)),
            Variant.fixedBudget(SPARE_EXCHANGE),
            Variant.fixedBudget("fixed-shares"),
            Variant.of(MEASURED_BASE_LATENCY, b -> b),
            Variant.of("no-disk-order", b -> b.diskOrderAcrossGuarantee(false)));

    /** The policy names this class implements, in {@link #VARIANTS}' order. */
    static final List<String> NAMES = VARIANTS.stream().map(Variant::name).toList();

    /** The adaptive budget's γ (our choice). */
    static final double ADAPTIVE_GAMMA = LatencyAdaptiveBudget.DEFAULT_GAMMA;

    private final Proxy proxy;
    private final AdmissionController controller;
    private final Map<Ticket, IoRequest> queued = new IdentityHashMap<>();
    private final SeriesRecorder recorder;
    private final int callsPerInterval;
    private final SubTick subTick = new SubTick();
    private final FairDispatchQueue<IoRequest> door;
    private final boolean spareExchange;
    private final LatencyAdaptiveBudget adaptiveBudget;
    private final BaseLatency baseLatency;

    /**
     * @param name     one of {@link #NAMES}
     * @param recorder per-interval pool series of this proxy, or {@code null}
     */
    SegmentAdmissionPolicy(Proxy proxy, String name, SeriesRecorder recorder) {
        this.proxy = proxy;
        this.recorder = recorder;
        this.controller = new AdmissionController(config(proxy, name), proxy.disks(), 0);
        this.door = controller.config().fairDispatch()
                ? FairDispatchPolicy.door(proxy, controller.config().finishTagDoor())
                : null;
        this.callsPerInterval = proxy.setup().scenario().admission().callsPerInterval();
        this.spareExchange = SPARE_EXCHANGE.equals(name);
        long share = controller.config().budgetCostUnits();
        long whole = (long) Math.floor(StorageSetup.BACKEND_COST_UNITS_PER_SECOND
                * proxy.setup().scenario().admission().capacityFraction()
                * proxy.intervalNanos()
                / 1e9);
        this.adaptiveBudget = adaptsBudget(name)
                ? new LatencyAdaptiveBudget(
                        Math.max(1, share),
                        Math.max(Math.max(1, share), whole),
                        proxy.setup().scenario().admission().targetSlowdown(),
                        ADAPTIVE_GAMMA)
                : null;
        this.baseLatency = MEASURED_BASE_LATENCY.equals(name) ? new BaseLatency() : null;
        if (recorder != null) {
            recorder.budgetCostUnits = controller.config().budgetCostUnits();
        }
    }

    /**
     * Whether policy {@code name}'s proxies adapt their budgets from the backend's latency: all but the
     * paper's mechanism, {@code fixed-shares} and {@code spare-exchange} (which passes fixed shares on).
     */
    static boolean adaptsBudget(String name) {
        return variant(name).adaptsBudget();
    }

    /**
     * The variant named {@code name}.
     *
     * @throws IllegalArgumentException when no variant has that name
     */
    static Variant variant(String name) {
        for (Variant v : VARIANTS) {
            if (v.name().equals(name)) {
                return v;
            }
        }
        throw new IllegalArgumentException("policy : \"" + name + "\" (expected: one of " + NAMES + ")");
    }

    /** The controller's configuration for {@code proxy} under policy {@code name}. */
    static AdmissionConfig config(Proxy proxy, String name) {
        StorageScenario s = proxy.setup().scenario();
        StorageScenario.AdmissionSpec spec = s.admission();
        Variant variant = variant(name);
        AdmissionConfig.Builder scenario = (variant.paper() ? AdmissionConfig.PAPER : AdmissionConfig.DEFAULTS)
                .toBuilder()
                        .intervalNanos(proxy.intervalNanos())
                        .capacityCostUnitsPerSecond(proxy.capacityCostUnitsPerSecond())
                        .segmentSizeBytes(s.segmentSizeBytes())
                        .blockSizeBytes(s.blockSizeBytes())
                        .costModel(proxy.setup().costModel())
                        .reserveFraction(spec.reserveFraction())
                        .queueCapacityPerSegment(spec.queueCapacityPerSegment())
                        .windowIntervals(spec.windowIntervals())
                        .recoveryWindows(spec.recoveryWindows())
                        .hotThresholdRatio(spec.hotThresholdRatio());
        return variant.change().apply(scenario).build();
    }

    @Override
    public void arrive(IoRequest request, long nowNanos) {
        Admission admission =
                controller.acquire(request.disk, request.kind(), request.offsetBytes, request.lengthBytes, nowNanos);
        switch (admission) {
            case Admission.Admitted a -> {
                request.ticket = a.ticket();
                send(request, nowNanos);
            }
            case Admission.Queued q -> queued.put(q.ticket(), request);
            case Admission.Refused r -> proxy.refuse(request, nowNanos);
        }
    }

    /** Calls the controller between boundaries, at the next sub-interval tick. */
    private final class SubTick extends EventCalendar.Event {
        @Override
        protected void fire(long nowNanos) {
            serve(controller.onInterval(nowNanos), nowNanos);
            scheduleSubTicks(nowNanos);
        }
    }

    private void scheduleSubTicks(long nowNanos) {
        long step = proxy.intervalNanos() / callsPerInterval;
        long next = nowNanos + step;
        long boundary = (nowNanos / proxy.intervalNanos() + 1) * proxy.intervalNanos();
        if (callsPerInterval > 1 && step > 0 && next < boundary) {
            proxy.calendar().schedule(subTick, next);
        }
    }

    private void serve(IntervalReport report, long nowNanos) {
        for (Ticket ticket : report.admitted()) {
            IoRequest request = queued.remove(ticket);
            request.ticket = ticket;
            send(request, nowNanos);
        }
    }

    /** An admitted request goes to the backend, through the door when there is one. */
    private void send(IoRequest request, long nowNanos) {
        if (door == null || door.offer(request.disk, request.costUnits, request)) {
            proxy.dispatch(request, nowNanos);
        }
    }

    @Override
    public void interval(long nowNanos) {
        AdmissionStats before = recorder == null ? null : controller.stats();
        IntervalReport report = controller.onInterval(nowNanos);
        serve(report, nowNanos);
        if (adaptiveBudget != null) {
            long beyondShare = adaptiveBudget.onBoundary() - adaptiveBudget.floorCostUnits();
            if (beyondShare > 0) {
                serve(controller.grantSpare(beyondShare, nowNanos), nowNanos);
            }
        }
        scheduleSubTicks(nowNanos);
        if (recorder != null) {
            recorder.pools(nowNanos, before, report);
        }
    }

    @Override
    public void completed(IoRequest request, long nowNanos) {
        request.ticket.onSuccess(nowNanos - request.dispatchNanos);
        if (baseLatency != null) {
            long latencyNanos = nowNanos - request.dispatchNanos;
            adaptiveBudget.onCompletion(
                    latencyNanos,
                    baseLatency.record(request.write ? IoKind.WRITE : IoKind.READ, request.lengthBytes, latencyNanos));
        } else if (adaptiveBudget != null) {
            adaptiveBudget.onCompletion(
                    nowNanos - request.dispatchNanos, (double) request.costUnits * proxy.backendParallelism());
        }
        if (door != null) {
            IoRequest next = door.completed();
            if (next != null) {
                proxy.dispatch(next, nowNanos);
            }
        }
    }

    @Override
    public void forEachHeld(Consumer<IoRequest> action) {
        queued.values().forEach(action);
        if (door != null) {
            door.forEachWaiting(action);
        }
    }

    /** Whether this proxy takes part in the spare exchange with the other proxies of its backend. */
    boolean spareExchange() {
        return spareExchange;
    }

    /** Its proxy's share of what the backend serves, cost units per second. */
    double capacityCostUnitsPerSecond() {
        return proxy.capacityCostUnitsPerSecond();
    }

    /** The regular budget that expired unused at the last boundary. */
    long expiredCostUnits() {
        return controller.expiredCostUnits();
    }

    /** Whether requests wait in admission's queues now. */
    boolean waiting() {
        return controller.waitingRequests() > 0;
    }

    /** Adds another proxy's unused budget to this interval's pools and sends what that admits. */
    void grantSpare(long costUnits, long nowNanos) {
        serve(controller.grantSpare(costUnits, nowNanos), nowNanos);
    }

    AdmissionStats stats() {
        return controller.stats();
    }

    AdmissionController controller() {
        return controller;
    }
}
