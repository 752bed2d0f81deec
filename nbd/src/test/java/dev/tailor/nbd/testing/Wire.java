package dev.tailor.nbd.testing;

import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/** Builds what a client sends, for tests that feed bytes straight into a channel. */
public final class Wire {

    private final ByteBuf out = Unpooled.buffer();

    public Wire clientFlags(int flags) {
        out.writeInt(flags);
        return this;
    }

    public Wire option(int option, byte[] data) {
        out.writeLong(NbdProtocol.IHAVEOPT)
                .writeInt(option)
                .writeInt(data.length)
                .writeBytes(data);
        return this;
    }

    /** Fixed newstyle, no zeroes, optionally structured replies, then GO to {@code export}. */
    public Wire handshake(String export, boolean structured) {
        clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
        if (structured) {
            option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
        }
        return option(NbdProtocol.OPT_GO, RawClient.infoRequest(export, NbdProtocol.INFO_BLOCK_SIZE));
    }

    public Wire request(int flags, int type, long cookie, long offset, long length) {
        out.writeInt(NbdProtocol.REQUEST_MAGIC)
                .writeShort(flags)
                .writeShort(type)
                .writeLong(cookie)
                .writeLong(offset)
                .writeInt((int) length);
        return this;
    }

    public Wire write(int flags, long cookie, long offset, byte[] payload) {
        request(flags, NbdProtocol.CMD_WRITE, cookie, offset, payload.length);
        out.writeBytes(payload);
        return this;
    }

    public Wire bytes(byte[] raw) {
        out.writeBytes(raw);
        return this;
    }

    public static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The bytes so far (the builder is left empty). */
    public byte[] toBytes() {
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        out.discardReadBytes();
        return bytes;
    }

    /** The bytes so far as a buffer for {@code writeInbound} (the builder is left empty). */
    public ByteBuf toBuf() {
        return Unpooled.wrappedBuffer(toBytes());
    }
}
