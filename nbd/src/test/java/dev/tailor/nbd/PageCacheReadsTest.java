package dev.tailor.nbd;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads that never wait for the disk ({@link PageCacheReads}, {@code preadv2(RWF_NOWAIT)}) and the file
 * backend's use of them: a cached read is answered on the submitting thread, with the file's bytes, and
 * never reaches the file I/O executor; a read too long for the loop still goes there.
 */
class PageCacheReadsTest {

    @TempDir
    Path dir;

    /** A 1 MiB file of random bytes, just written, so in the page cache. */
    private Path cachedFile(byte[] content) throws Exception {
        new Random(5).nextBytes(content);
        Path file = dir.resolve("disk.img");
        Files.write(file, content);
        return file;
    }

    @Test
    void read_ofACachedRange_copiesTheFilesBytes() throws Exception {
        byte[] content = new byte[1 << 20];
        Path file = cachedFile(content);
        try (PageCacheReads reads = PageCacheReads.open(file)) {
            Assumptions.assumeTrue(reads.supported(), "no preadv2(RWF_NOWAIT) here (JDK 21, or a file system"
                    + " without it): every read goes to a thread");
            ByteBuf target = ByteBufAllocator.DEFAULT.directBuffer(8192, 8192);
            try {
                assertThat(reads.read(target, 12_288, 8192)).isEqualTo(8192);
                assertThat(ByteBufUtil.getBytes(target, 0, 8192))
                        .isEqualTo(Arrays.copyOfRange(content, 12_288, 12_288 + 8192));
                // Past the end of the file there is nothing to copy: a short read, never an error.
                assertThat(reads.read(target, content.length - 100, 8192)).isEqualTo(100);
                assertThat(reads.read(target, content.length, 8192)).isZero();
            } finally {
                target.release();
            }
        }
    }

    @Test
    void submit_cachedRead_isAnsweredOnTheCallersThreadWithoutTheExecutor() throws Exception {
        byte[] content = new byte[1 << 20];
        Path file = cachedFile(content);
        List<Runnable> queued = new ArrayList<>();
        FileBackend backend = FileBackend.open(file, null, true, queued::add, ByteBufAllocator.DEFAULT);
        try {
            Assumptions.assumeTrue(backend.readsWithoutWaiting(), "no preadv2(RWF_NOWAIT) here: every read goes"
                    + " to a thread");
            Promise<ByteBuf> done = ImmediateEventExecutor.INSTANCE.newPromise();
            backend.submit(new BlockRequest(NbdProtocol.CMD_READ, 0, 1, 4096, 65_536, Unpooled.EMPTY_BUFFER), done);
            assertThat(queued).as("tasks handed to the file I/O executor").isEmpty();
            assertThat(done.isSuccess()).isTrue();
            ByteBuf data = done.getNow();
            try {
                assertThat(ByteBufUtil.getBytes(data)).isEqualTo(Arrays.copyOfRange(content, 4096, 4096 + 65_536));
            } finally {
                data.release();
            }

            // Longer than the loop may copy: a thread does it, as before.
            Promise<ByteBuf> long_ = ImmediateEventExecutor.INSTANCE.newPromise();
            int longBytes = FileBackend.INLINE_READ_MAX_BYTES + 4096;
            backend.submit(new BlockRequest(NbdProtocol.CMD_READ, 0, 2, 0, longBytes, Unpooled.EMPTY_BUFFER), long_);
            assertThat(queued).hasSize(1);
            assertThat(long_.isDone()).isFalse();
            queued.get(0).run();
            ByteBuf longData = long_.getNow();
            try {
                assertThat(ByteBufUtil.getBytes(longData)).isEqualTo(Arrays.copyOf(content, longBytes));
            } finally {
                longData.release();
            }
        } finally {
            backend.close();
        }
    }
}
