package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.util.OptionalDouble;

/**
 * A tenant's virtual disk as one admission controller sees it: a name, a size and, optionally, the
 * service rate the store has committed to it.
 *
 * <p>The commitment is the disk's baseline for the steady/hot classifier (docs/design.md#classifier:
 * per-disk configuration, the service's obligation to its tenant). A disk without one gets
 * the default, a fair share of the proxy's capacity: capacity ÷ number of disks on the controller.
 * Either way the baseline is split evenly over the disk's segments, because striping spreads a disk's
 * load evenly over them (our reading). Commitments may add up to more than the capacity
 * (over-commitment is the operator's decision); they only set the classifier's thresholds.
 *
 * @param name                         identifies the disk in messages; non-blank, unique per controller
 * @param sizeBytes                    addressable size in bytes, {@code >= 1}
 * @param commitmentCostUnitsPerSecond committed service rate in cost units ({@link IoCostModel}) per
 *                                     second, finite and {@code >= 0}; empty for the fair-share default
 */
public record VirtualDisk(String name, long sizeBytes, OptionalDouble commitmentCostUnitsPerSecond) {

    /**
     * @throws IllegalArgumentException naming the field when the name is null or blank, the size is
     *                                  below 1, or the commitment is NaN, infinite or negative
     */
    public VirtualDisk {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException(
                    "name : " + (name == null ? "null" : "\"" + name + "\"") + " (expected: a non-blank disk name)");
        }
        Checks.requireRange("sizeBytes of disk \"" + name + "\"", sizeBytes, 1, Long.MAX_VALUE);
        Checks.requireNonNull(
                "commitmentCostUnitsPerSecond of disk \"" + name + "\"",
                commitmentCostUnitsPerSecond,
                "a value or OptionalDouble.empty()");
        if (commitmentCostUnitsPerSecond.isPresent()) {
            Checks.requireRange(
                    "commitmentCostUnitsPerSecond of disk \"" + name + "\"",
                    commitmentCostUnitsPerSecond.getAsDouble(),
                    0,
                    Double.MAX_VALUE);
        }
    }

    /** A disk whose baseline is the fair-share default. */
    public static VirtualDisk of(String name, long sizeBytes) {
        return new VirtualDisk(name, sizeBytes, OptionalDouble.empty());
    }

    /** A disk with a committed rate, in cost units per second. */
    public static VirtualDisk committed(String name, long sizeBytes, double commitmentCostUnitsPerSecond) {
        return new VirtualDisk(name, sizeBytes, OptionalDouble.of(commitmentCostUnitsPerSecond));
    }
}
