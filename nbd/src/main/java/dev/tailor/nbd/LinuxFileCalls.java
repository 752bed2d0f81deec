package dev.tailor.nbd;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The few Linux file calls {@code FileChannel} does not have: {@code open}, {@code close}, {@code lseek}
 * (for {@code SEEK_DATA} / {@code SEEK_HOLE}), {@code fallocate} (hole punching) and {@code preadv2}
 * (with {@code RWF_NOWAIT}: a read that never waits for the disk), as downcall handles of the JDK's
 * foreign function API ({@code java.lang.foreign}). {@link #INSTANCE} is null where they cannot be had.
 *
 * <p>Why reflection: {@code java.lang.foreign} is final only from JDK 22, a preview in the JDK 21 this
 * project compiles for (using it directly would need {@code --enable-preview} at build and run time). So
 * the handles are looked up reflectively once and then invoked as plain {@link MethodHandle}s; on JDK 21,
 * off Linux, or when native access is not allowed, {@link #INSTANCE} is null and callers fall back to
 * what the JDK has. Pointers that the calls take as plain numbers ({@code preadv2}'s {@code iovec}) are
 * passed as 64-bit integers, which x86-64 and arm64 pass the same way.
 *
 * <p>A record, so that the JIT trusts its final fields and calls the handles as constants.
 *
 * <p>Threads: any. Every method returns -1 for any failure (errno is not kept: callers only need to know
 * that the call did not do its work, and then take the slower way).
 */
record LinuxFileCalls(MethodHandle open, MethodHandle close, MethodHandle lseek, MethodHandle fallocate,
        MethodHandle preadv2, Method ofConfined, Method allocateFrom) {

    /** The calls, or null when the foreign function API cannot reach them. */
    static final LinuxFileCalls INSTANCE = load();

    private static LinuxFileCalls load() {
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
            Method downcall = linkerType.getMethod("downcallHandle", segmentType, descriptorType,
                    optionType.arrayType());
            Object noOptions = Array.newInstance(optionType, 0);
            BiFunction<String, Object[], MethodHandle> handle = (name, layouts) -> {
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
            return new LinuxFileCalls(
                    handle.apply("open", new Object[] {int32, address, int32}),
                    handle.apply("close", new Object[] {int32, int32}),
                    handle.apply("lseek", new Object[] {int64, int32, int64, int32}),
                    handle.apply("fallocate", new Object[] {int32, int32, int32, int64, int64}),
                    handle.apply("preadv2", new Object[] {int64, int32, int64, int32, int64, int32}),
                    arenaType.getMethod("ofConfined"), allocatorType.getMethod("allocateFrom", String.class));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            System.getLogger(LinuxFileCalls.class.getName()).log(System.Logger.Level.DEBUG,
                    () -> "no Linux file calls through java.lang.foreign (" + e + "): holes are not found and"
                            + " every read goes to a file I/O thread");
            return null;
        }
    }

    /** {@code open(path, flags)}: a descriptor, or -1. */
    int open(String path, int flags) {
        try (AutoCloseable arena = (AutoCloseable) ofConfined.invoke(null)) {
            Object cPath = allocateFrom.invoke(arena, path);
            return (int) open.invokeWithArguments(cPath, flags);
        } catch (Throwable e) {
            return -1;
        }
    }

    /** {@code lseek(fd, offset, whence)}: the new offset, or -1. */
    long lseek(int fd, long offset, int whence) {
        try {
            return (long) lseek.invokeExact(fd, offset, whence);
        } catch (Throwable e) {
            return -1;
        }
    }

    /** {@code fallocate(fd, mode, offset, length)}: 0, or -1. */
    int fallocate(int fd, int mode, long offset, long length) {
        try {
            return (int) fallocate.invokeExact(fd, mode, offset, length);
        } catch (Throwable e) {
            return -1;
        }
    }

    /**
     * {@code preadv2(fd, iov, iovcnt, offset, flags)}: the bytes read (0 at the end of the file), or -1.
     *
     * @param iovecAddress the native address of {@code iovecCount} {@code struct iovec}s (16 bytes each:
     *                     base address, length), which the caller keeps alive during the call
     */
    long preadv2(int fd, long iovecAddress, int iovecCount, long offset, int flags) {
        try {
            return (long) preadv2.invokeExact(fd, iovecAddress, iovecCount, offset, flags);
        } catch (Throwable e) {
            return -1;
        }
    }

    /** {@code close(fd)}. */
    void close(int fd) {
        try {
            int ignored = (int) close.invokeExact(fd);
        } catch (Throwable e) {
            // Nothing to do: the descriptor is gone either way.
        }
    }
}
