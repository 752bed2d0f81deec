package dev.tailor.nbd.protocol;

/**
 * The constants of the NBD protocol, as doc/proto.md of the NetworkBlockDevice project defines them
 * (section "Values", and the message layouts under "Handshake" and "Transmission"). All integers
 * travel in network byte order; lengths and offsets are unsigned, so a Java {@code int} length must be
 * read with {@link Integer#toUnsignedLong(int)} and a {@code long} offset compared with
 * {@link Long#compareUnsigned(long, long)}.
 */
public final class NbdProtocol {

    private NbdProtocol() {}

    // ---- Handshake: "Newstyle negotiation" and "Fixed newstyle negotiation" ----

    /** First 64 bits the server sends: ASCII {@code NBDMAGIC} ({@code INIT_PASSWD}). */
    public static final long NBDMAGIC = 0x4e42444d41474943L;
    /** ASCII {@code IHAVEOPT}: second 64 bits of the greeting, and the magic of every option request. */
    public static final long IHAVEOPT = 0x49484156454F5054L;
    /** Magic of every option reply. */
    public static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    /** Handshake flag, bit 0: the server speaks fixed newstyle. */
    public static final int FLAG_FIXED_NEWSTYLE = 1;
    /** Handshake flag, bit 1: the server can omit the 124 zero bytes after {@code NBD_OPT_EXPORT_NAME}. */
    public static final int FLAG_NO_ZEROES = 1 << 1;
    /** Client flag, bit 0: the client speaks fixed newstyle. */
    public static final int FLAG_C_FIXED_NEWSTYLE = 1;
    /** Client flag, bit 1: the client does not want the 124 zero bytes. */
    public static final int FLAG_C_NO_ZEROES = 1 << 1;

    /** Bytes of an option request header: magic (8), option (4), data length (4). */
    public static final int OPTION_HEADER_BYTES = 16;
    /** Bytes of an option reply header: magic (8), option (4), reply type (4), data length (4). */
    public static final int OPTION_REPLY_HEADER_BYTES = 20;
    /** Bytes of zero padding after the {@code NBD_OPT_EXPORT_NAME} reply unless {@code NO_ZEROES}. */
    public static final int EXPORT_NAME_ZEROES_BYTES = 124;
    /** Longest string (export name, error message) the protocol allows, in bytes ("Conventions"). */
    public static final int MAX_STRING_BYTES = 4096;

    // ---- Option types ----

    /** Choose an export and enter transmission; no error reply possible. */
    public static final int OPT_EXPORT_NAME = 1;
    /** Abort the negotiation; the server replies {@link #REP_ACK}. */
    public static final int OPT_ABORT = 2;
    /** List the exports: {@link #REP_SERVER} per export, then {@link #REP_ACK}. */
    public static final int OPT_LIST = 3;
    /** Start TLS: {@link #REP_ACK}, then the TLS handshake ("TLS support"). No data. */
    public static final int OPT_STARTTLS = 5;
    /** Describe one export without entering transmission. */
    public static final int OPT_INFO = 6;
    /** Describe one export and enter transmission on {@link #REP_ACK}. */
    public static final int OPT_GO = 7;
    /** Use structured replies in transmission. */
    public static final int OPT_STRUCTURED_REPLY = 8;
    /** List metadata contexts: export name, queries; {@link #REP_META_CONTEXT} per match, then ACK. */
    public static final int OPT_LIST_META_CONTEXT = 9;
    /** Select metadata contexts for {@link #CMD_BLOCK_STATUS}; needs structured replies first. */
    public static final int OPT_SET_META_CONTEXT = 10;

    /** The one metadata context served: allocation status ({@link #STATE_HOLE}, {@link #STATE_ZERO}). */
    public static final String BASE_ALLOCATION = "base:allocation";
    /** Our context ID for {@link #BASE_ALLOCATION} (the server chooses; nbdkit uses 1 too). */
    public static final int BASE_ALLOCATION_ID = 1;
    /** {@code base:allocation} flag, bit 0: the extent is a hole (unallocated). */
    public static final int STATE_HOLE = 1;
    /** {@code base:allocation} flag, bit 1: the extent reads as zeroes. */
    public static final int STATE_ZERO = 2;

    // ---- Option reply types ----

    /** Option accepted, or the end of a list of replies. No data. */
    public static final int REP_ACK = 1;
    /** One export in reply to {@link #OPT_LIST}: name length (4), name, optional description. */
    public static final int REP_SERVER = 2;
    /** One information item in reply to {@link #OPT_INFO} or {@link #OPT_GO}: type (2), payload. */
    public static final int REP_INFO = 3;
    /** One metadata context: its ID (4) and name. */
    public static final int REP_META_CONTEXT = 4;
    /** Error replies have bit 31 set. */
    public static final int REP_FLAG_ERROR = 1 << 31;
    /** The option is unknown to this server. */
    public static final int REP_ERR_UNSUP = REP_FLAG_ERROR | 1;
    /** The option is known but forbidden by policy. */
    public static final int REP_ERR_POLICY = REP_FLAG_ERROR | 2;
    /** The option is known but syntactically or semantically invalid. */
    public static final int REP_ERR_INVALID = REP_FLAG_ERROR | 3;
    /** The option is not supported on this platform. */
    public static final int REP_ERR_PLATFORM = REP_FLAG_ERROR | 4;
    /** TLS is required first. */
    public static final int REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5;
    /** The requested export is not available. */
    public static final int REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6;
    /** The server is shutting down. */
    public static final int REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7;
    /** The client must request {@link #INFO_BLOCK_SIZE} before transmission. */
    public static final int REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8;
    /** The request or the reply is too large to process. */
    public static final int REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9;

    // ---- Information types (NBD_REP_INFO) ----

    /** Size (8) and transmission flags (2); reply length 12. Mandatory before a successful ACK. */
    public static final int INFO_EXPORT = 0;
    /** The canonical export name; reply length 2 + name. */
    public static final int INFO_NAME = 1;
    /** A human-readable description; reply length 2 + text. */
    public static final int INFO_DESCRIPTION = 2;
    /** Minimum, preferred and maximum block size (4 bytes each); reply length 14. */
    public static final int INFO_BLOCK_SIZE = 3;

    // ---- Transmission flags (16 bits, sent with the export) ----

    /** Bit 0: always set. */
    public static final int FLAG_HAS_FLAGS = 1;
    /** Bit 1: the export is read-only; writes are refused. */
    public static final int FLAG_READ_ONLY = 1 << 1;
    /** Bit 2: {@code NBD_CMD_FLUSH} is supported. */
    public static final int FLAG_SEND_FLUSH = 1 << 2;
    /** Bit 3: {@code NBD_CMD_FLAG_FUA} is supported. */
    public static final int FLAG_SEND_FUA = 1 << 3;
    /** Bit 4: the export behaves like a rotational medium. */
    public static final int FLAG_ROTATIONAL = 1 << 4;
    /** Bit 5: {@code NBD_CMD_TRIM} is supported. */
    public static final int FLAG_SEND_TRIM = 1 << 5;
    /** Bit 6: {@code NBD_CMD_WRITE_ZEROES} and {@code NBD_CMD_FLAG_NO_HOLE} are supported. */
    public static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    /** Bit 7: {@code NBD_CMD_FLAG_DF} is supported on reads (only with structured replies). */
    public static final int FLAG_SEND_DF = 1 << 7;
    /** Bit 8: flush and FUA take effect across all connections to the export. */
    public static final int FLAG_CAN_MULTI_CONN = 1 << 8;
    /** Bit 10: {@code NBD_CMD_CACHE} is understood. */
    public static final int FLAG_SEND_CACHE = 1 << 10;
    /** Bit 11: {@code NBD_CMD_FLAG_FAST_ZERO} is supported. */
    public static final int FLAG_SEND_FAST_ZERO = 1 << 11;

    // ---- Transmission messages ----

    /** Magic of a request. */
    public static final int REQUEST_MAGIC = 0x25609513;
    /** Magic of a simple reply. */
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    /** Magic of a structured reply chunk. */
    public static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    /** Bytes of a request header: magic (4), flags (2), type (2), cookie (8), offset (8), length (4). */
    public static final int REQUEST_HEADER_BYTES = 28;
    /** Bytes of a simple reply header: magic (4), error (4), cookie (8). */
    public static final int SIMPLE_REPLY_HEADER_BYTES = 16;
    /** Bytes of a structured reply chunk header: magic (4), flags (2), type (2), cookie (8), length (4). */
    public static final int STRUCTURED_REPLY_HEADER_BYTES = 20;

    // ---- Command types ----

    /** Read {@code length} bytes at {@code offset}. */
    public static final int CMD_READ = 0;
    /** Write the {@code length} bytes of payload that follow the header at {@code offset}. */
    public static final int CMD_WRITE = 1;
    /** Disconnect after the outstanding requests; no reply. */
    public static final int CMD_DISC = 2;
    /** Make every write already replied to durable. */
    public static final int CMD_FLUSH = 3;
    /** The range is no longer needed (a hint). */
    public static final int CMD_TRIM = 4;
    /** Prefetch hint (not supported here). */
    public static final int CMD_CACHE = 5;
    /** Write zeroes over the range, without payload. */
    public static final int CMD_WRITE_ZEROES = 6;
    /** Block status query: descriptors of the selected metadata context over a range. */
    public static final int CMD_BLOCK_STATUS = 7;

    // ---- Command flags ----

    /** Bit 0: reply only once the data written is durable. */
    public static final int CMD_FLAG_FUA = 1;
    /** Bit 1, on write zeroes: do not create a hole. */
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    /** Bit 2, on reads: at most one content chunk. */
    public static final int CMD_FLAG_DF = 1 << 2;
    /** Bit 3, on block status: one extent only. */
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    /** Bit 4, on write zeroes: fail fast unless zeroing is faster than writing. */
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // ---- Structured replies ----

    /** Reply flag, bit 0: the last chunk of this reply. */
    public static final int REPLY_FLAG_DONE = 1;
    /** Chunk without payload ending a successful reply. */
    public static final int REPLY_TYPE_NONE = 0;
    /** Chunk with offset (8) and data. */
    public static final int REPLY_TYPE_OFFSET_DATA = 1;
    /** Chunk with offset (8) and hole size (4). */
    public static final int REPLY_TYPE_OFFSET_HOLE = 2;
    /** Chunk with a context ID (4) and block status descriptors (length 4, flags 4 each). */
    public static final int REPLY_TYPE_BLOCK_STATUS = 5;
    /** Error chunk: error (4), message length (2), message. */
    public static final int REPLY_TYPE_ERROR = (1 << 15) | 1;
    /** Error chunk with an offset: error (4), message length (2), message, offset (8). */
    public static final int REPLY_TYPE_ERROR_OFFSET = (1 << 15) | 2;

    // ---- Error values ("Error values") ----

    /** Operation not permitted: a write to a read-only export. */
    public static final int EPERM = 1;
    /** Input/output error. */
    public static final int EIO = 5;
    /** Cannot allocate memory (servers should avoid it). */
    public static final int ENOMEM = 12;
    /** Invalid argument: bad range, unknown command or flag, over the maximum block size. */
    public static final int EINVAL = 22;
    /** No space left: a write beyond the end of the export. */
    public static final int ENOSPC = 28;
    /** Value too large (only for reads with {@code DF}). */
    public static final int EOVERFLOW = 75;
    /** Operation not supported (only for fast zero). */
    public static final int ENOTSUP = 95;
    /** The server is shutting down. */
    public static final int ESHUTDOWN = 108;

    /** A command's name for messages, e.g. {@code READ} or {@code 0x00ff}. */
    public static String commandName(int type) {
        return switch (type) {
            case CMD_READ -> "READ";
            case CMD_WRITE -> "WRITE";
            case CMD_DISC -> "DISC";
            case CMD_FLUSH -> "FLUSH";
            case CMD_TRIM -> "TRIM";
            case CMD_CACHE -> "CACHE";
            case CMD_WRITE_ZEROES -> "WRITE_ZEROES";
            case CMD_BLOCK_STATUS -> "BLOCK_STATUS";
            default -> String.format("0x%04x", type);
        };
    }

    /** An option's name for messages, e.g. {@code GO} or {@code 0x00001234}. */
    public static String optionName(int option) {
        return switch (option) {
            case OPT_EXPORT_NAME -> "EXPORT_NAME";
            case OPT_ABORT -> "ABORT";
            case OPT_LIST -> "LIST";
            case OPT_STARTTLS -> "STARTTLS";
            case OPT_INFO -> "INFO";
            case OPT_GO -> "GO";
            case OPT_STRUCTURED_REPLY -> "STRUCTURED_REPLY";
            case OPT_LIST_META_CONTEXT -> "LIST_META_CONTEXT";
            case OPT_SET_META_CONTEXT -> "SET_META_CONTEXT";
            default -> String.format("0x%08x", option);
        };
    }
}
