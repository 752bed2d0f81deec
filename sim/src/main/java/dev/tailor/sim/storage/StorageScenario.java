package dev.tailor.sim.storage;

import dev.tailor.admission.LatencyAdaptiveBudget;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A storage-simulator scenario: the shared backend, the proxies, the tenants (each a virtual disk
 * cut into segments) with their workloads and bursts, and the length of a run. Read from a commented
 * YAML file ({@link StorageScenarios}); the bundled ones live in
 * {@code sim/src/main/resources/dev/tailor/sim/scenarios/storage}. Absent optional fields take the
 * defaults below; {@link #problems()} lists every invalid field at once. Data files are named by
 * paths under the shared data folder and read when the scenario is built ({@link StorageSetup}).
 *
 * @param name                     the scenario's name (letters, digits, '-', '_')
 * @param description              one line for reports
 * @param seed                     the run's seed: every random stream (arrivals, bursts, service times,
 *                                 rate draws) is derived from it and a name
 * @param warmupSeconds            simulated seconds before measuring (default 2)
 * @param durationSeconds          simulated seconds whose arrivals are measured (default 30)
 * @param drainSeconds             simulated seconds after the measured period, with arrivals going on,
 *                                 in which measured requests may still complete (default 1); those
 *                                 still unfinished then enter the percentiles at their age
 * @param intervalMillis           the interval that drives the policies, Δ (default 10, docs/design.md)
 * @param backend                  the shared backend: calibrated from a trace, or explicit numbers
 * @param proxies                  number of proxies, each with its own policy instance (default 1);
 *                                 tenants are assigned round-robin in the order listed unless they
 *                                 name one
 * @param diskSizeBytes            every tenant's virtual disk (default 1 GiB); trace offsets are folded
 *                                 into it
 * @param segmentSizeBytes         bytes per segment (default 256 MiB: four segments per default disk)
 * @param blockSizeBytes           bytes per logical block striped over the segments (default 1 MiB)
 * @param baseUtilizationPercent   when given, every tenant's rate is scaled so that the backend is this
 *                                 busy on average <em>outside bursts</em>; tenants' rates are then
 *                                 relative weights. Bursts add to it
 * @param traces                   named trace excerpts (file under the data folder, format)
 * @param rates                    when given, tenants' rates are drawn from the CloudPhysics spread
 *                                 (largest first, in the order the tenants are listed)
 * @param burstMultipliers         when given, one run per value, with every bursty tenant's burst
 *                                 multiplier set to it (the microbenchmark's increasing bursts)
 * @param admission                constants of the segment-admission policies
 * @param tenants                  tenant groups (absent when {@code mixes} is given)
 * @param mixes                    a scenario family: each mix replaces the tenants (and, when it gives
 *                                 them, the load and the rate spread) and runs as the scenario
 *                                 {@code <name>-<mix name>}; absent: the scenario runs as it is
 */
public record StorageScenario(
        String name,
        String description,
        Long seed,
        Double warmupSeconds,
        Double durationSeconds,
        Double drainSeconds,
        Double intervalMillis,
        BackendSpec backend,
        Integer proxies,
        Long diskSizeBytes,
        Long segmentSizeBytes,
        Long blockSizeBytes,
        Double baseUtilizationPercent,
        Map<String, TraceSpec> traces,
        RatesSpec rates,
        List<Double> burstMultipliers,
        AdmissionSpec admission,
        List<TenantSpec> tenants,
        List<MixSpec> mixes) {

    /**
     * The shortest interval the simulator takes, ms: 100 µs, a hundredth of the paper's 10 ms. Shorter
     * ones are valid for the admission library (down to 1 µs) but make a run's cost grow with the
     * number of intervals rather than requests.
     */
    public static final double MIN_INTERVAL_MILLIS = 0.1;

    /** Trace formats by their scenario names. */
    public static final Map<String, dev.tailor.datasets.BlockTrace.Format> FORMATS = Map.of(
            "msn-sectors", dev.tailor.datasets.BlockTrace.Format.MSN_SECTORS,
            "msr-bytes", dev.tailor.datasets.BlockTrace.Format.MSR_BYTES,
            "tencent-replay", dev.tailor.datasets.BlockTrace.Format.TENCENT_REPLAY);

    /**
     * The backend: either {@code calibrateFrom} (a trace of {@link #traces} in the
     * {@code tencent-replay} format, fitted by {@link BackendCalibration}) or every number given.
     *
     * @param calibrateFrom      name of a trace that recorded device latencies
     * @param parallelism        channels served at once
     * @param readBaseMicros     median service time of a read, fixed part, µs
     * @param readMicrosPerKiB   median service time of a read per KiB, µs
     * @param writeBaseMicros    median service time of a write, fixed part, µs
     * @param writeMicrosPerKiB  median service time of a write per KiB, µs
     * @param serviceSigma       σ of the log-normal service-time factor
     */
    public record BackendSpec(
            String calibrateFrom,
            Integer parallelism,
            Double readBaseMicros,
            Double readMicrosPerKiB,
            Double writeBaseMicros,
            Double writeMicrosPerKiB,
            Double serviceSigma) {

        /** The explicit model (call only when {@code calibrateFrom} is absent and the spec is valid). */
        public BackendModel model() {
            return new BackendModel(
                    parallelism, readBaseMicros, readMicrosPerKiB, writeBaseMicros, writeMicrosPerKiB, serviceSigma);
        }
    }

    /**
     * A trace excerpt.
     *
     * @param file                       path under the shared data folder ({@code TAILOR_DATA_DIR} or
     *                                   {@code ../shared/data})
     * @param format                     {@code msn-sectors}, {@code msr-bytes} or {@code tencent-replay}
     * @param timestampGranularityMillis when the trace's timestamps are this coarse (the Tencent trace's
     *                                   are whole seconds), the requests stamped within one such step
     *                                   are spread evenly over it, in their order; default 0: as
     *                                   stamped
     */
    public record TraceSpec(String file, String format, Double timestampGranularityMillis) {}

    /**
     * Tenant rates drawn from the CloudPhysics per-VM spread ({@link TenantRates}).
     *
     * @param cloudPhysicsFile the per-VM 30-minute series, under the data folder
     * @param largeClients     how many of the largest tenants carry {@code largeShare} (default 3)
     * @param largeShare       their share of all requests (default 0.63, the paper's observation)
     */
    public record RatesSpec(String cloudPhysicsFile, Integer largeClients, Double largeShare) {}

    /**
     * Constants of the segment-admission policies ({@code segment-admission} and its ablations); the
     * others keep admission's defaults ({@code dev.tailor.admission.AdmissionConfig.DEFAULTS}).
     *
     * @param capacityFraction        the share of what the backend serves that the proxies' budgets add
     *                                up to (default 1: all of it)
     * @param reserveFraction         r (default 0.2)
     * @param queueCapacityPerSegment requests waiting per segment before refusals (default 4096: a
     *                                simulated client does not give up, so refusals would only hide
     *                                latency)
     * @param windowIntervals         W (default 10)
     * @param recoveryWindows         R (default 50)
     * @param hotThresholdRatio       a segment is hot above this multiple of its baseline (default 1)
     * @param callsPerInterval        how often per interval the proxy calls the controller (default 10:
     *                                every millisecond at Δ = 10 ms, as the NBD proxy's per-segment
     *                                statistics task does; 1 calls it at the boundaries only)
     * @param targetSlowdown          with several proxies, the mean slowdown of a proxy's requests at the
     *                                backend (latency ÷ unqueued service time) up to which it grows its
     *                                budget beyond its share (default 2; PARDA's latency threshold)
     */
    public record AdmissionSpec(
            Double capacityFraction,
            Double reserveFraction,
            Integer queueCapacityPerSegment,
            Integer windowIntervals,
            Integer recoveryWindows,
            Double hotThresholdRatio,
            Integer callsPerInterval,
            Double targetSlowdown) {

        public AdmissionSpec {
            capacityFraction = capacityFraction == null ? 1.0 : capacityFraction;
            reserveFraction = reserveFraction == null ? 0.2 : reserveFraction;
            queueCapacityPerSegment = queueCapacityPerSegment == null ? 4096 : queueCapacityPerSegment;
            windowIntervals = windowIntervals == null ? 10 : windowIntervals;
            recoveryWindows = recoveryWindows == null ? 50 : recoveryWindows;
            hotThresholdRatio = hotThresholdRatio == null ? 1.0 : hotThresholdRatio;
            callsPerInterval = callsPerInterval == null ? 10 : callsPerInterval;
            targetSlowdown = targetSlowdown == null ? LatencyAdaptiveBudget.DEFAULT_TARGET_SLOWDOWN : targetSlowdown;
        }

        /** Every default. */
        public static final AdmissionSpec DEFAULTS = builder().build();

        /** A builder with every field unset: {@link #build} gives the defaults. */
        public static Builder builder() {
            return new Builder();
        }

        /** A builder starting from this configuration's values. */
        public Builder toBuilder() {
            return new Builder(this);
        }

        /**
         * Builds an {@link AdmissionSpec} by field name; a field left unset, or set to {@code null}, takes its default
         * in the
         * canonical constructor (the one place the defaults are set, and the constructor the scenario files are read
         * with).
         */
        public static final class Builder {
            private Double capacityFraction;
            private Double reserveFraction;
            private Integer queueCapacityPerSegment;
            private Integer windowIntervals;
            private Integer recoveryWindows;
            private Double hotThresholdRatio;
            private Integer callsPerInterval;
            private Double targetSlowdown;

            private Builder() {}

            private Builder(AdmissionSpec from) {
                capacityFraction = from.capacityFraction;
                reserveFraction = from.reserveFraction;
                queueCapacityPerSegment = from.queueCapacityPerSegment;
                windowIntervals = from.windowIntervals;
                recoveryWindows = from.recoveryWindows;
                hotThresholdRatio = from.hotThresholdRatio;
                callsPerInterval = from.callsPerInterval;
                targetSlowdown = from.targetSlowdown;
            }

            /** {@link AdmissionSpec#capacityFraction}. */
            public Builder capacityFraction(Double value) {
                capacityFraction = value;
                return this;
            }

            /** {@link AdmissionSpec#reserveFraction}. */
            public Builder reserveFraction(Double value) {
                reserveFraction = value;
                return this;
            }

            /** {@link AdmissionSpec#queueCapacityPerSegment}. */
            public Builder queueCapacityPerSegment(Integer value) {
                queueCapacityPerSegment = value;
                return this;
            }

            /** {@link AdmissionSpec#windowIntervals}. */
            public Builder windowIntervals(Integer value) {
                windowIntervals = value;
                return this;
            }

            /** {@link AdmissionSpec#recoveryWindows}. */
            public Builder recoveryWindows(Integer value) {
                recoveryWindows = value;
                return this;
            }

            /** {@link AdmissionSpec#hotThresholdRatio}. */
            public Builder hotThresholdRatio(Double value) {
                hotThresholdRatio = value;
                return this;
            }

            /** {@link AdmissionSpec#callsPerInterval}. */
            public Builder callsPerInterval(Integer value) {
                callsPerInterval = value;
                return this;
            }

            /** {@link AdmissionSpec#targetSlowdown}. */
            public Builder targetSlowdown(Double value) {
                targetSlowdown = value;
                return this;
            }

            /**
             * The admission settings, each field left unset at its default; checked with the scenario.
             */
            public AdmissionSpec build() {
                return new AdmissionSpec(
                        capacityFraction,
                        reserveFraction,
                        queueCapacityPerSegment,
                        windowIntervals,
                        recoveryWindows,
                        hotThresholdRatio,
                        callsPerInterval,
                        targetSlowdown);
            }
        }
    }

    /**
     * A synthetic workload: Poisson arrivals, offsets uniform over the disk (4 KiB aligned).
     *
     * @param readFraction share of reads, in [0, 1]
     * @param sizeBytes    request sizes, drawn uniformly from this list
     */
    public record SyntheticSpec(Double readFraction, List<Long> sizeBytes) {}

    /**
     * Recurring bursts ({@link TenantStream.Bursts}): gaps exponential with mean
     * {@code meanGapSeconds}, each burst U(minMillis, maxMillis) long, during which the workload runs
     * {@code multiplier} times faster.
     */
    public record BurstSpec(Double meanGapSeconds, Double minMillis, Double maxMillis, Double multiplier) {}

    /**
     * A tenant's provisioned baseline, like a cloud disk's baseline IOPS and throughput (our reading of
     * "thresholds that match the service's commitments"): its commitment in cost units per second is
     * what serving {@code iops} reads per second carrying {@code mibPerSecond} MiB in all costs,
     * {@code iops × a + mibPerSecond × 2²⁰ × b} with the read coefficients of the cost model (exact for
     * any split of the bytes over the I/Os, the model being linear). Checked against the backend's
     * capacity when the scenario is built.
     *
     * @param iops         I/Os per second, in (0, 10⁸]
     * @param mibPerSecond MiB per second, in [0, 10⁶]
     */
    public record BaselineSpec(Double iops, Double mibPerSecond) {}

    /**
     * A group of {@code count} tenants, named {@code name-0 .. name-(count-1)} (or {@code name}
     * alone when count is 1).
     *
     * @param name              group name
     * @param count             tenants in the group (default 1)
     * @param requestsPerSecond each tenant's mean rate outside bursts (a relative weight when
     *                          {@code baseUtilizationPercent} is set; absent when {@code rates} is)
     * @param traces            names of {@link #traces} replayed, one per tenant in turn
     * @param synthetic         or a synthetic workload
     * @param bursts            recurring bursts; a tenant with bursts is <em>hot</em> by ground truth
     * @param commitmentRatio   the tenant's commitment (admission's baseline, static-cap's cap,
     *                          mclock's reservation) = this × its mean cost rate outside bursts;
     *                          absent: a fair share of its proxy's capacity, capacity ÷ the proxy's
     *                          tenants (admission's default baseline, docs/design.md#classifier)
     * @param proxy             the proxy its tenants use (default: round-robin over all tenants)
     * @param baseline          a provisioned baseline, as a cloud disk's: each tenant's commitment is
     *                          then what this baseline costs (instead of {@code commitmentRatio})
     */
    public record TenantSpec(
            String name,
            Integer count,
            Double requestsPerSecond,
            List<String> traces,
            SyntheticSpec synthetic,
            BurstSpec bursts,
            Double commitmentRatio,
            Integer proxy,
            BaselineSpec baseline) {

        public TenantSpec {
            count = count == null ? 1 : count;
            traces = traces == null ? List.of() : List.copyOf(traces);
        }
    }

    /**
     * One tenant mix of a scenario family (the robustness sweep, docs/storage-simulator.md): it
     * replaces the scenario's tenants and, when given, its {@code baseUtilizationPercent}, its
     * {@code durationSeconds}, its {@code proxies} and the {@code largeClients} / {@code largeShare} of its
     * rate spread; every other field is the
     * scenario's. It runs as the scenario {@code <scenario name>-<mix name>}.
     *
     * @param name                   the mix's name (letters, digits, '-', '_'), unique in the scenario
     * @param description            one line; default: the scenario's
     * @param baseUtilizationPercent the load outside bursts; default: the scenario's
     * @param durationSeconds        simulated seconds measured; default: the scenario's (a mix whose steady
     *                               tenants send few requests needs longer for P99.999, 100,000 of them)
     * @param proxies                number of proxies; default: the scenario's
     * @param rates                  {@code largeClients} and {@code largeShare} of the rate spread (its
     *                               file defaults to the scenario's); default: the scenario's
     * @param tenants                the mix's tenant groups, as {@code tenants}
     */
    public record MixSpec(
            String name,
            String description,
            Double baseUtilizationPercent,
            Double durationSeconds,
            Integer proxies,
            RatesSpec rates,
            List<TenantSpec> tenants) {

        public MixSpec {
            tenants = tenants == null ? List.of() : List.copyOf(tenants);
        }
    }

    public StorageScenario {
        mixes = mixes == null ? List.of() : List.copyOf(mixes);
        description = description == null ? "" : description;
        warmupSeconds = warmupSeconds == null ? 2.0 : warmupSeconds;
        durationSeconds = durationSeconds == null ? 30.0 : durationSeconds;
        drainSeconds = drainSeconds == null ? 1.0 : drainSeconds;
        intervalMillis = intervalMillis == null ? 10.0 : intervalMillis;
        proxies = proxies == null ? 1 : proxies;
        diskSizeBytes = diskSizeBytes == null ? 1L << 30 : diskSizeBytes;
        segmentSizeBytes = segmentSizeBytes == null ? 256L << 20 : segmentSizeBytes;
        blockSizeBytes = blockSizeBytes == null ? 1L << 20 : blockSizeBytes;
        traces = traces == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(traces));
        burstMultipliers = burstMultipliers == null ? List.of() : List.copyOf(burstMultipliers);
        admission = admission == null ? AdmissionSpec.DEFAULTS : admission;
        tenants = tenants == null ? List.of() : List.copyOf(tenants);
    }

    /**
     * This scenario run for {@code seconds}: its duration and every mix's, so that each scenario it runs as
     * ({@link #mixScenarios()}) runs that long. Not checked; see {@link #problems()}.
     */
    public StorageScenario withDuration(double seconds) {
        List<MixSpec> newMixes = mixes.stream()
                .map(m -> m == null
                        ? null
                        : new MixSpec(
                                m.name(),
                                m.description(),
                                m.baseUtilizationPercent(),
                                null,
                                m.proxies(),
                                m.rates(),
                                m.tenants()))
                .toList();
        return toBuilder().durationSeconds(seconds).mixes(newMixes).build();
    }

    /**
     * The scenarios this one runs as: itself when it has no {@code mixes}, else one per mix, in their
     * order, each named {@code <name>-<mix name>} with the mix's tenants (and load and rate spread,
     * when the mix gives them) and every other field of this scenario. Deterministic: the same
     * scenario always composes the same mixes.
     */
    public List<StorageScenario> mixScenarios() {
        if (mixes.isEmpty()) {
            return List.of(this);
        }
        List<StorageScenario> out = new ArrayList<>();
        for (MixSpec mix : mixes) {
            out.add(mixScenario(mix));
        }
        return out;
    }

    private StorageScenario mixScenario(MixSpec mix) {
        RatesSpec mixRates = rates;
        if (mix.rates() != null) {
            RatesSpec r = mix.rates();
            mixRates = new RatesSpec(
                    r.cloudPhysicsFile() != null
                            ? r.cloudPhysicsFile()
                            : rates == null ? null : rates.cloudPhysicsFile(),
                    r.largeClients() != null ? r.largeClients() : rates == null ? null : rates.largeClients(),
                    r.largeShare() != null ? r.largeShare() : rates == null ? null : rates.largeShare());
        }
        return new StorageScenario(
                name + "-" + mix.name(),
                mix.description() != null ? mix.description() : description,
                seed,
                warmupSeconds,
                mix.durationSeconds() != null ? mix.durationSeconds() : durationSeconds,
                drainSeconds,
                intervalMillis,
                backend,
                mix.proxies() != null ? mix.proxies() : proxies,
                diskSizeBytes,
                segmentSizeBytes,
                blockSizeBytes,
                mix.baseUtilizationPercent() != null ? mix.baseUtilizationPercent() : baseUtilizationPercent,
                traces,
                mixRates,
                burstMultipliers,
                admission,
                mix.tenants(),
                List.of());
    }

    /** Number of tenants over all groups (groups with a bad count count as 0). */
    public int tenantCount() {
        int n = 0;
        for (TenantSpec t : tenants) {
            if (t != null && t.count() >= 1 && t.count() <= MAX_TENANTS) {
                n += t.count();
            }
        }
        return n;
    }

    /** Most tenants in one scenario. */
    public static final int MAX_TENANTS = 10_000;

    /** Every problem of this scenario, each naming the field, its value and what was expected. */
    public List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        if (name == null || !name.matches("[A-Za-z0-9_-]+")) {
            problems.add(new Problem("name", quote(name), "letters, digits, '-' or '_'"));
        }
        if (seed == null) {
            problems.add(new Problem("seed", "missing", "an integer; fixed seeds make runs repeatable"));
        }
        nonNegative(problems, "warmupSeconds", warmupSeconds, 86_400);
        positive(problems, "durationSeconds", durationSeconds, 86_400);
        nonNegative(problems, "drainSeconds", drainSeconds, 3_600);
        if (intervalMillis == null || !(intervalMillis >= MIN_INTERVAL_MILLIS && intervalMillis <= 60_000)) {
            // One message for every value out of range, missing, .nan or .inf: the range accepted, with why it has
            // a floor above 0 where that is what the value missed.
            String range = "a number in [" + format(MIN_INTERVAL_MILLIS) + ", 60000]";
            problems.add(new Problem(
                    "intervalMillis",
                    intervalMillis == null ? "missing" : intervalMillis,
                    intervalMillis != null && intervalMillis > 0 && intervalMillis < MIN_INTERVAL_MILLIS
                            ? range + "; the policies run admission.callsPerInterval times per interval, so a"
                                    + " simulated second of a 1 µs interval costs minutes"
                            : range));
        }
        int before = problems.size();
        backendProblems(problems);
        boolean explicitBackend = problems.size() == before && backend.calibrateFrom() == null;
        if (proxies < 1 || proxies > 1_000) {
            problems.add(new Problem("proxies", proxies, "1 .. 1000"));
        }
        if (diskSizeBytes < 4096) {
            problems.add(new Problem("diskSizeBytes", diskSizeBytes, ">= 4096"));
        }
        if (blockSizeBytes < 1) {
            problems.add(new Problem("blockSizeBytes", blockSizeBytes, ">= 1"));
        } else if (segmentSizeBytes < blockSizeBytes || segmentSizeBytes % blockSizeBytes != 0) {
            problems.add(new Problem(
                    "segmentSizeBytes", segmentSizeBytes, "a positive multiple of blockSizeBytes, " + blockSizeBytes));
        } else if (diskSizeBytes >= 4096 && (diskSizeBytes - 1) / segmentSizeBytes + 1 > 4096) {
            problems.add(new Problem(
                    "segmentSizeBytes",
                    segmentSizeBytes,
                    "at most 4096 segments per disk of " + diskSizeBytes + " bytes"));
        }
        if (baseUtilizationPercent != null) {
            positive(problems, "baseUtilizationPercent", baseUtilizationPercent, 1_000);
        }
        traces.forEach((traceName, spec) -> {
            String at = "traces." + traceName;
            if (spec == null) {
                problems.add(new Problem(at, "null", "{file, format}"));
                return;
            }
            if (spec.file() == null || spec.file().isBlank()) {
                problems.add(new Problem(at + ".file", "missing", "a path under the shared data folder"));
            }
            if (spec.timestampGranularityMillis() != null) {
                nonNegative(problems, at + ".timestampGranularityMillis", spec.timestampGranularityMillis(), 3.6e6);
            }
            if (spec.format() == null || !FORMATS.containsKey(spec.format())) {
                problems.add(new Problem(
                        at + ".format",
                        quote(spec.format()),
                        "one of " + String.join(", ", new java.util.TreeSet<>(FORMATS.keySet()))));
            }
        });
        if (rates != null && mixes.isEmpty()) {
            if (rates.cloudPhysicsFile() == null || rates.cloudPhysicsFile().isBlank()) {
                problems.add(new Problem(
                        "rates.cloudPhysicsFile",
                        "missing",
                        "the CloudPhysics per-VM series under the" + " shared data folder"));
            }
            int large = rates.largeClients() == null ? 3 : rates.largeClients();
            if (tenantCount() < 2) {
                problems.add(new Problem(
                        "rates", tenantCount() + " tenant(s)", "at least 2, a spread of rates needs" + " several"));
            } else if (large < 1 || large >= tenantCount()) {
                problems.add(new Problem("rates.largeClients", large, "1 .. tenants - 1 = " + (tenantCount() - 1)));
            }
            double share = rates.largeShare() == null ? 0.63 : rates.largeShare();
            if (!(share > 0 && share < 1)) {
                problems.add(new Problem("rates.largeShare", share, "a number in (0, 1)"));
            }
            if (baseUtilizationPercent == null) {
                problems.add(new Problem(
                        "baseUtilizationPercent",
                        "missing",
                        "a load in %, required with rates: the" + " CloudPhysics spread gives relative rates only"));
            }
        }
        for (int i = 0; i < burstMultipliers.size(); i++) {
            Double m = burstMultipliers.get(i);
            if (m == null || !(m >= 1 && m <= 1_000)) {
                problems.add(new Problem("burstMultipliers[" + i + "]", m, "a number in [1, 1000]"));
            }
        }
        admissionProblems(problems);
        if (mixes.isEmpty()) {
            tenantProblems(problems);
        } else {
            mixProblems(problems);
        }
        if (mixes.isEmpty()
                && explicitBackend
                && admission.capacityFraction() > 0
                && admission.capacityFraction() <= 10) {
            // An explicit backend's capacity is known now; a fitted one's when the scenario is built.
            problems.addAll(baselineProblems(StorageSetup.costModel(backend.model())));
        }
        return problems;
    }

    /**
     * The tenants' baselines that cost more than the backend serves, priced with {@code cost}, the backend's
     * cost model ({@link StorageSetup#costModel(BackendModel)}): the proxies' budgets add up to
     * {@link StorageSetup#BACKEND_COST_UNITS_PER_SECOND} × {@code admission.capacityFraction}, and no backend
     * can promise more than it serves. Each names {@code tenants[i].baseline.iops} with the most IOPS the
     * capacity takes beside the baseline's {@code mibPerSecond}, or {@code mibPerSecond} when that alone
     * is too much. Checked with the scenario for an explicit backend, when it is built for a fitted one.
     */
    public List<Problem> baselineProblems(dev.tailor.admission.IoCostModel cost) {
        List<Problem> problems = new ArrayList<>();
        double capacity = StorageSetup.BACKEND_COST_UNITS_PER_SECOND * admission.capacityFraction();
        double perIo = cost.readBaseCostUnits();
        double perMiB = (1 << 20) * cost.readCostUnitsPerByte();
        for (int i = 0; i < tenants.size(); i++) {
            TenantSpec t = tenants.get(i);
            BaselineSpec b = t == null ? null : t.baseline();
            if (b == null
                    || b.iops() == null
                    || b.mibPerSecond() == null
                    || !(b.iops() > 0 && b.iops() <= 1e8 && b.mibPerSecond() >= 0 && b.mibPerSecond() <= 1e6)) {
                continue; // missing or out of range: told by problems()
            }
            if (b.iops() * perIo + b.mibPerSecond() * perMiB <= capacity) {
                continue;
            }
            String at = "tenants[" + i + "].baseline.";
            if (b.mibPerSecond() > 0 && b.mibPerSecond() * perMiB + perIo > capacity) {
                // The most MiB/s beside the IOPS written, when those alone fit; else beside 1 IOPS.
                double iops = b.iops() * perIo < capacity ? b.iops() : 1;
                problems.add(new Problem(
                        at + "mibPerSecond",
                        b.mibPerSecond(),
                        "at most the backend's capacity, " + (long) Math.floor((capacity - iops * perIo) / perMiB)
                                + " MiB/s beside " + format(iops)
                                + " IOPS: no backend can promise more than it serves"));
            } else {
                long most = (long) Math.floor((capacity - b.mibPerSecond() * perMiB) / perIo);
                problems.add(new Problem(
                        at + "iops",
                        b.iops(),
                        "at most the backend's capacity, " + most
                                + (b.mibPerSecond() > 0 ? " beside " + format(b.mibPerSecond()) + " MiB/s" : "")
                                + ": no backend can promise more than it serves"));
            }
        }
        return problems;
    }

    /**
     * {@code problem}, found in the scenario that mix {@code mix} runs as ({@link #mixScenarios()}), named
     * by its place in this scenario's file: under {@code mixes[mix]} when the mix gives the field (its
     * tenants, its rate spread's file, its load, its proxies), else as it is. Without mixes, {@code problem} itself.
     */
    public Problem asInFile(int mix, Problem problem) {
        if (mixes.isEmpty() || mix < 0 || mix >= mixes.size() || mixes.get(mix) == null) {
            return problem;
        }
        MixSpec m = mixes.get(mix);
        String path = problem.path();
        boolean inMix = path.startsWith("tenants")
                || path.startsWith("rates.cloudPhysicsFile")
                        && m.rates() != null
                        && m.rates().cloudPhysicsFile() != null
                || path.startsWith("baseUtilizationPercent") && m.baseUtilizationPercent() != null
                || path.equals("proxies") && m.proxies() != null;
        return inMix ? new Problem("mixes[" + mix + "]." + path, problem.value(), problem.expected()) : problem;
    }

    private void backendProblems(List<Problem> problems) {
        if (backend == null) {
            problems.add(new Problem(
                    "backend",
                    "missing",
                    "{calibrateFrom: TRACE} or parallelism, readBaseMicros,"
                            + " readMicrosPerKiB, writeBaseMicros, writeMicrosPerKiB, serviceSigma"));
            return;
        }
        if (backend.calibrateFrom() != null) {
            TraceSpec trace = traces.get(backend.calibrateFrom());
            if (trace == null) {
                problems.add(new Problem("backend.calibrateFrom", quote(backend.calibrateFrom()), knownTraces()));
            } else if (!"tencent-replay".equals(trace.format())) {
                problems.add(new Problem(
                        "backend.calibrateFrom",
                        quote(backend.calibrateFrom()),
                        "a trace in the" + " tencent-replay format, which records device latencies; it is "
                                + quote(trace.format())));
            }
            List<String> explicit = new ArrayList<>();
            if (backend.parallelism() != null) {
                explicit.add("parallelism");
            }
            String[] names = {
                "readBaseMicros", "readMicrosPerKiB", "writeBaseMicros", "writeMicrosPerKiB", "serviceSigma"
            };
            Double[] values = {
                backend.readBaseMicros(),
                backend.readMicrosPerKiB(),
                backend.writeBaseMicros(),
                backend.writeMicrosPerKiB(),
                backend.serviceSigma()
            };
            for (int i = 0; i < names.length; i++) {
                if (values[i] != null) {
                    explicit.add(names[i]);
                }
            }
            if (!explicit.isEmpty()) {
                problems.add(new Problem(
                        "backend",
                        "both calibrateFrom and " + String.join(", ", explicit),
                        "one of them; the calibration sets every number"));
            }
            return;
        }
        if (backend.parallelism() == null || backend.parallelism() < 1 || backend.parallelism() > 100_000) {
            problems.add(new Problem("backend.parallelism", backend.parallelism(), "1 .. 100000"));
        }
        nonNegative(problems, "backend.readBaseMicros", backend.readBaseMicros(), 1e7);
        nonNegative(problems, "backend.readMicrosPerKiB", backend.readMicrosPerKiB(), 1e6);
        nonNegative(problems, "backend.writeBaseMicros", backend.writeBaseMicros(), 1e7);
        nonNegative(problems, "backend.writeMicrosPerKiB", backend.writeMicrosPerKiB(), 1e6);
        nonNegative(problems, "backend.serviceSigma", backend.serviceSigma(), 2);
        if (backend.readBaseMicros() != null
                && backend.readMicrosPerKiB() != null
                && backend.readBaseMicros() + backend.readMicrosPerKiB() <= 0) {
            problems.add(new Problem(
                    "backend.readBaseMicros",
                    format(backend.readBaseMicros()) + " with readMicrosPerKiB " + format(backend.readMicrosPerKiB()),
                    "reads that take time"));
        }
        if (backend.writeBaseMicros() != null
                && backend.writeMicrosPerKiB() != null
                && backend.writeBaseMicros() + backend.writeMicrosPerKiB() <= 0) {
            problems.add(new Problem(
                    "backend.writeBaseMicros",
                    format(backend.writeBaseMicros()) + " with writeMicrosPerKiB "
                            + format(backend.writeMicrosPerKiB()),
                    "writes that take time"));
        }
    }

    private void admissionProblems(List<Problem> problems) {
        AdmissionSpec a = admission;
        if (!(a.capacityFraction() > 0 && a.capacityFraction() <= 10)) {
            problems.add(new Problem("admission.capacityFraction", a.capacityFraction(), "a number in (0, 10]"));
        }
        if (!(a.reserveFraction() >= 0 && a.reserveFraction() <= 1)) {
            problems.add(new Problem("admission.reserveFraction", a.reserveFraction(), "a number in [0, 1]"));
        }
        if (a.queueCapacityPerSegment() < 0 || a.queueCapacityPerSegment() > 1_000_000) {
            problems.add(new Problem("admission.queueCapacityPerSegment", a.queueCapacityPerSegment(), "0 .. 1000000"));
        }
        if (!(a.targetSlowdown() > 1 && a.targetSlowdown() <= 1000)) {
            problems.add(new Problem("admission.targetSlowdown", a.targetSlowdown(), "a number in (1, 1000]"));
        }
        if (a.windowIntervals() < 1 || a.windowIntervals() > 10_000) {
            problems.add(new Problem("admission.windowIntervals", a.windowIntervals(), "1 .. 10000"));
        }
        if (a.recoveryWindows() < 1 || a.recoveryWindows() > 1_000_000) {
            problems.add(new Problem("admission.recoveryWindows", a.recoveryWindows(), "1 .. 1000000"));
        }
        if (!(a.hotThresholdRatio() > 0 && a.hotThresholdRatio() <= 1e6)) {
            problems.add(new Problem("admission.hotThresholdRatio", a.hotThresholdRatio(), "a number in (0, 1e6]"));
        }
        if (a.callsPerInterval() < 1 || a.callsPerInterval() > 1_000) {
            problems.add(new Problem("admission.callsPerInterval", a.callsPerInterval(), "1 .. 1000"));
        }
    }

    /**
     * With mixes: the scenario itself has no tenants, each mix is checked as the scenario it runs as,
     * and the problems of the fields it gives (or inherits into its tenants' checks) are named under
     * {@code mixes[i]}.
     */
    private void mixProblems(List<Problem> problems) {
        if (!tenants.isEmpty()) {
            problems.add(new Problem(
                    "tenants",
                    tenants.size() + " group(s)",
                    "absent when mixes are given; each mix" + " lists its tenants"));
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < mixes.size(); i++) {
            MixSpec mix = mixes.get(i);
            String at = "mixes[" + i + "]";
            if (mix == null) {
                problems.add(new Problem(at, "null", "a tenant mix"));
                continue;
            }
            if (mix.name() == null || !mix.name().matches("[A-Za-z0-9_-]+")) {
                problems.add(new Problem(at + ".name", quote(mix.name()), "letters, digits, '-' or '_'"));
                continue;
            } else if (!names.add(mix.name())) {
                problems.add(new Problem(at + ".name", quote(mix.name()), "unique; already used"));
            }
            StorageScenario composed = mixScenario(mix);
            boolean tenantsCounted = true;
            for (Problem p : composed.problems()) {
                tenantsCounted &= !p.path().startsWith("tenants");
                if (p.path().startsWith("tenants")
                        || p.path().startsWith("rates")
                        || p.path().startsWith("baseUtilizationPercent")
                        || p.path().startsWith("durationSeconds")
                        || p.path().equals("proxies") && mix.proxies() != null) {
                    problems.add(new Problem(at + "." + p.path(), p.value(), p.expected()));
                }
            }
            int mixProxies = composed.proxies();
            int mixTenants = composed.tenantCount();
            // A proxy beyond the mix's tenants would have none: the family compares mixes whose every proxy
            // carries load. (Counted only when the tenants' counts are valid; the others are told above.)
            if (tenantsCounted
                    && mixTenants >= 1
                    && mixProxies >= 1
                    && mixProxies <= 1_000
                    && mixProxies > mixTenants) {
                problems.add(
                        mix.proxies() != null
                                ? new Problem(at + ".proxies", mixProxies, "1 .. " + mixTenants + ", the mix's tenants")
                                : new Problem(
                                        "proxies",
                                        mixProxies,
                                        "1 .. " + mixTenants + ", the tenants of " + at + ", which has no proxies of"
                                                + " its own"));
            }
        }
    }

    private void tenantProblems(List<Problem> problems) {
        if (tenants.isEmpty()) {
            problems.add(new Problem("tenants", "empty", "at least one tenant group"));
        }
        Set<String> names = new HashSet<>();
        int total = 0;
        for (int i = 0; i < tenants.size(); i++) {
            TenantSpec t = tenants.get(i);
            String at = "tenants[" + i + "]";
            if (t == null) {
                problems.add(new Problem(at, "null", "a tenant group"));
                continue;
            }
            if (t.name() == null || !t.name().matches("[A-Za-z0-9_-]+")) {
                problems.add(new Problem(at + ".name", quote(t.name()), "letters, digits, '-' or '_'"));
            } else if (!names.add(t.name())) {
                problems.add(new Problem(at + ".name", quote(t.name()), "unique; already used"));
            }
            if (t.count() < 1 || t.count() > MAX_TENANTS) {
                problems.add(new Problem(at + ".count", t.count(), "1 .. " + MAX_TENANTS));
            } else {
                total += t.count();
            }
            if (rates != null) {
                if (t.requestsPerSecond() != null) {
                    problems.add(new Problem(
                            at + ".requestsPerSecond",
                            t.requestsPerSecond(),
                            "absent; rates" + " come from rates.cloudPhysicsFile"));
                }
            } else {
                positive(problems, at + ".requestsPerSecond", t.requestsPerSecond(), 1e7);
            }
            boolean hasTraces = !t.traces().isEmpty();
            if (hasTraces == (t.synthetic() != null)) {
                problems.add(new Problem(
                        at, (hasTraces ? "both traces and synthetic" : "neither traces nor synthetic"), "one of them"));
            }
            for (int k = 0; k < t.traces().size(); k++) {
                String trace = t.traces().get(k);
                if (!traces.containsKey(trace)) {
                    problems.add(new Problem(at + ".traces[" + k + "]", quote(trace), knownTraces()));
                }
            }
            if (t.synthetic() != null) {
                SyntheticSpec s = t.synthetic();
                if (s.readFraction() == null || !(s.readFraction() >= 0 && s.readFraction() <= 1)) {
                    problems.add(new Problem(at + ".synthetic.readFraction", s.readFraction(), "a number in [0, 1]"));
                }
                if (s.sizeBytes() == null || s.sizeBytes().isEmpty()) {
                    problems.add(new Problem(
                            at + ".synthetic.sizeBytes",
                            (s.sizeBytes() == null ? "missing" : "empty"),
                            "a list of request sizes in bytes"));
                } else {
                    // An invalid disk size is reported once, above, not again for every request size.
                    long maxSizeBytes = diskSizeBytes >= 4096 ? Math.min(diskSizeBytes, 1L << 30) : 1L << 30;
                    for (int k = 0; k < s.sizeBytes().size(); k++) {
                        Long size = s.sizeBytes().get(k);
                        if (size == null || size < 1 || size > maxSizeBytes) {
                            problems.add(new Problem(
                                    at + ".synthetic.sizeBytes[" + k + "]",
                                    size,
                                    "1 .. " + maxSizeBytes + ", at most the disk"));
                        }
                    }
                }
            }
            if (t.bursts() != null) {
                BurstSpec b = t.bursts();
                positive(problems, at + ".bursts.meanGapSeconds", b.meanGapSeconds(), 86_400);
                positive(problems, at + ".bursts.minMillis", b.minMillis(), 3.6e6);
                boolean minValid = b.minMillis() != null && b.minMillis() > 0 && b.minMillis() <= 3.6e6;
                if (!minValid) {
                    positive(problems, at + ".bursts.maxMillis", b.maxMillis(), 3.6e6);
                } else if (b.maxMillis() == null || !(b.maxMillis() >= b.minMillis() && b.maxMillis() <= 3.6e6)) {
                    // Its range starts at minMillis: every message says so, not only the one for a value below it.
                    problems.add(new Problem(
                            at + ".bursts.maxMillis",
                            b.maxMillis() == null ? "missing" : b.maxMillis(),
                            "a number in [minMillis, 3600000] = [" + format(b.minMillis()) + ", 3600000]"));
                }
                if (b.multiplier() == null || !(b.multiplier() >= 1 && b.multiplier() <= 1_000)) {
                    problems.add(new Problem(at + ".bursts.multiplier", b.multiplier(), "a number in [1, 1000]"));
                }
            }
            if (t.baseline() != null) {
                BaselineSpec b = t.baseline();
                if (b.iops() == null || b.mibPerSecond() == null) {
                    problems.add(new Problem(
                            at + ".baseline." + (b.iops() == null ? "iops" : "mibPerSecond"),
                            "missing",
                            b.iops() == null
                                    ? "a number in (0, 100000000]: a baseline gives both iops and mibPerSecond"
                                    : "a number in [0, 1000000]: a baseline gives both iops and mibPerSecond,"
                                            + " 0 for none"));
                }
                if (b.iops() != null) {
                    positive(problems, at + ".baseline.iops", b.iops(), 1e8);
                }
                if (b.mibPerSecond() != null) {
                    nonNegative(problems, at + ".baseline.mibPerSecond", b.mibPerSecond(), 1e6);
                }
                if (t.commitmentRatio() != null) {
                    problems.add(new Problem(
                            at + ".baseline",
                            "given with commitmentRatio " + format(t.commitmentRatio()),
                            "one of them"));
                }
            }
            if (t.commitmentRatio() != null && !(t.commitmentRatio() > 0 && t.commitmentRatio() <= 1_000)) {
                problems.add(new Problem(at + ".commitmentRatio", t.commitmentRatio(), "a number in (0, 1000]"));
            }
            if (t.proxy() != null && (t.proxy() < 0 || t.proxy() >= proxies)) {
                problems.add(new Problem(at + ".proxy", t.proxy(), "0 .. proxies - 1 = " + (proxies - 1)));
            }
        }
        if (total > MAX_TENANTS) {
            problems.add(new Problem("tenants", total + " in all", "at most " + MAX_TENANTS));
        }
        if (!burstMultipliers.isEmpty() && tenants.stream().noneMatch(t -> t != null && t.bursts() != null)) {
            problems.add(new Problem("burstMultipliers", burstMultipliers, "absent, or a tenant with bursts"));
        }
    }

    private static void positive(List<Problem> problems, String at, Double value, double max) {
        if (value == null) {
            problems.add(new Problem(at, "missing", "a number in (0, " + format(max) + "]"));
        } else if (!(value > 0 && value <= max)) {
            problems.add(new Problem(at, value, "a number in (0, " + format(max) + "]"));
        }
    }

    private static void nonNegative(List<Problem> problems, String at, Double value, double max) {
        if (value == null || !(value >= 0 && value <= max)) {
            problems.add(new Problem(at, (value == null ? "missing" : value), "a number in [0, " + format(max) + "]"));
        }
    }

    private static String format(double value) {
        return Numbers.written(value);
    }

    /** What a reference to a trace takes: a name defined under {@code traces}, listed; or that none is. */
    private String knownTraces() {
        return traces.isEmpty()
                ? "the name of a trace defined under traces (none is)"
                : "one of the traces " + String.join(", ", traces.keySet());
    }

    private static String quote(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }

    /** A builder with every field unset: {@link #build} gives the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds a {@link StorageScenario} by field name; a field left unset, or set to {@code null}, takes its default in
     * the
     * canonical constructor (the one place the defaults are set, and the constructor the scenario files are read with).
     */
    public static final class Builder {
        private String name;
        private String description;
        private Long seed;
        private Double warmupSeconds;
        private Double durationSeconds;
        private Double drainSeconds;
        private Double intervalMillis;
        private BackendSpec backend;
        private Integer proxies;
        private Long diskSizeBytes;
        private Long segmentSizeBytes;
        private Long blockSizeBytes;
        private Double baseUtilizationPercent;
        private Map<String, TraceSpec> traces;
        private RatesSpec rates;
        private List<Double> burstMultipliers;
        private AdmissionSpec admission;
        private List<TenantSpec> tenants;
        private List<MixSpec> mixes;

        private Builder() {}

        private Builder(StorageScenario from) {
            name = from.name;
            description = from.description;
            seed = from.seed;
            warmupSeconds = from.warmupSeconds;
            durationSeconds = from.durationSeconds;
            drainSeconds = from.drainSeconds;
            intervalMillis = from.intervalMillis;
            backend = from.backend;
            proxies = from.proxies;
            diskSizeBytes = from.diskSizeBytes;
            segmentSizeBytes = from.segmentSizeBytes;
            blockSizeBytes = from.blockSizeBytes;
            baseUtilizationPercent = from.baseUtilizationPercent;
            traces = from.traces;
            rates = from.rates;
            burstMultipliers = from.burstMultipliers;
            admission = from.admission;
            tenants = from.tenants;
            mixes = from.mixes;
        }

        /** {@link StorageScenario#name}. */
        public Builder name(String value) {
            name = value;
            return this;
        }

        /** {@link StorageScenario#description}. */
        public Builder description(String value) {
            description = value;
            return this;
        }

        /** {@link StorageScenario#seed}. */
        public Builder seed(Long value) {
            seed = value;
            return this;
        }

        /** {@link StorageScenario#warmupSeconds}. */
        public Builder warmupSeconds(Double value) {
            warmupSeconds = value;
            return this;
        }

        /** {@link StorageScenario#durationSeconds}. */
        public Builder durationSeconds(Double value) {
            durationSeconds = value;
            return this;
        }

        /** {@link StorageScenario#drainSeconds}. */
        public Builder drainSeconds(Double value) {
            drainSeconds = value;
            return this;
        }

        /** {@link StorageScenario#intervalMillis}. */
        public Builder intervalMillis(Double value) {
            intervalMillis = value;
            return this;
        }

        /** {@link StorageScenario#backend}. */
        public Builder backend(BackendSpec value) {
            backend = value;
            return this;
        }

        /** {@link StorageScenario#proxies}. */
        public Builder proxies(Integer value) {
            proxies = value;
            return this;
        }

        /** {@link StorageScenario#diskSizeBytes}. */
        public Builder diskSizeBytes(Long value) {
            diskSizeBytes = value;
            return this;
        }

        /** {@link StorageScenario#segmentSizeBytes}. */
        public Builder segmentSizeBytes(Long value) {
            segmentSizeBytes = value;
            return this;
        }

        /** {@link StorageScenario#blockSizeBytes}. */
        public Builder blockSizeBytes(Long value) {
            blockSizeBytes = value;
            return this;
        }

        /** {@link StorageScenario#baseUtilizationPercent}. */
        public Builder baseUtilizationPercent(Double value) {
            baseUtilizationPercent = value;
            return this;
        }

        /** {@link StorageScenario#traces}. */
        public Builder traces(Map<String, TraceSpec> value) {
            traces = value;
            return this;
        }

        /** {@link StorageScenario#rates}. */
        public Builder rates(RatesSpec value) {
            rates = value;
            return this;
        }

        /** {@link StorageScenario#burstMultipliers}. */
        public Builder burstMultipliers(List<Double> value) {
            burstMultipliers = value;
            return this;
        }

        /** {@link StorageScenario#admission}. */
        public Builder admission(AdmissionSpec value) {
            admission = value;
            return this;
        }

        /** {@link StorageScenario#tenants}. */
        public Builder tenants(List<TenantSpec> value) {
            tenants = value;
            return this;
        }

        /** {@link StorageScenario#mixes}. */
        public Builder mixes(List<MixSpec> value) {
            mixes = value;
            return this;
        }

        /**
         * The scenario, each field left unset at its default. Its values are checked as a scenario file's are, by
         * {@link StorageScenario#problems()}, which names every invalid field at once.
         */
        public StorageScenario build() {
            return new StorageScenario(
                    name,
                    description,
                    seed,
                    warmupSeconds,
                    durationSeconds,
                    drainSeconds,
                    intervalMillis,
                    backend,
                    proxies,
                    diskSizeBytes,
                    segmentSizeBytes,
                    blockSizeBytes,
                    baseUtilizationPercent,
                    traces,
                    rates,
                    burstMultipliers,
                    admission,
                    tenants,
                    mixes);
        }
    }
}
