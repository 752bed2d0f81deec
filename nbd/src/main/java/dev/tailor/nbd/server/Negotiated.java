package dev.tailor.nbd.server;

/**
 * What a connection's handshake settled, handed from the {@link HandshakeHandler} to the
 * {@link TransmissionHandler} when it replaces itself (proto.md, "Transmission"): immutable, so the
 * transmission phase cannot reopen anything the negotiation decided.
 *
 * @param export            the export chosen by {@code NBD_OPT_GO} or {@code NBD_OPT_EXPORT_NAME}
 * @param transmissionFlags the transmission flags advertised for it
 * @param structuredReplies whether {@code NBD_OPT_STRUCTURED_REPLY} was acknowledged (after any STARTTLS)
 * @param baseAllocation    whether {@code NBD_OPT_SET_META_CONTEXT} selected {@code base:allocation} for this
 *                          export (the one metadata context served): {@code NBD_CMD_BLOCK_STATUS} needs it
 * @param tls               whether the connection runs through TLS (STARTTLS was acknowledged)
 */
record Negotiated(
        Export export, int transmissionFlags, boolean structuredReplies, boolean baseAllocation, boolean tls) {}
