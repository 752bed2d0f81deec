package dev.tailor.nbd.backend;

/**
 * What a backend can do, which becomes the export's transmission flags (proto.md, "Transmission
 * flags").
 *
 * @param readOnly    writes, trims and write-zeroes are refused ({@code NBD_FLAG_READ_ONLY})
 * @param flush       {@code NBD_CMD_FLUSH} makes completed writes durable ({@code NBD_FLAG_SEND_FLUSH})
 * @param fua         {@code NBD_CMD_FLAG_FUA} makes one write durable before its reply
 *                    ({@code NBD_FLAG_SEND_FUA})
 * @param trim        {@code NBD_CMD_TRIM} is accepted ({@code NBD_FLAG_SEND_TRIM})
 * @param writeZeroes {@code NBD_CMD_WRITE_ZEROES} is accepted ({@code NBD_FLAG_SEND_WRITE_ZEROES})
 * @param multiConn   a flush or FUA on one connection covers writes completed on every connection to
 *                    the export ({@code NBD_FLAG_CAN_MULTI_CONN})
 */
public record BackendFeatures(
        boolean readOnly, boolean flush, boolean fua, boolean trim, boolean writeZeroes, boolean multiConn) {

    /** This with {@code readOnly} set (and the write-only features cleared) when {@code readOnly} is true. */
    public BackendFeatures withReadOnly(boolean readOnly) {
        if (!readOnly) {
            return this;
        }
        return new BackendFeatures(true, flush, false, false, false, multiConn);
    }
}
