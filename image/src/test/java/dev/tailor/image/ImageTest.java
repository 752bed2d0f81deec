package dev.tailor.image;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OCI image Jib writes to target/tailor-image.tar (an OCI image layout in a tar): its entrypoint,
 * user and layers, the size of the application in it, and that the tailor command runs on the image's
 * own Java runtime.
 */
class ImageTest {

    /** The application's part of the image (every file under /app: Tailor's jars and its libraries). */
    private static final long APP_MAX_BYTES = 40L * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path TAR = Path.of("target", "tailor-image.tar");

    /** The files of one layer: path (no leading slash) to entry, in layer order. */
    private record Layer(String digest, long compressedBytes, Map<String, Entry> files) {}

    private record Entry(long bytes, int mode, boolean directory) {}

    private static JsonNode config;
    private static List<Layer> layers;
    private static Map<String, byte[]> blobs;

    @BeforeAll
    static void readImage() throws IOException {
        assertThat(TAR)
                .as("the image tar built by jib:buildTar before the tests")
                .exists();
        blobs = new HashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(Files.newInputStream(TAR))) {
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                if (!entry.isDirectory()) {
                    blobs.put(entry.getName(), tar.readAllBytes());
                }
            }
        }
        assertThat(new String(blobs.get("oci-layout"), StandardCharsets.UTF_8)).contains("\"imageLayoutVersion\"");
        JsonNode index = JSON.readTree(blobs.get("index.json"));
        JsonNode manifest = JSON.readTree(
                blob(index.path("manifests").path(0).path("digest").asText()));
        assertThat(manifest.path("mediaType").asText()).isEqualTo("application/vnd.oci.image.manifest.v1+json");
        config = JSON.readTree(blob(manifest.path("config").path("digest").asText()));
        layers = new ArrayList<>();
        for (JsonNode layer : manifest.path("layers")) {
            assertThat(layer.path("mediaType").asText()).isEqualTo("application/vnd.oci.image.layer.v1.tar+gzip");
            byte[] bytes = blob(layer.path("digest").asText());
            Map<String, Entry> files = new LinkedHashMap<>();
            try (TarArchiveInputStream tar =
                    new TarArchiveInputStream(new GZIPInputStream(new java.io.ByteArrayInputStream(bytes)))) {
                TarArchiveEntry entry;
                while ((entry = tar.getNextEntry()) != null) {
                    String name = entry.getName().replaceFirst("^/", "").replaceFirst("/$", "");
                    files.put(name, new Entry(entry.getSize(), entry.getMode() & 07777, entry.isDirectory()));
                }
            }
            layers.add(new Layer(layer.path("digest").asText(), bytes.length, files));
        }
    }

    private static byte[] blob(String digest) {
        byte[] bytes = blobs.get("blobs/" + digest.replace(':', '/'));
        assertThat(bytes).as("blob %s in the image layout", digest).isNotNull();
        return bytes;
    }

    private static Layer layerWith(String path) {
        return layers.stream()
                .filter(l -> l.files().containsKey(path))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no layer holds " + path));
    }

    private static List<String> classpath() {
        Layer layer = layerWith("app/jib-classpath-file");
        assertThat(layer).isNotNull();
        return List.of(readFile("app/jib-classpath-file").trim().split(":"));
    }

    private static String readFile(String path) {
        for (Layer layer : layers) {
            if (layer.files().containsKey(path)) {
                try (TarArchiveInputStream tar = new TarArchiveInputStream(
                        new GZIPInputStream(new java.io.ByteArrayInputStream(blob(layer.digest()))))) {
                    TarArchiveEntry entry;
                    while ((entry = tar.getNextEntry()) != null) {
                        if (entry.getName().replaceFirst("^/", "").equals(path)) {
                            return new String(tar.readAllBytes(), StandardCharsets.UTF_8);
                        }
                    }
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }
        }
        throw new AssertionError("no file " + path);
    }

    @Test
    void config_runsTheTailorCommandOnTheJlinkRuntime_asANonRootUser() {
        assertThat(config.path("architecture").asText()).isEqualTo("amd64");
        assertThat(config.path("os").asText()).isEqualTo("linux");
        JsonNode c = config.path("config");
        List<String> entrypoint = new ArrayList<>();
        c.path("Entrypoint").forEach(a -> entrypoint.add(a.asText()));
        assertThat(entrypoint)
                .containsExactly(
                        "/opt/java/bin/java",
                        "-XX:MaxRAMPercentage=75",
                        "-XX:-UsePerfData",
                        "-cp",
                        "@/app/jib-classpath-file",
                        "dev.tailor.cli.Tailor");
        // The Deployment passes the subcommand (heart run --config ...) as args; the image adds none.
        assertThat(c.path("Cmd").isMissingNode()
                        || c.path("Cmd").isNull()
                        || c.path("Cmd").isEmpty())
                .isTrue();
        assertThat(c.path("User").asText()).isEqualTo("65532:65532");
        assertThat(c.path("ExposedPorts").has("9464/tcp")).isTrue();
        assertThat(c.path("Env").toString()).contains("JAVA_HOME=/opt/java");
    }

    @Test
    void layers_runtimeApartFromLibrariesApartFromTailor_andNothingElse() {
        // The empty base: every file comes from one of our layers. The runtime, the third-party
        // libraries and Tailor's own jars are separate layers, so a new Tailor build replaces only
        // the last one on a node that has pulled the image before.
        Layer runtime = layerWith("opt/java/bin/java");
        assertThat(runtime.files().get("opt/java/bin/java").mode()).isEqualTo(0755);
        assertThat(runtime.files()).containsKey("opt/java/lib/modules").containsKey("opt/java/lib/security/cacerts");
        assertThat(runtime.files().keySet()).allMatch(p -> p.equals("opt") || p.startsWith("opt/java"));

        List<String> classpath = classpath();
        Layer libraries = layerWith(classpath.stream()
                .filter(p -> p.contains("kubernetes-client-api"))
                .findFirst()
                .orElseThrow()
                .substring(1));
        Layer tailor = layerWith(classpath.stream()
                .filter(p -> p.contains("tailor-cli"))
                .findFirst()
                .orElseThrow()
                .substring(1));
        assertThat(List.of(runtime, libraries, tailor)).doesNotHaveDuplicates();
        assertThat(tailor.files().keySet())
                .filteredOn(p -> p.endsWith(".jar"))
                .allMatch(p -> p.substring(p.lastIndexOf('/') + 1).startsWith("tailor-"));
        // Every jar on the class path is in the image (the folders app/classes and app/resources
        // are Jib's for a module's own classes; this module has none).
        assertThat(classpath)
                .filteredOn(p -> !p.endsWith(".jar"))
                .containsExactlyInAnyOrder("/app/resources", "/app/classes");
        for (String entry : classpath) {
            if (entry.endsWith(".jar")) {
                layerWith(entry.substring(1));
            }
        }
        assertThat(layers.stream().flatMap(l -> l.files().keySet().stream()))
                .allMatch(p -> p.equals("opt")
                        || p.startsWith("opt/java")
                        || p.equals("app")
                        || p.startsWith("app/")
                        || p.equals("tmp"));
    }

    @Test
    void application_atMost40MiB_withoutNativeSolvers() {
        // Everything under /app: Tailor's jars and the libraries on its class path.
        long appBytes = layers.stream()
                .flatMap(l -> l.files().entrySet().stream())
                .filter(e -> e.getKey().startsWith("app/") && !e.getValue().directory())
                .mapToLong(e -> e.getValue().bytes())
                .sum();
        assertThat(appBytes).as("bytes under /app").isLessThanOrEqualTo(APP_MAX_BYTES);
        // OR-tools (native solvers for five platforms, 100 MiB) is the tests' oracle, not the runtime's.
        assertThat(classpath()).noneMatch(p -> p.contains("ortools") || p.contains("jna"));
    }

    @Test
    void tailorCommand_runsOnTheImagesRuntime(@TempDir Path root) throws Exception {
        // Unpack the layers into a folder and run the entrypoint from there, paths rewritten: the
        // runtime jlink made must hold every module the command needs (a missing one fails here
        // with NoClassDefFoundError), and the planner must run without anything outside the image.
        for (Layer layer : layers) {
            try (TarArchiveInputStream tar = new TarArchiveInputStream(
                    new GZIPInputStream(new java.io.ByteArrayInputStream(blob(layer.digest()))))) {
                TarArchiveEntry entry;
                while ((entry = tar.getNextEntry()) != null) {
                    Path target = root.resolve(entry.getName().replaceFirst("^/", ""));
                    if (entry.isDirectory()) {
                        Files.createDirectories(target);
                    } else {
                        Files.createDirectories(target.getParent());
                        Files.copy(tar, target);
                        if ((entry.getMode() & 0100) != 0) {
                            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
                        }
                    }
                }
            }
        }
        String classpath = String.join(
                ":",
                classpath().stream()
                        .filter(p -> p.endsWith(".jar"))
                        .map(p -> root + p)
                        .toList());
        Process process = new ProcessBuilder(
                        root.resolve("opt/java/bin/java").toString(),
                        "-XX:-UsePerfData",
                        "-cp",
                        classpath,
                        "dev.tailor.cli.Tailor",
                        "heart",
                        "plan",
                        "--format",
                        "json")
                .redirectError(root.resolve("stderr.txt").toFile())
                .start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = process.getInputStream()) {
            in.transferTo(out);
        }
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String output = out.toString(StandardCharsets.UTF_8);
        assertThat(process.exitValue())
                .as(output + Files.readString(root.resolve("stderr.txt")))
                .isZero();
        JsonNode plan = JSON.readTree(output);
        assertThat(plan.path("shares").path("b").size()).as(output).isEqualTo(5);
    }
}
