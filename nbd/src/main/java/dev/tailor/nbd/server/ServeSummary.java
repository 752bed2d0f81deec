package dev.tailor.nbd.server;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.common.Numbers;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.backend.FileBackend;
import dev.tailor.nbd.backend.UpstreamBackend;
import dev.tailor.nbd.config.AdmissionSettings;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.config.Limits;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.TlsSettings;
import java.io.PrintWriter;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

/**
 * What {@code tailor nbd serve} prints once the server runs: where it listens, with the URIs clients use,
 * one line per export, the loops and admission, the connection limits, TLS and the metrics endpoint; the
 * warnings for an address reachable from the network.
 */
public final class ServeSummary {

    private ServeSummary() {}

    /**
     * Prints where the server listens and one line per export, on {@code out}; the warning for an address
     * reachable from the network on {@code err}.
     *
     * @param settings the configuration served; its address is shown as the user gave it (config or {@code --listen})
     */
    public static void print(NbdServer server, NbdConfig settings, Path temporary, PrintWriter out, PrintWriter err) {
        String address = settings.address();
        Limits limits = settings.limits();
        AdmissionSettings admissionSettings = settings.admission();
        List<ExportConfig> exportConfigs = settings.exports();
        InetSocketAddress bound = server.localAddress();
        Path socket = server.unixSocket();
        TlsSettings tls = server.tls();
        boolean tlsOn = tls.enabled();
        boolean tlsRequired = tls.mode().equals("require");
        List<String> places = new java.util.ArrayList<>();
        String base = null;
        if (bound != null) {
            InetAddress ip = bound.getAddress();
            String host = hostForUri(address);
            // The wildcard address is no use in a URI: show one that other machines can connect to.
            String uriHost = ip.isAnyLocalAddress() ? hostForUri(reachableAddress(!address.contains(":"))) : host;
            base = (tlsOn ? "nbds://" : "nbd://") + uriHost + ":" + bound.getPort() + "/";
            places.add(host + ":" + bound.getPort()
                    + (ip.isLoopbackAddress() ? " (loopback only)" : ip.isAnyLocalAddress() ? " (all addresses)" : ""));
            if (!ip.isLoopbackAddress() && !(tlsRequired && tls.verifyPeer())) {
                err.println(
                        tlsRequired
                                ? "tailor: warning: reachable from the network; TLS encrypts, but without --tls-verify-peer"
                                        + " anyone who can connect can read and write these disks"
                                : "tailor: warning: reachable from the network, and NBD has no authentication here: anyone"
                                        + " who can connect can read and write these disks");
            }
        }
        if (socket != null) {
            places.add("unix socket " + socket);
        }
        List<Export> exports = server.exports();
        java.util.Map<String, String> baselines = new java.util.HashMap<>();
        if (server.admission() != null) {
            for (ExportConfig e : exportConfigs) {
                if (e.baseline() != null) {
                    baselines.put(e.name(), ", baseline " + e.baseline().describe());
                }
            }
        }
        java.util.Map<String, String> doors = new java.util.HashMap<>();
        if (server.fairDispatch() != null) {
            for (FairDispatchDoor.ExportCounters e : server.fairDispatch().exportCounters()) {
                doors.put(
                        e.export(),
                        ", door " + e.backend() + " (depth "
                                + server.fairDispatch().depth(e.backend()) + ")");
            }
        }
        out.println("tailor: serving " + exports.size() + (exports.size() == 1 ? " export" : " exports") + " on "
                + String.join(" and ", places) + "; Ctrl-C stops");
        for (Export export : exports) {
            String details = "  " + ByteSize.format(export.sizeBytes()) + ", "
                    + (export.readOnly() ? "read-only" : "read-write") + ", tenant " + export.tenant() + ", "
                    + backend(export.backend(), temporary) + baselines.getOrDefault(export.name(), "")
                    + doors.getOrDefault(export.name(), "");
            String unixUri = socket == null
                    ? null
                    : (tlsOn ? "nbds+unix:///" : "nbd+unix:///") + export.name() + "?socket=" + socket;
            out.println("  " + (base != null ? base + export.name() : unixUri) + details);
            if (base != null && unixUri != null) {
                out.println("  " + unixUri);
            }
        }
        out.println("  event loops: " + server.eventLoops().loops().size() + " on "
                + server.transport().name().toLowerCase(java.util.Locale.ROOT) + ", "
                + server.loopMode().name().toLowerCase(java.util.Locale.ROOT) + "; segment admission: "
                + (server.admission() == null
                        ? "off"
                        : "on (" + admissionSettings.variant() + "), budget "
                                + admissionSettings.budgetDescription() + ", reserve "
                                + (server.admission().controller().config().adaptiveReserve()
                                        ? "adaptive"
                                        : server.admission().controller().reserveFraction())
                                + String.format(
                                        java.util.Locale.ROOT,
                                        ", queue %,d per segment",
                                        server.admission().controller().config().queueCapacityPerSegment())
                                + switchedDepartures(
                                        admissionSettings.variant(),
                                        server.admission().controller().config()))
                + (server.fairDispatch() != null
                        ? "; fair dispatch: on, " + doorsAndDepths(server.fairDispatch())
                                + (server.fairDispatch().finishTag() ? ", by finish tag" : ", by start tag")
                        : server.admission() != null ? "; fair dispatch: off" : ""));
        // The per-address limit is for TCP clients: a Unix-socket client has no address.
        out.println("  connections: at most " + limits.maxConnections()
                + (bound != null ? ", " + limits.maxConnectionsPerAddress() + " per client address" : "")
                + "; idle timeout "
                + (limits.idleTimeoutNanos() == 0
                        ? "off"
                        : java.math.BigDecimal.valueOf(limits.idleTimeoutSeconds())
                                        .stripTrailingZeros()
                                        .toPlainString() + " s"));
        if (tlsOn) {
            out.println("  tls: " + (tlsRequired ? "required" : "on (clients may also connect without TLS: nbd://)")
                    + ", certificates " + tls.certificates()
                    + (tls.verifyPeer()
                            ? ", clients need a certificate signed by its ca-cert.pem"
                            : ", clients not verified"));
        }
        InetSocketAddress metrics = server.metricsAddress();
        if (metrics != null) {
            // As given (--metrics-listen [::1]:9810 prints [::1], not [0:0:0:0:0:0:0:1]), as the NBD address is.
            String given = settings.loop().metricsListen();
            String givenHost = given == null ? "" : given.substring(0, Math.max(0, given.lastIndexOf(':')));
            String metricsHost = metrics.getAddress().isAnyLocalAddress()
                    ? hostForUri(reachableAddress(metrics.getAddress() instanceof java.net.Inet4Address))
                    : hostForUri(givenHost.isBlank() ? metrics.getAddress().getHostAddress() : givenHost);
            out.println("  metrics: http://" + metricsHost + ":" + metrics.getPort() + "/metrics, health: /healthz");
            if (!metrics.getAddress().isLoopbackAddress()) {
                err.println("tailor: warning: the metrics endpoint is reachable from the network (no authentication;"
                        + " it shows export names and traffic)");
            }
        }
        out.flush();
    }

    /** {@code host}, with brackets when it is an IPv6 literal, as a URI or {@code HOST:PORT} needs. */
    static String hostForUri(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /**
     * For a server listening on every address ({@code 0.0.0.0} or {@code ::}), an address other machines
     * can use in a URI: the first IPv4 address of an interface that is up, not loopback and not
     * link-local, else (unless {@code ipv4Only}) the first such IPv6 address, else the loopback address.
     *
     * @param ipv4Only whether the server listens on IPv4 only ({@code 0.0.0.0})
     */
    static String reachableAddress(boolean ipv4Only) {
        String ipv6 = null;
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nic.isUp() || nic.isLoopback()) {
                    continue;
                }
                for (InetAddress candidate : Collections.list(nic.getInetAddresses())) {
                    if (candidate.isLoopbackAddress() || candidate.isLinkLocalAddress()) {
                        continue;
                    }
                    if (candidate instanceof Inet4Address) {
                        return candidate.getHostAddress();
                    }
                    if (ipv6 == null && !ipv4Only) {
                        ipv6 = candidate.getHostAddress();
                    }
                }
            }
        } catch (SocketException e) {
            // No interface list: fall back to loopback, which works on this machine at least.
        }
        return ipv6 != null ? ipv6 : ipv4Only ? "127.0.0.1" : "::1";
    }

    /** "1 door of depth 8", "2 doors of depth 8", or with different depths "2 doors of depths 8 and 64". */
    static String doorsAndDepths(FairDispatchDoor door) {
        List<Integer> depths = door.doorCounters().stream()
                .map(FairDispatchDoor.DoorCounters::depth)
                .toList();
        String doors = depths.size() + (depths.size() == 1 ? " door" : " doors");
        if (depths.stream().distinct().count() == 1) {
            return doors + " of depth " + depths.get(0);
        }
        List<String> each = depths.stream().map(String::valueOf).toList();
        return doors + " of depths " + String.join(", ", each.subList(0, each.size() - 1)) + " and "
                + each.get(each.size() - 1);
    }

    private static String backend(BlockBackend backend, Path temporary) {
        if (backend instanceof FileBackend file) {
            return "file " + ExportConfig.shownPath(file.file())
                    + (temporary != null && file.file().startsWith(temporary) ? " (temporary: removed on exit)" : "");
        }
        if (backend instanceof UpstreamBackend upstream) {
            int pool = upstream.poolSize();
            double timeout = upstream.requestTimeoutSeconds();
            return upstream + " (" + pool + (pool == 1 ? " connection" : " connections") + ", reply timeout "
                    + (timeout == 0 ? "off" : Numbers.written(timeout) + " s") + ")";
        }
        return backend.toString();
    }

    /** The departures a config can switch ({@link AdmissionSettings}), in the banner's order. */
    private static final List<java.util.Map.Entry<String, java.util.function.Predicate<AdmissionConfig>>> SWITCHES =
            List.of(
                    java.util.Map.entry("baselineGuarantee", AdmissionConfig::baselineGuarantee),
                    java.util.Map.entry("weightedHotService", AdmissionConfig::weightedHotService),
                    java.util.Map.entry("adaptiveReserve", AdmissionConfig::adaptiveReserve),
                    java.util.Map.entry("pacedRelease", AdmissionConfig::pacedRelease),
                    java.util.Map.entry("arrivalOrderWithinDisk", AdmissionConfig::arrivalOrderWithinDisk),
                    java.util.Map.entry("diskOrderAcrossGuarantee", AdmissionConfig::diskOrderAcrossGuarantee));

    /**
     * The departures the config switched away from its variant's defaults, as {@code ", diskOrderAcrossGuarantee
     * off"}, or an empty string: so that a config's switch shows in the banner.
     */
    static String switchedDepartures(String variant, AdmissionConfig config) {
        AdmissionConfig base =
                AdmissionSettings.VARIANT_PAPER.equals(variant) ? AdmissionConfig.PAPER : AdmissionConfig.DEFAULTS;
        StringBuilder out = new StringBuilder();
        for (var entry : SWITCHES) {
            boolean on = entry.getValue().test(config);
            if (on != entry.getValue().test(base)) {
                out.append(", ").append(entry.getKey()).append(on ? " on" : " off");
            }
        }
        return out.toString();
    }
}
