package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.RenamedApp;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The online-boutique scenario on the real public data (skipped with a reason when absent). */
class OnlineBoutiqueScenarioTest {

    @TempDir
    Path tmp;

    private static OnlineBoutiqueScenario.Result build() throws IOException {
        Path metrics = SharedData.require("microservices/trastrainer_onlineboutique/normal_2022-08-14");
        Path pings = SharedData.require("network_latency/aws_ec2_52node_pings/latency.csv.gz");
        return OnlineBoutiqueScenario.build(OnlineBoutiqueSnapshot.Options.defaults(metrics).toBuilder()
                .latencyFile(pings)
                .build());
    }

    @Test
    void build_realData_givesAValidDagOnThePaperWorkers() throws IOException {
        OnlineBoutiqueScenario.Result result = build();
        ClusterScenario scenario = result.scenario();

        assertThat(scenario.problems()).isEmpty();
        assertThat(scenario.entry()).isEqualTo("frontend");
        assertThat(scenario.components())
                .extracting(ClusterScenario.ComponentSpec::name)
                .contains("frontend", "cartservice", "checkoutservice", "currencyservice", "productcatalogservice");
        assertThat(scenario.nodes())
                .extracting(ClusterScenario.NodeSpec::speedFactor)
                .containsExactly(1.0, 0.9, 0.7, 0.5, 0.4);
        // The frontend calls services; the leaves call nobody.
        ClusterScenario.ComponentSpec frontend = scenario.components().stream()
                .filter(c -> c.name().equals("frontend"))
                .findFirst()
                .orElseThrow();
        assertThat(frontend.calls()).isNotEmpty();
        // Network B puts w4 and w5 across the Atlantic: tens of ms, against < 2 ms inside EU.
        assertThat(scenario.networks().get("A").measuredMillis("w1", "w5")).isLessThan(2.0);
        assertThat(scenario.networks().get("B").measuredMillis("w1", "w5")).isGreaterThan(20.0);
        assertThat(scenario.rps()).hasSize(3).isSorted();
        assertThat(result.notes()).anyMatch(n -> n.contains("busiest component"));
        // The sweep's rates as a user writes them (120, not 120.0), as the --rps option takes them.
        String sweep = scenario.rps().stream()
                .map(dev.tailor.common.Numbers::written)
                .collect(
                        java.util.stream.Collectors.joining(", ", "the sweep [", "] RPS loads it to [0.25, 0.5, 0.7]"));
        assertThat(result.notes()).anyMatch(n -> n.contains(sweep));
    }

    @Test
    void build_renamedApp_isTheSameScenarioUnderItsNamesWithItsEntryFoundFromTheTrace() throws IOException {
        Path pings = SharedData.require(RenamedApp.LATENCY);
        Path app = RenamedApp.write(tmp.resolve("shop"));
        OnlineBoutiqueScenario.Result renamed = OnlineBoutiqueScenario.build(
                OnlineBoutiqueSnapshot.Options.defaults(app).toBuilder()
                        .latencyFile(pings)
                        .build(),
                "shop");
        ClusterScenario original = build().scenario();
        ClusterScenario scenario = renamed.scenario();

        assertThat(scenario.problems()).isEmpty();
        assertThat(scenario.name()).isEqualTo("shop");
        assertThat(scenario.entry()).isEqualTo(RenamedApp.ENTRY);
        // Each component's cost is OnlineBoutique's under its new name (emailservice left out), and the
        // rate sweep, set by the busiest component (currencyservice), is the same.
        for (ClusterScenario.ComponentSpec c : original.components()) {
            if (c.name().equals(RenamedApp.LEFT_OUT)) {
                continue;
            }
            String name = RenamedApp.RENAMES.get(c.name());
            assertThat(scenario.components())
                    .filteredOn(r -> r.name().equals(name))
                    .singleElement()
                    .satisfies(r -> assertThat(r.cpuMillisPerCall()).as(name).isEqualTo(c.cpuMillisPerCall()));
        }
        assertThat(scenario.components()).hasSize(original.components().size() - 1);
        assertThat(scenario.rps()).isEqualTo(original.rps());
        assertThat(renamed.notes()).anyMatch(n -> n.startsWith("shop: busiest component fx-rates"));
        assertThat(renamed.notes()).anyMatch(n -> n.startsWith("shop: a component calls its callees one after"));
        assertThat(renamed.notes()).noneMatch(n -> n.contains("frontend"));
    }

    @Test
    void heart_onRealCallGraph_beatsThePaperAndDefault_paperBalancesCpu() throws IOException {
        ClusterScenario scenario = build().scenario().toBuilder()
                .warmupSeconds(60.0)
                .durationSeconds(60.0)
                .network("A")
                .build();
        double rps = scenario.rps().get(1);
        RunResult heart = ClusterSimulation.run(scenario, "heart", rps, HeartConfig.DEFAULTS, null);
        RunResult paper = ClusterSimulation.run(scenario, "heart-paper", rps, HeartConfig.DEFAULTS, null);
        RunResult uniform = ClusterSimulation.run(scenario, "default", rps, HeartConfig.DEFAULTS, null);
        assertThat(heart.planning().failures())
                .as(String.valueOf(heart.planning().lastFailure()))
                .isZero();
        // Balanced CPU is the paper's HEART's property; ours loads faster groups harder on purpose.
        assertThat(paper.cpuGapPercentPoints()).isLessThan(5.0);
        assertThat(heart.p99Millis()).isLessThan(paper.p99Millis());
        assertThat(uniform.cpuGapPercentPoints()).isGreaterThan(20.0);
        assertThat(heart.p99Millis()).isLessThan(uniform.p99Millis());
        assertThat(List.of(heart.timeouts(), uniform.timeouts())).containsOnly(0L);
    }
}
