package dev.tailor.nbd.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails the test after which Netty's leak detector reports a buffer that was never released. The
 * module's tests run with {@code -Dio.netty.leakDetection.level=paranoid} (every buffer tracked); this
 * extension is registered for all of them (META-INF/services, autodetection) and installs, before any
 * buffer class is initialised, a detector factory whose detectors record leaks instead of only logging
 * them. After each test it collects garbage and allocates a few buffers (detection happens on
 * allocation), then fails the test with the leak records.
 */
public final class LeakCheck implements AfterEachCallback {

    private static final List<String> LEAKS = new ArrayList<>();

    static {
        // Netty logs through java.util.logging (the SLF4J API on the test class path has no provider).
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            // The one abstract method is the deprecated one; Netty's other overloads delegate to it.
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(
                    Class<T> resource, int samplingInterval, long maxActive) {
                return new Recording<>(resource, samplingInterval);
            }
        });
    }

    private static final class Recording<T> extends ResourceLeakDetector<T> {
        Recording(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            record("LEAK: " + resourceType + " was never released" + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            record("LEAK: " + resourceType + " was never released (no records)");
        }
    }

    private static void record(String leak) {
        synchronized (LEAKS) {
            LEAKS.add(leak);
        }
    }

    /** Collects garbage, provokes detection, and returns (and forgets) the leaks reported so far. */
    public static List<String> collectLeaks() {
        for (int round = 0; round < 3; round++) {
            awaitCollection();
            for (ByteBufAllocator alloc : new ByteBufAllocator[] {
                ByteBufAllocator.DEFAULT, PooledByteBufAllocator.DEFAULT, UnpooledByteBufAllocator.DEFAULT
            }) {
                for (int i = 0; i < 8; i++) {
                    alloc.directBuffer(16).release();
                    alloc.heapBuffer(16).release();
                }
            }
            Unpooled.buffer(16).release();
        }
        synchronized (LEAKS) {
            List<String> leaks = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return leaks;
        }
    }

    /**
     * Collects garbage and waits (up to 1 s) until the reference handler has enqueued a sentinel that
     * became garbage in the same collection, so the leaked buffers' references are enqueued too.
     */
    private static void awaitCollection() {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        System.gc();
        try {
            queue.remove(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sentinel.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " buffer leak(s) after " + context.getDisplayName() + ":\n"
                    + String.join("\n", leaks));
        }
    }

    /** Used by the self-test: a buffer that is never released. */
    public static ByteBuf leakOne() {
        return ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(42);
    }

    /** The leak level the module runs with. */
    public static ResourceLeakDetector.Level level() {
        return ResourceLeakDetector.getLevel();
    }
}
