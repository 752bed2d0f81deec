package dev.tailor.nbd;

import java.nio.file.Path;

/**
 * The holes of a file, and punching new ones: {@code lseek(2)} with {@code SEEK_DATA} / {@code SEEK_HOLE}
 * and {@code fallocate(2)} with {@code FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE}, on a descriptor of
 * its own, called through the JDK's foreign function API ({@link LinuxFileCalls}, which says why by
 * reflection). On a JDK without the final API (21), off Linux, or when the native calls are not allowed,
 * {@link #open} returns an instance that is not
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
    private static final LinuxFileCalls NATIVES = LinuxFileCalls.INSTANCE;

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
}
