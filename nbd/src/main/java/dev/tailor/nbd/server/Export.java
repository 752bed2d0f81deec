package dev.tailor.nbd.server;

import dev.tailor.nbd.backend.BackendFeatures;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.ExportConfig;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdProtocol;
import java.util.concurrent.atomic.LongAdder;

/**
 * A virtual disk being served: its name and tenant from the configuration, its backend, and what the
 * server advertises for it (size, transmission flags, block size constraints). Immutable but for its
 * write ordering and counters, which are thread-safe; shared by every connection to the export.
 */
public final class Export {

    private final WriteOrdering writeOrdering = new WriteOrdering();
    private final LongAdder droppedRequests = new LongAdder();

    private final String name;
    private final String tenant;
    private final String description;
    private final BlockBackend backend;
    private final BackendFeatures features;
    private final BlockSizes blockSizes;
    private final long sizeBytes;
    private final IoMetrics.ForExport io;

    /** As below, with I/O metrics in a registry of the export's own (tests, tools). */
    public Export(ExportConfig config, BlockBackend backend, int maxRequestBytes) {
        this(config, backend, maxRequestBytes, new IoMetrics(System::nanoTime, false));
    }

    /**
     * @param config          the export's configuration (name, tenant, description, read-only)
     * @param backend         where its bytes live; its size is the export's size
     * @param maxRequestBytes the server's maximum request size; the export's maximum block size is the
     *                        smaller of this and the backend's, rounded down to the minimum block size
     * @param metrics         the server's I/O metrics, where the export's data points are resolved
     */
    public Export(ExportConfig config, BlockBackend backend, int maxRequestBytes, IoMetrics metrics) {
        this.name = config.name();
        this.io = metrics.forExport(config.name());
        this.tenant = config.tenant();
        this.backend = backend;
        this.sizeBytes = backend.sizeBytes();
        this.features = backend.features().withReadOnly(config.readOnly());
        BlockSizes own = backend.blockSizes();
        int maximum = Math.min(own.maximumBytes(), maxRequestBytes);
        maximum = Math.max(own.preferredBytes(), maximum - maximum % own.minimumBytes());
        this.blockSizes = new BlockSizes(own.minimumBytes(), own.preferredBytes(), maximum);
        this.description = config.description() != null
                ? config.description()
                : "tenant " + tenant + ", " + ByteSize.format(sizeBytes) + (features.readOnly() ? ", read-only" : "");
    }

    /** The order of overlapping writes, across the export's connections. */
    WriteOrdering writeOrdering() {
        return writeOrdering;
    }

    /** The export's I/O metrics (requests, bytes, durations, errors, connections). */
    IoMetrics.ForExport io() {
        return io;
    }

    /** Bytes read by successful READs since the start. */
    public long bytesRead() {
        return io.bytes(NbdProtocol.CMD_READ);
    }

    /** Counts requests of closed connections dropped before they reached the backend. */
    void countDropped(int requests) {
        droppedRequests.add(requests);
    }

    /** Requests of closed connections dropped before they reached the backend, since the start. */
    public long droppedRequests() {
        return droppedRequests.sum();
    }

    /** Writes that waited for an older overlapping write to complete, since the start. */
    public long heldWrites() {
        return writeOrdering.heldWritesTotal();
    }

    /** The name clients ask for. */
    public String name() {
        return name;
    }

    /** Who owns the virtual disk. */
    public String tenant() {
        return tenant;
    }

    /** Shown in the export list ({@code NBD_REP_SERVER}) and as {@code NBD_INFO_DESCRIPTION}. */
    public String description() {
        return description;
    }

    /** Where its bytes live. */
    public BlockBackend backend() {
        return backend;
    }

    /** The size in bytes. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** Whether writes are refused. */
    public boolean readOnly() {
        return features.readOnly();
    }

    /** What the export supports (the backend's features, narrowed by read-only). */
    public BackendFeatures features() {
        return features;
    }

    /** The block size constraints advertised with {@code NBD_INFO_BLOCK_SIZE} and enforced. */
    public BlockSizes blockSizes() {
        return blockSizes;
    }

    /**
     * The 16-bit transmission flags sent with the export (proto.md, "Transmission flags").
     *
     * @param structuredReplies whether the client negotiated structured replies ({@code NBD_FLAG_SEND_DF}
     *                          must stay clear without them)
     */
    public int transmissionFlags(boolean structuredReplies) {
        int flags = NbdProtocol.FLAG_HAS_FLAGS;
        if (features.readOnly()) {
            flags |= NbdProtocol.FLAG_READ_ONLY;
        }
        if (features.flush()) {
            flags |= NbdProtocol.FLAG_SEND_FLUSH;
        }
        if (features.fua()) {
            flags |= NbdProtocol.FLAG_SEND_FUA;
        }
        if (features.trim()) {
            flags |= NbdProtocol.FLAG_SEND_TRIM;
        }
        if (features.writeZeroes()) {
            flags |= NbdProtocol.FLAG_SEND_WRITE_ZEROES;
        }
        if (features.multiConn()) {
            flags |= NbdProtocol.FLAG_CAN_MULTI_CONN;
        }
        if (structuredReplies) {
            flags |= NbdProtocol.FLAG_SEND_DF;
        }
        return flags;
    }

    @Override
    public String toString() {
        return "export " + name + " (" + description + ")";
    }
}
