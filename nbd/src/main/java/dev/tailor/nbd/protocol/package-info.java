/**
 * The NBD wire protocol, with no I/O and no server state: the constants ({@link
 * dev.tailor.nbd.protocol.NbdProtocol}), the replies the server writes ({@link dev.tailor.nbd.protocol.Replies}),
 * the cutting of the transmission-phase stream into requests ({@link dev.tailor.nbd.protocol.RequestFramer}), a
 * request on its way to a backend ({@link dev.tailor.nbd.protocol.BlockRequest}), block size constraints ({@link
 * dev.tailor.nbd.protocol.BlockSizes}) and the failure a request is answered with ({@link
 * dev.tailor.nbd.protocol.NbdException}).
 *
 * <p>Source: doc/proto.md of the NetworkBlockDevice project, sections "Handshake" ("Fixed newstyle
 * negotiation", "Option types", "Option reply types"), "Transmission" ("Request message", "Simple reply
 * message", "Structured reply chunk message"), "Block size constraints", "Metadata querying" and "Error
 * values".
 */
package dev.tailor.nbd.protocol;
