package dev.tailor.heart.flow;

import com.google.ortools.Loader;

/**
 * Loads OR-tools' native library once per JVM, on first use, and says clearly what to do when this
 * platform has none.
 */
final class OrTools {

    private static volatile boolean loaded;

    private OrTools() {}

    /** Makes OR-tools' solvers usable; cheap after the first call. */
    static void ensureLoaded() {
        if (loaded) {
            return;
        }
        synchronized (OrTools.class) {
            if (!loaded) {
                try {
                    Loader.loadNativeLibraries();
                } catch (RuntimeException | LinkageError e) {
                    throw new IllegalStateException(
                            "OR-tools' native flow solvers could not be loaded on "
                                    + System.getProperty("os.name") + "/" + System.getProperty("os.arch")
                                    + " (expected: Linux, macOS or Windows on x86-64, or Linux/macOS on aarch64): " + e,
                            e);
                }
                loaded = true;
            }
        }
    }
}
