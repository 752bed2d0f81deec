package dev.tailor.nbd.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Encoders for the server's messages (proto.md, "Fixed newstyle negotiation", "Simple reply message",
 * "Structured reply chunk message"). Each returns a new buffer the caller writes (and so releases).
 */
public final class Replies {

    private Replies() {}

    /** The greeting: {@code NBDMAGIC}, {@code IHAVEOPT}, handshake flags (fixed newstyle, no zeroes). */
    public static ByteBuf greeting(ByteBufAllocator alloc) {
        ByteBuf buf = alloc.buffer(18);
        buf.writeLong(NbdProtocol.NBDMAGIC);
        buf.writeLong(NbdProtocol.IHAVEOPT);
        buf.writeShort(NbdProtocol.FLAG_FIXED_NEWSTYLE | NbdProtocol.FLAG_NO_ZEROES);
        return buf;
    }

    /** An option reply header followed by {@code dataBytes} bytes the caller appends. */
    public static ByteBuf optionReply(ByteBufAllocator alloc, int option, int replyType, int dataBytes) {
        ByteBuf buf = alloc.buffer(NbdProtocol.OPTION_REPLY_HEADER_BYTES + dataBytes);
        buf.writeLong(NbdProtocol.OPTION_REPLY_MAGIC);
        buf.writeInt(option);
        buf.writeInt(replyType);
        buf.writeInt(dataBytes);
        return buf;
    }

    /** An option error reply with a message for humans (at most 4096 bytes of it). */
    public static ByteBuf optionError(ByteBufAllocator alloc, int option, int replyType, String message) {
        byte[] text = utf8(message);
        ByteBuf buf = optionReply(alloc, option, replyType, text.length);
        buf.writeBytes(text);
        return buf;
    }

    /** {@code NBD_REP_SERVER}: name length, name, description (proto.md, "Option reply types"). */
    public static ByteBuf server(ByteBufAllocator alloc, String name, String description) {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        byte[] descriptionBytes = utf8(description);
        ByteBuf buf = optionReply(
                alloc, NbdProtocol.OPT_LIST, NbdProtocol.REP_SERVER, 4 + nameBytes.length + descriptionBytes.length);
        buf.writeInt(nameBytes.length);
        buf.writeBytes(nameBytes);
        buf.writeBytes(descriptionBytes);
        return buf;
    }

    /** {@code NBD_REP_INFO} of type {@code NBD_INFO_EXPORT}: size and transmission flags; length 12. */
    public static ByteBuf infoExport(ByteBufAllocator alloc, int option, long sizeBytes, int transmissionFlags) {
        ByteBuf buf = optionReply(alloc, option, NbdProtocol.REP_INFO, 12);
        buf.writeShort(NbdProtocol.INFO_EXPORT);
        buf.writeLong(sizeBytes);
        buf.writeShort(transmissionFlags);
        return buf;
    }

    /** {@code NBD_REP_INFO} of type {@code NBD_INFO_BLOCK_SIZE}: minimum, preferred, maximum; length 14. */
    public static ByteBuf infoBlockSize(ByteBufAllocator alloc, int option, BlockSizes sizes) {
        ByteBuf buf = optionReply(alloc, option, NbdProtocol.REP_INFO, 14);
        buf.writeShort(NbdProtocol.INFO_BLOCK_SIZE);
        buf.writeInt(sizes.minimumBytes());
        buf.writeInt(sizes.preferredBytes());
        buf.writeInt(sizes.maximumBytes());
        return buf;
    }

    /** {@code NBD_REP_INFO} carrying text: {@code NBD_INFO_NAME} or {@code NBD_INFO_DESCRIPTION}. */
    public static ByteBuf infoText(ByteBufAllocator alloc, int option, int infoType, String text) {
        byte[] bytes = utf8(text);
        ByteBuf buf = optionReply(alloc, option, NbdProtocol.REP_INFO, 2 + bytes.length);
        buf.writeShort(infoType);
        buf.writeBytes(bytes);
        return buf;
    }

    /** The reply to {@code NBD_OPT_EXPORT_NAME}: size, flags, and 124 zeroes unless {@code noZeroes}. */
    public static ByteBuf exportNameReply(
            ByteBufAllocator alloc, long sizeBytes, int transmissionFlags, boolean noZeroes) {
        int zeroes = noZeroes ? 0 : NbdProtocol.EXPORT_NAME_ZEROES_BYTES;
        ByteBuf buf = alloc.buffer(10 + zeroes);
        buf.writeLong(sizeBytes);
        buf.writeShort(transmissionFlags);
        buf.writeZero(zeroes);
        return buf;
    }

    /** A simple reply header (16 bytes); a successful read's data follows it. */
    public static ByteBuf simple(ByteBufAllocator alloc, long cookie, int error) {
        ByteBuf buf = alloc.buffer(NbdProtocol.SIMPLE_REPLY_HEADER_BYTES);
        buf.writeInt(NbdProtocol.SIMPLE_REPLY_MAGIC);
        buf.writeInt(error);
        buf.writeLong(cookie);
        return buf;
    }

    /**
     * The head of a final {@code NBD_REPLY_TYPE_OFFSET_DATA} chunk (28 bytes: chunk header and offset);
     * the {@code dataBytes} bytes of data follow it.
     */
    public static ByteBuf offsetData(ByteBufAllocator alloc, long cookie, long offsetBytes, int dataBytes) {
        ByteBuf buf = alloc.buffer(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + 8);
        chunkHeader(buf, cookie, NbdProtocol.REPLY_TYPE_OFFSET_DATA, 8 + dataBytes);
        buf.writeLong(offsetBytes);
        return buf;
    }

    /**
     * The head of a final {@code NBD_REPLY_TYPE_BLOCK_STATUS} chunk (24 bytes: chunk header and context
     * ID); the {@code descriptorBytes} of descriptors follow it.
     */
    public static ByteBuf blockStatus(ByteBufAllocator alloc, long cookie, int contextId, int descriptorBytes) {
        ByteBuf buf = alloc.buffer(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + 4);
        chunkHeader(buf, cookie, NbdProtocol.REPLY_TYPE_BLOCK_STATUS, 4 + descriptorBytes);
        buf.writeInt(contextId);
        return buf;
    }

    /** {@code NBD_REP_META_CONTEXT}: the context's ID and name. */
    public static ByteBuf metaContext(ByteBufAllocator alloc, int option, int contextId, String name) {
        byte[] bytes = utf8(name);
        ByteBuf buf = optionReply(alloc, option, NbdProtocol.REP_META_CONTEXT, 4 + bytes.length);
        buf.writeInt(contextId);
        buf.writeBytes(bytes);
        return buf;
    }

    /** A final {@code NBD_REPLY_TYPE_NONE} chunk: success without data. */
    public static ByteBuf none(ByteBufAllocator alloc, long cookie) {
        ByteBuf buf = alloc.buffer(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES);
        chunkHeader(buf, cookie, NbdProtocol.REPLY_TYPE_NONE, 0);
        return buf;
    }

    /** A final {@code NBD_REPLY_TYPE_ERROR} chunk: error, message length, message. */
    public static ByteBuf error(ByteBufAllocator alloc, long cookie, int error, String message) {
        byte[] text = utf8(message);
        ByteBuf buf = alloc.buffer(NbdProtocol.STRUCTURED_REPLY_HEADER_BYTES + 6 + text.length);
        chunkHeader(buf, cookie, NbdProtocol.REPLY_TYPE_ERROR, 6 + text.length);
        buf.writeInt(error);
        buf.writeShort(text.length);
        buf.writeBytes(text);
        return buf;
    }

    private static void chunkHeader(ByteBuf buf, long cookie, int type, int lengthBytes) {
        buf.writeInt(NbdProtocol.STRUCTURED_REPLY_MAGIC);
        buf.writeShort(NbdProtocol.REPLY_FLAG_DONE);
        buf.writeShort(type);
        buf.writeLong(cookie);
        buf.writeInt(lengthBytes);
    }

    /** {@code text} in UTF-8, cut to at most 4096 bytes at a character boundary (proto.md strings). */
    static byte[] utf8(String text) {
        if (text == null) {
            return new byte[0];
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= NbdProtocol.MAX_STRING_BYTES) {
            return bytes;
        }
        int end = NbdProtocol.MAX_STRING_BYTES;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--;
        }
        byte[] cut = new byte[end];
        System.arraycopy(bytes, 0, cut, 0, end);
        return cut;
    }
}
