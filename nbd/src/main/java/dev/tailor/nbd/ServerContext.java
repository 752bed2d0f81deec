package dev.tailor.nbd;

import java.util.Map;

/**
 * What every connection of one server shares: the exports by name (in configuration order; the first
 * is the default export, asked for with the empty name), the limits and the dispatcher.
 *
 * @param exports    the exports by name, iteration in configuration order
 * @param limits     per-request and per-connection limits
 * @param dispatcher the seam to the backends
 * @param admission  which connections are taken, and which handshakes make room for newcomers
 */
record ServerContext(Map<String, Export> exports, NbdConfig.Limits limits, RequestDispatcher dispatcher,
        ConnectionAdmission admission) {

    /** The export {@code name} refers to ({@code ""}: the default export), or null. */
    Export export(String name) {
        if (name.isEmpty()) {
            return exports.isEmpty() ? null : exports.values().iterator().next();
        }
        return exports.get(name);
    }
}
