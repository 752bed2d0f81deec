package dev.tailor.sim.storage;

import java.util.List;
import java.util.function.LongSupplier;

/**
 * The storage simulator (docs/design.md#simulators): tenants' block requests, replayed from real trace
 * excerpts or synthetic, reach one or more proxies, whose policy decides when each goes to one
 * shared backend (k channels, FCFS, service times calibrated from the Tencent replay). Discrete
 * events on simulated nanoseconds, no wall clock; a run is a pure function of its setup, policy and
 * seed. docs/storage-simulator.md describes the model, the policies and the scenarios.
 */
public final class StorageSimulation {

    /** The comparison's policies, baselines first. */
    public static final List<String> POLICIES = List.of(
            "fifo",
            "static-cap",
            "token-bucket",
            "mclock",
            "mclock-per-client",
            "segment-admission",
            "segment-admission-paper",
            "fair-dispatch");
    /**
     * Ablations of segment-admission: {@link SegmentAdmissionPolicy}'s variants but the shipped one and
     * the paper's, with the door's own ablation, {@code finish-tag-door}, beside the one that puts that
     * door behind admission.
     */
    public static final List<String> ABLATIONS = ablations();

    private static List<String> ablations() {
        List<String> names = new java.util.ArrayList<>(SegmentAdmissionPolicy.NAMES);
        names.removeAll(POLICIES);
        names.add(names.indexOf("start-tag-door-admission"), "finish-tag-door");
        return List.copyOf(names);
    }

    private StorageSimulation() {}

    /** Every policy name: {@link #POLICIES} then {@link #ABLATIONS}. */
    public static List<String> policyNames() {
        return java.util.stream.Stream.concat(POLICIES.stream(), ABLATIONS.stream())
                .toList();
    }

    /**
     * Runs {@code setup} under {@code policy}.
     *
     * @param wallClock for the reported wall-clock time only; may be {@code null}
     * @throws IllegalArgumentException when the policy is unknown
     */
    public static StorageRunResult run(StorageSetup setup, String policy, LongSupplier wallClock) {
        return run(setup, policy, wallClock, null);
    }

    static StorageRunResult run(
            StorageSetup setup, String policy, LongSupplier wallClock, StorageRun.Observer observer) {
        if (!policyNames().contains(policy)) {
            throw new IllegalArgumentException("policy : \"" + policy + "\" (expected: one of " + policyNames() + ")");
        }
        return new StorageRun(setup, policy, observer).run(wallClock);
    }

    /** A new instance of the policy {@code name} for {@code proxy}. */
    static StoragePolicy policy(String name, Proxy proxy, SeriesRecorder recorder) {
        return switch (name) {
            case "fifo" -> new FifoPolicy(proxy);
            case "static-cap" -> new StaticCapPolicy(proxy);
            case "token-bucket" -> new TokenBucketPolicy(proxy);
            case "mclock" -> new MClockPolicy(proxy, false);
            case "mclock-per-client" -> new MClockPolicy(proxy, true);
            case "fair-dispatch" -> new FairDispatchPolicy(proxy);
            case "finish-tag-door" -> new FairDispatchPolicy(proxy, true);
            default -> {
                if (!SegmentAdmissionPolicy.NAMES.contains(name)) {
                    throw new IllegalArgumentException(
                            "policy : \"" + name + "\" (expected: one of " + policyNames() + ")");
                }
                yield new SegmentAdmissionPolicy(proxy, name, recorder);
            }
        };
    }
}
