package dev.tailor.heart.flow;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads DIMACS minimum-cost-flow instances ({@code .min}) and their solutions ({@code .sol}), as in
 * {@code shared/data/flow_benchmarks} (PROVENANCE.md §4).
 *
 * <pre>
 * c comment                  (anywhere; blank lines are ignored too)
 * p min NODES ARCS           (once, before any n or a line)
 * n ID SUPPLY                (positive = supply, negative = demand; absent = 0)
 * a FROM TO LOW CAP COST     (ARCS of them)
 *
 * s COST                     (.sol: the optimal cost)
 * f FROM TO FLOW             (.sol: the non-zero flows)
 * </pre>
 *
 * <p>Node ids are 1-based in the files and 0-based here. Numbers are read as {@code long}, so a
 * value beyond FlowNetwork's {@code int} limits is reported by the caller that hands it to a solver, not
 * silently truncated here. A malformed line is an {@link IllegalArgumentException} naming the file,
 * the line number and the line.
 */
final class Dimacs {

    private Dimacs() {}

    /**
     * A min-cost-flow instance; arrays are indexed by 0-based node id or by arc index in file order.
     *
     * @param name   the file name, for messages
     * @param supply per node: positive supply, negative demand
     */
    record Instance(String name, long[] supply, int[] from, int[] to, long[] lower, long[] upper, long[] cost) {

        int nodes() {
            return supply.length;
        }

        int arcs() {
            return from.length;
        }

        /** Σ of the positive supplies: the flow a feasible solution moves from sources to sinks. */
        long totalSupply() {
            return Arrays.stream(supply).filter(s -> s > 0).sum();
        }

        /**
         * The solution's flows as a vector over this instance's arcs (0 where it has no f line).
         *
         * @throws IllegalArgumentException when an f line names no arc of the instance, when two f
         *                                  lines name one arc, or when parallel arcs make a line
         *                                  ambiguous
         */
        long[] arcFlows(Solution solution) {
            Map<Long, Integer> byEnds = new HashMap<>();
            for (int a = 0; a < arcs(); a++) {
                Integer before = byEnds.put(key(from[a], to[a]), a);
                if (before != null) {
                    throw new IllegalArgumentException(name + ": arcs " + (before + 1) + " and " + (a + 1) + " both go "
                            + (from[a] + 1) + " -> " + (to[a] + 1) + "; a .sol flow line cannot tell them apart");
                }
            }
            long[] flow = new long[arcs()];
            boolean[] seen = new boolean[arcs()];
            for (int k = 0; k < solution.flow().length; k++) {
                String arc = (solution.from()[k] + 1) + " -> " + (solution.to()[k] + 1);
                Integer a = byEnds.get(key(solution.from()[k], solution.to()[k]));
                if (a == null) {
                    throw new IllegalArgumentException(name + ": the solution's flow on " + arc + " is on no arc");
                }
                if (seen[a]) {
                    throw new IllegalArgumentException(name + ": the solution has two flows on " + arc);
                }
                seen[a] = true;
                flow[a] = solution.flow()[k];
            }
            return flow;
        }

        private static long key(int tail, int head) {
            return ((long) tail << 32) | (head & 0xffffffffL);
        }
    }

    /**
     * A solution file.
     *
     * @param cost the {@code s} line
     * @param from tail of each {@code f} line, 0-based
     * @param to   head of each {@code f} line, 0-based
     * @param flow flow of each {@code f} line
     */
    record Solution(long cost, int[] from, int[] to, long[] flow) {}

    static Instance readInstance(Path file) {
        return parseInstance(file.getFileName().toString(), read(file));
    }

    static Solution readSolution(Path file) {
        return parseSolution(file.getFileName().toString(), read(file));
    }

    static Instance parseInstance(String name, String text) {
        long[] supply = null;
        int[] from = null;
        int[] to = null;
        long[] lower = null;
        long[] upper = null;
        long[] cost = null;
        int arcs = 0;
        int lineNumber = 0;
        for (String line : text.lines().toList()) {
            lineNumber++;
            String[] f = line.trim().split("\\s+");
            if (f[0].isEmpty() || f[0].equals("c")) {
                continue;
            }
            Where at = new Where(name, lineNumber, line);
            switch (f[0]) {
                case "p" -> {
                    at.require(f.length == 4 && f[1].equals("min"), "expected: p min NODES ARCS");
                    at.require(supply == null, "a second p line");
                    int n = at.intIn(f[2], 1, Integer.MAX_VALUE, "NODES");
                    int m = at.intIn(f[3], 0, Integer.MAX_VALUE, "ARCS");
                    supply = new long[n];
                    from = new int[m];
                    to = new int[m];
                    lower = new long[m];
                    upper = new long[m];
                    cost = new long[m];
                }
                case "n" -> {
                    at.require(supply != null, "an n line before the p line");
                    at.require(f.length == 3, "expected: n ID SUPPLY");
                    int id = at.intIn(f[1], 1, supply.length, "ID") - 1;
                    supply[id] += at.number(f[2], "SUPPLY");
                }
                case "a" -> {
                    at.require(from != null, "an a line before the p line");
                    at.require(f.length == 6, "expected: a FROM TO LOW CAP COST");
                    at.require(arcs < from.length, "more arcs than the p line's " + from.length);
                    from[arcs] = at.intIn(f[1], 1, supply.length, "FROM") - 1;
                    to[arcs] = at.intIn(f[2], 1, supply.length, "TO") - 1;
                    lower[arcs] = at.number(f[3], "LOW");
                    upper[arcs] = at.number(f[4], "CAP");
                    at.require(
                            0 <= lower[arcs] && lower[arcs] <= upper[arcs],
                            "bounds [" + lower[arcs] + ", " + upper[arcs] + "] (expected: 0 <= LOW <= CAP)");
                    cost[arcs] = at.number(f[5], "COST");
                    arcs++;
                }
                default -> at.require(false, "unknown line type " + f[0] + " (expected: c, p, n or a)");
            }
        }
        if (supply == null) {
            throw new IllegalArgumentException(name + ": no p line (expected: p min NODES ARCS)");
        }
        if (arcs != from.length) {
            throw new IllegalArgumentException(
                    name + ": " + arcs + " a lines (expected: " + from.length + ", as the p line says)");
        }
        return new Instance(name, supply, from, to, lower, upper, cost);
    }

    static Solution parseSolution(String name, String text) {
        Long cost = null;
        List<long[]> flows = new ArrayList<>();
        int lineNumber = 0;
        for (String line : text.lines().toList()) {
            lineNumber++;
            String[] f = line.trim().split("\\s+");
            if (f[0].isEmpty() || f[0].equals("c")) {
                continue;
            }
            Where at = new Where(name, lineNumber, line);
            switch (f[0]) {
                case "s" -> {
                    at.require(f.length == 2, "expected: s COST");
                    at.require(cost == null, "a second s line");
                    cost = at.number(f[1], "COST");
                }
                case "f" -> {
                    at.require(f.length == 4, "expected: f FROM TO FLOW");
                    flows.add(new long[] {
                        at.intIn(f[1], 1, Integer.MAX_VALUE, "FROM") - 1,
                        at.intIn(f[2], 1, Integer.MAX_VALUE, "TO") - 1,
                        at.number(f[3], "FLOW")
                    });
                }
                default -> at.require(false, "unknown line type " + f[0] + " (expected: c, s or f)");
            }
        }
        if (cost == null) {
            throw new IllegalArgumentException(name + ": no s line (expected: s COST)");
        }
        int[] from = flows.stream().mapToInt(x -> (int) x[0]).toArray();
        int[] to = flows.stream().mapToInt(x -> (int) x[1]).toArray();
        long[] flow = flows.stream().mapToLong(x -> x[2]).toArray();
        return new Solution(cost, from, to, flow);
    }

    /** A line being parsed, for error messages that point at it. */
    private record Where(String file, int number, String line) {

        void require(boolean ok, String problem) {
            if (!ok) {
                throw new IllegalArgumentException(file + ":" + number + ": " + problem + " in line '" + line + "'");
            }
        }

        long number(String field, String what) {
            try {
                return Long.parseLong(field);
            } catch (NumberFormatException e) {
                require(false, what + " " + field + " is not an integer");
                throw new AssertionError(e);
            }
        }

        int intIn(String field, int min, int max, String what) {
            long v = number(field, what);
            require(min <= v && v <= max, what + " " + v + " (expected: " + min + " .. " + max + ")");
            return (int) v;
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
