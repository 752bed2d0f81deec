/**
 * Burst-aware segment admission for shared block storage (docs/design.md#segment-admission): when may a
 * block request enter the shared backend. Start at {@link dev.tailor.admission.AdmissionController};
 * docs/admission.md explains the mechanism, its formulas and its defaults.
 *
 * <p>Pure: nothing here reads a clock or does I/O. Time arrives as nanoseconds in
 * {@link dev.tailor.admission.AdmissionController#onInterval(long)}, costs are whole cost units
 * ({@link dev.tailor.admission.IoCostModel}), sizes are bytes; every quantity carries its unit in its
 * name. Where the paper is silent (docs/design.md#our-readings), the Javadoc says "our reading".
 */
package dev.tailor.admission;
