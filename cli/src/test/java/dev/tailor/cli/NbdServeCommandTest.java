package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.tailor.testkit.Await;
import dev.tailor.testkit.Tools;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tailor nbd serve}: bad input in process, and a real run in a child JVM stopped like Ctrl-C. */
class NbdServeCommandTest {

    @TempDir
    Path dir;

    /** The first line of the child's output matching {@code pattern}; polls its log (for up to 30 s). */
    /** Whether {@code log} exists and holds {@code text}. */
    private static boolean awaitLineIfAny(Path log, String text) {
        try {
            return Files.exists(log) && Files.readString(log).contains(text);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String awaitLine(Path log, Pattern pattern) {
        List<String> lines = new java.util.ArrayList<>();
        String[] found = new String[1];
        Await.until(
                "a line matching " + pattern,
                () -> {
                    try {
                        lines.clear();
                        lines.addAll(Files.exists(log) ? Files.readAllLines(log) : List.of());
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    found[0] = lines.stream()
                            .filter(line -> pattern.matcher(line).find())
                            .findFirst()
                            .orElse(null);
                    return found[0] != null;
                },
                () -> "so far: " + lines);
        return found[0];
    }

    @Test
    void help_namesTheDefaultsAndTheConfig() {
        PlanCommandTest.Result result = tailor("nbd", "serve", "--help");
        assertThat(result.exitCode()).isZero();
        assertThat(result.out())
                .contains("1 GiB sparse file")
                .contains("127.0.0.1:10809")
                .contains("--config=FILE")
                .contains("--listen=HOST:PORT")
                .contains("docs/nbd.md");
    }

    @Test
    void help_givesAdmissionsDefaultBudgetInReadsPerSecond() {
        // The default budget held a new user's disk to about 8518 4 KiB reads/s; --help gave no figure.
        assertThat(dev.tailor.nbd.config.AdmissionSettings.defaultBudgetReadsPerSecond())
                .isEqualTo(8518);
        String reads = "about 8,518 4 KiB reads/s";
        String help = tailor("nbd", "serve", "--help").out().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("Its budget (--admission-iops) defaults to " + reads + ", which holds a faster backend to")
                .contains("without either, 1e9 cost units/s, " + reads + ", which holds a faster backend to that");
    }

    @Test
    void serve_withAdmissionOnWithoutABudget_warnsOfTheDefaultAtStart() throws Exception {
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(out, err, "--listen", "127.0.0.1:0", "--admission", "on");
        try {
            awaitLine(
                    out,
                    Pattern.compile("segment admission: on \\(tailor\\), budget 1,000,000,000 cost units/s"
                            + " \\(about 8,518 4 KiB reads/s\\)"));
            awaitLine(
                    err,
                    Pattern.compile("^tailor: warning: admission is on without a budget: the default budget admits"
                            + " about 8,518 4 KiB reads/s for the whole server, and a faster backend is held to it; set"
                            + " the backends' capacity with --admission-iops N \\(and --admission-mbps\\), or"
                            + " admission\\.iops in the config"));
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            process.destroyForcibly();
        }
    }

    @Test
    void aFileAnotherServerServes_exitsWith1NamingTheFile_andTheBannerShowsTheNormalPath() throws Exception {
        // Was: two servers of one file both started, writes through one appearing in the other; the banner showed
        // the path as given, sub/../disk.raw.
        Path disk = Files.write(dir.resolve("disk.raw"), new byte[1 << 20]);
        Files.createDirectory(dir.resolve("sub"));
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process =
                serve(out, err, "--file", dir.resolve("sub/../disk.raw").toString(), "--listen", "127.0.0.1:0");
        try {
            awaitLine(
                    out,
                    Pattern.compile("nbd://127\\.0\\.0\\.1:\\d+/disk  1MiB, read-write, tenant default, file "
                            + Pattern.quote(disk.toString()) + "$"));
            String second = secondServer("second", "--file", disk.toString(), "--listen", "127.0.0.1:0");
            assertThat(second)
                    .contains("export disk: cannot get a write lock on " + disk + ": another process holds a lock on it"
                            + " (another tailor nbd serve, or qemu using it); two servers of one file write over each"
                            + " other's data (expected: a file no other process is serving; stop the other, or serve"
                            + " a copy of " + disk + ")");
            assertThat(secondServer("reader", "--file", disk.toString(), "--read-only", "--listen", "127.0.0.1:0"))
                    .contains("cannot get a shared lock on " + disk + ": another process holds a write lock on it");
            assertThat(process.isAlive()).as("the first server serves on").isTrue();
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            process.destroyForcibly();
        }
    }

    @Test
    void help_givesTheSlowWindowAsTheParserTakesIt() {
        // Whole seconds in [2, 86400]: what ServeOptions.parseSlowWindow accepts (1.5 is refused, below).
        String help = tailor("nbd", "serve", "--help").out().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("--slow-window=SECONDS The slow segments on /metrics cover")
                .contains("(docs/nbd.md, Slow requests); seconds, a whole number in [2, 86400]. Default: the config's"
                        + " loop.slowTopWindowSeconds, else 60.");
    }

    @Test
    void badListen_isBadInputAndLeavesNoTemporaryDirectory() throws Exception {
        List<Path> before = temporaryDirectories();
        PlanCommandTest.Result result = tailor("nbd", "serve", "--listen", "localhost");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--listen: \"localhost\" (expected: HOST:PORT, e.g. 127.0.0.1:10809)");
        assertThat(tailor("nbd", "serve", "--listen", "127.0.0.1:99999").err())
                .contains("(expected: a whole number in [0, 65535])");
        assertThat(temporaryDirectories()).isSubsetOf(before);
    }

    @Test
    void badAdmissionOrLoop_isBadInputNamingTheOptionAndLeavesNoTemporaryDirectory() throws Exception {
        List<Path> before = temporaryDirectories();
        PlanCommandTest.Result admission = tailor("nbd", "serve", "--admission", "yes", "--listen", "127.0.0.1:0");
        assertThat(admission.exitCode()).isEqualTo(2);
        assertThat(admission.err()).contains("--admission: \"yes\" (expected: on or off)");
        PlanCommandTest.Result loop = tailor("nbd", "serve", "--loop", "lifo", "--listen", "127.0.0.1:0");
        assertThat(loop.exitCode()).isEqualTo(2);
        assertThat(loop.err()).contains("--loop: \"lifo\" (expected: priority or fifo)");
        PlanCommandTest.Result fileIo = tailor("nbd", "serve", "--file-io", "aio", "--listen", "127.0.0.1:0");
        assertThat(fileIo.exitCode()).isEqualTo(2);
        assertThat(fileIo.err()).contains("--file-io: \"aio\" (expected: auto, io_uring or threads)");
        PlanCommandTest.Result metrics = tailor("nbd", "serve", "--metrics-listen", "9810", "--listen", "127.0.0.1:0");
        assertThat(metrics.exitCode()).isEqualTo(2);
        assertThat(metrics.err()).contains("--metrics-listen: \"9810\" (expected: HOST:PORT");
        PlanCommandTest.Result idle = tailor("nbd", "serve", "--idle-timeout", "soon", "--listen", "127.0.0.1:0");
        assertThat(idle.exitCode()).isEqualTo(2);
        assertThat(idle.err())
                .contains("--idle-timeout: soon (expected: off, 0, or seconds, a number in [0.01, 31536000])");
        PlanCommandTest.Result perAddress =
                tailor("nbd", "serve", "--max-connections-per-address", "300", "--listen", "127.0.0.1:0");
        assertThat(perAddress.exitCode()).isEqualTo(2);
        assertThat(perAddress.err())
                .contains("--max-connections-per-address: 300 (expected: a whole number in [1, 256], at most"
                        + " limits.maxConnections)");
        PlanCommandTest.Result iops =
                tailor("nbd", "serve", "--admission", "on", "--admission-iops", "lots", "--listen", "127.0.0.1:0");
        assertThat(iops.exitCode()).isEqualTo(2);
        assertThat(iops.err())
                .contains("--admission-iops: lots (expected: 4 KiB I/Os per second, a number in [1, 100000000])");
        assertThat(tailor("nbd", "serve", "--admission", "on", "--admission-iops", "0", "--listen", "127.0.0.1:0")
                        .err())
                .contains("--admission-iops: 0 (expected: 4 KiB I/Os per second, a number in [1, 100000000])");
        assertThat(tailor("nbd", "serve", "--admission", "on", "--admission-mbps", "NaN", "--listen", "127.0.0.1:0")
                        .err())
                .contains("--admission-mbps: NaN (expected: MB/s, a number in [0.01, 10000000])");
        assertThat(tailor(
                                "nbd",
                                "serve",
                                "--admission",
                                "on",
                                "--admission-iops",
                                "200000",
                                "--admission-mbps",
                                "500",
                                "--listen",
                                "127.0.0.1:0")
                        .err())
                .contains("--admission-iops: 200000 4 KiB I/Os per second"
                        + " move 819.2 MB/s, more than --admission-mbps 500 (expected: at most 122070 IOPS with that"
                        + " bandwidth");
        assertThat(tailor(
                                "nbd",
                                "serve",
                                "--admission",
                                "on",
                                "--admission-variant",
                                "classic",
                                "--listen",
                                "127.0.0.1:0")
                        .err())
                .contains("--admission-variant: \"classic\" (expected: tailor, what Tailor"
                        + " ships, or paper, the paper's mechanism)");
        assertThat(tailor("nbd", "serve", "--admission", "on", "--baseline-iops", "-5", "--listen", "127.0.0.1:0")
                        .err())
                .contains("--baseline-iops: -5 (expected: 4 KiB I/Os per second, a number in (0, 100000000])");
        assertThat(tailor(
                                "nbd",
                                "serve",
                                "--admission",
                                "on",
                                "--admission-iops",
                                "1000",
                                "--baseline-iops",
                                "1500",
                                "--listen",
                                "127.0.0.1:0")
                        .err())
                .contains("--baseline-iops: 1,500 IOPS is 150 % of admission's"
                        + " budget, 1,000 IOPS (expected: at most the budget");
        assertThat(tailor("nbd", "serve", "--baseline-iops", "100", "--listen", "127.0.0.1:0")
                        .err())
                .contains("--baseline-iops: admission and the fair dispatch door are off (expected: --admission on"
                        + " or --fair-dispatch on, where a baseline means something)");
        // A number echoed bare, as every other option's (--max-connections-per-address: 300 above; was "NaN"),
        // in quotes only when empty or with a space.
        for (String bad : List.of("0", "50ms", "60001", "NaN", "", "5 0")) {
            PlanCommandTest.Result slow = tailor("nbd", "serve", "--slow-threshold", bad, "--listen", "127.0.0.1:0");
            assertThat(slow.exitCode()).as(bad).isEqualTo(2);
            String shown = bad.isEmpty() || bad.contains(" ") ? "\"" + bad + "\"" : bad;
            assertThat(slow.err())
                    .contains("--slow-threshold: " + shown
                            + " (expected: milliseconds, a number in [0.001, 60000], e.g. 50)");
        }
        for (String bad : List.of("1", "60s", "86401", "1.5")) {
            PlanCommandTest.Result window = tailor("nbd", "serve", "--slow-window", bad, "--listen", "127.0.0.1:0");
            assertThat(window.exitCode()).as(bad).isEqualTo(2);
            assertThat(window.err())
                    .contains("--slow-window: " + bad + " (expected: seconds, a whole number in [2, 86400], e.g. 60)");
        }
        PlanCommandTest.Result door = tailor("nbd", "serve", "--fair-dispatch", "yes", "--listen", "127.0.0.1:0");
        assertThat(door.exitCode()).isEqualTo(2);
        assertThat(door.err()).contains("--fair-dispatch: \"yes\" (expected: on or off)");
        for (String bad : List.of("0", "65537", "eight")) {
            PlanCommandTest.Result depth = tailor(
                    "nbd", "serve", "--fair-dispatch", "on", "--fair-dispatch-depth", bad, "--listen", "127.0.0.1:0");
            assertThat(depth.exitCode()).as(bad).isEqualTo(2);
            assertThat(depth.err())
                    .contains("--fair-dispatch-depth: " + bad + " (expected: requests at one backend at once,"
                            + " a whole number in [1, 65536], e.g. 8)");
        }
        PlanCommandTest.Result doorOff =
                tailor("nbd", "serve", "--fair-dispatch-depth", "4", "--listen", "127.0.0.1:0");
        assertThat(doorOff.exitCode()).isEqualTo(2);
        assertThat(doorOff.err()).contains("--fair-dispatch-depth: the door is off (expected: --fair-dispatch on");
        Path doorOffConfig = Files.writeString(
                dir.resolve("door-off.yaml"),
                "fairDispatch: {depth: 4}\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
        PlanCommandTest.Result configDoorOff =
                tailor("nbd", "serve", "--config", doorOffConfig.toString(), "--listen", "127.0.0.1:0");
        assertThat(configDoorOff.exitCode())
                .as("as --fair-dispatch-depth with the door off")
                .isEqualTo(2);
        assertThat(configDoorOff.err())
                .contains("fairDispatch.depth: 4, but the door is off (expected: fairDispatch.enabled: true, or"
                        + " admission.enabled in Tailor's variant");
        PlanCommandTest.Result order = tailor(
                "nbd",
                "serve",
                "--fair-dispatch",
                "on",
                "--fair-dispatch-finish-tag",
                "yes",
                "--listen",
                "127.0.0.1:0");
        assertThat(order.exitCode()).isEqualTo(2);
        assertThat(order.err())
                .contains("--fair-dispatch-finish-tag: \"yes\" (expected: on, the door by finish tag, or off, by"
                        + " start tag)");
        PlanCommandTest.Result orderDoorOff =
                tailor("nbd", "serve", "--fair-dispatch-finish-tag", "on", "--listen", "127.0.0.1:0");
        assertThat(orderDoorOff.exitCode()).isEqualTo(2);
        assertThat(orderDoorOff.err())
                .contains("--fair-dispatch-finish-tag: on, but the door is off (expected: --fair-dispatch on");
        Path orderConfig = Files.writeString(
                dir.resolve("order.yaml"),
                "fairDispatch: {enabled: true, finishTag: sometimes}\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
        PlanCommandTest.Result configOrder =
                tailor("nbd", "serve", "--config", orderConfig.toString(), "--listen", "127.0.0.1:0");
        assertThat(configOrder.exitCode()).isEqualTo(2);
        assertThat(configOrder.err()).contains("fairDispatch.finishTag: \"sometimes\"");
        PlanCommandTest.Result off = tailor("nbd", "serve", "--admission-iops", "5000", "--listen", "127.0.0.1:0");
        assertThat(off.exitCode()).isEqualTo(2);
        assertThat(off.err()).contains("--admission-iops: admission is off (expected: --admission on");
        PlanCommandTest.Result variantOff =
                tailor("nbd", "serve", "--admission-variant", "paper", "--listen", "127.0.0.1:0");
        assertThat(variantOff.exitCode())
                .as("as --admission-iops with admission off")
                .isEqualTo(2);
        assertThat(variantOff.err())
                .contains("--admission-variant: admission is off (expected: --admission on, or admission.enabled in"
                        + " the config");
        assertThat(temporaryDirectories()).isSubsetOf(before);
    }

    // --- --pid-file, checked before the server binds: each refusal names the option, echoes the value, says why
    // and what is expected, and exits 2 ---

    /**
     * {@code tailor nbd serve --pid-file pidFile --listen localhost}: the error is about --pid-file, so it came before
     * the other options were read, let alone the server bound (and a check that came later fails here on --listen
     * rather than serving).
     */
    private static void assertPidFileRefused(String pidFile, String message) {
        PlanCommandTest.Result result = tailor("nbd", "serve", "--pid-file", pidFile, "--listen", "localhost");
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err()).isEqualTo("tailor: " + message + "\n");
        assertThat(result.out()).isEmpty();
    }

    private static final String EXPECTED_FILE = "(expected: a file in an existing folder where files can be created)";

    @Test
    void pidFileInAFolderThatDoesNotExist_isRefusedBeforeTheServerBinds() {
        Path pid = dir.resolve("missing").resolve("x.pid");
        assertPidFileRefused(
                pid.toString(),
                "--pid-file: cannot write " + pid + ": folder " + pid.getParent() + " does not exist " + EXPECTED_FILE);
        assertThat(pid.getParent()).doesNotExist();
    }

    @Test
    void pidFileUnderAFile_saysTheFileIsNotAFolder() throws IOException {
        Path file = Files.writeString(dir.resolve("notes.txt"), "kept");
        Path pid = file.resolve("x.pid");
        assertPidFileRefused(
                pid.toString(),
                "--pid-file: cannot write " + pid + ": " + file + " is a file, not a folder " + EXPECTED_FILE);
        assertThat(file).hasContent("kept");
    }

    @Test
    void pidFileIsAnExistingFolder_isRefused() throws IOException {
        // Was: "--pid-file: ... is a folder (expected: a file path in an existing folder, ...)".
        Path folder = Files.createDirectory(dir.resolve("x.pid"));
        assertPidFileRefused(
                folder.toString(), "--pid-file: cannot write " + folder + ": is a directory " + EXPECTED_FILE);
        assertThat(folder).isEmptyDirectory();
    }

    @Test
    void pidFileInAFolderThatTakesNoFile_isRefusedBeforeTheServerBinds() {
        // Linux's /proc takes no new file, whoever asks (root too). Was: exit 1 with the reason alone, after the
        // server had bound and printed its banner.
        assumeThat(Path.of("/proc/self")).isDirectory();
        assertPidFileRefused(
                "/proc/tailor-test.pid",
                "--pid-file: cannot write /proc/tailor-test.pid: no file can be created in /proc (no such file or"
                        + " directory; expected: a file in an existing folder where files can be created)");
    }

    @Test
    void pidFileIsASocket_isRefusedRatherThanReplaced() throws IOException {
        // The rename that puts the file in place would replace it, and the stop would delete it: for a device, for
        // root even /dev/null. A socket in the temporary folder stands for them all.
        Path socket = dir.resolve("x.pid");
        try (java.nio.channels.ServerSocketChannel channel =
                java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            channel.bind(java.net.UnixDomainSocketAddress.of(socket));
            assertPidFileRefused(
                    socket.toString(),
                    "--pid-file: cannot write " + socket + ": is a device, FIFO or socket, which the file would"
                            + " replace and then delete " + EXPECTED_FILE);
            assertThat(Files.isRegularFile(socket, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                    .isFalse();
            assertThat(socket).exists();
        }
    }

    @Test
    void pidFileEmpty_isRefused() {
        // Was: "--pid-file:  is a folder" (the empty path is the working folder).
        assertPidFileRefused("", "--pid-file: empty (expected: a file name)");
    }

    @Test
    void serve_withAdmissionOnAndFifoLoop_saysSoAndServes() throws Exception {
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(
                out,
                err,
                "--listen",
                "127.0.0.1:0",
                "--admission",
                "on",
                "--loop",
                "fifo",
                "--metrics-listen",
                "127.0.0.1:0",
                "--idle-timeout",
                "600",
                "--max-connections-per-address",
                "16",
                "--admission-iops",
                "20000",
                "--admission-mbps",
                "400",
                "--baseline-iops",
                "5000",
                "--slow-threshold",
                "12.5",
                "--slow-window",
                "120",
                "--fair-dispatch-depth",
                "4"); // the door is on behind Tailor's admission without --fair-dispatch on
        try {
            Pattern uri = Pattern.compile(
                    "nbd://127\\.0\\.0\\.1:(\\d+)/disk .*, baseline 5,000 IOPS, door device:\\d+:\\d+ \\(depth 4\\)$");
            Matcher export = uri.matcher(awaitLine(out, uri));
            assertThat(export.find()).isTrue();
            Pattern mechanisms = Pattern.compile(
                    "event loops: \\d+ on (epoll|io_uring|nio), fifo; segment admission: on \\(tailor\\), budget"
                            + " 20,000 IOPS and 400 MB/s, reserve adaptive, queue 65,536 per segment; fair dispatch: on,"
                            + " 1 door of depth 4, by finish"
                            + " tag");
            awaitLine(out, mechanisms);
            awaitLine(out, Pattern.compile("connections: at most 256, 16 per client address; idle timeout 600 s"));
            assertThat(exportSize("127.0.0.1", Integer.parseInt(export.group(1)), "disk"))
                    .isEqualTo(1L << 30);
            Pattern metricsLine = Pattern.compile("metrics: (http://127\\.0\\.0\\.1:\\d+/metrics), health: /healthz");
            Matcher metrics = metricsLine.matcher(awaitLine(out, metricsLine));
            assertThat(metrics.find()).isTrue();
            String body = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(metrics.group(1)))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            assertThat(body)
                    .contains("tailor_nbd_admission_intervals_total")
                    .contains("tailor_nbd_loop_unrelated")
                    .contains("tailor_nbd_slow_request_threshold_seconds 0.0125\n")
                    .contains("tailor_nbd_slow_segment_window_seconds 120.0\n")
                    .containsPattern("tailor_nbd_fair_dispatch_depth\\{backend=\"device:\\d+:\\d+\"} 4.0\n")
                    .containsPattern(
                            "tailor_nbd_fair_dispatch_export_requests_total\\{backend=\"device:\\d+:\\d+\",export=\"disk\"}");
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            process.destroyForcibly();
        }
    }

    private static List<Path> temporaryDirectories() throws IOException {
        try (var entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            // Directories only: the server's temporary directory, not other programs' files of the same prefix.
            return entries.filter(p -> p.getFileName().toString().startsWith("tailor-nbd-") && Files.isDirectory(p))
                    .toList();
        }
    }

    @Test
    void badConfig_isBadInputNamingTheField() throws Exception {
        Path config = Files.writeString(dir.resolve("exports.yaml"), "exports: [{name: d, file: d.img}]\n");
        PlanCommandTest.Result result =
                tailor("nbd", "serve", "--config", config.toString(), "--listen", "127.0.0.1:0");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains(config + ": exports[0].file: " + dir.resolve("d.img") + " does not exist (expected: an"
                        + " existing file, or a size for the export to create it sparse with) at line 1");
        Files.writeString(config, "exports: [{name: d}]\n");
        assertThat(tailor("nbd", "serve", "--config", config.toString()).err())
                .contains("exports[0]: no backend (expected: exactly one of file or upstream)");
        // A .json file is strict JSON: its trailing comma is a syntax error, as a YAML file's would be.
        Path json = Files.writeString(
                dir.resolve("exports.json"),
                "{\"port\": 20812, \"exports\": [{\"name\": \"a\", \"size\": \"1GiB\", \"file\": \"a.img\",}]}");
        PlanCommandTest.Result notJson = tailor("nbd", "serve", "--config", json.toString(), "--listen", "127.0.0.1:0");
        assertThat(notJson.exitCode()).isEqualTo(2);
        assertThat(notJson.err()).contains(json + ": not valid JSON at line 1, column 75: found '}'");
        assertThat(dir.resolve("a.img")).doesNotExist();
        // The file itself missing, or a folder: the option is named, as --file's are.
        PlanCommandTest.Result missing =
                tailor("nbd", "serve", "--config", dir.resolve("nope.yaml").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err())
                .contains("--config: " + dir.resolve("nope.yaml") + " does not exist (expected: a YAML or JSON file");
        PlanCommandTest.Result folder = tailor("nbd", "serve", "--config", dir.toString());
        assertThat(folder.exitCode()).isEqualTo(2);
        assertThat(folder.err()).contains("--config: " + dir + " is a folder (expected: a YAML or JSON file");
    }

    @Test
    void portInUse_failsWithExitCode1NamingTheOption() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            PlanCommandTest.Result result = tailor("nbd", "serve", "--listen", "127.0.0.1:" + taken.getLocalPort());
            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.err())
                    .contains("--listen: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                            + " (Address already in use)");
            PlanCommandTest.Result metrics = tailor(
                    "nbd", "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:" + taken.getLocalPort());
            assertThat(metrics.exitCode()).isEqualTo(1);
            assertThat(metrics.err())
                    .contains("--metrics-listen: cannot serve metrics on 127.0.0.1:" + taken.getLocalPort() + " (");
            PlanCommandTest.Result samePort =
                    tailor("nbd", "serve", "--listen", "127.0.0.1:21820", "--metrics-listen", "127.0.0.1:21820");
            assertThat(samePort.exitCode()).isEqualTo(2);
            assertThat(samePort.err()).contains("--metrics-listen: \"127.0.0.1:21820\" is the NBD port");
            Path config = Files.writeString(
                    dir.resolve("taken.yaml"),
                    "address: 127.0.0.1\nport: " + taken.getLocalPort()
                            + "\nexports: [{name: d, size: 1MiB, file: d.img}]\n");
            PlanCommandTest.Result fromConfig = tailor("nbd", "serve", "--config", config.toString());
            assertThat(fromConfig.exitCode()).isEqualTo(1);
            assertThat(fromConfig.err())
                    .contains("address and port (or --listen): cannot listen on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    /**
     * The standard error of a child {@code tailor nbd serve ARGS} that is expected to fail at start, once it has
     * exited 1; a child that serves instead (its banner's first line) fails the test at once and is stopped.
     */
    private String secondServer(String name, String... args) throws Exception {
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        Process process = serve(out, err, args);
        try {
            Await.until(name + " exits or serves", () -> !process.isAlive() || awaitLineIfAny(out, "tailor: serving "));
            assertThat(process.isAlive())
                    .as("%s serves the file too: %s", name, Files.readString(out))
                    .isFalse();
            assertThat(process.exitValue()).as(Files.readString(err)).isEqualTo(1);
            return Files.readString(err);
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** A child JVM running {@code tailor nbd serve ARGS}, its stdout and stderr in separate files. */
    private Process serve(Path out, Path err, String... args) throws IOException {
        return new ProcessBuilder(serveCommand(args))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
    }

    /** The command line of a child JVM running {@code tailor nbd serve ARGS}. */
    private static List<String> serveCommand(String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // As the jar's manifest does (Enable-Native-Access): the native epoll transport loads a library.
        List<String> command = new ArrayList<>(List.of(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.tailor.cli.Tailor",
                "nbd",
                "serve"));
        command.addAll(List.of(args));
        return command;
    }

    /** Connects to the Unix socket {@code path} and does the handshake up to the size of {@code export}. */
    private static long exportSize(Path socket, String export) throws IOException {
        try (java.nio.channels.SocketChannel channel =
                java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            channel.connect(java.net.UnixDomainSocketAddress.of(socket));
            return handshake(
                    new DataInputStream(java.nio.channels.Channels.newInputStream(channel)),
                    new DataOutputStream(java.nio.channels.Channels.newOutputStream(channel)),
                    export);
        }
    }

    /** Connects to {@code host:port} and does the handshake up to the size of {@code export}. */
    private static long exportSize(String host, int port, String export) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 10_000);
            socket.setSoTimeout(10_000);
            return handshake(
                    new DataInputStream(socket.getInputStream()),
                    new DataOutputStream(socket.getOutputStream()),
                    export);
        }
    }

    private static long handshake(DataInputStream in, DataOutputStream out, String export) throws IOException {
        assertThat(in.readLong()).isEqualTo(0x4e42444d41474943L);
        in.readLong();
        in.readUnsignedShort();
        out.writeInt(3);
        out.writeLong(0x49484156454F5054L);
        out.writeInt(1);
        out.writeInt(export.length());
        out.write(export.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return in.readLong();
    }

    @Test
    void fileUnixAndTheirBadInput_exitWith2NamingTheOption() throws Exception {
        Path missing = dir.resolve("missing.img");
        PlanCommandTest.Result noFile = tailor("nbd", "serve", "--file", missing.toString());
        assertThat(noFile.exitCode()).isEqualTo(2);
        assertThat(noFile.err()).contains("--file: " + missing + " does not exist");
        Path image = dir.resolve("image.img");
        try (RandomAccessFile created = new RandomAccessFile(image.toFile(), "rw")) {
            created.setLength(1 << 20);
        }
        PlanCommandTest.Result noFolder = tailor(
                "nbd",
                "serve",
                "--file",
                image.toString(),
                "--unix",
                dir.resolve("nowhere/nbd.sock").toString());
        assertThat(noFolder.exitCode()).isEqualTo(2);
        assertThat(noFolder.err())
                .contains("--unix: \"" + dir.resolve("nowhere/nbd.sock") + "\": the folder " + dir.resolve("nowhere")
                        + " does not exist");
        PlanCommandTest.Result tooLarge = tailor("nbd", "serve", "--file", image.toString(), "--size", "2MiB");
        assertThat(tooLarge.exitCode()).isEqualTo(2);
        assertThat(tooLarge.err()).contains("--size: 2MiB is more than the 1048576 bytes of " + image);
        assertThat(tailor("nbd", "serve", "--file", image.toString(), "--size", "1000")
                        .err())
                .contains("--size: \"1000\" (expected: a positive multiple of 512 bytes");
        assertThat(tailor("nbd", "serve", "--read-only").err()).contains("--read-only: needs --file");
        PlanCommandTest.Result device = tailor("nbd", "serve", "--file", "/dev/zero");
        assertThat(device.exitCode()).isEqualTo(2);
        assertThat(device.err()).contains("--file: /dev/zero is not a regular file (a block or character device?)");
        assertThat(tailor("nbd", "serve", "--file", image.toString(), "--export-name", "a b")
                        .err())
                .contains("--export-name: \"a b\" (expected: 1 to 256 characters");
        Path config = Files.writeString(dir.resolve("exports.yaml"), "exports: [{name: d, file: d.img, size: 1MiB}]\n");
        assertThat(tailor("nbd", "serve", "--config", config.toString(), "--file", image.toString())
                        .err())
                .contains("--file: not with --config");
    }

    @Test
    void tlsBadInput_exitsWith2NamingTheOption() throws Exception {
        Path image = dir.resolve("image.img");
        try (RandomAccessFile created = new RandomAccessFile(image.toFile(), "rw")) {
            created.setLength(1 << 20);
        }
        String file = image.toString();
        PlanCommandTest.Result badMode = tailor("nbd", "serve", "--file", file, "--tls", "maybe");
        assertThat(badMode.exitCode()).isEqualTo(2);
        assertThat(badMode.err()).contains("--tls: \"maybe\" (expected: off, on or require)");
        Path missing = dir.resolve("no-such-folder");
        PlanCommandTest.Result noFolder =
                tailor("nbd", "serve", "--file", file, "--tls", "require", "--tls-certificates", missing.toString());
        assertThat(noFolder.exitCode()).isEqualTo(2);
        assertThat(noFolder.err())
                .contains("--tls-certificates: " + missing + " does not exist (expected: a folder"
                        + " with server-cert.pem and server-key.pem)");
        Path empty = Files.createDirectories(dir.resolve("empty"));
        PlanCommandTest.Result noCertificate =
                tailor("nbd", "serve", "--file", file, "--tls", "on", "--tls-certificates", empty.toString());
        assertThat(noCertificate.exitCode()).isEqualTo(2);
        assertThat(noCertificate.err())
                .contains("--tls-certificates: " + empty.resolve("server-cert.pem") + " does not exist");
        // What the files hold is found when the server loads them at start: named as the option all the same.
        Path notPem = Files.createDirectories(dir.resolve("not-pem"));
        Files.writeString(notPem.resolve("server-cert.pem"), "not a certificate\n");
        Files.writeString(notPem.resolve("server-key.pem"), "not a key\n");
        PlanCommandTest.Result badCertificate =
                tailor("nbd", "serve", "--file", file, "--tls", "on", "--tls-certificates", notPem.toString());
        assertThat(badCertificate.exitCode()).isEqualTo(2);
        assertThat(badCertificate.err()).contains("--tls-certificates: " + notPem.resolve("server-cert.pem") + " ");
        assertThat(badCertificate.out()).doesNotContain("tailor: serving");
        assertThat(tailor("nbd", "serve", "--file", file, "--tls", "on").err())
                .contains("--tls-certificates:"
                        + " missing (expected: a folder with server-cert.pem and server-key.pem when --tls is on)");
        assertThat(tailor("nbd", "serve", "--file", file, "--tls-certificates", empty.toString())
                        .err())
                .contains("--tls-certificates: given, but --tls is off (expected: --tls on or require");
        assertThat(tailor("nbd", "serve", "--file", file, "--tls-verify-peer").err())
                .contains("--tls-verify-peer, but --tls is off");
    }

    @Test
    void serveFile_withTlsRequired_announcesNbdsUrisAndRefusesPlainClients() throws Exception {
        Path image = dir.resolve("vm.img");
        try (RandomAccessFile created = new RandomAccessFile(image.toFile(), "rw")) {
            created.setLength(4 << 20);
        }
        dev.tailor.testkit.TestCertificates ca = dev.tailor.testkit.TestCertificates.newCa("cli test CA");
        Path certificates = ca.writeAll(dir.resolve("tls"));
        Path socket = dir.resolve("nbd.sock");
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(
                out,
                err,
                "--file",
                image.toString(),
                "--listen",
                "127.0.0.1:0",
                "--unix",
                socket.toString(),
                "--tls",
                "require",
                "--tls-certificates",
                certificates.toString(),
                "--tls-verify-peer");
        try {
            Pattern uri = Pattern.compile("nbds://127\\.0\\.0\\.1:(\\d+)/disk {2}4MiB, read-write");
            Matcher export = uri.matcher(awaitLine(out, uri));
            assertThat(export.find()).isTrue();
            int port = Integer.parseInt(export.group(1));
            awaitLine(out, Pattern.compile(Pattern.quote("  nbds+unix:///disk?socket=" + socket)));
            awaitLine(
                    out,
                    Pattern.compile(Pattern.quote("  tls: required, certificates " + certificates
                            + ", clients need a certificate signed by its ca-cert.pem")));
            // EXPORT_NAME before STARTTLS cannot be refused, so the server ends the session.
            assertThatThrownBy(() -> exportSize("127.0.0.1", port, "disk")).isInstanceOf(IOException.class);
            var nbdinfo = dev.tailor.testkit.Tools.require("nbdinfo", "libnbd-bin");
            Process info = new ProcessBuilder(
                            nbdinfo.toString(),
                            "--size",
                            "nbds://127.0.0.1:" + port + "/disk?tls-certificates=" + certificates)
                    .redirectErrorStream(true)
                    .start();
            assertThat(info.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(new String(info.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip())
                    .isEqualTo(String.valueOf(4 << 20));
            assertThat(info.exitValue()).isZero();
            assertThat(Files.readString(err)).isEmpty();
            // A client without TLS is refused, and the server says why in one log line.
            Process plain = new ProcessBuilder(nbdinfo.toString(), "--size", "nbd://127.0.0.1:" + port + "/disk")
                    .redirectErrorStream(true)
                    .start();
            assertThat(plain.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(plain.exitValue()).isNotZero();
            String refused = awaitLine(err, Pattern.compile("refused before STARTTLS"));
            assertThat(refused)
                    .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  HandshakeHandler: \\[id: .*\\]:"
                            + " NBD_OPT_\\w+ refused before STARTTLS: TLS is required \\(a client without TLS, e.g. nbd://"
                            + " instead of nbds://\\)");
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
            process.destroyForcibly();
        }
    }

    @Test
    void serveFile_onAUnixSocket_announcesTheUriServesItAndRemovesTheSocket() throws Exception {
        Path image = dir.resolve("vm.img");
        try (RandomAccessFile created = new RandomAccessFile(image.toFile(), "rw")) {
            created.setLength(4 << 20);
        }
        Path socket = dir.resolve("nbd.sock");
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(
                out,
                err,
                "--file",
                image.toString(),
                "--read-only",
                "--export-name",
                "vm",
                "--size",
                "2MiB",
                "--unix",
                socket.toString(),
                "--pid-file",
                dir.resolve("serve.pid").toString());
        try {
            awaitLine(
                    out,
                    Pattern.compile(Pattern.quote("  nbd+unix:///vm?socket=" + socket + "  2MiB, read-only,"
                            + " tenant default, file " + image)));
            awaitLine(out, Pattern.compile("^  connections: at most 256; idle timeout off$"));
            // Written once the server accepts connections, just after the banner: wait for it, as a script would.
            Await.until("the pid file", () -> Files.exists(dir.resolve("serve.pid")));
            assertThat(dir.resolve("serve.pid")).hasContent(process.pid() + "\n");
            assertThat(Files.readAllLines(out))
                    .anyMatch(l -> l.equals("tailor: serving 1 export on unix socket " + socket + "; Ctrl-C stops"))
                    .as("no per-address limit for Unix-socket clients")
                    .noneMatch(l -> l.contains("per client address"));
            assertThat(exportSize(socket, "vm")).isEqualTo(2L << 20);
            assertThat(exportSize(socket, ""))
                    .as("the empty name: the default export")
                    .isEqualTo(2L << 20);
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(143);
            assertThat(dir.resolve("serve.pid")).as("removed on exit").doesNotExist();
            assertThat(socket).as("removed on exit").doesNotExist();
            assertThat(image).as("the served file stays").exists();
            assertThat(Files.readString(err)).isEmpty();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void serve_announcesTheExportOnStdoutServesItAndCleansUpOnSigterm() throws Exception {
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(out, err, "--listen", "127.0.0.1:0");
        try {
            Pattern uri = Pattern.compile("nbd://127\\.0\\.0\\.1:(\\d+)/disk {2}1GiB, read-write, tenant default,"
                    + " file (\\S+)/disk\\.img \\(temporary: removed on exit\\)");
            Matcher export = uri.matcher(awaitLine(out, uri));
            assertThat(export.find()).isTrue();
            assertThat(Files.readAllLines(out))
                    .anyMatch(l -> l.startsWith("tailor: serving 1 export on 127.0.0.1:")
                            && l.endsWith("(loopback only); Ctrl-C stops"));
            int port = Integer.parseInt(export.group(1));
            Path temporary = Path.of(export.group(2));
            assertThat(temporary.resolve("disk.img")).exists();

            // A client gets through the handshake to the 1 GiB export.
            assertThat(exportSize("127.0.0.1", port, "disk")).isEqualTo(1L << 30);

            process.destroy(); // SIGTERM, as Ctrl-C's SIGINT: the shutdown hook runs
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(143);
            assertThat(Files.readAllLines(out)).contains("tailor: stopped; removed " + temporary);
            assertThat(Files.readString(err))
                    .as("nothing went wrong, so nothing on stderr")
                    .isEmpty();
            assertThat(temporary).doesNotExist();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void serve_onPortZeroWithoutAHost_listensOnAFreeLoopbackPort_andSaysWhichOnItsListeningLines() throws Exception {
        // Was: --listen: ":0" (expected: HOST:PORT, ...), and --metrics-listen alike.
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(out, err, "--listen", ":0", "--metrics-listen", ":0");
        try {
            Pattern metrics = Pattern.compile("  metrics: http://127\\.0\\.0\\.1:(\\d+)/metrics, health: /healthz");
            Matcher metricsLine = metrics.matcher(awaitLine(out, metrics));
            assertThat(metricsLine.matches()).isTrue();
            assertThat(Integer.parseInt(metricsLine.group(1))).isPositive();
            Pattern serving = Pattern.compile(
                    "tailor: serving 1 export on 127\\.0\\.0\\.1:(\\d+) \\(loopback only\\);" + " Ctrl-C stops");
            Matcher servingLine = serving.matcher(awaitLine(out, serving));
            assertThat(servingLine.matches()).isTrue();
            int port = Integer.parseInt(servingLine.group(1));
            assertThat(port).isPositive();
            assertThat(exportSize("127.0.0.1", port, "disk")).isEqualTo(1L << 30);
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readString(err)).isEmpty();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void stopWithARequestHungUpstream_saysAtOnceWhatItWaitsFor_thenThatItStopped() throws Exception {
        // A SIGTERM used to print nothing for the drain's up to 10 s, until "tailor: stopped".
        Path nbdkit = Tools.require("nbdkit", "nbdkit");
        int upstreamPort = dev.tailor.lab.ExperimentRig.freePort();
        Path upstreamLog = dir.resolve("upstream.log");
        // Reads take a minute upstream; the log filter, outermost, notes each request as it arrives.
        Process upstream = new ProcessBuilder(
                        nbdkit.toString(),
                        "-f",
                        "--exit-with-parent",
                        "-i",
                        "127.0.0.1",
                        "-p",
                        Integer.toString(upstreamPort),
                        "--filter=log",
                        "--filter=delay",
                        "memory",
                        "1M",
                        "rdelay=60",
                        "logfile=" + upstreamLog)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nbdkit.out").toFile())
                .start();
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = null;
        try {
            Await.until("nbdkit listening on " + upstreamPort, () -> {
                try (Socket probe = new Socket()) {
                    probe.connect(new InetSocketAddress("127.0.0.1", upstreamPort), 1_000);
                    return true;
                } catch (IOException e) {
                    return false;
                }
            });
            Path config = dir.resolve("exports.yaml");
            Files.writeString(config, """
                    address: 127.0.0.1
                    port: 0
                    exports:
                      - name: up
                        upstream: {host: 127.0.0.1, port: %d}
                    """.formatted(upstreamPort));
            process = serve(out, err, "--config", config.toString());
            Matcher export = Pattern.compile("nbd://127\\.0\\.0\\.1:(\\d+)/up ")
                    .matcher(awaitLine(out, Pattern.compile("nbd://127\\.0\\.0\\.1:(\\d+)/up ")));
            assertThat(export.find()).isTrue();
            try (Socket client = new Socket()) {
                client.connect(new InetSocketAddress("127.0.0.1", Integer.parseInt(export.group(1))), 10_000);
                DataInputStream in = new DataInputStream(client.getInputStream());
                DataOutputStream request = new DataOutputStream(client.getOutputStream());
                assertThat(handshake(in, request, "up")).isEqualTo(1L << 20);
                in.readUnsignedShort(); // transmission flags; no zeroes after them (NO_ZEROES)
                request.writeInt(0x25609513); // a 4 KiB read at 64 KiB
                request.writeShort(0);
                request.writeShort(0);
                request.writeLong(7);
                request.writeLong(65536);
                request.writeInt(4096);
                request.flush();
                Await.until(
                        "the read to reach the upstream",
                        () -> awaitLineIfAny(upstreamLog, "offset=0x10000"),
                        () -> upstreamLog);

                process.destroy(); // SIGTERM, as Ctrl-C's SIGINT
                awaitLine(out, Pattern.compile("^tailor: stopping"));
                assertThat(Files.readAllLines(out))
                        .as("said while the drain still waits for the read")
                        .contains("tailor: stopping: waiting up to 10 s for 1 request in flight")
                        .noneMatch(l -> l.startsWith("tailor: stopped"));
                assertThat(process.isAlive()).isTrue();
                // The upstream gone, its read fails at once: the drain ends.
                upstream.destroyForcibly();
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                List<String> lines = Files.readAllLines(out);
                assertThat(lines.indexOf("tailor: stopping: waiting up to 10 s for 1 request in flight"))
                        .isLessThan(lines.indexOf("tailor: stopped"))
                        .isNotNegative();
            }
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
            upstream.destroyForcibly();
        }
    }

    @Test
    void stopWhileStarting_removesTheFilesTheStartCreated_andSaysSo() throws Exception {
        // An upstream that accepts the connection and never greets holds the start for its 10 s handshake limit.
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            silent.setSoTimeout(60_000);
            Path image = dir.resolve("new.img");
            Path existing = dir.resolve("existing.img");
            Files.write(existing, new byte[4096]);
            Path config = dir.resolve("exports.yaml");
            Files.writeString(config, """
                    port: 0
                    exports:
                      - name: new
                        size: 1MiB
                        file: new.img
                      - name: existing
                        file: existing.img
                      - name: up
                        upstream: {host: 127.0.0.1, port: %d}
                    """.formatted(silent.getLocalPort()));
            Path out = dir.resolve("serve.out");
            Path err = dir.resolve("serve.err");
            Process process = serve(out, err, "--config", config.toString());
            try (Socket upstream = silent.accept()) {
                // The exports are opened in order: the file ones are there, the start waits for the upstream.
                assertThat(image).exists();
                process.destroy(); // SIGTERM, as Ctrl-C's SIGINT
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(process.exitValue()).isEqualTo(143);
                assertThat(Files.readAllLines(out)).containsExactly("tailor: stopped while starting; removed " + image);
                assertThat(image).as("created by the start that was stopped").doesNotExist();
                assertThat(existing).as("there before the start").exists().hasSize(4096);
            } finally {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void serveOnAllAddresses_showsTheAddressAsGivenAndUrisWithAUsableHost() throws Exception {
        // --listen 0.0.0.0:10809 used to print [0:0:0:0:0:0:0:0], in the banner and in every nbd:// URI.
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process process = serve(out, err, "--listen", "0.0.0.0:0");
        try {
            Pattern uri = Pattern.compile("nbd://([^/\\[\\]]+):(\\d+)/disk {2}1GiB");
            Matcher export = uri.matcher(awaitLine(out, uri));
            assertThat(export.find()).isTrue();
            String host = export.group(1);
            int port = Integer.parseInt(export.group(2));
            assertThat(host).isNotEqualTo("0.0.0.0");
            assertThat(Files.readAllLines(out))
                    .contains("tailor: serving 1 export on 0.0.0.0:" + port + " (all addresses); Ctrl-C stops");
            assertThat(Files.readString(err)).contains("tailor: warning: reachable from the network");
            assertThat(exportSize(host, port, "disk"))
                    .as("the URI's host works")
                    .isEqualTo(1L << 30);
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
            process.destroyForcibly();
        }
    }

    @Test
    void exampleConfig_failingAtItsSecondExport_leavesNoFileItCreated() throws Exception {
        // examples/nbd.yaml: golden-image's file is missing, found with the config before vm1-root.img is created.
        Path example = Path.of(System.getProperty("tailor.projectDir", ".."), "examples", "nbd.yaml");
        Path config = Files.copy(example, dir.resolve("nbd.yaml"));
        assumeThat(Path.of("/srv/images/debian-12.raw")).doesNotExist();
        PlanCommandTest.Result result =
                tailor("nbd", "serve", "--config", config.toString(), "--listen", "127.0.0.1:0");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("exports[1].file: /srv/images/debian-12.raw does not exist (expected: an existing file: a"
                        + " read-only export does not create one) at line 38");
        assertThat(dir.resolve("vm1-root.img")).doesNotExist();
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("nbd.yaml");
        }
    }

    @Test
    void sizeOverTheFileSystemLimit_isBadInputAndLeavesNoFile() throws Exception {
        try (RandomAccessFile probe = new RandomAccessFile(dir.resolve("probe").toFile(), "rw")) {
            probe.setLength(17L << 40);
            assumeThat(false)
                    .as("the file system of %s takes a 17 TiB file (ext4 stops at 16 TiB)", dir)
                    .isTrue();
        } catch (IOException expected) {
            // ext4 with 4 KiB blocks: File too large.
        } finally {
            Files.deleteIfExists(dir.resolve("probe"));
        }
        Path config =
                Files.writeString(dir.resolve("exports.yaml"), "exports: [{name: big, file: big.img, size: 17TiB}]");
        PlanCommandTest.Result result =
                tailor("nbd", "serve", "--config", config.toString(), "--listen", "127.0.0.1:0");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("export big: size 17TiB (18691697672192 bytes) is more than the file" + " system of " + dir
                        + " allows for one file")
                .contains("expected: at most");
        assertThat(dir.resolve("big.img")).doesNotExist();
    }

    @Test
    void configProblems_areAllListedAsBadInput() throws Exception {
        Path config = Files.writeString(dir.resolve("exports.yaml"), """
                prot: 10809
                exports: [{name: d, file: d.img, size: 1000, tenent: acme}]
                """);
        PlanCommandTest.Result result = tailor("nbd", "serve", "--config", config.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("3 problems:")
                .contains("prot: unknown field (expected one of address, port,")
                .contains("exports[0].tenent: unknown field")
                .contains("exports[0].size: 1000B (expected: a multiple of 512 bytes");
        assertThat(dir.resolve("d.img")).doesNotExist();
    }
}
