package dev.tailor.lab;

import dev.tailor.common.IoErrors;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The external programs of the NBD experiments (fio, nbdkit, the proxy in a child JVM) as child
 * processes: started with their output in a work directory, and all stopped by {@link #close} or, on
 * Ctrl-C or SIGTERM, by a shutdown hook, so none outlives the command. Not thread-safe: one command
 * drives it.
 */
public final class ExperimentRig implements AutoCloseable {

    /** How long a server may take to accept connections before the run fails. */
    static final long START_TIMEOUT_SECONDS = 30;

    private final Path dir;
    private final List<String> serveCommand;
    private final List<Process> children = new CopyOnWriteArrayList<>();
    private final List<Path> temporaryFiles = new CopyOnWriteArrayList<>();
    private final Thread hook = new Thread(this::stopAll, "tailor-experiment-cleanup");
    /** Set once the programs are being stopped (close or a signal): their exit is not a failure then. */
    private volatile boolean stopping;

    /**
     * A rig whose programs write their logs into {@code dir}.
     *
     * @param serveCommand the main class and arguments that run {@code tailor nbd serve} on this JVM's class
     *     path (the CLI gives its main class and {@code nbd serve}); {@link #startProxy} adds its options
     */
    ExperimentRig(Path dir, List<String> serveCommand) {
        this.dir = dir;
        this.serveCommand = List.copyOf(serveCommand);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** The work directory when {@code --dir} is not given: bench/target/NAME in a checkout, else a new one. */
    public static Path defaultDir(String name) throws IOException {
        if (Files.isDirectory(Path.of("bench")) && Files.isRegularFile(Path.of("bench", "pom.xml"))) {
            return Path.of("bench", "target", name);
        }
        return Files.createTempDirectory("tailor-experiment-" + name + "-");
    }

    /**
     * The work directory of {@code --dir}, created if needed and checked: not a file, writable.
     *
     * @throws LabException (exit 2) naming {@code --dir}, the folder and the problem
     */
    public static Path checkDir(Path dir) {
        if (dir.toString().isBlank()) {
            throw new LabException("--dir: empty (expected: a directory for fio's output and the proxy's logs)");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new LabException(
                    "--dir: " + dir + " is a file (expected: a directory for fio's output and the" + " proxy's logs)");
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new LabException("--dir: cannot create " + dir + " (" + IoErrors.reason(e) + "; expected: a directory"
                    + " for fio's output and the proxy's logs)");
        }
        String unwritable = IoErrors.cannotCreateIn(dir);
        if (unwritable != null) {
            throw new LabException("--dir: cannot write in " + dir + " (" + unwritable + "; expected: a writable"
                    + " directory for fio's output and the proxy's logs)");
        }
        return dir;
    }

    /**
     * Why the experiments cannot run here, or empty when they can: fio with its {@code nbd} engine and,
     * when {@code nbdkit} is asked for, nbdkit with the memory and nbd plugins and the delay filter.
     * The reason names the missing program and the Debian packages, e.g. {@code fio is not installed
     * (Debian: apt install fio nbdkit)}.
     */
    public static Optional<String> missingTools(boolean nbdkit) {
        String install = nbdkit ? " (Debian: apt install fio nbdkit)" : " (Debian: apt install fio)";
        if (onPath("fio").isEmpty()) {
            return Optional.of("fio is not installed" + install);
        }
        if (!succeeds("fio", "--enghelp=nbd")) {
            return Optional.of("this fio has no nbd engine (fio --enghelp=nbd fails; Debian's fio has it)");
        }
        if (nbdkit) {
            if (onPath("nbdkit").isEmpty()) {
                return Optional.of("nbdkit is not installed" + install);
            }
            if (!succeeds("nbdkit", "--filter=delay", "memory", "--dump-plugin")) {
                return Optional.of("this nbdkit has no memory plugin or delay filter (Debian: apt install nbdkit)");
            }
            if (!succeeds("nbdkit", "nbd", "--dump-plugin")) {
                return Optional.of("this nbdkit has no nbd plugin (Debian: apt install nbdkit)");
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String d : path.split(File.pathSeparator)) {
            Path candidate = Path.of(d, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static boolean succeeds(String... command) {
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A TCP port free on loopback now (the program that gets it binds it a moment later, as the scripts did). */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /**
     * Starts {@code command} with standard output and error in {@code dir/NAME.log}.
     *
     * @param environment added to this process's environment
     */
    Process start(String name, List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log(name).toFile());
        builder.environment().putAll(environment);
        Process process = builder.start();
        children.add(process);
        return process;
    }

    /** Where {@link #start} writes the program's output. */
    Path log(String name) {
        return dir.resolve(name + ".log");
    }

    /**
     * Runs {@code command} to its end (output in {@code dir/NAME.log}).
     *
     * @throws LabException (exit 1) if it fails, with the end of its log
     */
    void run(String name, List<String> command, Map<String, String> environment)
            throws IOException, InterruptedException {
        Process process = start(name, command, environment);
        int code = process.waitFor();
        children.remove(process);
        if (code != 0 && stopping) {
            // Ctrl-C or SIGTERM: the shutdown hook stopped it; the command is ending, not fio failing.
            throw new InterruptedException("stopped by a signal");
        }
        if (code != 0) {
            throw new LabException(command.get(0) + " failed (exit " + code + "): " + tail(log(name)), 1, null);
        }
    }

    /**
     * Waits until {@code process} accepts connections on {@code port} of loopback.
     *
     * @throws LabException (exit 1) naming the program and the end of its log if it exits or takes longer
     *                      than {@link #START_TIMEOUT_SECONDS}
     */
    void awaitPort(String name, Process process, int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
                return;
            } catch (IOException e) {
                // not yet
            }
            failIfGone(name, process, deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    /**
     * Waits until {@code process}'s log has a line matching {@code pattern}, and returns its first group.
     *
     * @throws LabException (exit 1) as {@link #awaitPort}
     */
    String awaitLogLine(String name, Process process, Pattern pattern) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (true) {
            Path log = log(name);
            if (Files.exists(log)) {
                Matcher m = pattern.matcher(Files.readString(log, StandardCharsets.UTF_8));
                if (m.find()) {
                    return m.group(1);
                }
            }
            failIfGone(name, process, deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    private void failIfGone(String name, Process process, long deadline) {
        if (!process.isAlive()) {
            throw new LabException(
                    name + " did not start (exit " + process.exitValue() + "): " + tail(log(name)), 1, null);
        }
        if (System.nanoTime() > deadline) {
            throw new LabException(
                    name + " did not accept connections within " + START_TIMEOUT_SECONDS + " s: " + tail(log(name)),
                    1,
                    null);
        }
    }

    /**
     * Starts {@code tailor nbd serve --config CONFIG --listen 127.0.0.1:0 ARGS} in a child JVM (this JVM's
     * {@code java} and class path, with the options in {@code TAILOR_JAVA_OPTS}) and waits until it
     * serves.
     *
     * @return the process and the port it listens on
     */
    Proxy startProxy(String name, Path config, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String options = System.getenv("TAILOR_JAVA_OPTS");
        if (options != null && !options.isBlank()) {
            command.addAll(List.of(options.strip().split("\\s+")));
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path")));
        command.addAll(serveCommand);
        command.addAll(List.of("--config", config.toString(), "--listen", "127.0.0.1:0"));
        command.addAll(args);
        Process process = start(name, command, Map.of());
        int port = Integer.parseInt(awaitLogLine(name, process, PROXY_PORT));
        return new Proxy(process, port);
    }

    /** The port in the first export line {@code tailor nbd serve} prints. */
    private static final Pattern PROXY_PORT = Pattern.compile("nbd://127\\.0\\.0\\.1:(\\d+)/");

    /** A proxy started by {@link #startProxy}. */
    record Proxy(Process process, int port) {}

    /** Stops {@code process} (SIGTERM, then SIGKILL after 10 s) and waits for it. */
    void stop(Process process) throws InterruptedException {
        children.remove(process);
        terminate(process);
    }

    /** A file {@link #close} deletes. */
    void deleteOnClose(Path file) {
        temporaryFiles.add(file);
    }

    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // already shutting down: the hook is running or has run
        }
    }

    private synchronized void stopAll() {
        stopping = true;
        for (Process p : List.copyOf(children)) {
            p.destroy();
        }
        for (Process p : List.copyOf(children)) {
            try {
                terminate(p);
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        children.clear();
        for (Path file : temporaryFiles) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                System.err.println("tailor: could not remove " + file + " (" + e.getMessage() + ")");
            }
        }
        temporaryFiles.clear();
    }

    private static void terminate(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The last lines of a log, for an error message. */
    static String tail(Path log) {
        try (InputStream in = Files.newInputStream(log)) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            String[] lines = text.split("\n");
            int from = Math.max(0, lines.length - 8);
            String end = String.join("\n  ", java.util.Arrays.copyOfRange(lines, from, lines.length));
            return text.isEmpty() ? "(no output; " + log + ")" : "its log " + log + " ends:\n  " + end;
        } catch (IOException e) {
            return "(no log: " + log + ")";
        }
    }
}
