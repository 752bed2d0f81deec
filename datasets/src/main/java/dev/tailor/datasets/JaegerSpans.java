package dev.tailor.datasets;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Calls between components counted from a Jaeger span export, in the format of the TraStrainer
 * OnlineBoutique trace files ({@code shared/data/microservices/trastrainer_onlineboutique/
 * faulty_2022-08-22/trace_06_20.csv}, PROVENANCE.md 2.2).
 *
 * <p>Columns are found by header name; this reader needs {@code TraceID}, {@code SpanID},
 * {@code ParentID} ({@code root}, or empty, for a trace's first span) and {@code PodName}; the
 * others ({@code OperationName}, {@code StartTimeUnixNano}, {@code EndTimeUnixNano}, {@code Duration})
 * are not read. A span's component is its pod's ({@link OnlineBoutiqueMetrics#componentOf}).
 *
 * <p>A call caller → callee is a span whose parent span (same trace) belongs to a pod of a
 * different component: the parent is the caller's client-side span, the child the callee's work.
 * Spans whose parent is in the same component (internal and client spans) are not calls; spans
 * whose parent is not in the file are counted as {@link #orphanSpans()} and not as calls.
 *
 * <p>The spans without a parent are the requests entering the application; the components that
 * recorded them ({@link #rootSpansByComponent()}) tell which component is the entry.
 *
 * <p>Errors: a missing file or column, an empty id or a pod name without a component, or a span id
 * that appears twice in one trace, is a {@link DataFileException} naming file, line, column and
 * value; file-system failures are {@link IOException}s.
 */
public final class JaegerSpans {

    /**
     * A directed pair of components.
     *
     * @param caller calling component
     * @param callee called component
     */
    public record Edge(String caller, String callee) {}

    /** The columns this reader needs, by header name. */
    public static final List<String> REQUIRED_COLUMNS = List.of("TraceID", "SpanID", "ParentID", "PodName");

    private static final String ROOT = "root";

    private final Path file;
    private final long spans;
    private final int traces;
    private final long rootSpans;
    private final long orphanSpans;
    private final SortedMap<String, Long> rootSpansByComponent;
    private final SortedSet<String> components;
    private final SortedMap<Edge, Long> calls;

    private JaegerSpans(
            Path file,
            long spans,
            int traces,
            long rootSpans,
            long orphanSpans,
            SortedMap<String, Long> rootSpansByComponent,
            SortedSet<String> components,
            SortedMap<Edge, Long> calls) {
        this.file = file;
        this.spans = spans;
        this.traces = traces;
        this.rootSpans = rootSpans;
        this.orphanSpans = orphanSpans;
        this.rootSpansByComponent = Collections.unmodifiableSortedMap(rootSpansByComponent);
        this.components = Collections.unmodifiableSortedSet(components);
        this.calls = Collections.unmodifiableSortedMap(calls);
    }

    /**
     * Reads one span CSV.
     *
     * @throws DataFileException naming file, line, column and value of the first problem
     * @throws IOException       when the file system fails
     */
    public static JaegerSpans read(Path file) throws IOException {
        record Span(String trace, String parent, String component) {}
        Map<String, String> componentBySpan = new HashMap<>();
        List<Span> all = new ArrayList<>();
        Set<String> traceIds = new HashSet<>();
        try (CsvReader csv = CsvReader.open(file)) {
            int trace = csv.column("TraceID", "the span's trace id");
            int span = csv.column("SpanID", "the span's id");
            int parent = csv.column("ParentID", "the parent span's id, or root");
            int pod = csv.column("PodName", "the pod that recorded the span");
            for (CsvReader.Row row = csv.next(); row != null; row = csv.next()) {
                String traceId = row.nonEmpty(trace, "a trace id");
                String spanId = row.nonEmpty(span, "a span id");
                String podName = row.text(pod);
                String component;
                try {
                    component = OnlineBoutiqueMetrics.componentOf(podName);
                } catch (IllegalArgumentException e) {
                    throw row.bad(pod, "<component>-<replicaset hash>-<pod hash>, e.g. frontend-579b9bff58-t2dbm");
                }
                if (componentBySpan.putIfAbsent(traceId + "\u0000" + spanId, component) != null) {
                    throw row.bad(span, "a span id not seen before in trace " + traceId);
                }
                String parentId = row.text(parent);
                all.add(new Span(
                        traceId, parentId.isEmpty() || parentId.equalsIgnoreCase(ROOT) ? null : parentId, component));
                traceIds.add(traceId);
            }
        }
        long roots = 0;
        long orphans = 0;
        SortedMap<String, Long> rootsByComponent = new TreeMap<>();
        SortedSet<String> components = new TreeSet<>();
        SortedMap<Edge, Long> calls =
                new TreeMap<>(Comparator.comparing(Edge::caller).thenComparing(Edge::callee));
        for (Span s : all) {
            components.add(s.component());
            if (s.parent() == null) {
                roots++;
                rootsByComponent.merge(s.component(), 1L, Long::sum);
                continue;
            }
            String caller = componentBySpan.get(s.trace() + "\u0000" + s.parent());
            if (caller == null) {
                orphans++;
            } else if (!caller.equals(s.component())) {
                calls.merge(new Edge(caller, s.component()), 1L, Long::sum);
            }
        }
        return new JaegerSpans(file, all.size(), traceIds.size(), roots, orphans, rootsByComponent, components, calls);
    }

    /**
     * The span CSVs of a dataset folder: its regular {@code *.csv} files, other than
     * {@code <pod>_metric.csv} and {@code dependency.csv}, whose header line names every one of
     * {@link #REQUIRED_COLUMNS}; sorted by file name. Only header lines are read.
     *
     * @throws IOException when the folder cannot be listed or a header cannot be read
     */
    public static List<Path> findIn(Path dir) throws IOException {
        List<Path> found = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return found;
        }
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(dir, "*.csv")) {
            for (Path file : listing) {
                String name = file.getFileName().toString();
                if (Files.isRegularFile(file)
                        && !name.endsWith(OnlineBoutiqueMetrics.METRIC_SUFFIX)
                        && !name.equals(OnlineBoutiqueMetrics.DEPENDENCY_FILE)
                        && hasRequiredColumns(file)) {
                    found.add(file);
                }
            }
        }
        found.sort(Comparator.comparing(f -> f.getFileName().toString()));
        return found;
    }

    private static boolean hasRequiredColumns(Path file) throws IOException {
        String header;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            header = in.readLine();
        } catch (java.nio.charset.CharacterCodingException e) {
            return false; // not a text file of this format
        }
        if (header == null) {
            return false;
        }
        if (header.startsWith("\uFEFF")) {
            header = header.substring(1);
        }
        Set<String> names = new HashSet<>();
        Arrays.stream(header.split(",", -1)).map(String::strip).forEach(names::add);
        return names.containsAll(REQUIRED_COLUMNS);
    }

    /** The file read. */
    public Path file() {
        return file;
    }

    /** Number of spans (data rows). */
    public long spans() {
        return spans;
    }

    /** Number of distinct trace ids. */
    public int traces() {
        return traces;
    }

    /** Spans without a parent ({@code ParentID} root or empty): requests entering the application. */
    public long rootSpans() {
        return rootSpans;
    }

    /**
     * Component → its spans without a parent ({@link #rootSpans()} by component), sorted by
     * component; components without root spans are absent.
     */
    public SortedMap<String, Long> rootSpansByComponent() {
        return rootSpansByComponent;
    }

    /** Spans whose parent is not in the file; not counted as calls. */
    public long orphanSpans() {
        return orphanSpans;
    }

    /** Components with at least one span, sorted. */
    public SortedSet<String> components() {
        return components;
    }

    /** Calls per (caller, callee) component pair with at least one call, sorted by caller then callee. */
    public SortedMap<Edge, Long> calls() {
        return calls;
    }

    /** Calls from {@code caller} to {@code callee}; 0 when the edge does not occur. */
    public long calls(String caller, String callee) {
        return calls.getOrDefault(new Edge(caller, callee), 0L);
    }
}
