/**
 * Where an export's bytes live: the {@link dev.tailor.nbd.backend.BlockBackend} interface and what a backend
 * offers ({@link dev.tailor.nbd.backend.BackendFeatures}); a local file ({@link
 * dev.tailor.nbd.backend.FileBackend}, its holes through {@link dev.tailor.nbd.backend.SparseFile}) and an
 * upstream NBD server ({@link dev.tailor.nbd.backend.UpstreamBackend}, a pool of client connections each
 * speaking the protocol through an {@link dev.tailor.nbd.backend.UpstreamClientHandler}).
 *
 * <p>Source: doc/proto.md of the NetworkBlockDevice project, as the client side for upstreams: "Fixed
 * newstyle negotiation", "Request types" (with {@code NBD_CMD_FLAG_FUA}), "Structured reply chunk
 * message", "Metadata querying" ({@code base:allocation}) and "Error values" ({@code NBD_ESHUTDOWN});
 * docs/nbd.md, "Guarantees".
 */
package dev.tailor.nbd.backend;
