package dev.tailor.heart.flow;

import java.util.Arrays;

/**
 * Minimum-cost flow of a transport problem on given links, by successive shortest paths. Sources
 * have integer supplies, sinks integer demands of the same total; each link joins a source to a sink
 * with an integer cost per unit (any sign) and carries at most its source's supply or its sink's
 * demand, whichever is less. Stateless and thread-safe.
 *
 * <p>Contract: {@link #solve} returns the minimum of Σ flow × cost over flows on the given links that
 * meet every supply and demand exactly, and fills those flows; or {@link #INFEASIBLE} when the links
 * cannot carry all demand. Exact ({@code long}) arithmetic throughout.
 */
/*
 * Maintainer note.
 *
 * Role. SparseMinCostFlow's solver on its candidate links (a few thousand at most), where our network
 * simplex (TransportSimplex) declines: costs too large for its exact arithmetic, or its pivot guard.
 * It replaces OR-tools' cost-scaling solver in the runtime; the tests keep OR-tools as the oracle
 * (SparseMinCostFlowTest, MinCostTransportTest).
 *
 * How [1, §9.7]. A super source feeds every source (capacity = supply), every sink feeds a super
 * sink (capacity = demand). Potentials start as shortest distances in the initial (acyclic) graph,
 * so reduced costs are non-negative even with negative link costs. Each step runs Dijkstra on reduced
 * costs from the super source, adds the distances to the potentials (vertices not reached get the
 * largest distance found, which keeps every residual arc's reduced cost non-negative), and sends the
 * path's bottleneck to the super sink. Each augmentation saturates an arc of the path, so with the
 * transport shape the steps are few (about sources + sinks); costs stay exact, no tolerance anywhere.
 * Dijkstra uses a binary heap with lazy deletion: O(E log V) a step.
 *
 * [1] R. K. Ahuja, T. L. Magnanti, J. B. Orlin, "Network Flows: Theory, Algorithms, and
 *     Applications", Prentice Hall, 1993.
 */
final class MinCostTransport {

    /** What {@link #solve} returns when the links cannot carry all demand. */
    static final long INFEASIBLE = Long.MIN_VALUE;

    private MinCostTransport() {}

    /**
     * @param supply     per source, units to send (≥ 0)
     * @param demand     per sink, units to receive (≥ 0); the same total as {@code supply}
     * @param linkSource per link, its source
     * @param linkSink   per link, its sink
     * @param cost       per link, the cost of one unit over it
     * @param use        per link, whether the solve may use it
     * @param flow       per link, filled with the optimal flow (links not used: left as they are)
     * @return the optimal cost Σ flow × cost, or {@link #INFEASIBLE}
     */
    static long solve(
            int[] supply, int[] demand, int[] linkSource, int[] linkSink, long[] cost, boolean[] use, long[] flow) {
        int sources = supply.length;
        int sinks = demand.length;
        int superSource = sources + sinks;
        int superSink = superSource + 1;
        int n = superSink + 1;
        int links = 0;
        for (boolean u : use) {
            links += u ? 1 : 0;
        }
        int arcs = links + sources + sinks;
        int[] from = new int[arcs];
        int[] to = new int[arcs];
        long[] unitCost = new long[arcs];
        long[] residual = new long[2 * arcs]; // 2a forward, 2a+1 backward
        int[] linkOfArc = new int[links];
        int a = 0;
        for (int l = 0; l < use.length; l++) {
            if (use[l]) {
                from[a] = linkSource[l];
                to[a] = sources + linkSink[l];
                unitCost[a] = cost[l];
                residual[2 * a] = Math.min(supply[linkSource[l]], demand[linkSink[l]]);
                linkOfArc[a++] = l;
            }
        }
        long total = 0;
        for (int i = 0; i < sources; i++, a++) {
            from[a] = superSource;
            to[a] = i;
            residual[2 * a] = supply[i];
            total += supply[i];
        }
        for (int j = 0; j < sinks; j++, a++) {
            from[a] = sources + j;
            to[a] = superSink;
            residual[2 * a] = demand[j];
        }
        // Residual arcs by tail, in compressed rows.
        int[] start = new int[n + 1];
        for (int k = 0; k < arcs; k++) {
            start[from[k] + 1]++;
            start[to[k] + 1]++;
        }
        for (int v = 0; v < n; v++) {
            start[v + 1] += start[v];
        }
        int[] row = new int[2 * arcs];
        int[] fill = Arrays.copyOf(start, n);
        for (int k = 0; k < arcs; k++) {
            row[fill[from[k]]++] = 2 * k;
            row[fill[to[k]]++] = 2 * k + 1;
        }

        // Initial potentials: shortest distances in the acyclic start graph (super source -> sources at
        // 0, sources -> sinks at the link cost, sinks -> super sink at 0).
        long[] potential = new long[n];
        long[] sinkDistance = new long[sinks];
        Arrays.fill(sinkDistance, Long.MAX_VALUE);
        for (int k = 0; k < links; k++) {
            int j = to[k] - sources;
            sinkDistance[j] = Math.min(sinkDistance[j], unitCost[k]);
        }
        long farthest = 0;
        for (int j = 0; j < sinks; j++) {
            potential[sources + j] = sinkDistance[j] == Long.MAX_VALUE ? 0 : sinkDistance[j];
            farthest = Math.max(farthest, potential[sources + j]);
        }
        long nearest = 0;
        for (int j = 0; j < sinks; j++) {
            nearest = Math.min(nearest, potential[sources + j]);
        }
        // Sinks no link reaches take the largest distance, so arcs into them stay non-negative; the
        // super sink takes the smallest, so arcs into it are non-negative too.
        for (int j = 0; j < sinks; j++) {
            if (sinkDistance[j] == Long.MAX_VALUE) {
                potential[sources + j] = farthest;
            }
        }
        potential[superSink] = nearest;

        long sent = 0;
        long[] distance = new long[n];
        int[] via = new int[n];
        long[] heap = new long[2 * arcs + n]; // (distance, vertex) pairs, lazily deleted
        int[] heapVertex = new int[heap.length];
        while (sent < total) {
            Arrays.fill(distance, Long.MAX_VALUE);
            Arrays.fill(via, -1);
            distance[superSource] = 0;
            int size = 0;
            heap[size] = 0;
            heapVertex[size++] = superSource;
            while (size > 0) {
                long d = heap[0];
                int v = heapVertex[0];
                size = pop(heap, heapVertex, size);
                if (d > distance[v]) {
                    continue;
                }
                for (int i = start[v]; i < start[v + 1]; i++) {
                    int r = row[i];
                    if (residual[r] == 0) {
                        continue;
                    }
                    int k = r >>> 1;
                    int w = (r & 1) == 0 ? to[k] : from[k];
                    long c = (r & 1) == 0 ? unitCost[k] : -unitCost[k];
                    long nd = d + c + potential[v] - potential[w];
                    if (nd < distance[w]) {
                        distance[w] = nd;
                        via[w] = r;
                        size = push(heap, heapVertex, size, nd, w);
                    }
                }
            }
            if (distance[superSink] == Long.MAX_VALUE) {
                return INFEASIBLE;
            }
            long reached = 0;
            for (int v = 0; v < n; v++) {
                if (distance[v] != Long.MAX_VALUE) {
                    reached = Math.max(reached, distance[v]);
                }
            }
            for (int v = 0; v < n; v++) {
                potential[v] += distance[v] == Long.MAX_VALUE ? reached : distance[v];
            }
            long bottleneck = Long.MAX_VALUE;
            for (int v = superSink; v != superSource; ) {
                int r = via[v];
                bottleneck = Math.min(bottleneck, residual[r]);
                int k = r >>> 1;
                v = (r & 1) == 0 ? from[k] : to[k];
            }
            for (int v = superSink; v != superSource; ) {
                int r = via[v];
                residual[r] -= bottleneck;
                residual[r ^ 1] += bottleneck;
                int k = r >>> 1;
                v = (r & 1) == 0 ? from[k] : to[k];
            }
            sent += bottleneck;
        }
        long optimal = 0;
        for (int k = 0; k < links; k++) {
            long f = residual[2 * k + 1];
            flow[linkOfArc[k]] = f;
            optimal += f * unitCost[k];
        }
        return optimal;
    }

    private static int push(long[] key, int[] vertex, int size, long k, int v) {
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (key[parent] <= k) {
                break;
            }
            key[i] = key[parent];
            vertex[i] = vertex[parent];
            i = parent;
        }
        key[i] = k;
        vertex[i] = v;
        return size;
    }

    private static int pop(long[] key, int[] vertex, int size) {
        size--;
        long k = key[size];
        int v = vertex[size];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && key[child + 1] < key[child]) {
                child++;
            }
            if (key[child] >= k) {
                break;
            }
            key[i] = key[child];
            vertex[i] = vertex[child];
            i = child;
        }
        key[i] = k;
        vertex[i] = v;
        return size;
    }
}
