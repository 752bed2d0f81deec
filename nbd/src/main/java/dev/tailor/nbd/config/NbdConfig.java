package dev.tailor.nbd.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.admission.AdmissionConfig;
import dev.tailor.admission.IoCostModel;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.eventloop.LoopMode;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.ToIntFunction;
import java.util.regex.Pattern;

/**
 * The NBD server's configuration: where it listens, its limits, its threads and its exports. Read from
 * YAML or JSON ({@link NbdConfigFiles}); every field but {@code exports} has a default. Sizes are
 * {@link ByteSize}s (bytes, or a string such as {@code "32MiB"}). {@link #problems()} lists every
 * invalid field at once.
 *
 * @param address          the address to listen on (default {@code 127.0.0.1}: loopback unless told
 *                         otherwise; the protocol has no authentication here)
 * @param port             the TCP port (default 10809, IANA's NBD port; 0 picks a free one)
 * @param limits           per-request and per-connection limits
 * @param eventLoopThreads Netty event loop threads for the connections (default: the number of CPUs)
 * @param fileIoThreads    threads doing blocking file I/O for all file exports (default 8)
 * @param fileIo           where file exports' reads, writes and flushes run: {@code io_uring} (submitted from the
 *                         event loops, which then run on Netty's io_uring transport), {@code threads} (the
 *                         {@code fileIoThreads} pool, loops on epoll) or {@code auto} (the default: io_uring when
 *                         it is available and an export is a file, else threads)
 * @param exports          the virtual disks served; the first is the default export (the empty name)
 * @param admission        segment admission in front of the backends (default off)
 * @param loop             the event loops' mode and the proxy's background work
 * @param unix             a Unix-domain socket path to listen on (default none); without {@code address} and
 *                         {@code port} the server then listens on the socket only, as qemu-nbd {@code --socket}
 *                         and nbdkit {@code -U} do; with either of them on TCP as well
 * @param tls              TLS through STARTTLS (default off)
 * @param fairDispatch     the fair dispatch door in front of the backends (default: behind segment admission
 *                         when admission is on in Tailor's variant, else off)
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record NbdConfig(
        String address,
        Integer port,
        Limits limits,
        Integer eventLoopThreads,
        Integer fileIoThreads,
        String fileIo,
        List<ExportConfig> exports,
        AdmissionSettings admission,
        LoopSettings loop,
        String unix,
        TlsSettings tls,
        FairDispatchSettings fairDispatch) {

    /**
     * Configured export sizes are whole multiples of this many bytes: clients count a disk in 512-byte
     * sectors, and of a partial last one the Linux kernel's NBD client drops it (capacity is size / 512,
     * rounded down) while qemu rounds up and reads zeroes past the end. The protocol itself would allow
     * any size (file exports advertise a minimum block size of 1), so this is our rule, for the clients.
     */
    public static final int SECTOR_BYTES = 512;

    /** The longest Unix-domain socket path, in bytes: {@code sun_path} holds 108 with the final NUL. */
    public static final int MAX_UNIX_PATH_BYTES = 107;

    /** {@link #fileIo}: io_uring where available and an export is a file, else threads. */
    public static final String FILE_IO_AUTO = "auto";

    /** {@link #fileIo}: reads, writes and flushes submitted to io_uring from the event loops. */
    public static final String FILE_IO_URING = "io_uring";

    /** {@link #fileIo}: all file I/O on the {@link #fileIoThreads} pool. */
    public static final String FILE_IO_THREADS = "threads";

    /** The default port, IANA-reserved for NBD. */
    public static final int DEFAULT_PORT = 10809;

    /** Allowed export names: printable, no spaces or quotes, so they fit in a URI path and a log line. */
    private static final Pattern EXPORT_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:@+/-]*");

    public NbdConfig {
        // A Unix socket alone means no TCP listener; an address or port given beside it means both.
        if (unix == null || address != null || port != null) {
            address = address == null ? "127.0.0.1" : address;
            port = port == null ? DEFAULT_PORT : port;
        }
        limits = limits == null ? Limits.DEFAULTS : limits;
        eventLoopThreads = eventLoopThreads == null ? Runtime.getRuntime().availableProcessors() : eventLoopThreads;
        fileIoThreads = fileIoThreads == null ? 8 : fileIoThreads;
        fileIo = fileIo == null ? FILE_IO_AUTO : fileIo;
        exports = exports == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(exports));
        admission = admission == null ? AdmissionSettings.DEFAULTS : admission;
        loop = loop == null ? LoopSettings.DEFAULTS : loop;
        tls = tls == null ? TlsSettings.DEFAULTS : tls;
        fairDispatch = fairDispatch == null ? FairDispatchSettings.DEFAULTS : fairDispatch;
    }

    /**
     * What is wrong with the listeners together: the metrics endpoint on the NBD port. Checked at start, on the
     * settings as served (a config file's port may be overridden by {@code --listen}), not when a file is read.
     */
    public List<Problem> listenerProblems() {
        if (loop.metricsListen() != null
                && listensOnTcp()
                && port != 0
                && loop.metricsListen().endsWith(":" + port)) {
            return List.of(new Problem(
                    "loop.metricsListen", quote(loop.metricsListen()) + " is the NBD port", "another port, e.g. 9810"));
        }
        return List.of();
    }

    /** Whether the server listens on TCP ({@link #address()} and {@link #port()} are set). */
    public boolean listensOnTcp() {
        return port != null;
    }

    /** The Unix-domain socket to listen on, or {@code null}. */
    public Path unixSocket() {
        return unix == null ? null : Path.of(unix);
    }

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
     *                                   with EIO (default 64)
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
            Boolean arrivalOrderWithinDisk) {

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
            capacityCostUnitsPerSecond =
                    capacityCostUnitsPerSecond == null && iops == null && megabytesPerSecond == null
                            ? Double.valueOf(d.capacityCostUnitsPerSecond())
                            : capacityCostUnitsPerSecond;
            reserveFraction = reserveFraction == null ? d.reserveFraction() : reserveFraction;
            segmentSize = segmentSize == null ? new ByteSize(d.segmentSizeBytes()) : segmentSize;
            blockSize = blockSize == null ? new ByteSize(d.blockSizeBytes()) : blockSize;
            queueCapacityPerSegment =
                    queueCapacityPerSegment == null ? d.queueCapacityPerSegment() : queueCapacityPerSegment;
        }

        /** Whether the budget is given in IOPS and/or MB/s. */
        public boolean budgetInOperatorUnits() {
            return iops != null || megabytesPerSecond != null;
        }

        /**
         * The cost model and budget the controller runs with: admission's default model and
         * {@code capacityCostUnitsPerSecond}, or the ones derived from {@code iops} and
         * {@code megabytesPerSecond} (see the class description).
         *
         * @throws IllegalArgumentException naming the field when a value is out of range
         */
        public AdmissionConfig toAdmissionConfig() {
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
                    .adaptiveReserve(adaptiveReserve == null ? base.adaptiveReserve() : adaptiveReserve)
                    .weightedHotService(weightedHotService == null ? base.weightedHotService() : weightedHotService)
                    .reserveFraction(reserveFraction)
                    .segmentSizeBytes(segmentSize.bytes())
                    .blockSizeBytes(blockSize.bytes())
                    .queueCapacityPerSegment(queueCapacityPerSegment)
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
        public double baselineCostUnitsPerSecond(Baseline baseline) {
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
                if (e == null
                        || e.baseline() == null
                        || !e.baseline().problems("").isEmpty()) {
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
                        "at most the budget together: a request within its baseline is admitted at once, so"
                                + " baselines beyond what the backends serve could not be kept"));
            }
            return problems;
        }

        private static String percent(double share) {
            return number(Math.round(share * 1000) / 10.0) + " %";
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
                return new Problem("iops", number(iops), IOPS_EXPECTED);
            }
            if (megabytesPerSecond != null && !(megabytesPerSecond >= 0.01 && megabytesPerSecond <= 1e7)) {
                return new Problem("megabytesPerSecond", number(megabytesPerSecond), MEGABYTES_PER_SECOND_EXPECTED);
            }
            if (iops != null && megabytesPerSecond != null && iops * IOPS_IO_BYTES > megabytesPerSecond * 1e6) {
                return new Problem(
                        "iops",
                        number(iops) + " 4 KiB I/Os per second move "
                                + number(Math.round(iops * IOPS_IO_BYTES / 1e4) / 100.0) + " MB/s, more than"
                                + " megabytesPerSecond " + number(megabytesPerSecond),
                        "at most " + number(Math.floor(megabytesPerSecond * 1e6 / IOPS_IO_BYTES))
                                + " IOPS with that bandwidth: small I/Os cannot move more bytes than large ones");
            }
            return null;
        }

        /**
         * The budget in words for the banner: {@code 20000 IOPS and 400 MB/s}, or cost units with what
         * they mean in 4 KiB reads.
         */
        public String budgetDescription() {
            if (!budgetInOperatorUnits()) {
                return String.format(java.util.Locale.ROOT, "%.3g", capacityCostUnitsPerSecond) + " cost units/s"
                        + " (about " + readsPerSecond(capacityCostUnitsPerSecond) + " 4 KiB reads/s)";
            }
            return (iops == null ? "" : number(iops) + " IOPS")
                    + (iops != null && megabytesPerSecond != null ? " and " : "")
                    + (megabytesPerSecond == null ? "" : number(megabytesPerSecond) + " MB/s");
        }

        /**
         * The 4 KiB reads per second the default budget admits (admission's default cost model and
         * {@link AdmissionConfig#capacityCostUnitsPerSecond}): what a backend is held to when admission is on
         * and no budget is given. 8518.
         */
        public static long defaultBudgetReadsPerSecond() {
            return readsPerSecond(AdmissionConfig.DEFAULTS.capacityCostUnitsPerSecond());
        }

        /** The 4 KiB reads per second a budget of {@code costUnitsPerSecond} admits with the default cost model. */
        private static long readsPerSecond(double costUnitsPerSecond) {
            return Math.round(costUnitsPerSecond
                    / IoCostModel.DEFAULT.costUnits(dev.tailor.admission.IoKind.READ, IOPS_IO_BYTES));
        }

        /**
         * Every problem of these settings at once: each field found invalid is reported, then set back to its
         * default so that the next check can reach the fields after it ({@link #toAdmissionConfig} stops at
         * the first).
         */
        List<Problem> problems() {
            List<Problem> problems = new ArrayList<>();
            AdmissionSettings settings = this;
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
                        arrivalOrderWithinDisk);
            }
        }
    }

    /**
     * The fair dispatch door (docs/nbd.md, "Fair dispatch"; docs/admission.md, "Fair dispatch"): at most
     * {@code depth} READs and WRITEs at one backend at once, the rest waiting per export, and each completion
     * lets in the waiting request of the export furthest behind its share (start-time fair queueing over the
     * exports, weighted by their baselines, with a lag of admission's W·Δ). One door per backend
     * ({@link ExportConfig#backend}), each with this depth, with segment admission on (what admission admits
     * goes through the doors) or off (the doors alone). FLUSH, TRIM and WRITE_ZEROES pass beside them, as they
     * pass beside admission.
     *
     * @param enabled whether READs and WRITEs pass the door ({@code tailor nbd serve --fair-dispatch on|off});
     *                when not given, the admission variant's {@link AdmissionConfig#fairDispatch} while admission
     *                is on (so on behind Tailor's variant, off behind the paper's), and off while it is off
     * @param depth   the most READs and WRITEs at one backend at once, 1 to {@value #MAX_DEPTH}, every door's;
     *                {@code --fair-dispatch-depth}. When not given, each door's own: {@code fileIoThreads} for
     *                its file exports (the requests the file threads run at once; our reading for io_uring),
     *                plus {@value #UPSTREAM_REQUESTS_PER_CONNECTION} per upstream connection of its upstream
     *                exports (nbdkit's default threads per connection, nbdkit(1) {@code --threads}); docs/nbd.md
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record FairDispatchSettings(Boolean enabled, Integer depth) {

        /** The largest {@link #depth}. */
        public static final int MAX_DEPTH = 65_536;

        /**
         * What an upstream connection adds to its door's default depth: the requests nbdkit serves at once per
         * connection by default (nbdkit(1), {@code --threads}: 16 for plugins with the parallel thread model).
         */
        public static final int UPSTREAM_REQUESTS_PER_CONNECTION = 16;

        /** What {@code depth} and {@code --fair-dispatch-depth} take, in words. */
        public static final String DEPTH_EXPECTED = "requests at one backend at once, 1 to " + MAX_DEPTH;

        /** Nothing given: the door as admission's variant has it, its depth the default. */
        public static final FairDispatchSettings DEFAULTS = new FairDispatchSettings(null, null);

        /**
         * Whether the door runs in front of the backends: {@link #enabled} when given, else the variant's
         * {@link AdmissionConfig#fairDispatch} while {@code admission} is on, else off.
         *
         * @throws IllegalArgumentException naming the field when the admission settings are not valid
         */
        public boolean on(AdmissionSettings admission) {
            if (enabled != null) {
                return enabled;
            }
            return admission.enabled() && admission.toAdmissionConfig().fairDispatch();
        }

        /**
         * The depth of the door of {@code exports}, all on one backend: {@code depth} when given; else
         * {@code fileIoThreads} if any of them is a file export, plus {@value #UPSTREAM_REQUESTS_PER_CONNECTION}
         * per connection of each upstream export's pool (at most {@value #MAX_DEPTH}).
         */
        public int depthOf(List<ExportConfig> exports, int fileIoThreads) {
            return depthOf(exports, e -> e.upstream().connections(), fileIoThreads);
        }

        /**
         * As {@link #depthOf(List, int)}, with each upstream export's pool as opened ({@code poolConnections}:
         * 1 when its upstream does not offer multi-conn, else {@code connections}).
         */
        public int depthOf(List<ExportConfig> exports, ToIntFunction<ExportConfig> poolConnections, int fileIoThreads) {
            if (depth != null) {
                return depth;
            }
            long sum = 0;
            boolean files = false;
            for (ExportConfig e : exports) {
                if (e.upstream() != null) {
                    sum += (long) UPSTREAM_REQUESTS_PER_CONNECTION * poolConnections.applyAsInt(e);
                } else {
                    files = true;
                }
            }
            return (int) Math.min(MAX_DEPTH, sum + (files ? fileIoThreads : 0));
        }

        /**
         * A depth out of range; or a depth while the door is off behind {@code admission}, as
         * {@code --fair-dispatch-depth} is refused then (left to admission's own problems when its settings are
         * not valid, which the door's being on depends on).
         */
        List<Problem> problems(AdmissionSettings admission) {
            if (depth != null && (depth < 1 || depth > MAX_DEPTH)) {
                return List.of(new Problem("fairDispatch.depth", depth, DEPTH_EXPECTED));
            }
            return depthWhileOff(admission);
        }

        /**
         * The problem of a depth (in range) while the door is off behind {@code admission}, or none: the one
         * problem of these settings that {@code tailor nbd serve}'s options can settle, by turning the door on.
         */
        List<Problem> depthWhileOff(AdmissionSettings admission) {
            if (depth == null || depth < 1 || depth > MAX_DEPTH) {
                return List.of();
            }
            boolean door;
            try {
                door = on(admission);
            } catch (IllegalArgumentException e) {
                return List.of();
            }
            if (door) {
                return List.of();
            }
            return List.of(new Problem(
                    "fairDispatch.depth",
                    depth + ", but the door is off",
                    "fairDispatch.enabled: true, or admission.enabled in Tailor's variant, whose door it is"
                            + " (the paper's variant has none); or no depth"));
        }
    }

    /**
     * The event loops (docs/design.md#io-priority-event-loop; docs/eventloop.md) and the proxy's own
     * background work on them (the server's {@code ProxyBackgroundWork}; {@link BackgroundSettings}).
     *
     * @param mode                    {@code priority} (default: I/O first, background work within an
     *                                allowance) or {@code fifo} (one queue, as a plain event loop);
     *                                {@code tailor nbd serve --loop}
     * @param statisticsPeriodMicros  per-segment statistics (admission's tick), µs (default 1,000)
     * @param metricsPeriodMillis     metrics export, ms (default 1,000)
     * @param metricsFile             a file the metrics export writes in the Prometheus text format
     *                                (default none); in a config file, relative to its directory
     * @param healthCheckPeriodMillis health check, ms (default 100)
     * @param maintenancePeriodMicros synthetic maintenance, µs between runs (default 1,000)
     * @param maintenanceBusyMicros   CPU time of one synthetic maintenance task, µs (default 0: off)
     * @param maintenanceTasks        maintenance tasks submitted per run (default 1)
     * @param metricsListen           {@code HOST:PORT} to serve {@code /metrics} and {@code /healthz} on
     *                                over HTTP (default none; port 0 picks a free one); {@code tailor nbd
     *                                serve --metrics-listen}; served by the server's {@code MetricsEndpoint}
     * @param slowRequestThresholdMillis a request taking longer than this, decoded to answered, is slow (ms, 0.001 to
     *                                60,000; default {@value #DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS});
     *                                {@code tailor nbd serve --slow-threshold} (docs/nbd.md, "Slow requests")
     * @param slowTopWindowSeconds    the window of the slow top: it reports the slow requests of between half of it
     *                                and all of it, up to now (s, 2 to 86,400; default
     *                                {@value #DEFAULT_SLOW_TOP_WINDOW_SECONDS})
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record LoopSettings(
            String mode,
            Integer statisticsPeriodMicros,
            Integer metricsPeriodMillis,
            Path metricsFile,
            Integer healthCheckPeriodMillis,
            Integer maintenancePeriodMicros,
            Integer maintenanceBusyMicros,
            Integer maintenanceTasks,
            String metricsListen,
            Double slowRequestThresholdMillis,
            Integer slowTopWindowSeconds) {

        /** The slow threshold by default, ms: far above a page-cache or SSD request, so only requests that waited. */
        public static final double DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS = 50;

        /** The longest slow threshold, ms: a minute. */
        public static final double MAX_SLOW_REQUEST_THRESHOLD_MILLIS = 60_000;

        /** The slow top's window by default, s. */
        public static final int DEFAULT_SLOW_TOP_WINDOW_SECONDS = 60;

        /** What {@code slowRequestThresholdMillis} and {@code --slow-threshold} take, in words. */
        public static final String SLOW_THRESHOLD_EXPECTED = "milliseconds from 0.001 to 60000, e.g. 50";

        /** Every default: priority mode, no maintenance, no metrics file or endpoint. */
        public static final LoopSettings DEFAULTS = builder().build();

        public LoopSettings {
            mode = mode == null ? "priority" : mode;
            statisticsPeriodMicros = statisticsPeriodMicros == null ? 1_000 : statisticsPeriodMicros;
            metricsPeriodMillis = metricsPeriodMillis == null ? 1_000 : metricsPeriodMillis;
            healthCheckPeriodMillis = healthCheckPeriodMillis == null ? 100 : healthCheckPeriodMillis;
            maintenancePeriodMicros = maintenancePeriodMicros == null ? 1_000 : maintenancePeriodMicros;
            maintenanceBusyMicros = maintenanceBusyMicros == null ? 0 : maintenanceBusyMicros;
            maintenanceTasks = maintenanceTasks == null ? 1 : maintenanceTasks;
            slowRequestThresholdMillis = slowRequestThresholdMillis == null
                    ? DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS
                    : slowRequestThresholdMillis;
            slowTopWindowSeconds =
                    slowTopWindowSeconds == null ? DEFAULT_SLOW_TOP_WINDOW_SECONDS : slowTopWindowSeconds;
        }

        /** Whether {@code millis} is a slow threshold the server takes: 1 µs to a minute. */
        public static boolean validSlowThreshold(double millis) {
            return millis >= 0.001 && millis <= MAX_SLOW_REQUEST_THRESHOLD_MILLIS;
        }

        /** The slow threshold, ns (at least 1). */
        public long slowRequestThresholdNanos() {
            return Math.round(slowRequestThresholdMillis * 1e6);
        }

        /** The slow top's window, ns. */
        public long slowTopWindowNanos() {
            return slowTopWindowSeconds * 1_000_000_000L;
        }

        /**
         * The metrics endpoint's address, or {@code null} when there is none.
         *
         * @throws IllegalArgumentException when {@code metricsListen} is not {@code HOST:PORT}
         */
        public InetSocketAddress metricsAddress() {
            MetricsListen parsed = parseMetricsListen();
            if (parsed.problem() != null) {
                throw new IllegalArgumentException(parsed.problem().message());
            }
            return parsed.address();
        }

        /** What {@link #metricsAddress} finds wrong with {@code metricsListen}, or null. */
        private Problem metricsProblem() {
            return parseMetricsListen().problem();
        }

        /** {@code metricsListen} read: its address, or what is wrong with it; both null when there is none. */
        private record MetricsListen(InetSocketAddress address, Problem problem) {}

        private MetricsListen parseMetricsListen() {
            if (metricsListen == null) {
                return new MetricsListen(null, null);
            }
            int colon = metricsListen.lastIndexOf(':');
            String host = colon < 0 ? "" : metricsListen.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = colon < 0 ? -1 : Integer.parseInt(metricsListen.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (host.isBlank() || port < 0 || port > 65_535) {
                return new MetricsListen(
                        null,
                        new Problem(
                                "loop.metricsListen",
                                quote(metricsListen),
                                "HOST:PORT, e.g. 127.0.0.1:9810; port 0 to 65535"));
            }
            InetSocketAddress address = new InetSocketAddress(host, port);
            if (address.isUnresolved()) {
                return new MetricsListen(
                        null,
                        new Problem(
                                "loop.metricsListen",
                                quote(metricsListen) + ": " + host + " does not resolve",
                                "an address or host name of this machine"));
            }
            return new MetricsListen(address, null);
        }

        /** This, with a relative metrics file resolved against {@code directory}. */
        LoopSettings resolvedAgainst(Path directory) {
            if (metricsFile == null || metricsFile.isAbsolute()) {
                return this;
            }
            return new LoopSettings(
                    mode,
                    statisticsPeriodMicros,
                    metricsPeriodMillis,
                    directory.resolve(metricsFile),
                    healthCheckPeriodMillis,
                    maintenancePeriodMicros,
                    maintenanceBusyMicros,
                    maintenanceTasks,
                    metricsListen,
                    slowRequestThresholdMillis,
                    slowTopWindowSeconds);
        }

        /** The loop mode. */
        public LoopMode loopMode() {
            return "fifo".equals(mode) ? LoopMode.FIFO : LoopMode.PRIORITY;
        }

        /** The background work's configuration. */
        public BackgroundSettings background() {
            return new BackgroundSettings(
                    statisticsPeriodMicros,
                    metricsPeriodMillis,
                    metricsFile,
                    healthCheckPeriodMillis,
                    maintenancePeriodMicros,
                    maintenanceBusyMicros,
                    maintenanceTasks);
        }

        List<Problem> problems() {
            List<Problem> problems = new ArrayList<>();
            if (!"priority".equals(mode) && !"fifo".equals(mode)) {
                problems.add(new Problem("loop.mode", quote(mode), "priority or fifo"));
            }
            check(problems, "statisticsPeriodMicros", statisticsPeriodMicros, 1, 60_000_000);
            check(problems, "metricsPeriodMillis", metricsPeriodMillis, 1, 3_600_000);
            check(problems, "healthCheckPeriodMillis", healthCheckPeriodMillis, 1, 3_600_000);
            check(problems, "maintenancePeriodMicros", maintenancePeriodMicros, 1, 60_000_000);
            check(problems, "maintenanceBusyMicros", maintenanceBusyMicros, 0, 1_000_000);
            check(problems, "maintenanceTasks", maintenanceTasks, 1, 10_000);
            if (!validSlowThreshold(slowRequestThresholdMillis)) {
                problems.add(new Problem(
                        "loop.slowRequestThresholdMillis",
                        number(slowRequestThresholdMillis),
                        SLOW_THRESHOLD_EXPECTED));
            }
            check(problems, "slowTopWindowSeconds", slowTopWindowSeconds, 2, 86_400);
            Problem metrics = metricsProblem();
            if (metrics != null) {
                problems.add(metrics);
            }
            return problems;
        }

        private static void check(List<Problem> problems, String field, int value, int min, int max) {
            if (value < min || value > max) {
                problems.add(new Problem("loop." + field, value, min + " to " + max));
            }
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
         * Builds {@link LoopSettings}: named setters; a field left unset, or set to {@code null}, takes its default
         * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
         * read with).
         */
        public static final class Builder {
            private String mode;
            private Integer statisticsPeriodMicros;
            private Integer metricsPeriodMillis;
            private Path metricsFile;
            private Integer healthCheckPeriodMillis;
            private Integer maintenancePeriodMicros;
            private Integer maintenanceBusyMicros;
            private Integer maintenanceTasks;
            private String metricsListen;
            private Double slowRequestThresholdMillis;
            private Integer slowTopWindowSeconds;

            private Builder() {}

            private Builder(LoopSettings from) {
                mode = from.mode;
                statisticsPeriodMicros = from.statisticsPeriodMicros;
                metricsPeriodMillis = from.metricsPeriodMillis;
                metricsFile = from.metricsFile;
                healthCheckPeriodMillis = from.healthCheckPeriodMillis;
                maintenancePeriodMicros = from.maintenancePeriodMicros;
                maintenanceBusyMicros = from.maintenanceBusyMicros;
                maintenanceTasks = from.maintenanceTasks;
                metricsListen = from.metricsListen;
                slowRequestThresholdMillis = from.slowRequestThresholdMillis;
                slowTopWindowSeconds = from.slowTopWindowSeconds;
            }

            /** {@link LoopSettings#mode}. */
            public Builder mode(String value) {
                mode = value;
                return this;
            }

            /** {@link LoopSettings#statisticsPeriodMicros}. */
            public Builder statisticsPeriodMicros(Integer value) {
                statisticsPeriodMicros = value;
                return this;
            }

            /** {@link LoopSettings#metricsPeriodMillis}. */
            public Builder metricsPeriodMillis(Integer value) {
                metricsPeriodMillis = value;
                return this;
            }

            /** {@link LoopSettings#metricsFile}. */
            public Builder metricsFile(Path value) {
                metricsFile = value;
                return this;
            }

            /** {@link LoopSettings#healthCheckPeriodMillis}. */
            public Builder healthCheckPeriodMillis(Integer value) {
                healthCheckPeriodMillis = value;
                return this;
            }

            /** {@link LoopSettings#maintenancePeriodMicros}. */
            public Builder maintenancePeriodMicros(Integer value) {
                maintenancePeriodMicros = value;
                return this;
            }

            /** {@link LoopSettings#maintenanceBusyMicros}. */
            public Builder maintenanceBusyMicros(Integer value) {
                maintenanceBusyMicros = value;
                return this;
            }

            /** {@link LoopSettings#maintenanceTasks}. */
            public Builder maintenanceTasks(Integer value) {
                maintenanceTasks = value;
                return this;
            }

            /** {@link LoopSettings#metricsListen}. */
            public Builder metricsListen(String value) {
                metricsListen = value;
                return this;
            }

            /** {@link LoopSettings#slowRequestThresholdMillis}. */
            public Builder slowRequestThresholdMillis(Double value) {
                slowRequestThresholdMillis = value;
                return this;
            }

            /** {@link LoopSettings#slowTopWindowSeconds}. */
            public Builder slowTopWindowSeconds(Integer value) {
                slowTopWindowSeconds = value;
                return this;
            }

            /**
             * The loop settings, each field left unset at its default. Its values are checked where a config file's
             * are,
             * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
             * listed at once, each as {@code field: value (expected: ...)}.
             */
            public LoopSettings build() {
                return new LoopSettings(
                        mode,
                        statisticsPeriodMicros,
                        metricsPeriodMillis,
                        metricsFile,
                        healthCheckPeriodMillis,
                        maintenancePeriodMicros,
                        maintenanceBusyMicros,
                        maintenanceTasks,
                        metricsListen,
                        slowRequestThresholdMillis,
                        slowTopWindowSeconds);
            }
        }
    }

    /**
     * Limits that keep one client from taking the server down (docs/nbd.md, "Limits").
     *
     * @param maxRequestSize                   longest read, write or write-zeroes (default 32 MiB, the
     *                                         size proto.md says clients may always send); advertised as
     *                                         the maximum block size
     * @param maxInFlightPerConnection         bytes of write payloads and read replies a connection may
     *                                         hold before the server stops reading from it (default
     *                                         64 MiB; at least maxRequestSize)
     * @param maxInFlightRequestsPerConnection requests a connection may have outstanding before the
     *                                         server stops reading from it (default 256)
     * @param maxConnections                   connections at once (default 256); a newcomer over the limit
     *                                         closes the longest idle connection still in the handshake, or
     *                                         is closed itself when every connection is past its handshake
     * @param maxHandshakes                    of those, connections in the handshake at once (default 64, at
     *                                         most maxConnections); a newcomer over the limit closes the
     *                                         longest idle one (the server's connection admission)
     * @param handshakeTimeoutSeconds          time a client has to finish the handshake (default 10)
     * @param idleTimeoutSeconds               a connection past its handshake with no request in flight
     *                                         and nothing sent or received for this long is closed; 0 is
     *                                         off, never (default {@link #DEFAULT_IDLE_TIMEOUT_SECONDS};
     *                                         docs/nbd.md, "Limits", says why)
     * @param maxConnectionsPerAddress         connections from one client address at once (default
     *                                         maxConnections less a quarter of it, rounded down: 192 of
     *                                         256, so a quarter is always left to other addresses; at most
     *                                         maxConnections); a newcomer over it closes that address's
     *                                         longest idle handshake, or is refused, with the reason in the
     *                                         log
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record Limits(
            ByteSize maxRequestSize,
            ByteSize maxInFlightPerConnection,
            Integer maxInFlightRequestsPerConnection,
            Integer maxConnections,
            Integer maxHandshakes,
            Double handshakeTimeoutSeconds,
            Double idleTimeoutSeconds,
            Integer maxConnectionsPerAddress) {

        /** Every limit at its default. */
        public static final Limits DEFAULTS = builder().build();

        /** The default of {@link #maxHandshakes} (lowered to maxConnections when that is smaller). */
        public static final int DEFAULT_MAX_HANDSHAKES = 64;

        /**
         * The default of {@link #idleTimeoutSeconds}: 0, off, as in qemu-nbd and nbdkit. qemu's NBD client
         * keeps an idle disk's connection open for as long as the VM runs, and by default (reconnect-delay
         * 0) fails every later request with EIO once the server has closed it (docs/nbd.md, "Limits").
         */
        public static final double DEFAULT_IDLE_TIMEOUT_SECONDS = 0;

        public Limits {
            maxRequestSize = maxRequestSize == null ? new ByteSize(32L << 20) : maxRequestSize;
            maxInFlightPerConnection =
                    maxInFlightPerConnection == null ? new ByteSize(64L << 20) : maxInFlightPerConnection;
            maxInFlightRequestsPerConnection =
                    maxInFlightRequestsPerConnection == null ? 256 : maxInFlightRequestsPerConnection;
            maxConnections = maxConnections == null ? 256 : maxConnections;
            maxHandshakes = maxHandshakes == null
                    ? Math.max(1, Math.min(DEFAULT_MAX_HANDSHAKES, maxConnections))
                    : maxHandshakes;
            handshakeTimeoutSeconds = handshakeTimeoutSeconds == null ? 10.0 : handshakeTimeoutSeconds;
            idleTimeoutSeconds = idleTimeoutSeconds == null ? DEFAULT_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds;
            maxConnectionsPerAddress = maxConnectionsPerAddress == null
                    ? Math.max(1, maxConnections - maxConnections / 4)
                    : maxConnectionsPerAddress;
        }

        /** The idle timeout in nanoseconds, 0 when it is off. */
        public long idleTimeoutNanos() {
            return (long) (idleTimeoutSeconds * 1e9);
        }

        /** The maximum request size in bytes. */
        public int maxRequestBytes() {
            return (int) Math.min(maxRequestSize.bytes(), Integer.MAX_VALUE);
        }

        /** The handshake timeout in nanoseconds. */
        public long handshakeTimeoutNanos() {
            return (long) (handshakeTimeoutSeconds * 1e9);
        }

        List<Problem> problems() {
            List<Problem> problems = new ArrayList<>();
            long max = maxRequestSize.bytes();
            if (max < 4096 || max > BlockSizes.LARGEST_MAXIMUM_BYTES) {
                problems.add(new Problem("limits.maxRequestSize", maxRequestSize, "4KiB to 1GiB"));
            } else if (maxInFlightPerConnection.bytes() < max) { // measured against a valid maxRequestSize only
                problems.add(new Problem(
                        "limits.maxInFlightPerConnection",
                        maxInFlightPerConnection,
                        "at least limits.maxRequestSize, " + maxRequestSize));
            }
            if (maxInFlightRequestsPerConnection < 1 || maxInFlightRequestsPerConnection > 65_536) {
                problems.add(new Problem(
                        "limits.maxInFlightRequestsPerConnection", maxInFlightRequestsPerConnection, "1 to 65536"));
            }
            if (maxConnections < 1) {
                problems.add(new Problem("limits.maxConnections", maxConnections, "at least 1"));
                if (maxHandshakes < 1) {
                    problems.add(new Problem("limits.maxHandshakes", maxHandshakes, "at least 1"));
                }
            } else if (maxHandshakes < 1 || maxHandshakes > maxConnections) {
                problems.add(new Problem(
                        "limits.maxHandshakes", maxHandshakes, "1 to limits.maxConnections, " + maxConnections));
            }
            if (!(handshakeTimeoutSeconds > 0) || handshakeTimeoutSeconds > 86_400) {
                problems.add(new Problem(
                        "limits.handshakeTimeoutSeconds",
                        number(handshakeTimeoutSeconds),
                        "more than 0, at most 86400"));
            }
            if (!(idleTimeoutSeconds == 0 || idleTimeoutSeconds >= 0.01 && idleTimeoutSeconds <= 31_536_000)) {
                problems.add(new Problem(
                        "limits.idleTimeoutSeconds",
                        number(idleTimeoutSeconds),
                        "0 for off, or 0.01 to 31536000, a year"));
            }
            if (maxConnections >= 1 && (maxConnectionsPerAddress < 1 || maxConnectionsPerAddress > maxConnections)) {
                problems.add(new Problem(
                        "limits.maxConnectionsPerAddress",
                        maxConnectionsPerAddress,
                        "1 to limits.maxConnections, " + maxConnections));
            }
            return problems;
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
         * Builds {@link Limits}: named setters; a field left unset, or set to {@code null}, takes its default
         * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
         * read with).
         */
        public static final class Builder {
            private ByteSize maxRequestSize;
            private ByteSize maxInFlightPerConnection;
            private Integer maxInFlightRequestsPerConnection;
            private Integer maxConnections;
            private Integer maxHandshakes;
            private Double handshakeTimeoutSeconds;
            private Double idleTimeoutSeconds;
            private Integer maxConnectionsPerAddress;

            private Builder() {}

            private Builder(Limits from) {
                maxRequestSize = from.maxRequestSize;
                maxInFlightPerConnection = from.maxInFlightPerConnection;
                maxInFlightRequestsPerConnection = from.maxInFlightRequestsPerConnection;
                maxConnections = from.maxConnections;
                maxHandshakes = from.maxHandshakes;
                handshakeTimeoutSeconds = from.handshakeTimeoutSeconds;
                idleTimeoutSeconds = from.idleTimeoutSeconds;
                maxConnectionsPerAddress = from.maxConnectionsPerAddress;
            }

            /** {@link Limits#maxRequestSize}. */
            public Builder maxRequestSize(ByteSize value) {
                maxRequestSize = value;
                return this;
            }

            /** {@link Limits#maxInFlightPerConnection}. */
            public Builder maxInFlightPerConnection(ByteSize value) {
                maxInFlightPerConnection = value;
                return this;
            }

            /** {@link Limits#maxInFlightRequestsPerConnection}. */
            public Builder maxInFlightRequestsPerConnection(Integer value) {
                maxInFlightRequestsPerConnection = value;
                return this;
            }

            /** {@link Limits#maxConnections}. */
            public Builder maxConnections(Integer value) {
                maxConnections = value;
                return this;
            }

            /** {@link Limits#maxHandshakes}. */
            public Builder maxHandshakes(Integer value) {
                maxHandshakes = value;
                return this;
            }

            /** {@link Limits#handshakeTimeoutSeconds}. */
            public Builder handshakeTimeoutSeconds(Double value) {
                handshakeTimeoutSeconds = value;
                return this;
            }

            /** {@link Limits#idleTimeoutSeconds}. */
            public Builder idleTimeoutSeconds(Double value) {
                idleTimeoutSeconds = value;
                return this;
            }

            /** {@link Limits#maxConnectionsPerAddress}. */
            public Builder maxConnectionsPerAddress(Integer value) {
                maxConnectionsPerAddress = value;
                return this;
            }

            /**
             * The limits, each field left unset at its default. Its values are checked where a config file's are,
             * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
             * listed at once, each as {@code field: value (expected: ...)}.
             */
            public Limits build() {
                return new Limits(
                        maxRequestSize,
                        maxInFlightPerConnection,
                        maxInFlightRequestsPerConnection,
                        maxConnections,
                        maxHandshakes,
                        handshakeTimeoutSeconds,
                        idleTimeoutSeconds,
                        maxConnectionsPerAddress);
            }
        }
    }

    /**
     * TLS through {@code NBD_OPT_STARTTLS} (proto.md, "TLS support"; docs/nbd.md, "TLS"), with the modes and
     * the certificate folder named as nbdkit names them.
     *
     * @param mode         {@code off} (default: NOTLS, STARTTLS refused with {@code NBD_REP_ERR_POLICY}),
     *                     {@code on} (a client may upgrade with STARTTLS or go on in plain text) or {@code require}
     *                     (every option but STARTTLS and ABORT is refused with {@code NBD_REP_ERR_TLS_REQD} until
     *                     TLS runs); {@code tailor nbd serve --tls}
     * @param certificates a folder with {@code server-cert.pem}, {@code server-key.pem} and, for
     *                     {@code verifyPeer}, {@code ca-cert.pem} (as nbdkit's {@code --tls-certificates} and
     *                     qemu's {@code tls-creds-x509} name them); in a config file, relative to its directory;
     *                     required unless the mode is off
     * @param verifyPeer   whether clients must present a certificate signed by {@code ca-cert.pem} (default
     *                     false); {@code tailor nbd serve --tls-verify-peer}
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record TlsSettings(String mode, Path certificates, Boolean verifyPeer) {

        /** TLS off. */
        public static final TlsSettings DEFAULTS = new TlsSettings("off", null, false);

        /** The server's certificate chain, PEM, in the certificate folder. */
        public static final String SERVER_CERT = "server-cert.pem";
        /** The server's private key, PEM, in the certificate folder. */
        public static final String SERVER_KEY = "server-key.pem";
        /** The CA certificates client certificates are checked against, PEM, in the certificate folder. */
        public static final String CA_CERT = "ca-cert.pem";

        public TlsSettings {
            // YAML 1.1 reads an unquoted on or off as a boolean, which arrives here as "true" or "false".
            mode = mode == null || mode.equals("false") ? "off" : mode.equals("true") ? "on" : mode;
            verifyPeer = verifyPeer != null && verifyPeer;
        }

        /** Whether STARTTLS is served ({@code on} or {@code require}). */
        public boolean enabled() {
            return mode.equals("on") || mode.equals("require");
        }

        /** This, with a relative certificate folder resolved against {@code directory}. */
        TlsSettings resolvedAgainst(Path directory) {
            return certificates == null || certificates.isAbsolute()
                    ? this
                    : new TlsSettings(mode, directory.resolve(certificates), verifyPeer);
        }

        /**
         * What is wrong with the fields, each problem starting with {@code tls.} and the field: the mode, and
         * the certificate folder and the files in it, each there and readable. What the files hold (PEM, a key
         * that is the certificate's) is checked by the server when it loads them, before it opens anything.
         */
        public List<Problem> problems() {
            List<Problem> problems = new ArrayList<>();
            if (!mode.equals("off") && !enabled()) {
                problems.add(new Problem("tls.mode", quote(mode), "off, on or require"));
                return problems;
            }
            if (!enabled()) {
                if (certificates != null) {
                    problems.add(new Problem(
                            "tls.certificates",
                            "given, but tls.mode is off",
                            "tls.mode on or require to serve TLS with them"));
                }
                if (verifyPeer) {
                    problems.add(new Problem("tls.verifyPeer", "true, but tls.mode is off", "tls.mode on or require"));
                }
                return problems;
            }
            if (certificates == null) {
                problems.add(new Problem(
                        "tls.certificates",
                        "missing",
                        "a folder with " + SERVER_CERT + " and " + SERVER_KEY + " when tls.mode is " + mode));
                return problems;
            }
            if (!java.nio.file.Files.isDirectory(certificates)) {
                problems.add(new Problem(
                        "tls.certificates",
                        certificates
                                + (java.nio.file.Files.exists(certificates) ? " is not a folder" : " does not exist"),
                        "a folder with " + SERVER_CERT + " and " + SERVER_KEY));
                return problems;
            }
            for (String name :
                    verifyPeer ? List.of(SERVER_CERT, SERVER_KEY, CA_CERT) : List.of(SERVER_CERT, SERVER_KEY)) {
                Problem problem = fileProblem("tls.certificates", certificates.resolve(name));
                if (problem != null) {
                    problems.add(problem);
                    return problems;
                }
            }
            return problems;
        }

        /**
         * What keeps {@code file}, one of the credentials, from being read, said for {@code field}, or
         * {@code null} when it is a file that can be opened.
         */
        public static Problem fileProblem(String field, Path file) {
            if (!java.nio.file.Files.isRegularFile(file)) {
                return new Problem(
                        field,
                        file + (java.nio.file.Files.exists(file) ? " is not a file" : " does not exist"),
                        SERVER_CERT + ", " + SERVER_KEY + " and, to verify clients, " + CA_CERT
                                + " in the folder; docs/nbd.md, TLS");
            }
            try {
                java.nio.file.Files.newByteChannel(file).close();
                return null;
            } catch (java.io.IOException e) {
                return new Problem(
                        field, file + " cannot be read (" + IoErrors.reason(e) + ")", "a file the server can read");
            }
        }
    }

    /**
     * One virtual disk. Exactly one backend: {@code file} or {@code upstream}.
     *
     * @param name        what clients ask for: 1 to 256 characters from letters, digits and
     *                    {@code . _ : @ + / -}, starting with a letter or digit
     * @param tenant      who owns the disk, for admission control and the export list (default
     *                    {@code default})
     * @param description shown by {@code nbdinfo --list} (default: tenant and size)
     * @param size        the disk's size, a multiple of 512 bytes: required for a file that does not exist
     *                    yet (it is created sparse); for an existing file at most its length (default: its
     *                    length); for an upstream export, if given, must equal the upstream size
     * @param readOnly    refuse writes (default false)
     * @param file        the backing file; relative paths are relative to the config file
     * @param upstream    the upstream NBD server this export proxies
     * @param baseline    its provisioned baseline for segment admission (default none: an equal part of
     *                    what the provisioned exports leave of admission's budget, or a fair share)
     * @param backend     the backend it shares the fair dispatch door with other exports on, by name
     *                    (docs/nbd.md, "Fair dispatch"): exports with the same name share a door; the same 1 to
     *                    256 characters as {@code name} (default: for a file, the device of its file system,
     *                    {@code device:MAJOR:MINOR}; for an upstream, its address, {@code upstream:HOST:PORT})
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record ExportConfig(
            String name,
            String tenant,
            String description,
            ByteSize size,
            Boolean readOnly,
            Path file,
            Upstream upstream,
            Baseline baseline,
            String backend) {

        public ExportConfig {
            tenant = tenant == null ? "default" : tenant;
            readOnly = readOnly != null && readOnly;
        }

        /** A file-backed export. */
        public static ExportConfig file(String name, String tenant, long sizeBytes, boolean readOnly, Path file) {
            return builder()
                    .name(name)
                    .tenant(tenant)
                    .size(new ByteSize(sizeBytes))
                    .readOnly(readOnly)
                    .file(file)
                    .build();
        }

        /** An export proxying {@code upstream}. */
        public static ExportConfig upstream(String name, String tenant, boolean readOnly, Upstream upstream) {
            return builder()
                    .name(name)
                    .tenant(tenant)
                    .readOnly(readOnly)
                    .upstream(upstream)
                    .build();
        }

        /** This export with a relative file path resolved against {@code directory}. */
        ExportConfig resolvedAgainst(Path directory) {
            if (file == null || file.isAbsolute()) {
                return this;
            }
            return new ExportConfig(
                    name, tenant, description, size, readOnly, directory.resolve(file), upstream, baseline, backend);
        }

        /** What is wrong with this export, each problem starting with {@code where} and the field. */
        public List<Problem> problems(String where) {
            List<Problem> problems = new ArrayList<>();
            if (name == null || name.isEmpty()) {
                problems.add(new Problem(where + ".name", "missing", "the name clients ask for"));
            } else if (name.length() > 256 || !EXPORT_NAME.matcher(name).matches()) {
                problems.add(new Problem(
                        where + ".name",
                        quote(name),
                        "1 to 256 characters from letters, digits and . _ : @ + / -, starting with a letter or"
                                + " digit"));
            }
            if (tenant.isEmpty() || tenant.length() > 256 || tenant.chars().anyMatch(Character::isISOControl)) {
                problems.add(new Problem(where + ".tenant", quote(tenant), "1 to 256 printable characters"));
            }
            if (description != null
                    && (description.getBytes(StandardCharsets.UTF_8).length > 1024
                            || description.chars().anyMatch(c -> c == 0))) {
                problems.add(new Problem(where + ".description", "too long or contains NUL", "at most 1024 bytes"));
            }
            if ((file == null) == (upstream == null)) {
                problems.add(new Problem(
                        where, file == null ? "no backend" : "two backends", "exactly one of file or upstream"));
            }
            if (size != null && size.bytes() == 0) {
                problems.add(new Problem(where + ".size", 0, "at least " + SECTOR_BYTES + " bytes"));
            } else if (size != null && size.bytes() % SECTOR_BYTES != 0) {
                long down = size.bytes() - size.bytes() % SECTOR_BYTES;
                problems.add(new Problem(
                        where + ".size",
                        size,
                        "a multiple of " + SECTOR_BYTES + " bytes, such as "
                                + (down == 0 ? "" : ByteSize.format(down) + " or ")
                                + ByteSize.format(down + SECTOR_BYTES)
                                + ": clients count a disk in 512-byte sectors, and the Linux kernel drops a partial"
                                + " last one"));
            }
            if (upstream != null) {
                problems.addAll(upstream.problems(where + ".upstream"));
            }
            if (baseline != null) {
                problems.addAll(baseline.problems(where + ".baseline"));
            }
            if (backend != null
                    && (backend.length() > 256 || !EXPORT_NAME.matcher(backend).matches())) {
                problems.add(new Problem(
                        where + ".backend",
                        quote(backend),
                        "a name for the backend, 1 to 256 characters from letters, digits and . _ : @ + / -, starting"
                                + " with a letter or digit"));
            }
            return problems;
        }

        /**
         * What keeps the export's {@code file} from being served, each problem starting with {@code where}: a
         * directory; a file that does not exist when the export is read-only, has no {@code size} to create it
         * with, or is in a folder that does not exist; something that is not a regular file (a device); an
         * existing file shorter than {@code size}, or empty. Looked at on the file system as it is now; empty
         * for an export without a file. The server opens the file at start and says the same should it have
         * changed since.
         */
        public List<Problem> fileProblems(String where) {
            List<Problem> problems = new ArrayList<>();
            if (file == null) {
                return problems;
            }
            String at = where + ".file";
            if (java.nio.file.Files.isDirectory(file)) {
                problems.add(new Problem(at, file + " is a directory", "a file, or a path to create one"));
            } else if (!java.nio.file.Files.exists(file)) {
                Path folder = file.toAbsolutePath().getParent();
                if (readOnly) {
                    problems.add(new Problem(
                            at, file + " does not exist", "an existing file: a read-only export does not create one"));
                } else if (size == null) {
                    problems.add(new Problem(
                            at,
                            file + " does not exist",
                            "an existing file, or a size for the export to create it sparse with"));
                } else if (folder != null && !java.nio.file.Files.isDirectory(folder)) {
                    problems.add(new Problem(
                            at,
                            file + ": its folder " + folder
                                    + (java.nio.file.Files.exists(folder) ? " is not a folder" : " does not exist"),
                            "a path in an existing folder, where the file is created"));
                }
            } else if (!java.nio.file.Files.isRegularFile(file)) {
                // A block device's length is not its file size, and its holes are not the file system's.
                problems.add(new Problem(
                        at,
                        file + " is not a regular file (a block or character device?)",
                        "a regular file, e.g. a raw disk image; block devices are not served yet"));
            } else {
                long fileBytes;
                try {
                    fileBytes = java.nio.file.Files.size(file);
                } catch (java.io.IOException e) {
                    problems.add(
                            new Problem(at, file + " cannot be read (" + IoErrors.reason(e) + ")", "a readable file"));
                    return problems;
                }
                if (size == null && fileBytes == 0) {
                    problems.add(new Problem(at, file + " is empty", "a file of at least 1 byte"));
                } else if (size != null
                        && size.bytes() > 0
                        && size.bytes() % SECTOR_BYTES == 0
                        && size.bytes() > fileBytes) {
                    problems.add(new Problem(
                            where + ".size",
                            size,
                            "at most the length of " + file + ", " + fileBytes + " bytes; or leave size out"));
                }
            }
            return problems;
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
         * Builds {@link ExportConfig}: named setters; a field left unset, or set to {@code null}, takes its default
         * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
         * read with).
         */
        public static final class Builder {
            private String name;
            private String tenant;
            private String description;
            private ByteSize size;
            private Boolean readOnly;
            private Path file;
            private Upstream upstream;
            private Baseline baseline;
            private String backend;

            private Builder() {}

            private Builder(ExportConfig from) {
                name = from.name;
                tenant = from.tenant;
                description = from.description;
                size = from.size;
                readOnly = from.readOnly;
                file = from.file;
                upstream = from.upstream;
                baseline = from.baseline;
                backend = from.backend;
            }

            /** {@link ExportConfig#name}. */
            public Builder name(String value) {
                name = value;
                return this;
            }

            /** {@link ExportConfig#tenant}. */
            public Builder tenant(String value) {
                tenant = value;
                return this;
            }

            /** {@link ExportConfig#description}. */
            public Builder description(String value) {
                description = value;
                return this;
            }

            /** {@link ExportConfig#size}. */
            public Builder size(ByteSize value) {
                size = value;
                return this;
            }

            /** {@link ExportConfig#readOnly}. */
            public Builder readOnly(Boolean value) {
                readOnly = value;
                return this;
            }

            /** {@link ExportConfig#file}. */
            public Builder file(Path value) {
                file = value;
                return this;
            }

            /** {@link ExportConfig#upstream}. */
            public Builder upstream(Upstream value) {
                upstream = value;
                return this;
            }

            /** {@link ExportConfig#baseline}. */
            public Builder baseline(Baseline value) {
                baseline = value;
                return this;
            }

            /** {@link ExportConfig#backend}. */
            public Builder backend(String value) {
                backend = value;
                return this;
            }

            /**
             * The export, each field left unset at its default. Its values are checked where a config file's are,
             * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
             * listed at once, each as {@code field: value (expected: ...)}.
             */
            public ExportConfig build() {
                return new ExportConfig(name, tenant, description, size, readOnly, file, upstream, baseline, backend);
            }
        }
    }

    /**
     * An export's provisioned baseline, as a cloud disk's baseline IOPS and throughput: what its tenant
     * was promised, in the units of admission's budget. Segment admission takes it as the disk's
     * commitment (docs/admission.md): the classifier's baseline and, in the default variant, the
     * baseline guarantee's rate (a request within it is admitted at once). Priced as
     * {@link AdmissionSettings#baselineCostUnitsPerSecond}; at most the budget, and all baselines together
     * too ({@link AdmissionSettings#baselineProblems}).
     *
     * @param iops               4 KiB I/Os per second, reads and writes alike, more than 0 and at most 10⁸
     * @param megabytesPerSecond MB/s (10⁶ bytes per second) of large I/Os, more than 0 and at most 10⁷
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record Baseline(Double iops, Double megabytesPerSecond) {

        /** What {@link #iops} takes, for messages (its command-line option's too). */
        static final String IOPS_EXPECTED = "4 KiB I/Os per second, " + Numbers.interval(true, 0, 1e8);

        /** What {@link #megabytesPerSecond} takes, for messages (its command-line option's too). */
        static final String MEGABYTES_PER_SECOND_EXPECTED = "MB/s, " + Numbers.interval(true, 0, 1e7);

        /** What is wrong with this baseline, each problem starting with {@code where} and the field. */
        public List<Problem> problems(String where) {
            List<Problem> problems = new ArrayList<>();
            if (iops == null && megabytesPerSecond == null) {
                problems.add(new Problem(where, "empty", "iops and/or megabytesPerSecond"));
            }
            if (iops != null && !(iops > 0 && iops <= 1e8)) {
                problems.add(new Problem(where + ".iops", number(iops), IOPS_EXPECTED));
            }
            if (megabytesPerSecond != null && !(megabytesPerSecond > 0 && megabytesPerSecond <= 1e7)) {
                problems.add(new Problem(
                        where + ".megabytesPerSecond", number(megabytesPerSecond), MEGABYTES_PER_SECOND_EXPECTED));
            }
            if (problems.isEmpty()
                    && iops != null
                    && megabytesPerSecond != null
                    && iops * AdmissionSettings.IOPS_IO_BYTES > megabytesPerSecond * 1e6) {
                problems.add(new Problem(
                        where + ".iops",
                        number(iops) + " 4 KiB I/Os per second move "
                                + number(Math.round(iops * AdmissionSettings.IOPS_IO_BYTES / 1e4) / 100.0)
                                + " MB/s, more than megabytesPerSecond " + number(megabytesPerSecond),
                        "at most " + number(Math.floor(megabytesPerSecond * 1e6 / AdmissionSettings.IOPS_IO_BYTES))
                                + " IOPS with that bandwidth"));
            }
            return problems;
        }

        /** As an operator wrote it: {@code 500 IOPS and 20 MB/s}. */
        public String describe() {
            return (iops == null ? "" : number(iops) + " IOPS")
                    + (iops != null && megabytesPerSecond != null ? " and " : "")
                    + (megabytesPerSecond == null ? "" : number(megabytesPerSecond) + " MB/s");
        }
    }

    /**
     * An upstream NBD server (proxy mode). The connection pool opens {@code connections} connections
     * when the upstream advertises {@code NBD_FLAG_CAN_MULTI_CONN}, else one (proto.md: without it,
     * clients should not spread their requests over several connections).
     *
     * @param host        host name or address
     * @param port        TCP port (default 10809)
     * @param export      the upstream's export name (default: the empty name, its default export)
     * @param connections pool size, 1 to 64 (default 4)
     * @param idleTimeoutSeconds a pool connection without a request for this long disconnects (default 5),
     *                    so that an upstream stopped while the proxy is idle is not kept waiting for it
     * @param requestTimeoutSeconds a request written to a pool connection without its whole reply for this
     *                    long makes the pool treat that connection as lost (closed, its requests in flight
     *                    failed with EIO), so that an upstream that hangs without closing its connections
     *                    does not hold the proxy's requests forever; 0 is off, never (default
     *                    {@link #DEFAULT_REQUEST_TIMEOUT_SECONDS}; docs/nbd.md, "Upstream exports", says why)
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record Upstream(
            String host,
            Integer port,
            String export,
            Integer connections,
            Double idleTimeoutSeconds,
            Double requestTimeoutSeconds) {

        /** The default of {@link #idleTimeoutSeconds}. */
        public static final double DEFAULT_IDLE_TIMEOUT_SECONDS = 5;

        /**
         * The default of {@link #requestTimeoutSeconds}: 30, the Linux block layer's request timeout, which its
         * nbd driver takes when {@code nbd-client -timeout} sets none (it then only logs a possibly stuck
         * request every 30 s). qemu's NBD client and nbdkit's nbd plugin have no reply timeout at all.
         */
        public static final double DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;

        /** Largest {@link #requestTimeoutSeconds}: a day. */
        public static final double MAX_REQUEST_TIMEOUT_SECONDS = 86_400;

        public Upstream {
            port = port == null ? DEFAULT_PORT : port;
            export = export == null ? "" : export;
            connections = connections == null ? 4 : connections;
            idleTimeoutSeconds = idleTimeoutSeconds == null ? DEFAULT_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds;
            requestTimeoutSeconds =
                    requestTimeoutSeconds == null ? DEFAULT_REQUEST_TIMEOUT_SECONDS : requestTimeoutSeconds;
        }

        /** The reply timeout in nanoseconds, 0 when it is off. */
        public long requestTimeoutNanos() {
            return (long) (requestTimeoutSeconds * 1e9);
        }

        /**
         * Host name labels (RFC 1123, section 2.1): letters, digits and inner hyphens, at most 63 each;
         * underscores too, which some internal DNS zones use.
         */
        private static final java.util.regex.Pattern HOST_NAME =
                java.util.regex.Pattern.compile("(?=.{1,253}\\.?$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
                        + "(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");

        /**
         * Whether {@code host} can name a host at all; whether it resolves is a matter of the moment,
         * found out when connecting (an exit status of 1, not a configuration error).
         */
        static boolean validHostSyntax(String host) {
            if (host.indexOf(':') >= 0) { // an IPv6 literal: parsed, never looked up
                try {
                    return InetAddress.getByName(host.startsWith("[") ? host : "[" + host + "]") != null;
                } catch (UnknownHostException e) {
                    return false;
                }
            }
            return HOST_NAME.matcher(host).matches();
        }

        List<Problem> problems(String where) {
            List<Problem> problems = new ArrayList<>();
            if (host == null || host.isBlank()) {
                problems.add(new Problem(where + ".host", "missing", "the upstream NBD server's host"));
            } else if (!validHostSyntax(host)) {
                problems.add(new Problem(
                        where + ".host", quote(host), "a host name (RFC 1123), an IPv4 address or an IPv6 address"));
            }
            if (port < 1 || port > 65_535) {
                problems.add(new Problem(where + ".port", port, "1 to 65535"));
            }
            if (export.getBytes(StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES
                    || export.indexOf('\0') >= 0) {
                problems.add(new Problem(where + ".export", "too long or contains NUL", "at most 4096 bytes"));
            }
            if (connections < 1 || connections > 64) {
                problems.add(new Problem(where + ".connections", connections, "1 to 64"));
            }
            if (!(idleTimeoutSeconds >= 0.01) || idleTimeoutSeconds > 86_400) {
                problems.add(new Problem(
                        where + ".idleTimeoutSeconds",
                        number(idleTimeoutSeconds),
                        Numbers.interval(false, 0.01, 86_400)));
            }
            if (!(requestTimeoutSeconds == 0
                    || requestTimeoutSeconds >= 0.01 && requestTimeoutSeconds <= MAX_REQUEST_TIMEOUT_SECONDS)) {
                problems.add(new Problem(
                        where + ".requestTimeoutSeconds",
                        number(requestTimeoutSeconds),
                        "0 for off, or " + Numbers.interval(false, 0.01, MAX_REQUEST_TIMEOUT_SECONDS)));
            }
            return problems;
        }
    }

    /** Every invalid field, each with its value and what was expected; empty when the config is usable. */
    public List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        if (listensOnTcp()) {
            try {
                InetAddress.getByName(address);
            } catch (UnknownHostException e) {
                problems.add(new Problem(
                        "address",
                        quote(address) + " does not resolve",
                        "an address or host name of this machine to listen on"));
            }
            if (port < 0 || port > 65_535) {
                problems.add(new Problem("port", port, "0 to 65535"));
            }
        }
        if (unix != null) {
            problems.addAll(unixProblems("unix", unix));
        }
        problems.addAll(limits.problems());
        if (eventLoopThreads < 1 || eventLoopThreads > 1024) {
            problems.add(new Problem("eventLoopThreads", eventLoopThreads, "1 to 1024"));
        }
        if (fileIoThreads < 1 || fileIoThreads > 1024) {
            problems.add(new Problem("fileIoThreads", fileIoThreads, "1 to 1024"));
        }
        if (!List.of(FILE_IO_AUTO, FILE_IO_URING, FILE_IO_THREADS).contains(fileIo)) {
            problems.add(new Problem("fileIo", quote(fileIo), "auto, io_uring or threads"));
        }
        if (exports.isEmpty()) {
            problems.add(new Problem("exports", "none", "at least one export"));
        }
        problems.addAll(admission.problems());
        problems.addAll(admission.baselineProblems(exports));
        problems.addAll(loop.problems());
        problems.addAll(tls.problems());
        problems.addAll(fairDispatch.problems(admission));
        Set<String> names = new HashSet<>();
        for (int i = 0; i < exports.size(); i++) {
            ExportConfig export = exports.get(i);
            if (export == null) {
                problems.add(new Problem("exports[" + i + "]", "empty", "an export"));
                continue;
            }
            problems.addAll(export.problems("exports[" + i + "]"));
            if (export.name() != null && !names.add(export.name())) {
                problems.add(new Problem("exports[" + i + "].name", quote(export.name()) + " is used twice", "unique"));
            }
        }
        return problems;
    }

    /**
     * This config listening on the Unix-domain socket {@code path}, and on TCP only if {@code tcp} (with the
     * config's address and port, or their defaults).
     */
    public NbdConfig withUnix(String path, boolean tcp) {
        String tcpAddress = tcp ? address == null ? "127.0.0.1" : address : null;
        Integer tcpPort = tcp ? port == null ? DEFAULT_PORT : port : null;
        return new NbdConfig(
                tcpAddress,
                tcpPort,
                limits,
                eventLoopThreads,
                fileIoThreads,
                fileIo,
                exports,
                admission,
                loop,
                path,
                tls,
                fairDispatch);
    }

    /**
     * What is wrong with {@code path} as a Unix-domain socket to listen on, said for {@code field}: empty,
     * longer than the 107 bytes of {@code sun_path}, its folder missing, or a file that is not a socket.
     */
    public static List<Problem> unixProblems(String field, String path) {
        List<Problem> problems = new ArrayList<>();
        int bytes = path.getBytes(StandardCharsets.UTF_8).length;
        if (path.isEmpty()) {
            problems.add(new Problem(field, "empty", "the path of a socket to create"));
            return problems;
        }
        if (bytes > MAX_UNIX_PATH_BYTES) {
            problems.add(new Problem(
                    field,
                    quote(path) + " is " + bytes + " bytes long",
                    "at most " + MAX_UNIX_PATH_BYTES + ", the limit of a Unix socket address"));
        }
        Path socket = Path.of(path).toAbsolutePath();
        Path folder = socket.getParent();
        if (folder != null && !java.nio.file.Files.isDirectory(folder)) {
            problems.add(new Problem(
                    field,
                    quote(path) + ": the folder " + folder
                            + (java.nio.file.Files.exists(folder) ? " is not a folder" : " does not exist"),
                    "a path in an existing folder"));
        } else if (java.nio.file.Files.exists(socket, java.nio.file.LinkOption.NOFOLLOW_LINKS) && !isSocket(socket)) {
            problems.add(new Problem(
                    field,
                    quote(path) + " exists and is not a socket",
                    "a new path, or a socket left by an earlier server"));
        }
        return problems;
    }

    /** {@code text} in double quotes, as a string value is shown in a problem. */
    static String quote(String text) {
        return "\"" + text + "\"";
    }

    private static boolean isSocket(Path path) {
        try {
            Object type = java.nio.file.Files.getAttribute(path, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            return type instanceof Integer mode && (mode & 0170000) == 0140000;
        } catch (java.io.IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /** A number as a user would have written it: {@code -3}, not {@code -3.0}; NaN and infinities as Java does. */
    public static String number(double value) {
        return Double.isFinite(value)
                ? java.math.BigDecimal.valueOf(value).stripTrailingZeros().toPlainString()
                : String.valueOf(value);
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
     * Builds {@link NbdConfig}: named setters; a field left unset, or set to {@code null}, takes its default
     * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
     * read with).
     */
    public static final class Builder {
        private String address;
        private Integer port;
        private Limits limits;
        private Integer eventLoopThreads;
        private Integer fileIoThreads;
        private String fileIo;
        private List<ExportConfig> exports;
        private AdmissionSettings admission;
        private LoopSettings loop;
        private String unix;
        private TlsSettings tls;
        private FairDispatchSettings fairDispatch;

        private Builder() {}

        private Builder(NbdConfig from) {
            address = from.address;
            port = from.port;
            limits = from.limits;
            eventLoopThreads = from.eventLoopThreads;
            fileIoThreads = from.fileIoThreads;
            fileIo = from.fileIo;
            exports = from.exports;
            admission = from.admission;
            loop = from.loop;
            unix = from.unix;
            tls = from.tls;
            fairDispatch = from.fairDispatch;
        }

        /** {@link NbdConfig#address}. */
        public Builder address(String value) {
            address = value;
            return this;
        }

        /** {@link NbdConfig#port}. */
        public Builder port(Integer value) {
            port = value;
            return this;
        }

        /** {@link NbdConfig#limits}. */
        public Builder limits(Limits value) {
            limits = value;
            return this;
        }

        /** {@link NbdConfig#eventLoopThreads}. */
        public Builder eventLoopThreads(Integer value) {
            eventLoopThreads = value;
            return this;
        }

        /** {@link NbdConfig#fileIoThreads}. */
        public Builder fileIoThreads(Integer value) {
            fileIoThreads = value;
            return this;
        }

        /** {@link NbdConfig#fileIo}. */
        public Builder fileIo(String value) {
            fileIo = value;
            return this;
        }

        /** {@link NbdConfig#exports}. */
        public Builder exports(List<ExportConfig> value) {
            exports = value;
            return this;
        }

        /** {@link NbdConfig#exports}, the first the default export. */
        public Builder exports(ExportConfig... value) {
            exports = List.of(value);
            return this;
        }

        /** {@link NbdConfig#admission}. */
        public Builder admission(AdmissionSettings value) {
            admission = value;
            return this;
        }

        /** {@link NbdConfig#loop}. */
        public Builder loop(LoopSettings value) {
            loop = value;
            return this;
        }

        /** {@link NbdConfig#unix}. */
        public Builder unix(String value) {
            unix = value;
            return this;
        }

        /** {@link NbdConfig#tls}. */
        public Builder tls(TlsSettings value) {
            tls = value;
            return this;
        }

        /** {@link NbdConfig#fairDispatch}. */
        public Builder fairDispatch(FairDispatchSettings value) {
            fairDispatch = value;
            return this;
        }

        /**
         * The config, each field left unset at its default. Its values are checked where a config file's are,
         * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
         * listed at once, each as {@code field: value (expected: ...)}.
         */
        public NbdConfig build() {
            return new NbdConfig(
                    address,
                    port,
                    limits,
                    eventLoopThreads,
                    fileIoThreads,
                    fileIo,
                    exports,
                    admission,
                    loop,
                    unix,
                    tls,
                    fairDispatch);
        }
    }
}
