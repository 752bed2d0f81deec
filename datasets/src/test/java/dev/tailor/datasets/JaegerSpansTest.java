package dev.tailor.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.datasets.JaegerSpans.Edge;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JaegerSpansTest {

    static final String TRACE = "microservices/trastrainer_onlineboutique/faulty_2022-08-22/trace_06_20.csv";
    static final String HEADER =
            "TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano," + "Duration";

    @TempDir
    Path dir;

    private Path write(String... rows) throws IOException {
        Path file = dir.resolve("trace.csv");
        Files.writeString(file, HEADER + "\n" + String.join("\n", rows) + "\n");
        return file;
    }

    private static String span(String trace, String id, String parent, String pod) {
        return trace + "," + id + "," + parent + "," + pod + ",op,1,2,1";
    }

    // --- the real trace (PROVENANCE.md 2.2) ---

    @Test
    void read_trace0620_has11959SpansIn260TracesEachWithOneRoot() throws IOException {
        JaegerSpans spans = JaegerSpans.read(SharedData.require(TRACE));

        assertThat(spans.spans()).isEqualTo(11_959);
        assertThat(spans.traces()).isEqualTo(260);
        assertThat(spans.rootSpans()).isEqualTo(260);
        assertThat(spans.orphanSpans()).isZero();
        assertThat(spans.components()).hasSize(10);
    }

    @Test
    void read_trace0620_counts13EdgesWithTheKnownCallCounts() throws IOException {
        JaegerSpans spans = JaegerSpans.read(SharedData.require(TRACE));

        assertThat(spans.calls())
                .containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
                        Map.entry(new Edge("frontend", "productcatalogservice"), 1198L),
                        Map.entry(new Edge("frontend", "currencyservice"), 733L),
                        Map.entry(new Edge("frontend", "cartservice"), 224L),
                        Map.entry(new Edge("recommendationservice", "productcatalogservice"), 189L),
                        Map.entry(new Edge("frontend", "recommendationservice"), 189L),
                        Map.entry(new Edge("frontend", "adservice"), 144L),
                        Map.entry(new Edge("frontend", "shippingservice"), 57L),
                        Map.entry(new Edge("checkoutservice", "cartservice"), 32L),
                        Map.entry(new Edge("checkoutservice", "shippingservice"), 32L),
                        Map.entry(new Edge("checkoutservice", "productcatalogservice"), 31L),
                        Map.entry(new Edge("frontend", "checkoutservice"), 16L),
                        Map.entry(new Edge("checkoutservice", "paymentservice"), 16L),
                        Map.entry(new Edge("checkoutservice", "emailservice"), 16L)));
        assertThat(spans.calls("checkoutservice", "currencyservice")).isZero();
    }

    // --- tiny synthetic files ---

    @Test
    void read_childInAnotherComponent_isOneCallAndChildInTheSameComponentIsNone() throws IOException {
        Path file = write(
                span("t1", "s1", "root", "front-1-a"),
                span("t1", "s2", "s1", "front-1-a"), // client span inside front: not a call
                span("t1", "s3", "s2", "cat-2-b"), // front -> cat
                span("t1", "s4", "s3", "cat-2-c"), // another pod, same component: not a call
                span("t1", "s5", "s1", "cart-3-d")); // front -> cart

        JaegerSpans spans = JaegerSpans.read(file);

        assertThat(spans.calls())
                .containsExactly(Map.entry(new Edge("front", "cart"), 1L), Map.entry(new Edge("front", "cat"), 1L));
        assertThat(spans.rootSpans()).isEqualTo(1);
        assertThat(spans.components()).containsExactly("cart", "cat", "front");
    }

    @Test
    void read_sameSpanIdInTwoTraces_areDifferentSpans() throws IOException {
        Path file = write(
                span("t1", "s1", "root", "front-1-a"),
                span("t2", "s1", "root", "cat-2-b"),
                span("t2", "s2", "s1", "front-1-a"));

        JaegerSpans spans = JaegerSpans.read(file);

        assertThat(spans.calls()).containsExactlyEntriesOf(Map.of(new Edge("cat", "front"), 1L));
        assertThat(spans.traces()).isEqualTo(2);
    }

    @Test
    void read_parentNotInTheFile_isAnOrphanNotACall() throws IOException {
        Path file = write(span("t1", "s1", "root", "front-1-a"), span("t1", "s2", "gone", "cat-2-b"));

        JaegerSpans spans = JaegerSpans.read(file);

        assertThat(spans.orphanSpans()).isEqualTo(1);
        assertThat(spans.calls()).isEmpty();
    }

    @Test
    void read_spanIdTwiceInOneTrace_namesTheLine() throws IOException {
        Path file = write(span("t1", "s1", "root", "front-1-a"), span("t1", "s1", "root", "front-1-a"));

        assertThatThrownBy(() -> JaegerSpans.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("trace.csv line 3, column SpanID: \"s1\"");
    }

    @Test
    void read_podNameWithoutComponent_namesLineColumnAndValue() throws IOException {
        Path file = write(span("t1", "s1", "root", "front-1-a"), span("t1", "s2", "s1", "lonely"));

        assertThatThrownBy(() -> JaegerSpans.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("trace.csv line 3, column PodName: \"lonely\" (expected: <component>-");
    }

    @Test
    void read_missingParentColumn_namesFileAndColumn() throws IOException {
        Path file = dir.resolve("trace.csv");
        Files.writeString(file, "TraceID,SpanID,PodName\nt1,s1,front-1-a\n");

        assertThatThrownBy(() -> JaegerSpans.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("trace.csv line 1, column ParentID: missing from the header");
    }

    @Test
    void read_missingFile_namesIt() {
        Path file = dir.resolve("absent.csv");

        assertThatThrownBy(() -> JaegerSpans.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(file + ": no such file");
    }

    @Test
    void read_rootSpans_areCountedByTheComponentThatRecordedThem() throws IOException {
        JaegerSpans spans = JaegerSpans.read(write(
                span("t1", "a", "root", "gw-1-x"),
                span("t1", "b", "a", "cat-1-x"),
                span("t2", "a", "", "gw-1-y"),
                span("t3", "a", "root", "cat-1-x")));

        assertThat(spans.rootSpans()).isEqualTo(3);
        assertThat(spans.rootSpansByComponent())
                .containsExactly(
                        org.assertj.core.api.Assertions.entry("cat", 1L),
                        org.assertj.core.api.Assertions.entry("gw", 2L));
    }

    @Test
    void read_trace0620_everyRootSpanIsTheFrontends() throws IOException {
        JaegerSpans spans = JaegerSpans.read(SharedData.require(TRACE));

        assertThat(spans.rootSpansByComponent()).isEqualTo(Map.of("frontend", 260L));
    }

    @Test
    void findIn_takesCsvsWithTheSpanColumnsInAnyOrder_andNothingElse() throws IOException {
        Path folder = Files.createDirectories(dir.resolve("app"));
        Files.writeString(folder.resolve("b-spans.csv"), "PodName,ParentID,SpanID,TraceID,Duration\n");
        Files.writeString(folder.resolve("a-spans.csv"), "\uFEFF" + HEADER + "\n");
        Files.writeString(folder.resolve("front_service.csv"), "Time,TimeStamp,ServiceName\n");
        Files.writeString(folder.resolve("partial.csv"), "TraceID,SpanID,PodName\n");
        Files.writeString(folder.resolve("empty.csv"), "");
        Files.writeString(folder.resolve("spans.txt"), HEADER + "\n");
        Files.writeString(folder.resolve("x-1-y_metric.csv"), HEADER + "\n");
        Files.writeString(folder.resolve("dependency.csv"), HEADER + "\n");
        Files.createDirectories(folder.resolve("dir.csv"));

        assertThat(JaegerSpans.findIn(folder))
                .containsExactly(folder.resolve("a-spans.csv"), folder.resolve("b-spans.csv"));
        assertThat(JaegerSpans.findIn(dir.resolve("absent"))).isEmpty();
    }
}
