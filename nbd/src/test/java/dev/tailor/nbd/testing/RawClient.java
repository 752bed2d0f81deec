package dev.tailor.nbd.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.nbd.protocol.NbdProtocol;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * A blocking NBD client that speaks the protocol byte by byte, for the edge cases real clients never
 * send. Every read times out after 10 s, so a server that fails to answer fails the test instead of
 * hanging it.
 */
public final class RawClient implements AutoCloseable {

    public record OptionReply(int option, int type, byte[] data) {
        public String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    public record SimpleReply(int error, long cookie, byte[] data) {}

    public record Chunk(int flags, int type, long cookie, byte[] payload) {
        public boolean done() {
            return (flags & NbdProtocol.REPLY_FLAG_DONE) != 0;
        }

        public int error() {
            return ((payload[0] & 0xff) << 24)
                    | ((payload[1] & 0xff) << 16)
                    | ((payload[2] & 0xff) << 8)
                    | (payload[3] & 0xff);
        }

        public String message() {
            int length = ((payload[4] & 0xff) << 8) | (payload[5] & 0xff);
            return new String(payload, 6, length, StandardCharsets.UTF_8);
        }
    }

    public record Go(long sizeBytes, int transmissionFlags, int minimumBytes, int preferredBytes, int maximumBytes) {}

    private final Socket socket;
    public final DataInputStream in;
    public final DataOutputStream out;
    public int handshakeFlags;

    private RawClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    public static RawClient connect(InetSocketAddress address) throws IOException {
        return connect(address, null);
    }

    /** Connects from the local address {@code from} (e.g. 127.0.0.2, another loopback client), or any if null. */
    public static RawClient connect(InetSocketAddress address, java.net.InetAddress from) throws IOException {
        Socket socket = new Socket();
        if (from != null) {
            socket.bind(new InetSocketAddress(from, 0));
        }
        socket.connect(address, 10_000);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        return new RawClient(socket);
    }

    /** Reads the greeting and checks it. */
    public RawClient greeting() throws IOException {
        assertThat(in.readLong()).as("NBDMAGIC").isEqualTo(NbdProtocol.NBDMAGIC);
        assertThat(in.readLong()).as("IHAVEOPT").isEqualTo(NbdProtocol.IHAVEOPT);
        handshakeFlags = in.readUnsignedShort();
        return this;
    }

    /** Greeting, then client flags (fixed newstyle and no zeroes). */
    public RawClient handshake() throws IOException {
        greeting();
        clientFlags(NbdProtocol.FLAG_C_FIXED_NEWSTYLE | NbdProtocol.FLAG_C_NO_ZEROES);
        return this;
    }

    public void clientFlags(int flags) throws IOException {
        out.writeInt(flags);
        out.flush();
    }

    public void option(int option, byte[] data) throws IOException {
        optionHeader(option, data.length);
        out.write(data);
        out.flush();
    }

    public void optionHeader(int option, long dataBytes) throws IOException {
        out.writeLong(NbdProtocol.IHAVEOPT);
        out.writeInt(option);
        out.writeInt((int) dataBytes);
    }

    public OptionReply optionReply() throws IOException {
        assertThat(in.readLong()).as("option reply magic").isEqualTo(NbdProtocol.OPTION_REPLY_MAGIC);
        int option = in.readInt();
        int type = in.readInt();
        int length = in.readInt();
        assertThat(length).as("option reply length").isBetween(0, 1 << 20);
        byte[] data = new byte[length];
        in.readFully(data);
        return new OptionReply(option, type, data);
    }

    /** The data of {@code NBD_OPT_INFO}/{@code GO}: name, and the information requests. */
    public static byte[] infoRequest(String name, int... infos) {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocate(4 + nameBytes.length + 2 + 2 * infos.length);
        data.putInt(nameBytes.length).put(nameBytes).putShort((short) infos.length);
        for (int info : infos) {
            data.putShort((short) info);
        }
        return data.array();
    }

    /** Negotiates structured replies (if asked) and enters transmission with GO and a block size request. */
    public Go go(String name, boolean structured) throws IOException {
        if (structured) {
            option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
            assertThat(optionReply().type()).isEqualTo(NbdProtocol.REP_ACK);
        }
        option(NbdProtocol.OPT_GO, infoRequest(name, NbdProtocol.INFO_BLOCK_SIZE));
        return goReplies();
    }

    /**
     * Sends {@code NBD_OPT_GO} (with a block size request) and a first READ in one write, so the server
     * has that request as soon as it enters transmission, then reads the GO replies (not the read's).
     */
    public Go goWithRead(String name, long cookie, long offset, long length) throws IOException {
        byte[] data = infoRequest(name, NbdProtocol.INFO_BLOCK_SIZE);
        optionHeader(NbdProtocol.OPT_GO, data.length);
        out.write(data);
        request(0, NbdProtocol.CMD_READ, cookie, offset, length);
        return goReplies();
    }

    /** The replies to {@code NBD_OPT_GO}, up to its ACK. */
    private Go goReplies() throws IOException {
        long size = -1;
        int flags = 0;
        int[] blocks = new int[3];
        while (true) {
            OptionReply reply = optionReply();
            assertThat(reply.option()).isEqualTo(NbdProtocol.OPT_GO);
            if (reply.type() == NbdProtocol.REP_ACK) {
                break;
            }
            assertThat(reply.type()).as("GO reply: %s", reply.text()).isEqualTo(NbdProtocol.REP_INFO);
            java.nio.ByteBuffer data = java.nio.ByteBuffer.wrap(reply.data());
            int type = data.getShort() & 0xffff;
            if (type == NbdProtocol.INFO_EXPORT) {
                size = data.getLong();
                flags = data.getShort() & 0xffff;
            } else if (type == NbdProtocol.INFO_BLOCK_SIZE) {
                blocks = new int[] {data.getInt(), data.getInt(), data.getInt()};
            }
        }
        return new Go(size, flags, blocks[0], blocks[1], blocks[2]);
    }

    public void request(int flags, int type, long cookie, long offset, long length) throws IOException {
        out.writeInt(NbdProtocol.REQUEST_MAGIC);
        out.writeShort(flags);
        out.writeShort(type);
        out.writeLong(cookie);
        out.writeLong(offset);
        out.writeInt((int) length);
        out.flush();
    }

    public void write(int flags, long cookie, long offset, byte[] payload) throws IOException {
        request(flags, NbdProtocol.CMD_WRITE, cookie, offset, payload.length);
        out.write(payload);
        out.flush();
    }

    /** A simple reply; {@code dataBytes} of data follow it when its error is zero. */
    public SimpleReply simpleReply(int dataBytes) throws IOException {
        assertThat(in.readInt()).as("simple reply magic").isEqualTo(NbdProtocol.SIMPLE_REPLY_MAGIC);
        int error = in.readInt();
        long cookie = in.readLong();
        byte[] data = new byte[error == 0 ? dataBytes : 0];
        in.readFully(data);
        return new SimpleReply(error, cookie, data);
    }

    public Chunk chunk() throws IOException {
        assertThat(in.readInt()).as("structured reply magic").isEqualTo(NbdProtocol.STRUCTURED_REPLY_MAGIC);
        int flags = in.readUnsignedShort();
        int type = in.readUnsignedShort();
        long cookie = in.readLong();
        int length = in.readInt();
        byte[] payload = new byte[length];
        in.readFully(payload);
        return new Chunk(flags, type, cookie, payload);
    }

    /** Whether the server closes the connection (EOF) within the read timeout, skipping what it sends. */
    public boolean closedByServer() throws IOException {
        try {
            while (in.read() >= 0) {
                // Skip whatever is still on its way.
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (EOFException | java.net.SocketException e) {
            return true;
        }
    }

    /**
     * Runs the TLS handshake over this connection (after STARTTLS was acknowledged) and returns a client
     * that speaks through TLS; closing either closes the connection.
     */
    public RawClient startTls(javax.net.ssl.SSLContext context) throws IOException {
        javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket)
                context.getSocketFactory().createSocket(socket, "localhost", socket.getPort(), true);
        tls.setUseClientMode(true);
        tls.startHandshake();
        RawClient upgraded = new RawClient(tls);
        upgraded.handshakeFlags = handshakeFlags;
        return upgraded;
    }

    /** How long a read waits before it fails (10 s unless set). */
    public void readTimeoutMillis(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    /** Closes with a reset (SO_LINGER 0), as a client that crashed or lost its network. */
    public void reset() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
