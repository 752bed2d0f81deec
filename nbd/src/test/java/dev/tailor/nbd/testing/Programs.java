package dev.tailor.nbd.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.testkit.Await;
import dev.tailor.testkit.Tools;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real NBD programs the tests drive (qemu-utils, libnbd-bin, nbdkit, fio). */
public final class Programs {

    /** The Debian package of each program, as {@code .ci/run} installs them. */
    public static String packageOf(String program) {
        return switch (program) {
            case "qemu-img", "qemu-io", "qemu-nbd" -> "qemu-utils";
            case "nbdinfo", "nbdcopy" -> "libnbd-bin";
            case "nbdkit" -> "nbdkit";
            case "fio" -> "fio";
            default -> throw new IllegalArgumentException(program);
        };
    }

    /** The program's path; skips the test (or fails it in CI) when it is not installed. */
    public static String require(String program) {
        return Tools.require(program, packageOf(program)).toString();
    }

    public record Result(int exitCode, String stdout, String stderr) {
        /** Asserts a zero exit code, showing the output otherwise. */
        public Result ok() {
            assertThat(exitCode)
                    .as("exit code; stdout:%n%s%nstderr:%n%s", stdout, stderr)
                    .isZero();
            return this;
        }
    }

    private Programs() {}

    /** Runs {@code command} to completion, at most {@code timeout}; output is captured through files. */
    public static Result run(Duration timeout, String... command) {
        try {
            Path out = Files.createTempFile("nbd-test-out", ".txt");
            Path err = Files.createTempFile("nbd-test-err", ".txt");
            try {
                Process process = new ProcessBuilder(command)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                        .start();
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor();
                    throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout
                            + "; stderr:\n" + Files.readString(err));
                }
                return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** A free TCP port on loopback (for programs that cannot report the one they picked). */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A server process started by a test, stopped by {@link #close()}. */
    public static final class Daemon implements AutoCloseable {
        public final Process process;
        public final int port;
        private final Path log;

        private Daemon(Process process, int port, Path log) {
            this.process = process;
            this.port = port;
            this.log = log;
        }

        /**
         * Starts {@code command} (with {@code {port}} replaced by a free port) and waits until it accepts
         * connections on that port: polls every 10 ms, for at most 10 s.
         */
        public static Daemon start(String... command) throws IOException {
            return start(freePort(), command);
        }

        /** Starts {@code command} on {@code port} (replacing {@code {port}}), as {@link #start(String...)}. */
        public static Daemon start(int port, String... command) throws IOException {
            List<String> args = new ArrayList<>();
            for (String arg : command) {
                args.add(arg.replace("{port}", Integer.toString(port)));
            }
            return started(args, port, "port " + port, () -> {
                try (Socket probe = new Socket()) {
                    probe.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                    return true;
                }
            });
        }

        /**
         * Starts {@code command} and waits until it accepts connections on the Unix-domain socket {@code socket}:
         * polls every 10 ms, for at most 10 s. {@link #port} is 0.
         */
        public static Daemon startOnSocket(Path socket, String... command) throws IOException {
            return started(List.of(command), 0, socket.toString(), () -> {
                try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                    return probe.connect(UnixDomainSocketAddress.of(socket));
                }
            });
        }

        /** A connection attempt: true once it connects; an {@link IOException} while nothing listens yet. */
        private interface Probe {
            boolean connects() throws IOException;
        }

        /** Starts {@code args}, its output in a log, and waits until {@code probe} connects to {@code where}. */
        private static Daemon started(List<String> args, int port, String where, Probe probe) throws IOException {
            Path log = Files.createTempFile("nbd-test-daemon", ".log");
            Process process = new ProcessBuilder(args)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            Daemon daemon = new Daemon(process, port, log);
            String command = String.join(" ", args);
            try {
                Await.until(
                        command + " listening on " + where,
                        () -> {
                            if (!process.isAlive()) {
                                throw new AssertionError(command + " exited with " + process.exitValue()
                                        + " before listening on " + where + "; output:\n" + read(log));
                            }
                            try {
                                return probe.connects();
                            } catch (IOException notYet) {
                                return false;
                            }
                        },
                        () -> "output:\n" + read(log));
                return daemon;
            } catch (AssertionError e) {
                daemon.close();
                throw e;
            }
        }

        private static String read(Path log) {
            try {
                return Files.readString(log);
            } catch (IOException e) {
                return "(unreadable: " + e.getMessage() + ")";
            }
        }

        /** Kills the process at once (SIGKILL), as if it crashed. */
        public void kill() throws InterruptedException {
            process.destroyForcibly().waitFor();
        }

        /** Stops the process (SIGTERM), killing it after 10 s. */
        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
                Files.deleteIfExists(log);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
