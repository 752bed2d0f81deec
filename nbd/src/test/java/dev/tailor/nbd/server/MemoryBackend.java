package dev.tailor.nbd.server;

import dev.tailor.nbd.backend.BackendFeatures;
import dev.tailor.nbd.backend.BlockBackend;
import dev.tailor.nbd.protocol.BlockRequest;
import dev.tailor.nbd.protocol.BlockSizes;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.Promise;
import java.util.concurrent.atomic.AtomicInteger;

/** A virtual disk in a byte array; completes every request at once, on the calling thread. */
final class MemoryBackend implements BlockBackend {

    final byte[] bytes;
    final AtomicInteger flushes = new AtomicInteger();
    private final BackendFeatures features;
    private final BlockSizes blockSizes;

    MemoryBackend(int sizeBytes) {
        this(sizeBytes, new BackendFeatures(false, true, true, true, true, true), new BlockSizes(1, 4096, 1 << 20));
    }

    MemoryBackend(int sizeBytes, BackendFeatures features, BlockSizes blockSizes) {
        this.bytes = new byte[sizeBytes];
        this.features = features;
        this.blockSizes = blockSizes;
    }

    @Override
    public long sizeBytes() {
        return bytes.length;
    }

    @Override
    public BackendFeatures features() {
        return features;
    }

    @Override
    public BlockSizes blockSizes() {
        return blockSizes;
    }

    @Override
    public void submit(BlockRequest request, Promise<ByteBuf> completion) {
        if (!request.claim()) {
            return; // its connection dropped it
        }
        try {
            int offset = (int) request.offsetBytes();
            int length = (int) request.lengthBytes();
            switch (request.command()) {
                case NbdProtocol.CMD_READ -> completion.setSuccess(Unpooled.copiedBuffer(bytes, offset, length));
                case NbdProtocol.CMD_WRITE -> {
                    request.payload().getBytes(request.payload().readerIndex(), bytes, offset, length);
                    completion.setSuccess(null);
                }
                case NbdProtocol.CMD_WRITE_ZEROES -> {
                    java.util.Arrays.fill(bytes, offset, offset + length, (byte) 0);
                    completion.setSuccess(null);
                }
                case NbdProtocol.CMD_FLUSH -> {
                    flushes.incrementAndGet();
                    completion.setSuccess(null);
                }
                default -> completion.setSuccess(null);
            }
        } finally {
            request.release();
        }
    }

    @Override
    public void close() {}
}
