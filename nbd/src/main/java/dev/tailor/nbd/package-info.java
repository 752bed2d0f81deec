/**
 * An NBD server and proxy on Netty: serves virtual disks (exports) of tenants to real NBD clients
 * (qemu, libnbd's nbdinfo and nbdcopy, fio's {@code nbd} engine, the Linux kernel) from local files or
 * from upstream NBD servers.
 *
 * <p>The protocol is doc/proto.md of the NetworkBlockDevice project: the fixed newstyle handshake with
 * {@code NBD_FLAG_NO_ZEROES}; the options {@code EXPORT_NAME}, {@code ABORT}, {@code LIST},
 * {@code INFO}, {@code GO} (with {@code NBD_INFO_EXPORT}, {@code NAME}, {@code DESCRIPTION} and
 * {@code BLOCK_SIZE}) and {@code STRUCTURED_REPLY}; the commands {@code READ}, {@code WRITE},
 * {@code FLUSH}, {@code TRIM}, {@code WRITE_ZEROES} and {@code DISC} with {@code FUA}; simple and
 * structured replies, sent as requests complete. docs/nbd.md describes the configuration, the limits
 * and the durability guarantees.
 *
 * <p>Layout: {@link dev.tailor.nbd.NbdServer} starts everything; {@link dev.tailor.nbd.HandshakeHandler} and {@link dev.tailor.nbd.TransmissionHandler}
 * speak the protocol on one connection; {@link dev.tailor.nbd.RequestDispatcher} is the seam where
 * admission control will hold requests back; {@link dev.tailor.nbd.BlockBackend}s
 * ({@link dev.tailor.nbd.FileBackend}, {@link dev.tailor.nbd.UpstreamBackend}) do the I/O.
 */
package dev.tailor.nbd;
