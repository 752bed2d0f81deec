/**
 * The storage simulator (docs/design.md#simulators; docs/storage-simulator.md): tenants' block requests
 * — real trace excerpts ({@link dev.tailor.datasets.BlockTrace}) replayed by {@link TenantStream},
 * or synthetic — through proxies whose admission policy decides when each goes to one shared backend
 * ({@link BackendModel}, fitted by {@link BackendCalibration}). Start at {@link StorageSimulation};
 * scenarios are {@link StorageScenario}s loaded by {@link StorageScenarios} and made ready by
 * {@link StorageSetup}.
 *
 * <p>Discrete events on simulated nanoseconds ({@link dev.tailor.sim.des.EventCalendar}), seeded
 * random streams, no wall clock: a run is a pure function of its setup, policy and seed. Every
 * quantity carries its unit in its name; cost units are those of {@link dev.tailor.admission.IoCostModel},
 * here derived from the backend ({@link StorageSetup#costModel}). Where the paper is silent the
 * Javadoc says "our reading".
 */
package dev.tailor.sim.storage;
