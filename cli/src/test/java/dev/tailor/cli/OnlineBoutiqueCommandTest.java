package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OnlineBoutiqueCommandTest {

    @TempDir
    Path dir;

    @Test
    void snapshotThenPlan_realDataset_worksInAllThreeFormats() throws IOException {
        Path metrics = SharedData.require(OnlineBoutiqueCommand.METRICS);
        Path latency = SharedData.require(OnlineBoutiqueCommand.LATENCY);
        Path snapshot = dir.resolve("ob.json");
        PlanCommandTest.Result built = tailor("heart", "snapshot", "onlineboutique", "--dataset", metrics.toString(),
                "--latency", latency.toString(), "--replicas", "3", "--nodes", "5", "--regions", "EU,EU,EU,US,US",
                "--out", snapshot.toString());
        // What the command is for: the real dataset becomes a snapshot that HEART plans.
        assertThat(built.exitCode()).as(built.err()).isZero();
        assertThat(built.err()).contains("note: ", "wrote");
        JsonNode doc = Json.MAPPER.readTree(snapshot.toFile());
        assertThat(doc.get("replicas").size()).isEqualTo(30);
        assertThat(doc.get("nodes").size()).isEqualTo(5);

        PlanCommandTest.Result table = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--explain");
        assertThat(table.exitCode()).as(table.err()).isZero();
        assertThat(table.out()).contains("ingress -> frontend", "2-means on");

        PlanCommandTest.Result json = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--format", "json");
        assertThat(json.exitCode()).isZero();
        JsonNode plan = Json.MAPPER.readTree(json.out());
        for (JsonNode route : plan.get("routes")) {
            double sum = 0;
            for (JsonNode f : route.get("to")) {
                sum += f.asDouble();
            }
            // Cross-region links (about 45 ms) once broke this through a JGraphT capacity bug.
            assertThat(sum).isCloseTo(1.0, within(1e-9));
        }
        assertThat(plan.get("prunedLinks").size()).isPositive();

        PlanCommandTest.Result istio = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--format", "istio");
        assertThat(istio.exitCode()).isZero();
        assertThat(istio.out()).contains("kind: DestinationRule", "eu-central-1/eu-central-1a/w1");
    }

    @Test
    void snapshot_badOption_exitsWith2_namingTheOption() {
        PlanCommandTest.Result r = tailor("heart", "snapshot", "onlineboutique", "--dataset", dir.toString(),
                "--latency", dir.resolve("none.gz").toString(), "--replicas", "0");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--replicas", "0", "expected");
    }

    @Test
    void snapshot_missingDataset_exitsWith2_namingThePath() {
        PlanCommandTest.Result r = tailor("heart", "snapshot", "onlineboutique", "--dataset",
                dir.resolve("absent").toString(), "--latency", dir.resolve("none.gz").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("absent");
    }
}
