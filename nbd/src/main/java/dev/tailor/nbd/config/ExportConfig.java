package dev.tailor.nbd.config;

import static dev.tailor.nbd.config.NbdConfig.DEFAULT_PORT;
import static dev.tailor.nbd.config.NbdConfig.SECTOR_BYTES;
import static dev.tailor.nbd.config.NbdConfig.quote;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.nbd.protocol.NbdProtocol;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

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
 *                    {@code device:MAJOR:MINOR}; for an upstream, its address, {@code upstream:HOST:PORT}, or
 *                    {@code upstream:unix:/PATH} for one on a Unix socket)
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

    /** Allowed export names: printable, no spaces or quotes, so they fit in a URI path and a log line. */
    private static final Pattern EXPORT_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:@+/-]*");

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
        Path resolvedFile = file == null || file.isAbsolute() ? file : directory.resolve(file);
        Upstream resolvedUpstream = upstream == null ? null : upstream.resolvedAgainst(directory);
        if (resolvedFile == file && resolvedUpstream == upstream) {
            return this;
        }
        return new ExportConfig(
                name, tenant, description, size, readOnly, resolvedFile, resolvedUpstream, baseline, backend);
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
                problems.add(new Problem(at, file + " cannot be read (" + IoErrors.reason(e) + ")", "a readable file"));
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

    /**
     * {@code file} as messages and the banner show it: absolute, without {@code .} and {@code ..} where that names
     * the same file (a folder before {@code ..} may be a link elsewhere), else its real path; as absolute as it can
     * be when it cannot be looked at.
     */
    public static Path shownPath(Path file) {
        Path absolute = file.toAbsolutePath();
        Path normal = absolute.normalize();
        if (normal.equals(absolute)) {
            return absolute;
        }
        try {
            return java.nio.file.Files.isSameFile(normal, absolute) ? normal : absolute.toRealPath();
        } catch (java.io.IOException | SecurityException e) {
            return java.nio.file.Files.exists(absolute) ? absolute : normal;
        }
    }

    /**
     * What tells two export files apart: the real path of {@code file} when it exists (links and {@code ..}
     * followed), else its absolute path without {@code .} and {@code ..}.
     */
    static Path sameFileKey(Path file) {
        Path absolute = file.toAbsolutePath();
        try {
            return absolute.toRealPath();
        } catch (java.io.IOException | SecurityException e) {
            return absolute.normalize();
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

    /**
     * An export's provisioned baseline, as a cloud disk's baseline IOPS and throughput: what its tenant
     * was promised, in the units of admission's budget. Segment admission takes it as the disk's
     * commitment (docs/admission.md): the classifier's baseline and, in the default variant, the
     * baseline guarantee's rate (a request within it is admitted at once, behind only its own export's
     * waiting requests). Priced as
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
                problems.add(new Problem(where + ".iops", Numbers.written(iops), IOPS_EXPECTED));
            }
            if (megabytesPerSecond != null && !(megabytesPerSecond > 0 && megabytesPerSecond <= 1e7)) {
                problems.add(new Problem(
                        where + ".megabytesPerSecond",
                        Numbers.written(megabytesPerSecond),
                        MEGABYTES_PER_SECOND_EXPECTED));
            }
            if (problems.isEmpty()
                    && iops != null
                    && megabytesPerSecond != null
                    && iops * AdmissionSettings.IOPS_IO_BYTES > megabytesPerSecond * 1e6) {
                problems.add(new Problem(
                        where + ".iops",
                        Numbers.written(iops) + " 4 KiB I/Os per second move "
                                + Numbers.written(Math.round(iops * AdmissionSettings.IOPS_IO_BYTES / 1e4) / 100.0)
                                + " MB/s, more than megabytesPerSecond " + Numbers.written(megabytesPerSecond),
                        "at most "
                                + Numbers.written(
                                        Math.floor(megabytesPerSecond * 1e6 / AdmissionSettings.IOPS_IO_BYTES))
                                + " IOPS with that bandwidth"));
            }
            return problems;
        }

        /** As the banner and admission's budget say it: {@code 1,500 IOPS and 20 MB/s}. */
        public String describe() {
            return (iops == null ? "" : AdmissionSettings.grouped(iops) + " IOPS")
                    + (iops != null && megabytesPerSecond != null ? " and " : "")
                    + (megabytesPerSecond == null ? "" : AdmissionSettings.grouped(megabytesPerSecond) + " MB/s");
        }
    }

    /**
     * An upstream NBD server (proxy mode). The connection pool opens {@code connections} connections
     * when the upstream advertises {@code NBD_FLAG_CAN_MULTI_CONN}, else one (proto.md: without it,
     * clients should not spread their requests over several connections).
     *
     * <p>Reached over TCP ({@code host}, {@code port}) or a Unix-domain socket ({@code unix}), exactly one of the
     * two: qemu-nbd {@code -k} and nbdkit {@code -U} serve on one.
     *
     * @param host        host name or address (not with {@code unix})
     * @param port        TCP port (default 10809 with {@code host}; not with {@code unix})
     * @param unix        the path of the upstream's Unix-domain socket, instead of {@code host} and {@code port};
     *                    relative paths are relative to the config file. Whether a server listens on it is a
     *                    matter of the moment, as whether a host answers: found out when connecting
     * @param export      the upstream's export name (default: the empty name, its default export)
     * @param connections pool size, in [1, 64] (default 4)
     * @param idleTimeoutSeconds a pool connection without a request for this long disconnects (default 5),
     *                    so that an upstream stopped while the proxy is idle is not kept waiting for it
     * @param requestTimeoutSeconds a request without its whole reply this long after the pool took it,
     *                    the wait for a new connection included, fails with EIO, and a pool connection it
     *                    was written to is treated as lost (closed, its requests in flight failed with
     *                    EIO), so that an upstream that hangs without closing its connections does not
     *                    hold the proxy's requests forever; 0 is off, never (default
     *                    {@link #DEFAULT_REQUEST_TIMEOUT_SECONDS}; docs/nbd.md, "Configuration", Upstream exports, says why)
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record Upstream(
            String host,
            Integer port,
            String unix,
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
            // The default port only for TCP: a port beside unix is a port given, and refused.
            port = port == null && unix == null ? Integer.valueOf(DEFAULT_PORT) : port;
            export = export == null ? "" : export;
            connections = connections == null ? 4 : connections;
            idleTimeoutSeconds = idleTimeoutSeconds == null ? DEFAULT_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds;
            requestTimeoutSeconds =
                    requestTimeoutSeconds == null ? DEFAULT_REQUEST_TIMEOUT_SECONDS : requestTimeoutSeconds;
        }

        /** An upstream on TCP, at {@code host} and {@code port}. */
        public Upstream(
                String host,
                Integer port,
                String export,
                Integer connections,
                Double idleTimeoutSeconds,
                Double requestTimeoutSeconds) {
            this(host, port, null, export, connections, idleTimeoutSeconds, requestTimeoutSeconds);
        }

        /** An upstream on the Unix-domain socket {@code unix}. */
        public static Upstream onUnixSocket(
                String unix,
                String export,
                Integer connections,
                Double idleTimeoutSeconds,
                Double requestTimeoutSeconds) {
            return new Upstream(null, null, unix, export, connections, idleTimeoutSeconds, requestTimeoutSeconds);
        }

        /** This upstream with a relative {@code unix} path resolved against {@code directory}. */
        Upstream resolvedAgainst(Path directory) {
            String resolved = NbdConfig.resolvedUnixPath(directory, unix);
            if (java.util.Objects.equals(resolved, unix)) {
                return this;
            }
            return new Upstream(host, port, resolved, export, connections, idleTimeoutSeconds, requestTimeoutSeconds);
        }

        /** The Unix-domain socket, absolute and normalized, or {@code null} for an upstream on TCP. */
        public Path unixSocket() {
            return unix == null ? null : Path.of(unix).toAbsolutePath().normalize();
        }

        /**
         * The upstream as an NBD URI (the NBD project's URI specification), for messages:
         * {@code nbd://10.0.0.7:10809/scratch}, or {@code nbd+unix:///scratch?socket=/run/x.sock}.
         */
        public String uri() {
            if (unix != null) {
                return "nbd+unix:///" + export + "?socket=" + unixSocket();
            }
            return "nbd://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port + "/" + export;
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
            if (unix != null) {
                if (host != null) {
                    problems.add(new Problem(
                            where,
                            "host " + quote(host) + " and unix " + quote(unix),
                            "exactly one of host (with port) or unix"));
                }
                if (port != null && host == null) { // with host too, the line above says it
                    problems.add(new Problem(
                            where + ".port",
                            port + " beside unix " + quote(unix),
                            "no port for an upstream on a Unix socket; host and port for one on TCP"));
                }
                problems.addAll(unixProblems(where + ".unix", unix));
            } else if (host == null || host.isBlank()) {
                problems.add(new Problem(
                        where + ".host", "missing", "the upstream NBD server's host, or unix for its Unix socket"));
            } else if (!validHostSyntax(host)) {
                problems.add(new Problem(
                        where + ".host", quote(host), "a host name (RFC 1123), an IPv4 address or an IPv6 address"));
            }
            if (port != null && (port < 1 || port > 65_535)) {
                problems.add(new Problem(where + ".port", port, NbdConfig.whole(1, 65_535)));
            }
            if (export.getBytes(StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES
                    || export.indexOf('\0') >= 0) {
                problems.add(new Problem(where + ".export", "too long or contains NUL", "at most 4096 bytes"));
            }
            if (connections < 1 || connections > 64) {
                problems.add(new Problem(where + ".connections", connections, NbdConfig.whole(1, 64)));
            }
            if (!(idleTimeoutSeconds >= 0.01) || idleTimeoutSeconds > 86_400) {
                problems.add(new Problem(
                        where + ".idleTimeoutSeconds",
                        Numbers.written(idleTimeoutSeconds),
                        Numbers.interval(false, 0.01, 86_400)));
            }
            if (!(requestTimeoutSeconds == 0
                    || requestTimeoutSeconds >= 0.01 && requestTimeoutSeconds <= MAX_REQUEST_TIMEOUT_SECONDS)) {
                problems.add(new Problem(
                        where + ".requestTimeoutSeconds",
                        Numbers.written(requestTimeoutSeconds),
                        "0 for off, or " + Numbers.interval(false, 0.01, MAX_REQUEST_TIMEOUT_SECONDS)));
            }
            return problems;
        }

        /**
         * What is wrong with {@code path} as the upstream's Unix-domain socket, said for {@code field}: empty, a NUL,
         * or longer than the 107 bytes of {@code sun_path}. Whether a server listens on it is found out when
         * connecting, as for a host (an exit status of 1, not a configuration error).
         */
        static List<Problem> unixProblems(String field, String path) {
            return NbdConfig.unixAddressProblems(field, path, "the path of the upstream NBD server's Unix socket");
        }
    }
}
