package dev.tailor.cli;

import dev.tailor.common.IoErrors;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.ServeOptions;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.nbd.server.ServeSummary;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor nbd serve}: runs the NBD server until Ctrl-C. */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Serves virtual disks over NBD (fixed newstyle, structured replies, FLUSH/FUA/TRIM/WRITE_ZEROES) until"
                    + " Ctrl-C, then lets the requests in flight finish and stops.",
            "",
            "With --file it serves that file as one export, 'disk' (also the empty name, the default export),"
                    + " like qemu-nbd and nbdkit. Without --file or --config it serves one export, 'disk': a 1 GiB"
                    + " sparse file in a new temporary directory, removed on exit. Either listens on"
                    + " 127.0.0.1:10809, or with --unix on a Unix socket only. With --config it serves the exports"
                    + " of a YAML or JSON file: local files and upstream NBD servers, per tenant, with limits"
                    + " (docs/nbd.md, examples/nbd.yaml).",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor nbd serve                                 # a scratch disk: nbd://127.0.0.1:10809/disk",
            "  tailor nbd serve --file debian.raw --read-only   # an image: nbd://127.0.0.1:10809/disk",
            "  tailor nbd serve --file vm.raw --unix /run/vm.sock   # nbd+unix:///disk?socket=/run/vm.sock",
            "  nbdinfo nbd://127.0.0.1:10809/disk               # in another terminal",
            "  qemu-img convert -n -f raw -O raw debian.raw nbd://127.0.0.1:10809/disk",
            "  tailor nbd serve --config exports.yaml --listen 0.0.0.0:10809",
            "  tailor nbd serve --file vm.raw --tls require --tls-certificates /etc/tailor/tls   # nbds://...",
            "",
            "Exit codes: 130/143 stopped by Ctrl-C/SIGTERM, 1 cannot listen or open a backend, 2 bad input."
        })
final class NbdServeCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description =
                    "Exports and limits (YAML or JSON; docs/nbd.md)." + " Default: one 1 GiB temporary export 'disk'.")
    Path config;

    @Option(
            names = "--file",
            paramLabel = "PATH",
            description = "Serve this existing file (a raw disk image) as"
                    + " the one export, without a config file. Default: a 1 GiB temporary scratch disk.")
    Path file;

    @Option(
            names = "--read-only",
            description = "With --file: refuse writes (NBD_EPERM); the file is opened for" + " reading only.")
    boolean readOnly;

    @Option(
            names = "--export-name",
            paramLabel = "NAME",
            description = "The export's name, without --config."
                    + " Default: disk (the empty name reaches it too, as the default export).")
    String exportName;

    @Option(
            names = "--size",
            paramLabel = "SIZE",
            description = "The export's size (e.g. 20GiB; a multiple of 512"
                    + " bytes), without --config: with --file its first SIZE bytes (at most the file's length). Default:"
                    + " the file's length, or 1GiB for the scratch disk.")
    String size;

    @Option(
            names = "--listen",
            paramLabel = "HOST:PORT",
            description = "Where to listen, overriding the config's"
                    + " address and port; :PORT is 127.0.0.1:PORT; port 0 picks a free one (the banner gives it)."
                    + " Default: 127.0.0.1:10809 (loopback only), or none with"
                    + " --unix.")
    String listen;

    @Option(
            names = "--unix",
            paramLabel = "PATH",
            description = "Listen on this Unix-domain socket (created at start,"
                    + " removed on exit; clients use nbd+unix:///NAME?socket=PATH), and on TCP only if --listen is given too."
                    + " Default: the config's unix, else none.")
    Path unix;

    @Option(
            names = "--pid-file",
            paramLabel = "PATH",
            description = "Write the process ID to this file once the"
                    + " server accepts connections (a readiness signal for scripts, as nbdkit's -P and qemu-nbd's"
                    + " --pid-file); removed on exit. Checked before the server binds: a file in an existing"
                    + " folder where files can be created.")
    Path pidFile;

    /** on / off, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--admission",
            paramLabel = "on|off",
            description = "Segment admission in front of the"
                    + " backends: one token pool for the server, each export a virtual disk (docs/nbd.md, Admission);"
                    + " in Tailor's variant what it admits goes through the fair dispatch door (--fair-dispatch)."
                    + " Its budget (--admission-iops) defaults to about 8,518 4 KiB reads/s, which holds a faster"
                    + " backend to that. Default: the config's admission.enabled, else off.")
    String admission;

    /** A number, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--admission-iops",
            paramLabel = "IOPS",
            description = "Admission's budget: the 4 KiB I/Os"
                    + " per second the backends serve together, reads and writes alike (docs/nbd.md, Admission). With"
                    + " --admission-mbps too, small I/Os count by number and large ones by bytes. Default: the config's"
                    + " admission.iops, or its budget in cost units; without either, 1e9 cost units/s, about 8,518"
                    + " 4 KiB reads/s, which holds a faster backend to that (a warning at start says so).")
    String admissionIops;

    /** A number, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--admission-mbps",
            paramLabel = "MB/s",
            description = "Admission's budget: the MB/s (10^6"
                    + " bytes per second) the backends serve together for large I/Os, reads and writes alike. Default:"
                    + " the config's admission.megabytesPerSecond, or its budget in cost units.")
    String admissionMbps;

    /** tailor / paper, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--admission-variant",
            paramLabel = "tailor|paper",
            description = "Which segment admission:"
                    + " tailor (what Tailor ships: a request within its export's baseline is admitted at once, behind"
                    + " only its own export's waiting requests, which its baseline admits oldest first; hot requests"
                    + " are served in proportion to their exports' baselines, an adaptive reserve) or paper (the paper's"
                    + " mechanism as first built); docs/admission.md, Departures from the paper. Default: the config's"
                    + " admission.variant, else tailor. Only with admission on.")
    String admissionVariant;

    /** A number, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--baseline-iops",
            paramLabel = "IOPS",
            description = "Without --config: the export's"
                    + " provisioned baseline for admission, 4 KiB I/Os per second (exports[].baseline.iops; docs/nbd.md,"
                    + " Admission). Default: none (a fair share of the budget).")
    String baselineIops;

    /** A number, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--baseline-mbps",
            paramLabel = "MB/s",
            description =
                    "Without --config: the export's"
                            + " provisioned baseline, MB/s of large I/Os (exports[].baseline.megabytesPerSecond). Default: none.")
    String baselineMbps;

    @Option(
            names = "--loop",
            paramLabel = "priority|fifo",
            description = "The event loops: priority runs I/O"
                    + " first and the proxy's background work within an allowance; fifo runs everything in one queue, as a"
                    + " plain event loop (docs/eventloop.md). Default: the config's loop.mode, else priority.")
    String loop;

    @Option(
            names = "--metrics-listen",
            paramLabel = "HOST:PORT",
            description = "Serve /metrics (Prometheus text"
                    + " format: per-export I/O, slow requests with their admission and backend time, per-request loop"
                    + " tracing, the loops' and admission's metrics) and /healthz over HTTP here; :PORT is 127.0.0.1:PORT; port 0 picks a free one;"
                    + " tailor nbd top shows them live. Default: the config's loop.metricsListen, else none.")
    String metricsListen;

    /** Seconds or off, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--idle-timeout",
            paramLabel = "SECONDS|off",
            description = "Close a connection past its"
                    + " handshake that has had no request for this long (docs/nbd.md, Limits); off or 0: never, else a number in [0.01, 31536000]. Default:"
                    + " the config's limits.idleTimeoutSeconds, else off (qemu fails an idle disk's next request once its"
                    + " connection is closed, unless it sets reconnect-delay).")
    String idleTimeout;

    /** off / on / require, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--tls",
            paramLabel = "off|on|require",
            description = "TLS through NBD's STARTTLS, named as"
                    + " nbdkit names it: on lets a client upgrade or stay in plain text, require refuses every option but"
                    + " STARTTLS until TLS runs (clients use nbds://). Needs --tls-certificates. Default: the config's"
                    + " tls.mode, else off.")
    String tls;

    @Option(
            names = "--tls-certificates",
            paramLabel = "DIR",
            description = "A folder with server-cert.pem,"
                    + " server-key.pem and, for --tls-verify-peer, ca-cert.pem (nbdkit's and qemu's layout; docs/nbd.md,"
                    + " TLS). Default: the config's tls.certificates.")
    Path tlsCertificates;

    @Option(
            names = "--tls-verify-peer",
            description = "With --tls: serve only clients presenting a certificate"
                    + " signed by ca-cert.pem. Default: the config's tls.verifyPeer, else off.")
    boolean tlsVerifyPeer;

    @Option(
            names = "--max-connections-per-address",
            paramLabel = "N",
            description = "Connections one client"
                    + " address may hold; a newcomer over it is refused, with the reason in the log. Default: the config's"
                    + " limits.maxConnectionsPerAddress, else limits.maxConnections less a quarter (192 of 256).")
    Integer maxConnectionsPerAddress;

    /** Milliseconds, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--slow-threshold",
            paramLabel = "MS",
            description = "A request taking longer than this many"
                    + " milliseconds, header decoded to reply handed to the socket, counts as slow: counted per export"
                    + " and attributed to its segment on /metrics (docs/nbd.md, Slow requests); a number in [0.001, 60000]. Default:"
                    + " the config's loop.slowRequestThresholdMillis, else 50.")
    String slowThreshold;

    /** Seconds, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--slow-window",
            paramLabel = "SECONDS",
            description =
                    "The slow segments on /metrics cover the"
                            + " slow requests of the last half of this window to all of it (docs/nbd.md, Slow requests);"
                            + " seconds, a whole number in [2, 86400]. Default: the config's loop.slowTopWindowSeconds, else 60.")
    String slowWindow;

    /** auto / io_uring / threads, as written; checked in {@link ServeOptions#build} so the message can name it. */
    @Option(
            names = "--file-io",
            paramLabel = "auto|io_uring|threads",
            description = "Where file exports' reads, writes and"
                    + " flushes run: io_uring submits them from the event loops (which then run on Netty's io_uring"
                    + " transport), threads on a pool of fileIoThreads with the loops on epoll (docs/nbd.md,"
                    + " Performance). Default: the config's fileIo, else auto (io_uring where the kernel offers it).")
    String fileIo;

    /** on / off, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--fair-dispatch",
            paramLabel = "on|off",
            description = "The fair dispatch doors, one in front of each"
                    + " backend (a file system device or an upstream address): at most --fair-dispatch-depth READs and"
                    + " WRITEs at one backend at once, the rest waiting per export and let in by fair queueing weighted"
                    + " by the exports' baselines (docs/nbd.md, Fair"
                    + " dispatch). With --admission on, what admission admits goes through it. Default: the config's"
                    + " fairDispatch.enabled, else on behind --admission on (Tailor's variant; off behind the"
                    + " paper's) and off without admission.")
    String fairDispatch;

    /** A number, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--fair-dispatch-depth",
            paramLabel = "N",
            description = "With the door on: the most READs and WRITEs at one backend at once, every door's, 1 to"
                    + " 65536. Default: the config's fairDispatch.depth, else each door's own: the config's"
                    + " fileIoThreads (default 8) for file exports, 16 per upstream connection for upstream ones.")
    String fairDispatchDepth;

    /** on / off, as written; checked in {@link ServeOptions#build} so the message can name the value. */
    @Option(
            names = "--fair-dispatch-finish-tag",
            paramLabel = "on|off",
            description = "With the door on: let in the waiting request with the least finish tag (start + cost"
                    + " ÷ weight) instead of the least start tag, so a small request goes ahead of a large one"
                    + " that would finish after it (docs/nbd.md, Fair dispatch). Default: the config's"
                    + " fairDispatch.finishTag, else on behind Tailor's admission and off for the door alone.")
    String fairDispatchFinishTag;

    @Override
    public Integer call() throws InterruptedException {
        // Netty logs through java.util.logging, as the nbd module's own lines do: one log, one format
        // (SLF4J, on the class path for the controller, would send Netty's lines elsewhere).
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
        LineFormatter.install();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ServeOptions options = new ServeOptions(
                config,
                file,
                readOnly,
                exportName,
                size,
                listen,
                unix,
                admission,
                admissionIops,
                admissionMbps,
                admissionVariant,
                baselineIops,
                baselineMbps,
                loop,
                metricsListen,
                idleTimeout,
                tls,
                tlsCertificates,
                tlsVerifyPeer,
                maxConnectionsPerAddress,
                slowThreshold,
                slowWindow,
                fileIo,
                fairDispatch,
                fairDispatchDepth,
                fairDispatchFinishTag);
        if (pidFile != null) {
            // Up front, before the server binds: the file is written only once it accepts connections.
            Json.checkReplaceable("--pid-file", pidFile);
        }
        ServeOptions.Setup setup;
        try {
            setup = options.build();
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        } catch (IOException e) {
            throw new CliException("cannot create a temporary directory (" + e.getMessage() + ")", 1, e);
        }
        NbdConfig settings = setup.settings();
        Path temporary = setup.temporary();
        // The export files the start will create: a stop before it has started (an upstream that does not answer
        // holds it for up to 10 s) removes them, as a start that fails does; files that exist now are never touched.
        List<Path> toCreate = settings.exports().stream()
                .map(ExportConfig::file)
                .filter(f -> f != null && !Files.exists(f))
                .toList();
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicReference<NbdServer> serving = new AtomicReference<>();
        AtomicBoolean failed = new AtomicBoolean();
        Thread stop = new Thread(
                () -> {
                    if (failed.get()) {
                        return; // the start failed and said so; it removed what it created
                    }
                    NbdServer running = serving.get();
                    List<Path> removed = new ArrayList<>();
                    if (running != null) {
                        String stopping = stopping(running.requestsInFlight());
                        if (stopping != null) {
                            // Said at once: the drain below may take its whole timeout (a hung upstream).
                            out.println(stopping);
                            out.flush();
                        }
                        running.close();
                    } else {
                        for (Path f : toCreate) {
                            try {
                                if (Files.deleteIfExists(f)) {
                                    removed.add(f);
                                }
                            } catch (IOException e) {
                                err.println("tailor: could not remove " + f + " (" + e.getMessage() + ")");
                            }
                        }
                    }
                    ServeOptions.delete(temporary);
                    if (temporary != null) {
                        removed.add(temporary);
                    }
                    if (pidFile != null) {
                        try {
                            Files.deleteIfExists(pidFile);
                        } catch (IOException e) {
                            err.println("tailor: could not remove " + pidFile + " (" + e.getMessage() + ")");
                        }
                    }
                    out.println("tailor: stopped" + (running == null ? " while starting" : "")
                            + (removed.isEmpty()
                                    ? ""
                                    : "; removed "
                                            + removed.stream()
                                                    .map(Path::toString)
                                                    .collect(Collectors.joining(", "))));
                    out.flush();
                    err.flush();
                    stopped.countDown();
                },
                "tailor-nbd-shutdown");
        Runtime.getRuntime().addShutdownHook(stop);
        NbdServer server;
        try {
            server = NbdServer.start(settings);
        } catch (IllegalArgumentException e) {
            abandon(stop, failed);
            ServeOptions.delete(temporary);
            // What the server finds at start (the TLS credentials' contents) named as the options that set it.
            throw new CliException(options.namingOptions(e.getMessage()));
        } catch (IOException e) {
            abandon(stop, failed);
            ServeOptions.delete(temporary);
            throw new CliException(options.namingListenFailure(e.getMessage()), 1, e);
        }
        serving.set(server);
        ServeSummary.print(server, settings, temporary, out, err);
        for (String warning : setup.warnings()) {
            err.println("tailor: warning: " + warning);
        }
        err.flush();
        if (pidFile != null) {
            try {
                // Written whole under another name, then renamed: a reader never sees a partial file.
                Path partial = pidFile.resolveSibling(pidFile.getFileName() + ".partial");
                Files.writeString(partial, ProcessHandle.current().pid() + "\n");
                Files.move(partial, pidFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                abandon(stop, failed);
                server.close();
                ServeOptions.delete(temporary);
                throw new CliException("--pid-file: cannot write " + pidFile + ": " + IoErrors.reason(e), 1, e);
            }
        }
        stopped.await();
        return 0;
    }

    /**
     * The line a stop says at once when it has requests to wait for: {@code tailor: stopping: waiting up to 10 s
     * for 1 request in flight}; {@code null} with none (the stop is then quick, and says only that it stopped).
     */
    static String stopping(int requestsInFlight) {
        if (requestsInFlight <= 0) {
            return null;
        }
        return "tailor: stopping: waiting up to " + NbdServer.DRAIN_TIMEOUT_MILLIS / 1000 + " s for " + requestsInFlight
                + (requestsInFlight == 1 ? " request" : " requests") + " in flight";
    }

    /** After a failed start: the stop hook does nothing, and is taken away unless the JVM is stopping already. */
    private static void abandon(Thread stop, AtomicBoolean failed) {
        failed.set(true);
        try {
            Runtime.getRuntime().removeShutdownHook(stop);
        } catch (IllegalStateException stopping) {
            // the hook runs, and returns at once
        }
    }
}
