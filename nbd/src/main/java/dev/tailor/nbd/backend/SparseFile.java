package dev.tailor.nbd.backend;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The holes of a file, and punching new ones: {@code lseek(2)} with {@code SEEK_DATA} / {@code SEEK_HOLE}
 * and {@code fallocate(2)} with {@code FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE}, on a descriptor of
 * its own, called through the JDK's foreign function API ({@code java.lang.foreign}).
 *
 * <p>Why reflection: {@code FileChannel} has neither call, and {@code java.lang.foreign} is final only
 * from JDK 22, a preview in the JDK 21 this project compiles for (using it directly would need
 * {@code --enable-preview} at build and run time). So the downcall handles are looked up reflectively
 * once, at open, and then invoked as plain {@link MethodHandle}s. On a JDK without the final API (21),
 * off Linux, or when the native calls are not allowed, {@link #open} returns an instance that is not
 * {@link #supported()}: callers then report every byte as data and write zeroes instead of punching
 * (proto.md lets a server report status 0 for any block). The JVM must allow native access
 * ({@code --enable-native-access=ALL-UNNAMED}, which the CLI jar's manifest sets), else JDK 24 and later
 * print a warning at the first call.
 *
 * <p>Threads: any; the calls are positional and keep no state but the descriptor. Linux constants
 * (x86-64 and arm64 agree): {@code SEEK_DATA} 3, {@code SEEK_HOLE} 4, {@code O_RDONLY} 0,
 * {@code O_RDWR} 2, {@code O_CLOEXEC} 0x80000, {@code FALLOC_FL_KEEP_SIZE} 1, {@code FALLOC_FL_PUNCH_HOLE} 2.
 */
final class SparseFile implements AutoCloseable {

    private static final int SEEK_DATA = 3;
    private static final int SEEK_HOLE = 4;
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int PUNCH_HOLE_KEEP_SIZE = 2 | 1;

    /** The native calls, or null when the foreign function API cannot reach them. */
    private static final Natives NATIVES = Natives.load();

    private final int fd;
    private volatile boolean closed;

    private SparseFile(int fd) {
        this.fd = fd;
    }

    /**
     * Opens {@code file} for hole queries (and for punching when {@code writable}). Never fails: without
     * the native calls, or when the file system cannot answer {@code SEEK_HOLE}, the result is not
     * {@link #supported()}.
     */
    static SparseFile open(Path file, boolean writable) {
        if (NATIVES == null) {
            return new SparseFile(-1);
        }
        int fd = NATIVES.open(file.toAbsolutePath().toString(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
        if (fd >= 0 && NATIVES.lseek(fd, 0, SEEK_HOLE) < 0) {
            NATIVES.close(fd);
            fd = -1;
        }
        return new SparseFile(fd);
    }

    /** Whether holes can be found (and punched) in this file. */
    boolean supported() {
        return fd >= 0 && !closed;
    }

    /**
     * The offset of the first data at or after {@code offsetBytes}, or -1 when there is none before the
     * end of the file ({@code ENXIO}); {@code offsetBytes} itself when unsupported.
     */
    long nextData(long offsetBytes) {
        return supported() ? NATIVES.lseek(fd, offsetBytes, SEEK_DATA) : offsetBytes;
    }

    /**
     * The offset of the first hole at or after {@code offsetBytes} (the end of the file counts as one),
     * or -1 on an error; -1 when unsupported.
     */
    long nextHole(long offsetBytes) {
        return supported() ? NATIVES.lseek(fd, offsetBytes, SEEK_HOLE) : -1;
    }

    /**
     * Deallocates {@code lengthBytes} at {@code offsetBytes}, keeping the file's size: the range then
     * reads as zeroes. Partial blocks at either end are zeroed by the file system.
     *
     * @return false when unsupported or refused (read-only descriptor, a file system without it): the
     *         caller writes zeroes instead
     */
    boolean punchHole(long offsetBytes, long lengthBytes) {
        return supported() && NATIVES.fallocate(fd, PUNCH_HOLE_KEEP_SIZE, offsetBytes, lengthBytes) == 0;
    }

    @Override
    public void close() {
        if (supported()) {
            closed = true;
            NATIVES.close(fd);
        }
    }

    /** The downcall handles of open, close, lseek and fallocate. */
    private record Natives(
            MethodHandle open,
            MethodHandle close,
            MethodHandle lseek,
            MethodHandle fallocate,
            Method ofConfined,
            Method allocateFrom) {

        static Natives load() {
            try {
                Class<?> linkerType = Class.forName("java.lang.foreign.Linker");
                Class<?> lookupType = Class.forName("java.lang.foreign.SymbolLookup");
                Class<?> layoutType = Class.forName("java.lang.foreign.MemoryLayout");
                Class<?> valueLayout = Class.forName("java.lang.foreign.ValueLayout");
                Class<?> descriptorType = Class.forName("java.lang.foreign.FunctionDescriptor");
                Class<?> segmentType = Class.forName("java.lang.foreign.MemorySegment");
                Class<?> optionType = Class.forName("java.lang.foreign.Linker$Option");
                Class<?> arenaType = Class.forName("java.lang.foreign.Arena");
                Class<?> allocatorType = Class.forName("java.lang.foreign.SegmentAllocator");
                Object linker = linkerType.getMethod("nativeLinker").invoke(null);
                Object lookup = linkerType.getMethod("defaultLookup").invoke(linker);
                Method find = lookupType.getMethod("find", String.class);
                Object int32 = valueLayout.getField("JAVA_INT").get(null);
                Object int64 = valueLayout.getField("JAVA_LONG").get(null);
                Object address = valueLayout.getField("ADDRESS").get(null);
                Method of = descriptorType.getMethod("of", layoutType, layoutType.arrayType());
                Method downcall =
                        linkerType.getMethod("downcallHandle", segmentType, descriptorType, optionType.arrayType());
                Object noOptions = Array.newInstance(optionType, 0);
                java.util.function.BiFunction<String, Object[], MethodHandle> handle = (name, layouts) -> {
                    try {
                        Object symbol = ((Optional<?>) find.invoke(lookup, name)).orElseThrow();
                        Object arguments = Array.newInstance(layoutType, layouts.length - 1);
                        for (int i = 1; i < layouts.length; i++) {
                            Array.set(arguments, i - 1, layouts[i]);
                        }
                        Object descriptor = of.invoke(null, layouts[0], arguments);
                        return (MethodHandle) downcall.invoke(linker, symbol, descriptor, noOptions);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException(e);
                    }
                };
                return new Natives(
                        handle.apply("open", new Object[] {int32, address, int32}),
                        handle.apply("close", new Object[] {int32, int32}),
                        handle.apply("lseek", new Object[] {int64, int32, int64, int32}),
                        handle.apply("fallocate", new Object[] {int32, int32, int32, int64, int64}),
                        arenaType.getMethod("ofConfined"),
                        allocatorType.getMethod("allocateFrom", String.class));
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                System.getLogger(SparseFile.class.getName())
                        .log(
                                System.Logger.Level.DEBUG,
                                () -> "no lseek(SEEK_HOLE) through java.lang.foreign (" + e + "): every byte is data");
                return null;
            }
        }

        int open(String path, int flags) {
            try (AutoCloseable arena = (AutoCloseable) ofConfined.invoke(null)) {
                Object cPath = allocateFrom.invoke(arena, path);
                return (int) open.invokeWithArguments(cPath, flags);
            } catch (Throwable e) {
                return -1;
            }
        }

        long lseek(int fd, long offset, int whence) {
            try {
                return (long) lseek.invokeExact(fd, offset, whence);
            } catch (Throwable e) {
                return -1;
            }
        }

        int fallocate(int fd, int mode, long offset, long length) {
            try {
                return (int) fallocate.invokeExact(fd, mode, offset, length);
            } catch (Throwable e) {
                return -1;
            }
        }

        void close(int fd) {
            try {
                int ignored = (int) close.invokeExact(fd);
            } catch (Throwable e) {
                // Nothing to do: the descriptor is gone either way.
            }
        }
    }
}
