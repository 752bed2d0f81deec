package dev.tailor.heart.flow;

import java.util.Arrays;

/**
 * Maximum flow on a directed graph with integer capacities, by Dinic's blocking flows. Arcs are
 * added once and numbered in order; their capacities may change between solves, and each
 * {@link #solve} starts from zero flow. Not thread-safe.
 *
 * <p>Contract: {@link #solve} returns the maximum flow value from {@code source} to {@code sink};
 * afterwards {@link #flow} gives each arc's flow, which respects every capacity and conserves flow at
 * every other vertex. Values are exact ({@code long}).
 */
/*
 * Maintainer note.
 *
 * Role. TransportNetwork asks whether the active links of a call edge can carry all demand (the
 * slow-link filter, docs/heart.md) and, where the greedy flow cannot show it, for the max-flow that
 * does: a bipartite graph of a few hundred vertices and a few thousand arcs, solved a handful of
 * times per round. It replaces OR-tools' push-relabel, whose native library took about two seconds to
 * load in a controller's first round and most of the image's size; the tests keep OR-tools as the
 * oracle (TransportNetworkMaxFlowTest).
 *
 * How. Dinic [1]: a breadth-first search builds the level graph of the residual network, then
 * depth-first searches with a per-vertex arc pointer push a blocking flow; repeat until the sink is
 * unreachable. O(V²E) in general, O(E√V) on unit-capacity bipartite graphs; on our shapes (source →
 * callers → callees → sink, three layers) a few phases suffice. The DFS is iterative, so deep level
 * graphs cannot overflow the thread's stack. Residual arcs are stored in pairs (arc 2k forward,
 * 2k+1 backward), in compressed rows rebuilt when arcs were added since the last solve.
 *
 * [1] E. A. Dinic, "Algorithm for solution of a problem of maximum flow in a network with power
 *     estimation", Soviet Math. Doklady 11 (1970), 1277–1280.
 */
final class MaxFlow {

    private final int vertices;
    private int arcs;
    private int[] tail = new int[16];
    private int[] head = new int[16];
    private long[] capacity = new long[16];
    private long[] residual = new long[32]; // per residual arc: 2k forward, 2k+1 backward
    private int[] rowStart; // compressed rows of residual arcs by tail
    private int[] row;
    private boolean rowsStale = true;
    private long value;

    /** @param vertices number of vertices, numbered 0..vertices-1 */
    MaxFlow(int vertices) {
        if (vertices < 2) {
            throw new IllegalArgumentException("vertices: " + vertices + " (expected: at least 2)");
        }
        this.vertices = vertices;
    }

    /** Adds an arc; returns its number (0, 1, ...). */
    int addArc(int from, int to, long arcCapacity) {
        if (from < 0 || from >= vertices || to < 0 || to >= vertices) {
            throw new IllegalArgumentException(
                    "arc " + from + " -> " + to + " (expected: vertices in 0.." + (vertices - 1) + ")");
        }
        checkCapacity(arcCapacity);
        if (arcs == tail.length) {
            tail = Arrays.copyOf(tail, arcs * 2);
            head = Arrays.copyOf(head, arcs * 2);
            capacity = Arrays.copyOf(capacity, arcs * 2);
            residual = Arrays.copyOf(residual, arcs * 4);
        }
        tail[arcs] = from;
        head[arcs] = to;
        capacity[arcs] = arcCapacity;
        rowsStale = true;
        return arcs++;
    }

    /** Sets the capacity of arc {@code arc} for the next {@link #solve}. */
    void setCapacity(int arc, long arcCapacity) {
        checkCapacity(arcCapacity);
        capacity[arc] = arcCapacity;
    }

    private static void checkCapacity(long arcCapacity) {
        if (arcCapacity < 0) {
            throw new IllegalArgumentException("capacity: " + arcCapacity + " (expected: >= 0)");
        }
    }

    /** Solves from zero flow; returns the maximum flow value from {@code source} to {@code sink}. */
    long solve(int source, int sink) {
        if (source == sink) {
            throw new IllegalArgumentException("source and sink: both " + source + " (expected: two vertices)");
        }
        if (rowsStale) {
            buildRows();
        }
        for (int a = 0; a < arcs; a++) {
            residual[2 * a] = capacity[a];
            residual[2 * a + 1] = 0;
        }
        int[] level = new int[vertices];
        int[] next = new int[vertices];
        int[] queue = new int[vertices];
        int[] pathArc = new int[vertices];
        long total = 0;
        while (levels(source, sink, level, queue)) {
            System.arraycopy(rowStart, 0, next, 0, vertices);
            long pushed;
            while ((pushed = blockingPath(source, sink, level, next, pathArc)) > 0) {
                total += pushed;
            }
        }
        value = total;
        return total;
    }

    /** The value of the last {@link #solve}. */
    long value() {
        return value;
    }

    /** The flow the last {@link #solve} sent over arc {@code arc}. */
    long flow(int arc) {
        return residual[2 * arc + 1];
    }

    private void buildRows() {
        rowStart = new int[vertices + 1];
        for (int a = 0; a < arcs; a++) {
            rowStart[tail[a] + 1]++;
            rowStart[head[a] + 1]++;
        }
        for (int v = 0; v < vertices; v++) {
            rowStart[v + 1] += rowStart[v];
        }
        row = new int[2 * arcs];
        int[] fill = Arrays.copyOf(rowStart, vertices);
        for (int a = 0; a < arcs; a++) {
            row[fill[tail[a]]++] = 2 * a;
            row[fill[head[a]]++] = 2 * a + 1;
        }
        rowsStale = false;
    }

    private int residualHead(int r) {
        int a = r >>> 1;
        return (r & 1) == 0 ? head[a] : tail[a];
    }

    /** Breadth-first levels from the source over arcs with residual capacity; whether the sink is reached. */
    private boolean levels(int source, int sink, int[] level, int[] queue) {
        Arrays.fill(level, -1);
        level[source] = 0;
        int first = 0;
        int last = 0;
        queue[last++] = source;
        while (first < last) {
            int v = queue[first++];
            for (int i = rowStart[v]; i < rowStart[v + 1]; i++) {
                int r = row[i];
                int w = residualHead(r);
                if (residual[r] > 0 && level[w] < 0) {
                    level[w] = level[v] + 1;
                    queue[last++] = w;
                }
            }
        }
        return level[sink] >= 0;
    }

    /**
     * Finds one augmenting path in the level graph (iterative DFS with arc pointers {@code next},
     * dropping dead ends) and pushes its bottleneck; returns it, or 0 when the level graph is blocked.
     */
    private long blockingPath(int source, int sink, int[] level, int[] next, int[] pathArc) {
        int depth = 0;
        int v = source;
        while (true) {
            if (v == sink) {
                long bottleneck = Long.MAX_VALUE;
                for (int d = 0; d < depth; d++) {
                    bottleneck = Math.min(bottleneck, residual[pathArc[d]]);
                }
                for (int d = 0; d < depth; d++) {
                    residual[pathArc[d]] -= bottleneck;
                    residual[pathArc[d] ^ 1] += bottleneck;
                }
                return bottleneck;
            }
            boolean advanced = false;
            while (next[v] < rowStart[v + 1]) {
                int r = row[next[v]];
                int w = residualHead(r);
                if (residual[r] > 0 && level[w] == level[v] + 1) {
                    pathArc[depth++] = r;
                    v = w;
                    advanced = true;
                    break;
                }
                next[v]++;
            }
            if (!advanced) {
                if (depth == 0) {
                    return 0;
                }
                level[v] = -1; // a dead end: no path to the sink through it in this phase
                int r = pathArc[--depth];
                v = residualHead(r ^ 1);
                next[v]++;
            }
        }
    }
}
