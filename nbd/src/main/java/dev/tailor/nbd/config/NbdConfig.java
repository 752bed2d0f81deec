package dev.tailor.nbd.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.Problem;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The NBD server's configuration: where it listens, its limits, its threads and its exports. Read from
 * YAML or JSON ({@link NbdConfigFiles}); every field but {@code exports} has a default. Sizes are
 * {@link ByteSize}s (bytes, or a string such as {@code "32MiB"}). {@link #problems()} lists every
 * invalid field at once.
 *
 * <p>Each section is a record of its own in this package, with its fields, defaults and checks: {@link Limits},
 * {@link ExportConfig} (with {@link ExportConfig.Upstream} and {@link ExportConfig.Baseline}),
 * {@link AdmissionSettings}, {@link LoopSettings}, {@link TlsSettings} and {@link FairDispatchSettings}. This
 * record holds the top-level fields, their defaults and the checks across sections.
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
                problems.add(new Problem("port", port, whole(0, 65_535)));
            }
        }
        if (unix != null) {
            problems.addAll(unixProblems("unix", unix));
        }
        problems.addAll(limits.problems());
        if (eventLoopThreads < 1 || eventLoopThreads > 1024) {
            problems.add(new Problem("eventLoopThreads", eventLoopThreads, whole(1, 1024)));
        }
        if (fileIoThreads < 1 || fileIoThreads > 1024) {
            problems.add(new Problem("fileIoThreads", fileIoThreads, whole(1, 1024)));
        }
        if (!List.of(FILE_IO_AUTO, FILE_IO_URING, FILE_IO_THREADS).contains(fileIo)) {
            problems.add(new Problem("fileIo", quote(fileIo), "auto, io_uring or threads"));
        }
        if (exports.isEmpty()) {
            problems.add(new Problem("exports", "[]", "at least one export"));
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
        problems.addAll(sharedFileProblems());
        return problems;
    }

    /**
     * Exports of one file, each after the first: writes through one would change the other's disk under its
     * clients. Files are compared by real path when they exist ({@code ..} and links followed), else by absolute
     * path without {@code .} and {@code ..}; upstream exports have none. Two servers are kept apart by the lock
     * each takes on its files at start.
     */
    List<Problem> sharedFileProblems() {
        List<Problem> problems = new ArrayList<>();
        java.util.Map<Path, Integer> first = new java.util.HashMap<>();
        for (int i = 0; i < exports.size(); i++) {
            ExportConfig export = exports.get(i);
            if (export == null || export.file() == null) {
                continue;
            }
            Path key = ExportConfig.sameFileKey(export.file());
            Integer earlier = first.putIfAbsent(key, i);
            if (earlier == null) {
                continue;
            }
            String written = export.file().toString();
            problems.add(new Problem(
                    "exports[" + i + "].file",
                    (written.equals(key.toString()) ? written : written + ", that is " + key + ",") + " is exports["
                            + earlier + "].file too"
                            + (exports.get(earlier).name() == null
                                    ? ""
                                    : " (export " + exports.get(earlier).name() + ")"),
                    "a file no other export serves: writes through one export would change the other's disk under"
                            + " its clients"));
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
        List<Problem> problems = unixAddressProblems(field, path, "the path of a socket to create");
        if (path.isEmpty() || path.indexOf('\0') >= 0) {
            return problems; // no path to look at
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

    /**
     * {@code path} resolved against {@code directory} when it is relative; as written when it is null, empty,
     * absolute or not a path at all (a NUL), so that {@link #unixAddressProblems} names it.
     */
    static String resolvedUnixPath(Path directory, String path) {
        if (path == null
                || path.isEmpty()
                || path.indexOf('\0') >= 0
                || Path.of(path).isAbsolute()) {
            return path;
        }
        return directory.resolve(path).toString();
    }

    /**
     * What is wrong with {@code path} as a Unix-domain socket's address, whatever the socket is for: empty, a NUL,
     * or longer than the {@value #MAX_UNIX_PATH_BYTES} bytes of {@code sun_path}; {@code expected} says what it is
     * for when it is empty or has a NUL.
     */
    static List<Problem> unixAddressProblems(String field, String path, String expected) {
        List<Problem> problems = new ArrayList<>();
        int bytes = path.getBytes(StandardCharsets.UTF_8).length;
        if (path.isEmpty()) {
            problems.add(new Problem(field, "empty", expected));
        } else if (path.indexOf('\0') >= 0) {
            problems.add(new Problem(field, "contains NUL", expected));
        } else if (bytes > MAX_UNIX_PATH_BYTES) {
            problems.add(new Problem(
                    field,
                    quote(path) + " is " + bytes + " bytes long",
                    "at most " + MAX_UNIX_PATH_BYTES + ", the limit of a Unix socket address"));
        }
        return problems;
    }

    /**
     * A range of whole numbers as the messages write it, an interval as {@link dev.tailor.common.Numbers#interval}
     * writes a real one: {@code a whole number in [1, 1024]}.
     */
    public static String whole(long min, long max) {
        return "a whole number in [" + min + ", " + max + "]";
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
