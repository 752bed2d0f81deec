package dev.tailor.admission;

import dev.tailor.common.Checks;

/**
 * The linear I/O cost model: an I/O of {@code bytes} costs {@code a + b × bytes} cost units, with
 * separate coefficients for reads and writes (docs/design.md#cost-model: a + b·bytes,
 * linear like Linux blk-iocost's). Immutable and thread-safe.
 *
 * <p><b>Cost units</b> (our reading). One cost unit is one nanosecond of backend device time at the
 * rated throughput, which is blk-iocost's "vtime" at a 100 % rate: a device that is kept busy
 * serves 10⁹ cost units per second. The defaults ({@link #DEFAULT}) are blk-iocost's default SSD
 * profile ({@code AUTOP_SSD_DFL} in Linux {@code block/blk-iocost.c}: 488,636,629 B/s and 8,518
 * random IOPS for reads, 427,891,549 B/s and 21,940 random IOPS for writes), converted the way
 * blk-iocost converts them: {@code b = 10⁹ ÷ bytes-per-second} and {@code a = 10⁹ ÷ IOPS − 4096 × b}
 * (the size part of a 4 KiB I/O is not counted twice). All I/O is priced as random, since a block
 * trace striped in 1 MiB blocks is mostly random at the backend; blk-iocost's separate sequential
 * base cost is not modelled.
 *
 * <p>Costs are whole cost units: {@link #costUnits} rounds up, charges at least 1 (so no request is
 * free) and at most {@link #MAX_COST_UNITS}.
 *
 * @param readBaseCostUnits      {@code a} of a read, cost units per I/O, finite and {@code >= 0}
 *                               (default 109,016)
 * @param readCostUnitsPerByte   {@code b} of a read, cost units per byte, finite and {@code >= 0}
 *                               (default 2.0465)
 * @param writeBaseCostUnits     {@code a} of a write, cost units per I/O, finite and {@code >= 0}
 *                               (default 36,006)
 * @param writeCostUnitsPerByte  {@code b} of a write, cost units per byte, finite and {@code >= 0}
 *                               (default 2.3370)
 */
public record IoCostModel(
        double readBaseCostUnits,
        double readCostUnitsPerByte,
        double writeBaseCostUnits,
        double writeCostUnitsPerByte) {

    /**
     * Largest cost of one request, 2⁵² cost units (about 52 days of a device-second per second),
     * where doubles stop holding every whole number; larger requests are charged this much.
     */
    public static final long MAX_COST_UNITS = 1L << 52;

    /** blk-iocost's default SSD profile in cost units (see the class description). */
    public static final IoCostModel DEFAULT = new IoCostModel(109_016, 2.0465, 36_006, 2.3370);

    /**
     * @throws IllegalArgumentException naming the field when a coefficient is NaN, infinite or
     *                                  negative
     */
    public IoCostModel {
        Checks.requireRange("readBaseCostUnits", readBaseCostUnits, 0, Double.MAX_VALUE);
        Checks.requireRange("readCostUnitsPerByte", readCostUnitsPerByte, 0, Double.MAX_VALUE);
        Checks.requireRange("writeBaseCostUnits", writeBaseCostUnits, 0, Double.MAX_VALUE);
        Checks.requireRange("writeCostUnitsPerByte", writeCostUnitsPerByte, 0, Double.MAX_VALUE);
    }

    /**
     * Cost of one I/O of {@code bytes} bytes: {@code ceil(a + b × bytes)}, clamped to
     * {@code [1, MAX_COST_UNITS]}.
     *
     * @param kind  read or write
     * @param bytes bytes moved, {@code >= 0}
     * @throws IllegalArgumentException when {@code bytes} is negative or {@code kind} is null
     */
    public long costUnits(IoKind kind, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes : " + bytes + " (expected: >= 0)");
        }
        Checks.requireNonNull("kind", kind, "READ or WRITE");
        double cost = kind == IoKind.READ
                ? readBaseCostUnits + readCostUnitsPerByte * bytes
                : writeBaseCostUnits + writeCostUnitsPerByte * bytes;
        // Compare before converting: (long) of a double beyond 2^63 saturates, but the clamp is clearer.
        if (!(cost < MAX_COST_UNITS)) {
            return MAX_COST_UNITS;
        }
        return Math.max(1, (long) Math.ceil(cost));
    }
}
