package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageSweep;
import dev.tailor.testkit.SharedData;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One member of a bundled family run alone: the cell the family's sweep has, figure for figure. */
class StorageRunsMemberTest {

    private static final List<String> POLICIES = List.of("fifo", "segment-admission");

    @Test
    void member_runAlone_givesExactlyTheFiguresOfItsCellInTheFamilysRun() throws Exception {
        SharedData.require("block_io");
        List<StorageRunResult> family = run("robustness");
        List<StorageRunResult> member = run("robustness-long-bursts");

        assertThat(member).hasSize(POLICIES.size());
        List<StorageRunResult> cell = family.stream()
                .filter(r -> r.scenario().equals("robustness-long-bursts"))
                .toList();
        assertThat(cell).hasSize(POLICIES.size());
        ObjectMapper json = new ObjectMapper();
        for (int i = 0; i < POLICIES.size(); i++) {
            assertThat(member.get(i).scenario()).isEqualTo("robustness-long-bursts");
            assertThat(member.get(i).seed()).isEqualTo(2L);
            assertThat(member.get(i).steady().requests()).isPositive();
            // Every figure (wall time aside), per-tenant ones included.
            assertThat(json.writeValueAsString(member.get(i).withWallMillis(0)))
                    .isEqualTo(json.writeValueAsString(cell.get(i).withWallMillis(0)));
        }
        // The other mixes differ: the comparison can fail.
        assertThat(json.writeValueAsString(family.get(0).withWallMillis(0)))
                .isNotEqualTo(json.writeValueAsString(cell.get(0).withWallMillis(0)));
    }

    @Test
    void member_unknown_exit2_namingTheMember_andListingTheMixes() {
        assertThatThrownBy(() -> StorageRuns.load("robustness-longbursts"))
                .isInstanceOfSatisfying(
                        LabException.class, e -> assertThat(e.exitCode()).isEqualTo(2))
                .hasMessageStartingWith("--scenario: robustness-longbursts: no mix \"longbursts\" in robustness")
                .hasMessageContaining("long-bursts, spikes");
    }

    private static List<StorageRunResult> run(String scenario) {
        StorageRuns.Sweep sweep = StorageRuns.sweep(
                StorageRuns.load(scenario, SharedData::require), List.of(2L), 0.2, 0.4, POLICIES, SharedData::require);
        return StorageSweep.run(sweep.runs(), 2, null, (done, total, run, result) -> {});
    }
}
