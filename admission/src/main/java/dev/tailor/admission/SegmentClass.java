package dev.tailor.admission;

/** A segment's class in the steady/hot classifier (docs/design.md#classifier). */
public enum SegmentClass {
    /**
     * Its cost over the recent window stays within its baseline commitment; it may draw the reserved
     * allowance once the main pool is empty.
     */
    STEADY,
    /**
     * Its cost over the recent window exceeded its baseline; it draws only the main pool (and, in the
     * first interval of a burst, borrowed headroom) until it has been calm for the recovery period.
     */
    HOT
}
