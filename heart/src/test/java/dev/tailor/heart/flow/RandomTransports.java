package dev.tailor.heart.flow;

import static org.quicktheories.generators.SourceDSL.integers;

import dev.tailor.heart.Apportionment;
import java.util.Arrays;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;

/**
 * QuickTheories generators of NTAM-shaped transport problems: 1–12 sources and 1–12 sinks (or up to a
 * given number), a link for every pair (link {@code a * sinks + b}, as the planner lays them out),
 * supplies and demands quantised like NTAM's (largest remainder, some nodes optionally at zero), costs in whole
 * microseconds that are either spread out, drawn from three values (many ties) or two-tier (a slow
 * cluster, what the slow-link filter acts on), and some links switched off.
 *
 * <p>Every value is drawn from the QuickTheories source, so a failing example shrinks towards fewer
 * nodes.
 */
public final class RandomTransports {

    private RandomTransports() {}

    /**
     * A transport problem.
     *
     * @param supply     units per source
     * @param demand     units per sink, same total
     * @param linkSource source of each link
     * @param linkSink   sink of each link
     * @param costMicros cost of each link, whole microseconds
     * @param active     which links may carry flow
     */
    public record Transport(
            int[] supply, int[] demand, int[] linkSource, int[] linkSink, long[] costMicros, boolean[] active) {

        int links() {
            return linkSource.length;
        }

        public long total() {
            return Arrays.stream(supply).asLongStream().sum();
        }

        /** The costs in milliseconds, as NTAM hands them to {@link TransportNetwork}. */
        double[] costMillis() {
            return Arrays.stream(costMicros).mapToDouble(c -> c / 1000.0).toArray();
        }

        /** Links ascending by cost, ties in link order: {@link TransportNetwork#linksByCost()}. */
        int[] linksByCost() {
            return network().linksByCost();
        }

        /** A fresh network with this problem's links and active set. */
        public TransportNetwork network() {
            TransportNetwork network = new TransportNetwork(supply, demand, linkSource, linkSink, costMillis());
            for (int l = 0; l < active.length; l++) {
                network.setActive(l, active[l]);
            }
            return network;
        }

        /**
         * The reference: OR-tools' min-cost flow over every active link at once, or {@code null}
         * when they cannot carry all demand.
         */
        FlowNetwork.MinCostFlow fullMinCostFlow() {
            FlowNetwork network = new FlowNetwork(supply.length + demand.length);
            for (int l = 0; l < links(); l++) {
                network.addArc(
                        linkSource[l],
                        supply.length + linkSink[l],
                        0,
                        Math.min(supply[linkSource[l]], demand[linkSink[l]]),
                        costMicros[l]);
            }
            for (int a = 0; a < supply.length; a++) {
                network.setSupply(a, supply[a]);
            }
            for (int b = 0; b < demand.length; b++) {
                network.setSupply(supply.length + b, -demand[b]);
            }
            try {
                return network.minCostFlow(active);
            } catch (IllegalStateException infeasible) {
                return null;
            }
        }

        @Override
        public String toString() {
            return "supply " + Arrays.toString(supply) + " demand " + Arrays.toString(demand) + " costMicros "
                    + Arrays.toString(costMicros) + " active " + Arrays.toString(active);
        }
    }

    /** Costs of a problem: how they are drawn. */
    enum Costs {
        /** Uniform in 0..5,000 µs: ties are rare. */
        SPREAD,
        /** One of 100, 200, 300 µs: ties everywhere. */
        TIED,
        /** 50–900 µs or, for about one link in four, 20–60 ms: a fast and a slow cluster. */
        TWO_TIER
    }

    /**
     * Problems with {@code units} in all.
     *
     * @param zeros         whether some sources and sinks may have no units at all
     * @param inactiveOneIn about one link in this many is switched off (0: none)
     */
    public static Gen<Transport> transports(int units, boolean zeros, int inactiveOneIn) {
        return transports(units, zeros, inactiveOneIn, 12);
    }

    /** {@link #transports(int, boolean, int)} with 1 to {@code maxNodes} sources and 1 to {@code maxNodes} sinks. */
    static Gen<Transport> transports(int units, boolean zeros, int inactiveOneIn, int maxNodes) {
        Gen<Transport> gen = in -> transport(in, units, zeros, inactiveOneIn, maxNodes);
        return gen.describedAs(Transport::toString);
    }

    private static Transport transport(RandomnessSource in, int units, boolean zeros, int inactiveOneIn, int maxNodes) {
        int s = integers().between(1, maxNodes).generate(in);
        int g = integers().between(1, maxNodes).generate(in);
        Costs costs =
                Costs.values()[integers().between(0, Costs.values().length - 1).generate(in)];
        int[] supply = units(in, s, units, zeros);
        int[] demand = units(in, g, units, zeros);
        int links = s * g;
        int[] linkSource = new int[links];
        int[] linkSink = new int[links];
        long[] cost = new long[links];
        boolean[] active = new boolean[links];
        for (int a = 0, l = 0; a < s; a++) {
            for (int b = 0; b < g; b++, l++) {
                linkSource[l] = a;
                linkSink[l] = b;
                cost[l] = switch (costs) {
                    case SPREAD -> integers().between(0, 5_000).generate(in);
                    case TIED -> 100L * integers().between(1, 3).generate(in);
                    case TWO_TIER ->
                        integers().between(0, 3).generate(in) == 0
                                ? integers().between(20_000, 60_000).generate(in)
                                : integers().between(50, 900).generate(in);
                };
                active[l] = inactiveOneIn == 0
                        || integers().between(1, inactiveOneIn).generate(in) > 1;
            }
        }
        return new Transport(supply, demand, linkSource, linkSink, cost, active);
    }

    /** {@code total} units over {@code n} parts by largest remainder; with zeros, some parts get none. */
    private static int[] units(RandomnessSource in, int n, int total, boolean zeros) {
        double[] weights = new double[n];
        for (int i = 0; i < n; i++) {
            boolean none = zeros && integers().between(0, 3).generate(in) == 0;
            weights[i] = none ? 0 : integers().between(1, 1000).generate(in);
        }
        if (Arrays.stream(weights).sum() == 0) {
            weights[0] = 1;
        }
        return zeros
                ? Apportionment.largestRemainder(weights, total)
                : Apportionment.largestRemainderAtLeastOne(weights, total);
    }
}
