/**
 * The NBD server and proxy on Netty: serves virtual disks (exports) of tenants to real NBD clients (qemu,
 * libnbd's nbdinfo and nbdcopy, fio's {@code nbd} engine, the Linux kernel) from the backends of {@link
 * dev.tailor.nbd.backend}.
 *
 * <p>{@link dev.tailor.nbd.server.NbdServer} starts everything. A connection's pipeline holds one phase
 * handler at a time: {@link dev.tailor.nbd.server.HandshakeHandler} negotiates (options, STARTTLS with an
 * {@code SslHandler} put in front, structured replies, metadata contexts, {@code GO}/{@code INFO}/{@code
 * EXPORT_NAME}, {@code ABORT}) and, when an export is chosen, replaces itself with a {@link
 * dev.tailor.nbd.server.TransmissionHandler}, handing over the immutable {@link
 * dev.tailor.nbd.server.Negotiated} session and the bytes read past the end of negotiation. The last handler,
 * {@link dev.tailor.nbd.server.ConnectionErrors}, logs what closed a connection. Around them: which
 * connections are taken ({@code ConnectionAdmission}), the seam to the backends ({@link
 * dev.tailor.nbd.server.RequestDispatcher}, with segment admission in {@link
 * dev.tailor.nbd.server.AdmissionDispatcher}), the order of overlapping writes ({@link
 * dev.tailor.nbd.server.WriteOrdering}), the metrics ({@link dev.tailor.nbd.server.IoMetrics}, {@link
 * dev.tailor.nbd.server.SlowSegments}, {@link dev.tailor.nbd.server.MetricsEndpoint}), the TLS credentials
 * ({@code ServerTls}), the proxy's background work on the loops ({@link
 * dev.tailor.nbd.server.ProxyBackgroundWork}) and what {@code tailor nbd serve} prints once the server runs
 * ({@link dev.tailor.nbd.server.ServeSummary}).
 *
 * <p>Source: doc/proto.md of the NetworkBlockDevice project, sections "Handshake" ("Fixed newstyle
 * negotiation", "Option types"), "TLS support", "Transmission", "Request types", "Metadata querying" and
 * "Error values"; docs/nbd.md describes the configuration, the limits and the durability guarantees.
 */
package dev.tailor.nbd.server;
