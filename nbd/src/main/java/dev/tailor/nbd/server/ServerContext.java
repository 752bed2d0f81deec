package dev.tailor.nbd.server;

import dev.tailor.nbd.config.Limits;
import java.util.Map;

/**
 * What every connection of one server shares: the exports by name (in configuration order; the first
 * is the default export, asked for with the empty name), the limits and the dispatcher.
 *
 * @param exports    the exports by name, iteration in configuration order
 * @param limits     per-request and per-connection limits
 * @param dispatcher the seam to the backends
 * @param admission  which connections are taken, and which handshakes make room for newcomers
 * @param io         the I/O metrics, whose clock times requests
 * @param tls        the TLS credentials and mode, or null when TLS is off
 */
record ServerContext(
        Map<String, Export> exports,
        Limits limits,
        RequestDispatcher dispatcher,
        ConnectionAdmission admission,
        IoMetrics io,
        ServerTls tls) {

    /** A context without TLS. */
    ServerContext(
            Map<String, Export> exports,
            Limits limits,
            RequestDispatcher dispatcher,
            ConnectionAdmission admission,
            IoMetrics io) {
        this(exports, limits, dispatcher, admission, io, null);
    }

    /** A context with I/O metrics of its own (tests). */
    ServerContext(
            Map<String, Export> exports, Limits limits, RequestDispatcher dispatcher, ConnectionAdmission admission) {
        this(exports, limits, dispatcher, admission, new IoMetrics(System::nanoTime, false));
    }

    /** The export {@code name} refers to ({@code ""}: the default export), or null. */
    Export export(String name) {
        if (name.isEmpty()) {
            return exports.isEmpty() ? null : exports.values().iterator().next();
        }
        return exports.get(name);
    }
}
