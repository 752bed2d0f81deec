package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tailor nbd serve}: bad input in process, and a real run in a child JVM stopped like Ctrl-C. */
class NbdServeCommandTest {

    @TempDir
    Path dir;

    /** The first line of the child's output matching {@code pattern}; polls its log for up to 30 s. */
    private static String awaitLine(Path log, Pattern pattern) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            for (String line : lines) {
                if (pattern.matcher(line).find()) {
                    return line;
                }
            }
            assertThat(System.nanoTime()).as("a line matching %s within 30 s; so far: %s", pattern, lines)
                    .isLessThan(deadline);
            LockSupport.parkNanos(20_000_000);
        }
    }

    @Test
    void help_namesTheDefaultsAndTheConfig() {
        PlanCommandTest.Result result = tailor("nbd", "serve", "--help");
        assertThat(result.exitCode()).isZero();
        assertThat(result.out()).contains("1 GiB sparse file").contains("127.0.0.1:10809").contains("--config=FILE")
                .contains("--listen=HOST:PORT").contains("docs/nbd.md");
    }

    @Test
    void badListen_isBadInputAndLeavesNoTemporaryDirectory() throws Exception {
        List<Path> before = temporaryDirectories();
        PlanCommandTest.Result result = tailor("nbd", "serve", "--listen", "localhost");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--listen: \"localhost\" (expected HOST:PORT");
        assertThat(tailor("nbd", "serve", "--listen", "127.0.0.1:99999").err()).contains("expected 0 to 65535");
        assertThat(temporaryDirectories()).isSubsetOf(before);
    }

    private static List<Path> temporaryDirectories() throws IOException {
        try (var entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return entries.filter(p -> p.getFileName().toString().startsWith("tailor-nbd-")).toList();
        }
    }

    @Test
    void badConfig_isBadInputNamingTheField() throws Exception {
        Path config = Files.writeString(dir.resolve("exports.yaml"), "exports: [{name: d, file: d.img}]\n");
        PlanCommandTest.Result result = tailor("nbd", "serve", "--config", config.toString(), "--listen",
                "127.0.0.1:0");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("export d:").contains("does not exist");
        Files.writeString(config, "exports: [{name: d}]\n");
        assertThat(tailor("nbd", "serve", "--config", config.toString()).err())
                .contains("exports[0]: no backend (expected: exactly one of file or upstream)");
    }

    @Test
    void portInUse_failsWithExitCode1() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            PlanCommandTest.Result result = tailor("nbd", "serve", "--listen", "127.0.0.1:" + taken.getLocalPort());
            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.err()).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void serve_announcesTheExportServesItAndCleansUpOnSigterm() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path log = dir.resolve("serve.log");
        Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "dev.tailor.cli.Tailor", "nbd", "serve", "--listen", "127.0.0.1:0").redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        try {
            Pattern uri = Pattern.compile("nbd://127\\.0\\.0\\.1:(\\d+)/disk {2}1GiB, read-write, tenant default,"
                    + " file (\\S+)/disk\\.img \\(temporary: removed on exit\\)");
            Matcher export = uri.matcher(awaitLine(log, uri));
            assertThat(export.find()).isTrue();
            assertThat(Files.readAllLines(log)).anyMatch(l -> l.startsWith("tailor: serving 1 export on 127.0.0.1:")
                    && l.endsWith("(loopback only); Ctrl-C stops"));
            int port = Integer.parseInt(export.group(1));
            Path temporary = Path.of(export.group(2));
            assertThat(temporary.resolve("disk.img")).exists();

            // A client gets through the handshake to the 1 GiB export.
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                socket.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(socket.getInputStream());
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                assertThat(in.readLong()).isEqualTo(0x4e42444d41474943L);
                in.readLong();
                in.readUnsignedShort();
                out.writeInt(3);
                out.writeLong(0x49484156454F5054L);
                out.writeInt(1);
                out.writeInt(4);
                out.write("disk".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertThat(in.readLong()).isEqualTo(1L << 30);
            }

            process.destroy(); // SIGTERM, as Ctrl-C's SIGINT: the shutdown hook runs
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readAllLines(log)).contains("tailor: stopped; removed " + temporary);
            assertThat(temporary).doesNotExist();
        } finally {
            process.destroyForcibly();
        }
    }
}
