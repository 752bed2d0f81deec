package dev.tailor.nbd.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.IoCostModel;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import java.util.ArrayList;
import java.util.List;

/**
 * Segment admission in the proxy (docs/design.md#segment-admission; docs/nbd.md, "Admission"): one
 * controller for the whole server, each export a virtual disk of its tenant.
 *
 * <p>The budget is given in operators' units — {@code iops} and/or {@code megabytesPerSecond}, what
 * the backends behind this proxy serve together — or, for experts, in admission's cost units
 * ({@code capacityCostUnitsPerSecond} with admission's default cost model), not both. In operators'
 * units the cost model is derived from them the way blk-iocost derives its own from a device's
 * IOPS and bandwidth (our reading of {@code AUTOP} in Linux {@code block/blk-iocost.c}; reads and
 * writes alike): an I/O of {@code n} bytes costs {@code a + b × n} ns of device time with
 * {@code b = 10⁹ ÷ bytes per second} and {@code a = 10⁹ ÷ iops − 4096 × b}, and the budget is one
 * device-second per second (10⁹ cost units). So {@code iops} 4 KiB I/Os per second use the whole
 * budget, and so do large I/Os at {@code megabytesPerSecond}. With {@code iops} alone an I/O of any
 * size counts as one ({@code b = 0}); with {@code megabytesPerSecond} alone only bytes count
 * ({@code a = 0}).
 *
 * <p>The mechanism is what Tailor ships ({@code variant: tailor}, {@link AdmissionConfig#DEFAULTS}) or the
 * paper's as first built ({@code variant: paper}, {@link AdmissionConfig#PAPER}); each departure can be
 * switched on its own for ablations (docs/admission.md, Departures from the paper).
 *
 * @param enabled                    whether READs and WRITEs pass admission (default false;
 *                                   {@code tailor nbd serve --admission on})
 * @param capacityCostUnitsPerSecond for experts: what the backends serve, in admission's cost units
 *                                   per second with its default cost model (default 10⁹ when no
 *                                   {@code iops} or {@code megabytesPerSecond} is given: one device
 *                                   kept busy in blk-iocost's default SSD profile, whose 4 KiB random
 *                                   reads cost about 117,400 each: 8,518 per second)
 * @param reserveFraction            r, the share of each interval's budget reserved for steady
 *                                   segments (default 0.2)
 * @param segmentSize                bytes per segment (default 32 GiB)
 * @param blockSize                  bytes per logical block striped over the segments (default 1 MiB)
 * @param queueCapacityPerSegment    requests that may wait per segment before further ones fail
 *                                   with EIO (default: as many as the server lets clients have
 *                                   outstanding, {@link Limits#maxRequestsInFlight()}, 65,536 with the
 *                                   default limits, at most 1,000,000: a client within the server's
 *                                   limits is never refused; {@link #queueCapacityPerSegment(Limits)}).
 *                                   Not admission's own default, 64, which the storage simulator keeps:
 *                                   a real client may keep a queue depth of 128 or more on one segment, and
 *                                   a VM answered EIO reports file system errors
 * @param iops                       the budget in 4 KiB I/Os per second, reads and writes together,
 *                                   1 to 10⁸ (default none); {@code --admission-iops}
 * @param megabytesPerSecond         the budget in MB/s (10⁶ bytes per second) of large I/Os, reads and
 *                                   writes together, 0.01 to 10⁷ (default none); {@code --admission-mbps}
 * @param variant                    {@code tailor} (default: {@link AdmissionConfig#DEFAULTS}, the storage
 *                                   simulator's {@code segment-admission}) or {@code paper}
 *                                   ({@link AdmissionConfig#PAPER}, the simulator's
 *                                   {@code segment-admission-paper}); {@code --admission-variant}
 * @param baselineGuarantee          overrides the variant's {@link AdmissionConfig#baselineGuarantee}
 *                                   (default: the variant's; an ablation switch)
 * @param weightedHotService         overrides the variant's {@link AdmissionConfig#weightedHotService}
 * @param adaptiveReserve            overrides the variant's {@link AdmissionConfig#adaptiveReserve}; with it
 *                                   on, {@code reserveFraction} has no effect
 * @param pacedRelease               overrides the variant's {@link AdmissionConfig#pacedRelease}
 * @param arrivalOrderWithinDisk     overrides the variant's {@link AdmissionConfig#arrivalOrderWithinDisk}
 * @param diskOrderAcrossGuarantee   overrides the variant's {@link AdmissionConfig#diskOrderAcrossGuarantee}
 *                                   (an option, off in both variants)
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record AdmissionSettings(
        Boolean enabled,
        Double capacityCostUnitsPerSecond,
        Double reserveFraction,
        ByteSize segmentSize,
        ByteSize blockSize,
        Integer queueCapacityPerSegment,
        Double iops,
        Double megabytesPerSecond,
        String variant,
        Boolean baselineGuarantee,
        Boolean weightedHotService,
        Boolean adaptiveReserve,
        Boolean pacedRelease,
        Boolean arrivalOrderWithinDisk,
        Boolean diskOrderAcrossGuarantee) {

    /** What Tailor ships ({@link AdmissionConfig#DEFAULTS}): the default {@link #variant}. */
    public static final String VARIANT_TAILOR = "tailor";

    /** The paper's mechanism as first built ({@link AdmissionConfig#PAPER}). */
    public static final String VARIANT_PAPER = "paper";

    /** Bytes of the I/O an IOPS budget counts (blk-iocost's random IOPS are of 4 KiB). */
    public static final int IOPS_IO_BYTES = 4096;

    /** Cost units of one device-second: the budget per second when given in operators' units. */
    public static final double DEVICE_SECOND_COST_UNITS = 1e9;

    /** What {@link #iops} takes, for messages (its command-line option's too). */
    static final String IOPS_EXPECTED = "4 KiB I/Os per second, " + Numbers.interval(false, 1, 1e8);

    /** What {@link #megabytesPerSecond} takes, for messages (its command-line option's too). */
    static final String MEGABYTES_PER_SECOND_EXPECTED = "MB/s, " + Numbers.interval(false, 0.01, 1e7);

    /** Every default: admission off. */
    public static final AdmissionSettings DEFAULTS = builder().build();

    public AdmissionSettings {
        enabled = enabled != null && enabled;
        variant = variant == null ? VARIANT_TAILOR : variant;
        AdmissionConfig d = AdmissionConfig.DEFAULTS;
        // The expert's unit takes its default only when no budget in operators' units is given, so
        // that both given is seen (and refused) rather than one silently winning.
        capacityCostUnitsPerSecond = capacityCostUnitsPerSecond == null && iops == null && megabytesPerSecond == null
                ? Double.valueOf(d.capacityCostUnitsPerSecond())
                : capacityCostUnitsPerSecond;
        reserveFraction = reserveFraction == null ? d.reserveFraction() : reserveFraction;
        segmentSize = segmentSize == null ? new ByteSize(d.segmentSizeBytes()) : segmentSize;
        blockSize = blockSize == null ? new ByteSize(d.blockSizeBytes()) : blockSize;
        // queueCapacityPerSegment stays null when not given: its default depends on the limits
        // (queueCapacityPerSegment(Limits)).
    }

    /**
     * The queue capacity per segment in use with {@code limits}: {@link #queueCapacityPerSegment} when given, else
     * {@link #defaultQueueCapacityPerSegment}.
     */
    public int queueCapacityPerSegment(Limits limits) {
        return queueCapacityPerSegment != null ? queueCapacityPerSegment : defaultQueueCapacityPerSegment(limits);
    }

    /**
     * The default queue capacity per segment with {@code limits}: the most requests the clients can have
     * outstanding ({@link Limits#maxRequestsInFlight()}), so that a segment's queue holds all of them and a client
     * within the server's limits is never answered EIO for a full queue; at most admission's largest,
     * {@value AdmissionConfig#MAX_QUEUE_CAPACITY}. Queues grow as requests wait: an empty one holds nothing.
     */
    public static int defaultQueueCapacityPerSegment(Limits limits) {
        return (int) Math.max(0, Math.min(AdmissionConfig.MAX_QUEUE_CAPACITY, limits.maxRequestsInFlight()));
    }

    /** Whether the budget is given in IOPS and/or MB/s. */
    public boolean budgetInOperatorUnits() {
        return iops != null || megabytesPerSecond != null;
    }

    /**
     * {@link #toAdmissionConfig(Limits)} with the default limits: for what does not depend on them (the cost model,
     * the budget, the departures); the server runs {@link #toAdmissionConfig(Limits)} with its own.
     *
     * @throws IllegalArgumentException naming the field when a value is out of range
     */
    public AdmissionConfig toAdmissionConfig() {
        return toAdmissionConfig(Limits.DEFAULTS);
    }

    /**
     * The configuration the controller runs with under {@code limits}: admission's default model and
     * {@code capacityCostUnitsPerSecond}, or the ones derived from {@code iops} and
     * {@code megabytesPerSecond} (see the class description); the queue capacity of
     * {@link #queueCapacityPerSegment(Limits)}.
     *
     * @throws IllegalArgumentException naming the field when a value is out of range
     */
    public AdmissionConfig toAdmissionConfig(Limits limits) {
        AdmissionConfig base = switch (variant) {
            case VARIANT_TAILOR -> AdmissionConfig.DEFAULTS;
            case VARIANT_PAPER -> AdmissionConfig.PAPER;
            default ->
                throw new IllegalArgumentException("variant : \"" + variant + "\" (expected: " + VARIANT_TAILOR
                        + ", what Tailor ships, or " + VARIANT_PAPER + ", the paper's mechanism)");
        };
        AdmissionConfig config = base.toBuilder()
                .baselineGuarantee(baselineGuarantee == null ? base.baselineGuarantee() : baselineGuarantee)
                .pacedRelease(pacedRelease == null ? base.pacedRelease() : pacedRelease)
                .arrivalOrderWithinDisk(
                        arrivalOrderWithinDisk == null ? base.arrivalOrderWithinDisk() : arrivalOrderWithinDisk)
                .diskOrderAcrossGuarantee(
                        diskOrderAcrossGuarantee == null ? base.diskOrderAcrossGuarantee() : diskOrderAcrossGuarantee)
                .adaptiveReserve(adaptiveReserve == null ? base.adaptiveReserve() : adaptiveReserve)
                .weightedHotService(weightedHotService == null ? base.weightedHotService() : weightedHotService)
                .reserveFraction(reserveFraction)
                .segmentSizeBytes(segmentSize.bytes())
                .blockSizeBytes(blockSize.bytes())
                .queueCapacityPerSegment(queueCapacityPerSegment(limits))
                .build();
        Problem budget = budgetProblem();
        if (budget != null) {
            throw new IllegalArgumentException(
                    budget.path() + " : " + budget.value() + " (expected: " + budget.expected() + ")");
        }
        if (!budgetInOperatorUnits()) {
            return config.toBuilder()
                    .capacityCostUnitsPerSecond(capacityCostUnitsPerSecond)
                    .build();
        }
        double perByte = megabytesPerSecond == null ? 0 : DEVICE_SECOND_COST_UNITS / (megabytesPerSecond * 1e6);
        double perIo = iops == null ? 0 : DEVICE_SECOND_COST_UNITS / iops - IOPS_IO_BYTES * perByte;
        return config.toBuilder()
                .costModel(new IoCostModel(perIo, perByte, perIo, perByte))
                .capacityCostUnitsPerSecond(DEVICE_SECOND_COST_UNITS)
                .build();
    }

    /**
     * What a provisioned baseline costs per second in this budget's pricing ({@link #toAdmissionConfig}'s
     * cost model, read coefficients; our reading, as the storage simulator's {@code tenants[].baseline}):
     * {@code iops} I/Os carrying {@code megabytesPerSecond} MB in all, {@code iops × a + bytes × b}, where
     * an I/O counts at least 4 KiB as the budget's IOPS do (without {@code megabytesPerSecond}, bytes =
     * iops × 4096). So a baseline of the whole budget's {@code iops} or {@code megabytesPerSecond} costs
     * the whole budget.
     *
     * @throws IllegalArgumentException naming the field when the admission settings are invalid
     */
    public double baselineCostUnitsPerSecond(ExportConfig.Baseline baseline) {
        IoCostModel model = toAdmissionConfig().costModel();
        double ios = baseline.iops() == null ? 0 : baseline.iops();
        double bytes =
                baseline.megabytesPerSecond() != null ? baseline.megabytesPerSecond() * 1e6 : ios * IOPS_IO_BYTES;
        return ios * model.readBaseCostUnits() + bytes * model.readCostUnitsPerByte();
    }

    /**
     * Each export's commitment to admission (its baseline for the classifier and the baseline guarantee),
     * cost units per second, in the order of {@code exports}: a provisioned {@code baseline}'s cost; an
     * export without one gets an equal part of what the provisioned ones leave of the budget (our
     * reading: a budget promised in full leaves nothing to promise the others). Without any provisioned
     * baseline every entry is empty: admission's default, a fair share of the budget.
     *
     * @throws IllegalArgumentException naming the field when the admission settings are invalid
     */
    public List<java.util.OptionalDouble> commitments(List<ExportConfig> exports) {
        double provisioned = 0;
        int unprovisioned = 0;
        for (ExportConfig e : exports) {
            if (e.baseline() != null) {
                provisioned += baselineCostUnitsPerSecond(e.baseline());
            } else {
                unprovisioned++;
            }
        }
        List<java.util.OptionalDouble> out = new ArrayList<>();
        boolean any = unprovisioned < exports.size();
        double rest = unprovisioned == 0
                ? 0
                : Math.max(0, toAdmissionConfig().capacityCostUnitsPerSecond() - provisioned) / unprovisioned;
        for (ExportConfig e : exports) {
            out.add(
                    !any
                            ? java.util.OptionalDouble.empty()
                            : java.util.OptionalDouble.of(
                                    e.baseline() != null ? baselineCostUnitsPerSecond(e.baseline()) : rest));
        }
        return out;
    }

    /**
     * What is wrong with the exports' provisioned baselines against this budget (each at most the
     * budget, and all together too: the baseline guarantee admits a request within its baseline at
     * once, so promises beyond what the backends serve would be broken by the backend's queue).
     * Empty when admission is off or its own settings are invalid (those are reported as such).
     */
    public List<Problem> baselineProblems(List<ExportConfig> exports) {
        List<Problem> problems = new ArrayList<>();
        if (!enabled || !problems().isEmpty()) {
            return problems;
        }
        double budget = toAdmissionConfig().capacityCostUnitsPerSecond();
        double total = 0;
        List<String> provisioned = new ArrayList<>();
        for (int i = 0; i < exports.size(); i++) {
            ExportConfig e = exports.get(i);
            if (e == null || e.baseline() == null || !e.baseline().problems("").isEmpty()) {
                continue;
            }
            double cost = baselineCostUnitsPerSecond(e.baseline());
            total += cost;
            provisioned.add("exports[" + i + "]");
            if (cost > budget * (1 + 1e-9)) {
                problems.add(new Problem(
                        "exports[" + i + "].baseline",
                        e.baseline().describe() + " is " + percent(cost / budget) + " of admission's budget, "
                                + budgetDescription(),
                        "at most the budget: no backend can promise more than it serves"));
            }
        }
        if (problems.isEmpty() && total > budget * (1 + 1e-9)) {
            problems.add(new Problem(
                    "exports[].baseline",
                    "the baselines of " + String.join(", ", provisioned) + " add up to " + percent(total / budget)
                            + " of admission's budget, " + budgetDescription(),
                    "at most the budget together: the guarantee admits at the baselines' rates whatever"
                            + " the pools hold, so baselines beyond what the backends serve could not be kept"));
        }
        return problems;
    }

    private static String percent(double share) {
        return grouped(Math.round(share * 1000) / 10.0) + " %";
    }

    /** What is wrong with the budget fields (the path without {@code admission.}), or null. */
    private Problem budgetProblem() {
        if (budgetInOperatorUnits() && capacityCostUnitsPerSecond != null) {
            return new Problem(
                    iops != null ? "iops" : "megabytesPerSecond",
                    "given with capacityCostUnitsPerSecond",
                    "the budget in IOPS and/or MB/s, or in cost units, not both");
        }
        if (iops != null && !(iops >= 1 && iops <= 1e8)) {
            return new Problem("iops", Numbers.written(iops), IOPS_EXPECTED);
        }
        if (megabytesPerSecond != null && !(megabytesPerSecond >= 0.01 && megabytesPerSecond <= 1e7)) {
            return new Problem(
                    "megabytesPerSecond", Numbers.written(megabytesPerSecond), MEGABYTES_PER_SECOND_EXPECTED);
        }
        if (iops != null && megabytesPerSecond != null && iops * IOPS_IO_BYTES > megabytesPerSecond * 1e6) {
            return new Problem(
                    "iops",
                    Numbers.written(iops) + " 4 KiB I/Os per second move "
                            + Numbers.written(Math.round(iops * IOPS_IO_BYTES / 1e4) / 100.0) + " MB/s, more than"
                            + " megabytesPerSecond " + Numbers.written(megabytesPerSecond),
                    "at most " + Numbers.written(Math.floor(megabytesPerSecond * 1e6 / IOPS_IO_BYTES))
                            + " IOPS with that bandwidth: small I/Os cannot move more bytes than large ones");
        }
        return null;
    }

    /**
     * The budget in words for the banner, as a storage engineer writes it: {@code 20,000 IOPS and 400 MB/s},
     * or whole cost units with what they mean in 4 KiB reads, {@code 1,000,000,000 cost units/s (about 8,518
     * 4 KiB reads/s)}, thousands separated as the lab's experiments write a budget.
     */
    public String budgetDescription() {
        if (!budgetInOperatorUnits()) {
            return String.format(
                    java.util.Locale.ROOT,
                    "%,.0f cost units/s (about %,d 4 KiB reads/s)",
                    capacityCostUnitsPerSecond,
                    readsPerSecond(capacityCostUnitsPerSecond));
        }
        return (iops == null ? "" : grouped(iops) + " IOPS")
                + (iops != null && megabytesPerSecond != null ? " and " : "")
                + (megabytesPerSecond == null ? "" : grouped(megabytesPerSecond) + " MB/s");
    }

    /** A whole number with thousands separators ({@code 20,000}), another as written ({@code 2.5}). */
    static String grouped(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15
                ? String.format(java.util.Locale.ROOT, "%,d", (long) value)
                : Numbers.written(value);
    }

    /**
     * The 4 KiB reads per second the default budget admits (admission's default cost model and
     * {@link AdmissionConfig#capacityCostUnitsPerSecond}): what a backend is held to when admission is on
     * and no budget is given. 8518 (said {@code 8,518}).
     */
    public static long defaultBudgetReadsPerSecond() {
        return readsPerSecond(AdmissionConfig.DEFAULTS.capacityCostUnitsPerSecond());
    }

    /** The 4 KiB reads per second a budget of {@code costUnitsPerSecond} admits with the default cost model. */
    private static long readsPerSecond(double costUnitsPerSecond) {
        return Math.round(
                costUnitsPerSecond / IoCostModel.DEFAULT.costUnits(dev.tailor.admission.IoKind.READ, IOPS_IO_BYTES));
    }

    /**
     * Every problem of these settings at once: each field found invalid is reported, then set back to its
     * default so that the next check can reach the fields after it ({@link #toAdmissionConfig} stops at
     * the first).
     */
    List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        AdmissionSettings settings = this;
        // The segment size against a valid block size, in the config's words and sizes: admission's own checks
        // name its fields in bytes (segmentSizeBytes), and once the segment size was set back to its default,
        // told that default (32 GiB, never written) against the block size as a second problem.
        long block = blockSize.bytes();
        if (block >= 1 && (segmentSize.bytes() < block || segmentSize.bytes() % block != 0)) {
            problems.add(new Problem(
                    "admission.segmentSize",
                    segmentSize.toString(),
                    "a multiple of blockSize, " + blockSize + ", at least blockSize"));
            settings = settings.toBuilder().segmentSize(blockSize).build(); // the others are checked on
        }
        // Each round resets one more field, so there are at most as many rounds as fields.
        for (int round = 0; round < 16; round++) {
            String message;
            try {
                settings.toAdmissionConfig();
                break;
            } catch (IllegalArgumentException e) {
                message = e.getMessage();
            }
            Problem problem = argumentProblem(
                    message.replace("segmentSizeBytes", "segmentSize").replace("blockSizeBytes", "blockSize"));
            if (problems.contains(problem)) {
                break;
            }
            problems.add(problem);
            AdmissionSettings next = withDefault(settings, problem);
            if (next == null || next.equals(settings)) {
                break;
            }
            settings = next;
        }
        return problems;
    }

    /** The settings with the field of {@code problem} at its default, or null when no field is named. */
    private static AdmissionSettings withDefault(AdmissionSettings settings, Problem problem) {
        Builder b = settings.toBuilder();
        return switch (problem.path()) {
            case "admission.variant" -> b.variant(null).build();
            case "admission.reserveFraction" -> b.reserveFraction(null).build();
            case "admission.segmentSize" -> b.segmentSize(null).build();
            case "admission.blockSize" -> b.blockSize(null).build();
            case "admission.queueCapacityPerSegment" ->
                b.queueCapacityPerSegment(null).build();
            case "admission.capacityCostUnitsPerSecond" ->
                b.capacityCostUnitsPerSecond(null).build();
            // A budget given twice (operators' units and cost units): the operators' units are checked on.
            case "admission.iops", "admission.megabytesPerSecond" ->
                settings.budgetInOperatorUnits() && settings.capacityCostUnitsPerSecond() != null
                        ? b.capacityCostUnitsPerSecond(null).build()
                        : problem.path().equals("admission.iops")
                                ? b.iops(null).build()
                                : b.megabytesPerSecond(null).build();
            default -> null;
        };
    }

    /**
     * An argument's message, {@code name : value (expected: ...)} as admission's checks word it, as the
     * problem of the field {@code admission.name}.
     */
    private static Problem argumentProblem(String message) {
        int colon = message.indexOf(" : ");
        int expected = message.indexOf(" (expected: ");
        if (colon < 0 || expected < colon || !message.endsWith(")")) {
            return new Problem("admission", message, "valid admission settings");
        }
        return new Problem(
                "admission." + message.substring(0, colon),
                message.substring(colon + 3, expected),
                message.substring(expected + " (expected: ".length(), message.length() - 1));
    }

    /** A builder with every field unset: {@link Builder#build} gives the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds {@link AdmissionSettings}: named setters; a field left unset, or set to {@code null}, takes its
     * default
     * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
     * read with).
     */
    public static final class Builder {
        private Boolean enabled;
        private Double capacityCostUnitsPerSecond;
        private Double reserveFraction;
        private ByteSize segmentSize;
        private ByteSize blockSize;
        private Integer queueCapacityPerSegment;
        private Double iops;
        private Double megabytesPerSecond;
        private String variant;
        private Boolean baselineGuarantee;
        private Boolean weightedHotService;
        private Boolean adaptiveReserve;
        private Boolean pacedRelease;
        private Boolean arrivalOrderWithinDisk;
        private Boolean diskOrderAcrossGuarantee;

        private Builder() {}

        private Builder(AdmissionSettings from) {
            enabled = from.enabled;
            capacityCostUnitsPerSecond = from.capacityCostUnitsPerSecond;
            reserveFraction = from.reserveFraction;
            segmentSize = from.segmentSize;
            blockSize = from.blockSize;
            queueCapacityPerSegment = from.queueCapacityPerSegment;
            iops = from.iops;
            megabytesPerSecond = from.megabytesPerSecond;
            variant = from.variant;
            baselineGuarantee = from.baselineGuarantee;
            weightedHotService = from.weightedHotService;
            adaptiveReserve = from.adaptiveReserve;
            pacedRelease = from.pacedRelease;
            arrivalOrderWithinDisk = from.arrivalOrderWithinDisk;
            diskOrderAcrossGuarantee = from.diskOrderAcrossGuarantee;
        }

        /** {@link AdmissionSettings#enabled}. */
        public Builder enabled(Boolean value) {
            enabled = value;
            return this;
        }

        /** {@link AdmissionSettings#capacityCostUnitsPerSecond}. */
        public Builder capacityCostUnitsPerSecond(Double value) {
            capacityCostUnitsPerSecond = value;
            return this;
        }

        /** {@link AdmissionSettings#reserveFraction}. */
        public Builder reserveFraction(Double value) {
            reserveFraction = value;
            return this;
        }

        /** {@link AdmissionSettings#segmentSize}. */
        public Builder segmentSize(ByteSize value) {
            segmentSize = value;
            return this;
        }

        /** {@link AdmissionSettings#blockSize}. */
        public Builder blockSize(ByteSize value) {
            blockSize = value;
            return this;
        }

        /** {@link AdmissionSettings#queueCapacityPerSegment}. */
        public Builder queueCapacityPerSegment(Integer value) {
            queueCapacityPerSegment = value;
            return this;
        }

        /** {@link AdmissionSettings#iops}. */
        public Builder iops(Double value) {
            iops = value;
            return this;
        }

        /** {@link AdmissionSettings#megabytesPerSecond}. */
        public Builder megabytesPerSecond(Double value) {
            megabytesPerSecond = value;
            return this;
        }

        /** {@link AdmissionSettings#variant}. */
        public Builder variant(String value) {
            variant = value;
            return this;
        }

        /** {@link AdmissionSettings#baselineGuarantee}. */
        public Builder baselineGuarantee(Boolean value) {
            baselineGuarantee = value;
            return this;
        }

        /** {@link AdmissionSettings#weightedHotService}. */
        public Builder weightedHotService(Boolean value) {
            weightedHotService = value;
            return this;
        }

        /** {@link AdmissionSettings#adaptiveReserve}. */
        public Builder adaptiveReserve(Boolean value) {
            adaptiveReserve = value;
            return this;
        }

        /** {@link AdmissionSettings#pacedRelease}. */
        public Builder pacedRelease(Boolean value) {
            pacedRelease = value;
            return this;
        }

        /** {@link AdmissionSettings#arrivalOrderWithinDisk}. */
        public Builder arrivalOrderWithinDisk(Boolean value) {
            arrivalOrderWithinDisk = value;
            return this;
        }

        /** {@link AdmissionSettings#diskOrderAcrossGuarantee}. */
        public Builder diskOrderAcrossGuarantee(Boolean value) {
            diskOrderAcrossGuarantee = value;
            return this;
        }

        /**
         * The admission settings, each field left unset at its default. Its values are checked where a config
         * file's are,
         * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
         * listed at once, each as {@code field: value (expected: ...)}.
         */
        public AdmissionSettings build() {
            return new AdmissionSettings(
                    enabled,
                    capacityCostUnitsPerSecond,
                    reserveFraction,
                    segmentSize,
                    blockSize,
                    queueCapacityPerSegment,
                    iops,
                    megabytesPerSecond,
                    variant,
                    baselineGuarantee,
                    weightedHotService,
                    adaptiveReserve,
                    pacedRelease,
                    arrivalOrderWithinDisk,
                    diskOrderAcrossGuarantee);
        }
    }
}
