package dev.tailor.nbd.config;

import dev.tailor.common.Problem;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The options of {@code tailor nbd serve} as given on the command line (numbers and switches as
 * written, so a message can quote them), and what they build: the server's {@link NbdConfig} from a
 * config file or from the options alone, with the options over the file's settings. Every problem
 * is an {@link IllegalArgumentException} naming the option ({@code --admission-iops: x (expected:
 * ...)}).
 */
public record ServeOptions(
        Path config,
        Path file,
        boolean readOnly,
        String exportName,
        String size,
        String listen,
        Path unix,
        String admission,
        String admissionIops,
        String admissionMbps,
        String admissionVariant,
        String baselineIops,
        String baselineMbps,
        String loop,
        String metricsListen,
        String idleTimeout,
        String tls,
        Path tlsCertificates,
        boolean tlsVerifyPeer,
        Integer maxConnectionsPerAddress,
        String slowThreshold,
        String slowWindow,
        String fileIo,
        String fairDispatch,
        String fairDispatchDepth,
        String fairDispatchFinishTag) {

    /** Size of the default export. */
    public static final long DEFAULT_EXPORT_BYTES = 1L << 30;

    /**
     * The server's settings and, when no file was given, the temporary folder of its scratch disk (to
     * remove when the server stops), or {@code null}; with what to warn about at start, in words (no
     * prefix), one a line.
     */
    public record Setup(NbdConfig settings, Path temporary, List<String> warnings) {}

    /**
     * Builds the settings; a temporary folder made for the scratch disk is removed again when the
     * options turn out bad.
     *
     * @throws IllegalArgumentException naming the option, the value and what was expected
     * @throws IOException when the temporary folder cannot be created
     */
    public Setup build() throws IOException {
        NbdConfig settings;
        Path temporary = null;
        // The config's fairDispatch.depth or finishTag while its door is off: refused unless the options turn the
        // door on.
        String whileOff = null;
        boolean configBudget = false;
        try {
            InetSocketAddress address = listen == null ? null : parseListen(listen);
            if (unix != null) {
                List<Problem> problems = NbdConfig.unixProblems("--unix", unix.toString());
                if (!problems.isEmpty()) {
                    throw new IllegalArgumentException(Problem.join(problems));
                }
            }
            if (config != null) {
                for (String[] option : new String[][] {
                    {"--file", file == null ? null : ""},
                    {"--read-only", readOnly ? "" : null},
                    {"--export-name", exportName},
                    {"--size", size},
                    {"--baseline-iops", baselineIops},
                    {"--baseline-mbps", baselineMbps}
                }) {
                    if (option[1] != null) {
                        throw new IllegalArgumentException(option[0] + ": not with --config (expected: one or the"
                                + " other; the config file names its exports)");
                    }
                }
                if (Files.isDirectory(config) || !Files.exists(config)) {
                    throw new IllegalArgumentException("--config: " + config
                            + (Files.isDirectory(config) ? " is a folder" : " does not exist")
                            + " (expected: a YAML or JSON file of exports, e.g. examples/nbd.yaml)");
                }
                NbdConfigFiles.ForOptions read = NbdConfigFiles.readForOptions(config);
                settings = read.config();
                whileOff = read.whileOff();
                configBudget = read.budgetGiven();
            } else {
                String name = exportName == null ? "disk" : exportName;
                List<Problem> nameProblems = ExportConfig.file(
                                name, "default", NbdConfig.SECTOR_BYTES, false, Path.of("disk.img"))
                        .problems("--export-name");
                if (!nameProblems.isEmpty()) {
                    throw new IllegalArgumentException(Problem.join(nameProblems.stream()
                            .map(p -> new Problem(
                                    p.path().replace("--export-name.name", "--export-name"), p.value(), p.expected()))
                            .toList()));
                }
                Long sizeBytes = size == null ? null : parseSize(size);
                if (file != null) {
                    settings = NbdConfig.builder()
                            .exports(fileExport(name, sizeBytes))
                            .build();
                } else {
                    if (readOnly) {
                        throw new IllegalArgumentException("--read-only: needs --file (the scratch disk is empty;"
                                + " expected: --file PATH --read-only)");
                    }
                    temporary = Files.createTempDirectory("tailor-nbd-");
                    settings = NbdConfig.builder()
                            .exports(ExportConfig.file(
                                    name,
                                    "default",
                                    sizeBytes == null ? DEFAULT_EXPORT_BYTES : sizeBytes,
                                    false,
                                    temporary.resolve("disk.img")))
                            .build();
                }
            }
            if (unix != null) {
                settings = settings.withUnix(unix.toString(), address != null);
            }
            if (address != null) {
                try {
                    InetAddress.getByName(address.getHostString());
                } catch (java.net.UnknownHostException e) {
                    throw new IllegalArgumentException("--listen: \"" + listen + "\": the host does not resolve"
                            + " (expected: an address of this machine, e.g. 127.0.0.1:10809 or 0.0.0.0:10809)");
                }
                settings = settings.toBuilder()
                        .address(address.getHostString())
                        .port(address.getPort())
                        .build();
            }
            if (metricsListen != null) {
                try {
                    settings = settings.toBuilder()
                            .loop(settings.loop().toBuilder()
                                    .metricsListen(metricsListen)
                                    .build())
                            .build();
                    settings.loop().metricsAddress();
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(
                            e.getMessage().replace("loop.metricsListen", "--metrics-listen"));
                }
            }
            if (slowThreshold != null) {
                settings = settings.toBuilder()
                        .loop(settings.loop().toBuilder()
                                .slowRequestThresholdMillis(parseSlowThreshold(slowThreshold))
                                .build())
                        .build();
            }
            if (slowWindow != null) {
                settings = settings.toBuilder()
                        .loop(settings.loop().toBuilder()
                                .slowTopWindowSeconds(parseSlowWindow(slowWindow))
                                .build())
                        .build();
            }
            if (idleTimeout != null) {
                settings = settings.toBuilder()
                        .limits(settings.limits().toBuilder()
                                .idleTimeoutSeconds(parseIdleTimeout(idleTimeout))
                                .build())
                        .build();
            }
            if (maxConnectionsPerAddress != null) {
                int most = settings.limits().maxConnections();
                if (maxConnectionsPerAddress < 1 || maxConnectionsPerAddress > most) {
                    throw new IllegalArgumentException("--max-connections-per-address: " + maxConnectionsPerAddress
                            + " (expected: " + NbdConfig.whole(1, most) + ", at most limits.maxConnections)");
                }
                settings = settings.toBuilder()
                        .limits(settings.limits().toBuilder()
                                .maxConnectionsPerAddress(maxConnectionsPerAddress)
                                .build())
                        .build();
            }
            if (fileIo != null) {
                if (!List.of(NbdConfig.FILE_IO_AUTO, NbdConfig.FILE_IO_URING, NbdConfig.FILE_IO_THREADS)
                        .contains(fileIo)) {
                    throw new IllegalArgumentException(
                            "--file-io: \"" + fileIo + "\" (expected: auto, io_uring or threads)");
                }
                settings = settings.toBuilder().fileIo(fileIo).build();
            }
            if (admission != null || loop != null) {
                boolean on = admission == null
                        ? settings.admission().enabled()
                        : switch (admission) {
                            case "on" -> true;
                            case "off" -> false;
                            default ->
                                throw new IllegalArgumentException(
                                        "--admission: \"" + admission + "\" (expected: on or off)");
                        };
                String mode = loop == null ? settings.loop().mode() : loop;
                if (!mode.equals("priority") && !mode.equals("fifo")) {
                    throw new IllegalArgumentException("--loop: \"" + loop + "\" (expected: priority or fifo)");
                }
                settings = settings.toBuilder()
                        .admission(settings.admission().toBuilder().enabled(on).build())
                        .loop(settings.loop().toBuilder().mode(mode).build())
                        .build();
            }
            if (admissionIops != null || admissionMbps != null) {
                settings = settings.toBuilder()
                        .admission(admissionBudget(settings.admission()))
                        .build();
            }
            if (admissionVariant != null) {
                if (!admissionVariant.equals(AdmissionSettings.VARIANT_TAILOR)
                        && !admissionVariant.equals(AdmissionSettings.VARIANT_PAPER)) {
                    throw new IllegalArgumentException("--admission-variant: \"" + admissionVariant
                            + "\" (expected: tailor, what Tailor ships, or paper, the paper's mechanism)");
                }
                if (!settings.admission().enabled()) {
                    throw new IllegalArgumentException("--admission-variant: admission is off (expected: --admission"
                            + " on, or admission.enabled in the config, for a variant to mean something)");
                }
                settings = settings.toBuilder()
                        .admission(settings.admission().toBuilder()
                                .variant(admissionVariant)
                                .build())
                        .build();
            }
            if (fairDispatch != null || fairDispatchDepth != null || fairDispatchFinishTag != null) {
                settings = settings.toBuilder()
                        .fairDispatch(fairDispatchSettings(settings.fairDispatch(), settings.admission()))
                        .build();
            }
            if ((settings.fairDispatch().depth() != null
                            || settings.fairDispatch().finishTagAsked())
                    && !settings.fairDispatch().on(settings.admission())) {
                if (whileOff != null) {
                    // The config's door was off and no option turned it on: refused as the config alone is.
                    throw new IllegalArgumentException(whileOff);
                }
                // The options turned the config's door off (--fair-dispatch off, --admission off or the paper's
                // variant; --fair-dispatch-depth and --fair-dispatch-finish-tag on are refused then): its depth
                // and order go with it.
                settings = settings.toBuilder()
                        .fairDispatch(
                                new FairDispatchSettings(settings.fairDispatch().enabled(), null, null))
                        .build();
            }
            if (baselineIops != null || baselineMbps != null) {
                if (!settings.admission().enabled() && !settings.fairDispatch().on(settings.admission())) {
                    throw new IllegalArgumentException((baselineIops != null ? "--baseline-iops" : "--baseline-mbps")
                            + ": admission and the fair dispatch door are off (expected: --admission on or"
                            + " --fair-dispatch on, where a baseline means something)");
                }
                settings = settings.toBuilder()
                        .exports(exportBaseline(settings.exports().get(0)))
                        .build();
                List<Problem> problems = settings.admission().baselineProblems(settings.exports());
                if (!problems.isEmpty()) {
                    throw new IllegalArgumentException(problems.get(0)
                            .message()
                            .replace(
                                    "exports[0].baseline",
                                    baselineIops != null ? "--baseline-iops" : "--baseline-mbps"));
                }
            }
            if (tls != null || tlsCertificates != null || tlsVerifyPeer) {
                settings = settings.toBuilder().tls(tlsSettings(settings.tls())).build();
            }
        } catch (IllegalArgumentException e) {
            delete(temporary);
            throw e;
        }
        List<String> warnings = new java.util.ArrayList<>();
        if (settings.admission().enabled() && !configBudget && admissionIops == null && admissionMbps == null) {
            warnings.add(defaultBudgetWarning());
        }
        String unused = unusedBaselinesWarning(settings);
        if (unused != null) {
            warnings.add(unused);
        }
        String diskOrder = ignoredDiskOrderWarning(settings);
        if (diskOrder != null) {
            warnings.add(diskOrder);
        }
        String queue = shortQueueWarning(settings);
        if (queue != null) {
            warnings.add(queue);
        }
        for (int i = 0; i < settings.exports().size(); i++) {
            String image = imageFormatWarning(
                    config == null ? "--file" : "exports[" + i + "].file",
                    settings.exports().get(i).file(),
                    settings.exports().get(i).readOnly());
            if (image != null) {
                warnings.add(image);
            }
        }
        return new Setup(settings, temporary, List.copyOf(warnings));
    }

    /** A VHD's footer (the last 512 bytes; a dynamic VHD also copies it in its first 512) starts so. */
    private static final byte[] VHD_COOKIE = "conectix".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** Image formats told by their first bytes: a file export is served as its raw bytes whatever it holds. */
    private static final List<java.util.Map.Entry<String, byte[]>> IMAGE_MAGICS = List.of(
            java.util.Map.entry("qcow2", new byte[] {'Q', 'F', 'I', (byte) 0xfb}),
            java.util.Map.entry("VMDK", new byte[] {'K', 'D', 'M', 'V'}),
            java.util.Map.entry("VHDX", "vhdxfile".getBytes(java.nio.charset.StandardCharsets.US_ASCII)),
            java.util.Map.entry("VHD", VHD_COOKIE),
            java.util.Map.entry("QED", new byte[] {'Q', 'E', 'D', 0}));

    /**
     * The warning for a file export that is a qcow2, VMDK, VHDX, VHD (qemu's vpc) or QED image (served as its
     * raw bytes, as nbdkit's file plugin and qemu-nbd -f raw serve it), or {@code null} (not such an image, or
     * not readable yet: a file created at start). A read-only export refuses writes, so only what clients read
     * is wrong; a writable one also lets them write over the image's metadata.
     */
    static String imageFormatWarning(String field, Path file, boolean readOnly) {
        if (file == null || !Files.isRegularFile(file)) {
            return null;
        }
        String format = imageFormat(file);
        if (format == null) {
            return null;
        }
        return field + ": " + file + " is a " + format + " image, served " + (readOnly ? "read-only " : "")
                + "as its raw bytes: clients see the " + format + " format, not the disk in it"
                + (readOnly ? "" : ", and their writes damage it")
                + " (expected: a raw image; qemu-img convert -O raw " + file + " disk.raw makes one)";
    }

    /** The image format {@code file} starts (or, for a VHD, ends) as, or {@code null}. */
    private static String imageFormat(Path file) {
        byte[] head = new byte[8];
        byte[] tail = new byte[8];
        int read;
        int tailRead = 0;
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file)) {
            read = readAt(channel, head, 0);
            long size = channel.size();
            if (size >= 512) {
                tailRead = readAt(channel, tail, size - 512);
            }
        } catch (IOException e) {
            return null;
        }
        for (var magic : IMAGE_MAGICS) {
            byte[] m = magic.getValue();
            if (startsWith(head, read, m)) {
                return magic.getKey();
            }
        }
        return startsWith(tail, tailRead, VHD_COOKIE) ? "VHD" : null;
    }

    private static int readAt(java.nio.channels.FileChannel channel, byte[] into, long position) throws IOException {
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(into);
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position + buffer.position());
            if (n < 0) {
                break;
            }
        }
        return buffer.position();
    }

    private static boolean startsWith(byte[] bytes, int length, byte[] magic) {
        return length >= magic.length && java.util.Arrays.equals(bytes, 0, magic.length, magic, 0, magic.length);
    }

    /**
     * The warning for {@code admission.diskOrderAcrossGuarantee: true} where it does nothing (it orders the
     * baseline guarantee's admissions, which is off: {@code variant: paper} or {@code baselineGuarantee:
     * false}), or {@code null}.
     */
    static String ignoredDiskOrderWarning(NbdConfig settings) {
        AdmissionSettings admission = settings.admission();
        if (!admission.enabled() || !Boolean.TRUE.equals(admission.diskOrderAcrossGuarantee())) {
            return null;
        }
        if (admission.toAdmissionConfig().baselineGuarantee()) {
            return null;
        }
        return "admission.diskOrderAcrossGuarantee: true has no effect: it orders the baseline guarantee's"
                + " admissions, and the guarantee is off here ("
                + (admission.baselineGuarantee() == null
                        ? "admission.variant: " + admission.variant()
                        : "admission.baselineGuarantee: false")
                + "); set admission.baselineGuarantee: true for it to apply";
    }

    /**
     * The warning for a config's baselines that nothing reads (admission and the fair dispatch door both
     * off; the options' {@code --baseline-iops} is refused then), or {@code null}.
     */
    static String unusedBaselinesWarning(NbdConfig settings) {
        if (settings.admission().enabled() || settings.fairDispatch().on(settings.admission())) {
            return null;
        }
        List<String> given = new java.util.ArrayList<>();
        for (int i = 0; i < settings.exports().size(); i++) {
            if (settings.exports().get(i).baseline() != null) {
                given.add("exports[" + i + "].baseline");
            }
        }
        if (given.isEmpty()) {
            return null;
        }
        return String.join(", ", given) + ": admission and the fair dispatch door are off, so "
                + (given.size() == 1 ? "it weighs" : "they weigh") + " nothing; turn one on (--admission on or"
                + " --fair-dispatch on, or admission.enabled or fairDispatch.enabled in the config) for a baseline"
                + " to mean something";
    }

    /**
     * The warning for admission on with segment queues shorter than what the clients may have outstanding
     * ({@link Limits#maxRequestsInFlight()}), or {@code null}: a client within the server's limits can then be
     * answered EIO, for a smaller {@code admission.queueCapacityPerSegment} in the config (or, without one, for
     * limits beyond admission's largest queue).
     */
    static String shortQueueWarning(NbdConfig settings) {
        AdmissionSettings admission = settings.admission();
        Limits limits = settings.limits();
        long outstanding = limits.maxRequestsInFlight();
        int queue = admission.queueCapacityPerSegment(limits);
        if (!admission.enabled() || queue >= outstanding) {
            return null;
        }
        boolean given = admission.queueCapacityPerSegment() != null;
        return "admission.queueCapacityPerSegment: " + AdmissionSettings.grouped(queue)
                + (given ? "" : " (the default: admission's largest queue)")
                + " is fewer than the " + AdmissionSettings.grouped(outstanding)
                + " requests clients may have outstanding (limits.maxInFlightRequestsPerConnection "
                + limits.maxInFlightRequestsPerConnection() + " × limits.maxConnections " + limits.maxConnections()
                + "): once " + AdmissionSettings.grouped(queue) + " requests wait for one segment, a client"
                + " within those limits has the next answered EIO, which a VM reports as a file system error; "
                + (given ? "leave it out to queue them all, or lower" : "lower")
                + " limits.maxInFlightRequestsPerConnection or limits.maxConnections (docs/nbd.md, Admission)";
    }

    /**
     * The warning for admission on without a budget: the default holds every backend to about 8,518 4 KiB
     * reads/s, however fast it is.
     */
    static String defaultBudgetWarning() {
        return "admission is on without a budget: the default budget admits about "
                + String.format(java.util.Locale.ROOT, "%,d", AdmissionSettings.defaultBudgetReadsPerSecond())
                + " 4 KiB reads/s for the whole"
                + " server, and a faster backend is held to it; set the backends' capacity with --admission-iops N"
                + " (and --admission-mbps), or admission.iops in the config (docs/nbd.md, Admission)";
    }

    /**
     * The config's admission settings with the budget of {@code --admission-iops} and {@code --admission-mbps}
     * over them (a budget in cost units is replaced); problems name the options.
     */
    private AdmissionSettings admissionBudget(AdmissionSettings configured) {
        Double iops = admissionIops == null
                ? configured.iops()
                : parseNumber("--admission-iops", admissionIops, AdmissionSettings.IOPS_EXPECTED);
        Double mbps = admissionMbps == null
                ? configured.megabytesPerSecond()
                : parseNumber("--admission-mbps", admissionMbps, AdmissionSettings.MEGABYTES_PER_SECOND_EXPECTED);
        String option = admissionIops != null ? "--admission-iops" : "--admission-mbps";
        if (!configured.enabled()) {
            throw new IllegalArgumentException(option + ": admission is off (expected: --admission on, or"
                    + " admission.enabled in the config, with a budget)");
        }
        // A budget in operators' units replaces one in cost units.
        AdmissionSettings settings = configured.toBuilder()
                .capacityCostUnitsPerSecond(null)
                .iops(iops)
                .megabytesPerSecond(mbps)
                .build();
        try {
            settings.toAdmissionConfig();
        } catch (IllegalArgumentException e) {
            String message = e.getMessage().replaceFirst(" : ", ": ");
            if (admissionIops != null) {
                message = message.replace("iops:", "--admission-iops:");
            }
            if (admissionMbps != null) {
                message = message.replace("megabytesPerSecond", "--admission-mbps");
            }
            throw new IllegalArgumentException(message);
        }
        return settings;
    }

    /**
     * The config's fair dispatch settings with {@code --fair-dispatch}, {@code --fair-dispatch-depth} and
     * {@code --fair-dispatch-finish-tag} over them; problems name the options.
     */
    private FairDispatchSettings fairDispatchSettings(FairDispatchSettings configured, AdmissionSettings admission) {
        // Not one conditional expression: its boolean arms would unbox a config that leaves it unset (null).
        Boolean enabled = configured.enabled();
        if (fairDispatch != null) {
            enabled = switch (fairDispatch) {
                case "on" -> Boolean.TRUE;
                case "off" -> Boolean.FALSE;
                default ->
                    throw new IllegalArgumentException(
                            "--fair-dispatch: \"" + fairDispatch + "\" (expected: on or off)");
            };
        }
        Integer depth = configured.depth();
        if (fairDispatchDepth != null) {
            int parsed;
            try {
                parsed = Integer.parseInt(fairDispatchDepth.strip());
            } catch (NumberFormatException e) {
                parsed = -1;
            }
            if (parsed < 1 || parsed > FairDispatchSettings.MAX_DEPTH) {
                throw new IllegalArgumentException("--fair-dispatch-depth: " + shown(fairDispatchDepth) + " (expected: "
                        + FairDispatchSettings.DEPTH_EXPECTED + ", e.g. 8)");
            }
            if (!new FairDispatchSettings(enabled, null).on(admission)) {
                throw new IllegalArgumentException(
                        "--fair-dispatch-depth: the door is off (expected: --fair-dispatch"
                                + " on, or --admission on in Tailor's variant, whose door it is; the paper's variant has none)");
            }
            depth = parsed;
        }
        Boolean finishTag = configured.finishTag();
        if (fairDispatchFinishTag != null) {
            finishTag = switch (fairDispatchFinishTag) {
                case "on" -> Boolean.TRUE;
                case "off" -> Boolean.FALSE;
                default ->
                    throw new IllegalArgumentException("--fair-dispatch-finish-tag: \"" + fairDispatchFinishTag
                            + "\" (expected: on, the door by finish tag, or off, by start tag)");
            };
            if (finishTag && !new FairDispatchSettings(enabled, null).on(admission)) {
                throw new IllegalArgumentException(
                        "--fair-dispatch-finish-tag: on, but the door is off (expected: --fair-dispatch"
                                + " on, or --admission on in Tailor's variant, whose door it is; the paper's variant has none)");
            }
        }
        return new FairDispatchSettings(enabled, depth, finishTag);
    }

    /** The export with the baseline of {@code --baseline-iops} and {@code --baseline-mbps}; problems name them. */
    private ExportConfig exportBaseline(ExportConfig export) {
        Double iops = baselineIops == null
                ? null
                : parseNumber("--baseline-iops", baselineIops, ExportConfig.Baseline.IOPS_EXPECTED);
        Double mbps = baselineMbps == null
                ? null
                : parseNumber("--baseline-mbps", baselineMbps, ExportConfig.Baseline.MEGABYTES_PER_SECOND_EXPECTED);
        ExportConfig.Baseline baseline = new ExportConfig.Baseline(iops, mbps);
        List<Problem> problems = baseline.problems("baseline");
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(problems.get(0)
                    .message()
                    .replace("baseline.iops", "--baseline-iops")
                    .replace("baseline.megabytesPerSecond", "--baseline-mbps")
                    .replace("megabytesPerSecond", "--baseline-mbps"));
        }
        return export.toBuilder().baseline(baseline).build();
    }

    /** A finite number, or a message naming {@code option}, the text and {@code expected}. */
    private static Double parseNumber(String option, String text, String expected) {
        double value;
        try {
            value = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            value = Double.NaN;
        }
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException(option + ": " + shown(text) + " (expected: " + expected + ")");
        }
        return value;
    }

    /**
     * The config's TLS settings with {@code --tls}, {@code --tls-certificates} and {@code --tls-verify-peer}
     * over them; problems name the options given on the command line.
     */
    private TlsSettings tlsSettings(TlsSettings configured) {
        if (tls != null && !List.of("off", "on", "require").contains(tls)) {
            throw new IllegalArgumentException("--tls: \"" + tls + "\" (expected: off, on or require)");
        }
        TlsSettings settings = new TlsSettings(
                tls == null ? configured.mode() : tls,
                tlsCertificates == null ? configured.certificates() : tlsCertificates.toAbsolutePath(),
                tlsVerifyPeer || configured.verifyPeer());
        List<Problem> problems = settings.problems();
        if (problems.isEmpty()) {
            return settings;
        }
        throw new IllegalArgumentException(namingOptions(Problem.join(problems)));
    }

    /**
     * {@code message}, a problem with the settings these options built, with the fields the options set named as
     * the options ({@code --tls-certificates: ...} for {@code tls.certificates: ...}, {@code --metrics-listen} for
     * {@code loop.metricsListen}): for the settings' own checks and what the server finds when it loads the
     * credentials at start.
     */
    public String namingOptions(String message) {
        if (tls != null || config == null) {
            message = message.replace("tls.mode", "--tls");
        }
        if (tlsCertificates != null) {
            message = message.replace("tls.certificates:", "--tls-certificates:");
        } else {
            message = message.replace("tls.certificates: missing", "--tls-certificates: missing");
        }
        if (tlsVerifyPeer) {
            message = message.replace("tls.verifyPeer: true", "--tls-verify-peer");
        }
        if (metricsListen != null) {
            message = message.replace("loop.metricsListen", "--metrics-listen");
        }
        if (maxConnectionsPerAddress != null) {
            message = message.replace("limits.maxConnectionsPerAddress", "--max-connections-per-address");
        }
        if (idleTimeout != null) {
            message = message.replace("limits.idleTimeoutSeconds", "--idle-timeout");
        }
        return message;
    }

    /**
     * {@code message}, the server's failure to listen at start, with what set the address in front: the
     * option ({@code --listen: cannot listen on 127.0.0.1:10809 (Address already in use)}), also for the
     * default address, since the option is how to pick another; with a config file that set it, its fields.
     * Other messages come back unchanged.
     */
    public String namingListenFailure(String message) {
        String setBy;
        if (message.startsWith("cannot listen on unix socket ")) {
            setBy = unix != null || config == null ? "--unix" : "unix (or --unix)";
        } else if (message.startsWith("cannot listen on ")) {
            setBy = listen != null || config == null ? "--listen" : "address and port (or --listen)";
        } else if (message.startsWith("cannot serve metrics on ")) {
            setBy = metricsListen != null || config == null
                    ? "--metrics-listen"
                    : "loop.metricsListen (or --metrics-listen)";
        } else {
            return message;
        }
        return setBy + ": " + message;
    }

    /** The export of {@code --file}: an existing regular file, all of it or its first {@code sizeBytes}. */
    private ExportConfig fileExport(String name, Long sizeBytes) {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(
                    "--file: " + file + " is a folder (expected: an existing file, e.g. a" + " raw disk image)");
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("--file: " + file + " does not exist (expected: an existing file, e.g."
                    + " a raw disk image; to create one: truncate -s 1G " + file + ")");
        }
        if (!Files.isRegularFile(file)) {
            // A block device's length is not its file size, and its holes are not the file system's.
            throw new IllegalArgumentException("--file: " + file + " is not a regular file (a block or character"
                    + " device?); block devices are not served yet (expected: a regular file, e.g. a raw disk image)");
        }
        long fileBytes;
        try {
            fileBytes = Files.size(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("--file: " + file + " cannot be read (" + e.getMessage() + ")");
        }
        if (sizeBytes != null && sizeBytes > fileBytes) {
            throw new IllegalArgumentException("--size: " + size + " is more than the " + fileBytes + " bytes of "
                    + file + " (expected: at most the file's length)");
        }
        if (sizeBytes == null && fileBytes == 0) {
            throw new IllegalArgumentException("--file: " + file + " is empty (expected: a file of at least 1 byte)");
        }
        return ExportConfig.builder()
                .name(name)
                .tenant("default")
                .size(sizeBytes == null ? null : new ByteSize(sizeBytes))
                .readOnly(readOnly)
                .file(file.toAbsolutePath())
                .build();
    }

    /** {@code --size}: a positive multiple of 512 bytes. */
    public static long parseSize(String text) {
        long bytes;
        try {
            bytes = ByteSize.parse(text).bytes();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--size: " + e.getMessage());
        }
        if (bytes <= 0 || bytes % NbdConfig.SECTOR_BYTES != 0) {
            throw new IllegalArgumentException("--size: \"" + text + "\" (expected: a positive multiple of "
                    + NbdConfig.SECTOR_BYTES + " bytes, e.g. 20GiB)");
        }
        return bytes;
    }

    /** {@code off}, {@code 0} or seconds, as {@code --idle-timeout} takes them: seconds, 0 for off. */
    public static double parseIdleTimeout(String text) {
        if (text.equals("off")) {
            return 0;
        }
        double seconds;
        try {
            seconds = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            seconds = Double.NaN;
        }
        if (!(seconds == 0 || seconds >= 0.01 && seconds <= Limits.MAX_IDLE_TIMEOUT_SECONDS)) {
            throw new IllegalArgumentException("--idle-timeout: " + shown(text) + " (expected: off, 0, or seconds, "
                    + dev.tailor.common.Numbers.interval(false, 0.01, Limits.MAX_IDLE_TIMEOUT_SECONDS) + ")");
        }
        return seconds;
    }

    /** {@code --slow-threshold}: milliseconds, as {@code loop.slowRequestThresholdMillis} takes them. */
    public static double parseSlowThreshold(String text) {
        double millis;
        try {
            millis = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            millis = Double.NaN;
        }
        if (!LoopSettings.validSlowThreshold(millis)) {
            throw new IllegalArgumentException(
                    "--slow-threshold: " + shown(text) + " (expected: " + LoopSettings.SLOW_THRESHOLD_EXPECTED + ")");
        }
        return millis;
    }

    /** {@code --slow-window}: whole seconds, 2 to 86400, as {@code loop.slowTopWindowSeconds} takes them. */
    public static int parseSlowWindow(String text) {
        int seconds;
        try {
            seconds = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            seconds = -1;
        }
        if (seconds < 2 || seconds > 86_400) {
            throw new IllegalArgumentException("--slow-window: " + shown(text) + " (expected: seconds, "
                    + NbdConfig.whole(2, 86_400) + ", e.g. 60)");
        }
        return seconds;
    }

    /**
     * A number option's value as written, bare as the other options' numbers are echoed ({@code --threads: x}),
     * in double quotes only when it is empty or holds a space, which would not show otherwise.
     */
    private static String shown(String text) {
        return text.isBlank() || text.matches(".*\\s.*") ? NbdConfig.quote(text) : text;
    }

    /**
     * {@code HOST:PORT}, {@code [IPv6]:PORT}, or {@code :PORT} for the default address, 127.0.0.1 ({@code :0}: any
     * free port of it).
     */
    public static InetSocketAddress parseListen(String text) {
        int colon = text.lastIndexOf(':');
        if (colon < 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException(
                    "--listen: \"" + text + "\" (expected: HOST:PORT, e.g. 127.0.0.1:10809)");
        }
        String host = colon == 0 ? LoopSettings.DEFAULT_HOST : text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("--listen: port \"" + text.substring(colon + 1) + "\" (expected: "
                    + NbdConfig.whole(0, 65_535) + ")");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    public static void delete(Path directory) {
        if (directory == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            System.err.println("tailor: could not remove " + directory + " (" + e.getMessage() + ")");
        }
    }
}
