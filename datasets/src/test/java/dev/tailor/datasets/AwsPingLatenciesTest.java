package dev.tailor.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AwsPingLatenciesTest {

    static final String PINGS = "network_latency/aws_ec2_52node_pings/latency.csv.gz";

    @TempDir
    Path dir;

    static Path gzip(Path file, String text) throws IOException {
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return file;
    }

    private Path pings(String... rows) throws IOException {
        return gzip(
                dir.resolve("latency.csv.gz"),
                "source,dest,size,time,source_region,dest_region\n" + String.join("\n", rows) + "\n");
    }

    // --- the real pings (PROVENANCE.md 3.1) ---

    @Test
    void read_aws52_has52NodesIn3RegionsAnd312MeasuredPairs() throws IOException {
        AwsPingLatencies p = AwsPingLatencies.read(SharedData.require(PINGS));

        assertThat(p.regionByNode()).hasSize(52);
        assertThat(p.nodesIn("EU")).hasSize(18);
        assertThat(p.nodesIn("US")).hasSize(17);
        assertThat(p.nodesIn("AP")).hasSize(17);
        assertThat(p.medianRttMillis()).hasSize(312);
        assertThat(p.payloadSizes()).containsExactly(24, 64, 65515);
        assertThat(p.pings()).isEqualTo(74_880);
    }

    @Test
    void read_aws52_regionsTakeTheirNodesInNumericOrder() throws IOException {
        AwsPingLatencies p = AwsPingLatencies.read(SharedData.require(PINGS));

        assertThat(p.nodesIn("EU")).startsWith("node-0", "node-3", "node-6", "node-9", "node-12");
        assertThat(p.nodesIn("US")).startsWith("node-1", "node-4", "node-7");
    }

    @Test
    void read_aws52_regionMediansMatchProvenanceTable() throws IOException {
        AwsPingLatencies p = AwsPingLatencies.read(SharedData.require(PINGS));

        assertThat(p.regionMedianRttMillis("EU", "US").getAsDouble()).isCloseTo(90, within(1.0));
        assertThat(p.regionMedianRttMillis("US", "EU").getAsDouble()).isCloseTo(90, within(1.0));
        assertThat(p.regionMedianRttMillis("US", "AP").getAsDouble()).isCloseTo(200, within(2.0));
        assertThat(p.regionMedianRttMillis("EU", "AP").getAsDouble()).isCloseTo(273, within(2.0));
        for (String region : List.of("EU", "US", "AP")) {
            assertThat(p.regionMedianRttMillis(region, region).getAsDouble()).isBetween(0.14, 0.26);
        }
    }

    @Test
    void read_aws52_node0ToNode1IsTheMedianOfIts64BytePings() throws IOException {
        AwsPingLatencies p = AwsPingLatencies.read(SharedData.require(PINGS));

        assertThat(p.medianRttMillis("node-0", "node-1").getAsDouble()).isCloseTo(90.3, within(1e-9));
        assertThat(p.medianRttMillis("node-0", "node-3").getAsDouble()).isCloseTo(0.166, within(1e-9));
        assertThat(p.medianRttMillis("node-0", "node-6")).isEmpty();
    }

    // --- tiny synthetic files ---

    @Test
    void read_pingsOfOnePair_medianOfTheChosenSizeEvenCountAveragesTheMiddleTwo() throws IOException {
        Path file = pings(
                "a-1,a-2,64,1.0,EU,EU",
                "a-1,a-2,64,4.0,EU,EU",
                "a-1,a-2,64,2.0,EU,EU",
                "a-1,a-2,64,3.0,EU,EU",
                "a-1,a-2,24,100,EU,EU",
                "a-2,a-1,64,7.0,EU,EU");

        AwsPingLatencies p = AwsPingLatencies.read(file);

        assertThat(p.medianRttMillis("a-1", "a-2").getAsDouble()).isEqualTo(2.5);
        assertThat(p.medianRttMillis("a-2", "a-1").getAsDouble()).isEqualTo(7.0);
        assertThat(AwsPingLatencies.read(file, 24).medianRttMillis("a-1", "a-2").getAsDouble())
                .isEqualTo(100);
    }

    @Test
    void read_regionPair_isTheMedianOfItsPairMedians() throws IOException {
        Path file = pings(
                "e-1,u-1,64,80,EU,US",
                "e-2,u-1,64,90,EU,US",
                "e-3,u-2,64,100,EU,US",
                "e-3,u-2,64,200,EU,US",
                "u-1,e-1,64,1,US,EU");

        AwsPingLatencies p = AwsPingLatencies.read(file);

        assertThat(p.regionMedianRttMillis("EU", "US").getAsDouble()).isEqualTo(90);
        assertThat(p.regionMedianRttMillis("US", "EU").getAsDouble()).isEqualTo(1);
        assertThat(p.regionMedianRttMillis("EU", "EU")).isEmpty();
    }

    @Test
    void read_nanTime_isALostPingNotZero() throws IOException {
        Path file = pings("a-1,a-2,64,NaN,EU,EU", "a-1,a-2,64,5,EU,EU", "a-1,a-2,64,,EU,EU");

        AwsPingLatencies p = AwsPingLatencies.read(file);

        assertThat(p.medianRttMillis("a-1", "a-2").getAsDouble()).isEqualTo(5);
        assertThat(p.lostPings()).isEqualTo(2);
        assertThat(p.pings()).isEqualTo(1);
    }

    @Test
    void nodesIn_numberedNames_sortNumericallyNotAsText() throws IOException {
        Path file = pings("node-10,node-2,64,1,EU,EU", "node-1,node-20,64,1,EU,EU");

        assertThat(AwsPingLatencies.read(file).nodesIn("EU")).containsExactly("node-1", "node-2", "node-10", "node-20");
    }

    @Test
    void read_nonNumericTime_namesFileLineColumnAndValue() throws IOException {
        Path file = pings("a-1,a-2,64,1,EU,EU", "a-1,a-2,64,fast,EU,EU");

        assertThatThrownBy(() -> AwsPingLatencies.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("latency.csv.gz line 3, column time: \"fast\"")
                .hasMessageContaining("(expected: a round-trip time in ms");
    }

    @Test
    void read_nodeGivenTwoRegions_namesTheLine() throws IOException {
        Path file = pings("a-1,a-2,64,1,EU,EU", "a-1,a-3,64,1,US,EU");

        assertThatThrownBy(() -> AwsPingLatencies.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("line 3, column source_region: \"US\" (expected: \"EU\"");
    }

    @Test
    void read_noPingOfTheChosenSize_listsTheSizesPresent() throws IOException {
        Path file = pings("a-1,a-2,24,1,EU,EU");

        assertThatThrownBy(() -> AwsPingLatencies.read(file, 64))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("payload size 64 B")
                .hasMessageContaining("[24]");
    }

    @Test
    void read_missingColumn_namesFileAndColumn() throws IOException {
        Path file = gzip(dir.resolve("latency.csv.gz"), "source,dest,size,source_region,dest_region\n");

        assertThatThrownBy(() -> AwsPingLatencies.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining("latency.csv.gz line 1, column time: missing from the header");
    }

    @Test
    void read_plainTextInsteadOfGzip_saysItIsNotGzip() throws IOException {
        Path file = dir.resolve("latency.csv.gz");
        Files.writeString(file, "source,dest,size,time,source_region,dest_region\n");

        assertThatThrownBy(() -> AwsPingLatencies.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(file + ": not a complete gzip stream");
    }

    @Test
    void read_emptyOrCutFile_saysSoNotNull() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.csv.gz"));
        // Was "not a complete gzip stream (null)".
        assertThatThrownBy(() -> AwsPingLatencies.read(empty))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(empty + ": not a complete gzip stream (empty)");
        Path cut = dir.resolve("cut.csv.gz");
        Files.write(cut, new byte[] {0x1f, (byte) 0x8b, 8});
        assertThatThrownBy(() -> AwsPingLatencies.read(cut))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(cut + ": not a complete gzip stream (it ends early)");
    }

    @Test
    void read_missingFile_namesIt() {
        Path file = dir.resolve("absent.csv.gz");

        assertThatThrownBy(() -> AwsPingLatencies.read(file))
                .isInstanceOf(DataFileException.class)
                .hasMessageContaining(file + ": no such file");
    }
}
