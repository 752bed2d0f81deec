package dev.tailor.nbd.testing;

import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.server.NbdServer;
import dev.tailor.nbd.server.RequestDispatcher;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Servers for tests: loopback, a free port, two event loops, test backends. */
public final class TestServers {

    private TestServers() {}

    public static NbdConfig config(Limits limits, ExportConfig... exports) {
        return NbdConfig.builder()
                .address("127.0.0.1")
                .port(0)
                .limits(limits)
                .eventLoopThreads(2)
                .fileIoThreads(2)
                .exports(exports)
                .build();
    }

    /** An export config whose backend the test supplies (the file is never opened). */
    public static ExportConfig export(String name, boolean readOnly) {
        return ExportConfig.builder()
                .name(name)
                .tenant("test")
                .readOnly(readOnly)
                .file(Path.of("unused-" + name))
                .build();
    }

    /** A server whose exports are the given backends, by name, in order. */
    public static NbdServer start(Limits limits, Map<String, BlockBackend> backends, String... readOnly)
            throws IOException {
        List<String> readOnlyNames = List.of(readOnly);
        ExportConfig[] exports = backends.keySet().stream()
                .map(name -> export(name, readOnlyNames.contains(name)))
                .toArray(ExportConfig[]::new);
        return NbdServer.start(
                config(limits, exports), RequestDispatcher.DIRECT, (export, context) -> backends.get(export.name()));
    }

    public static NbdServer start(BlockBackend backend) throws IOException {
        return start(Limits.DEFAULTS, Map.of("disk", backend));
    }
}
