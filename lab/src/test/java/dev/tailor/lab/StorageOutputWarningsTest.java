package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.storage.StorageRunResult;
import java.util.List;
import org.junit.jupiter.api.Test;

class StorageOutputWarningsTest {

    @Test
    void refusalsNameTheSeedWhenTheResultsHoldSeveral() {
        List<String> warnings = StorageOutput.warnings(List.of(run(1, 0), run(2, 7), run(3, 0)));

        assertThat(warnings)
                .containsExactly("robustness-mild seed 2 segment-admission: 7 measured requests were refused"
                        + " (admission queue full) and have no latency");
    }

    @Test
    void oneSeedIsNotRepeatedInEveryWarning() {
        List<String> warnings = StorageOutput.warnings(List.of(run(1, 7)));

        assertThat(warnings).singleElement().asString().startsWith("robustness-mild segment-admission: 7 ");
    }

    @Test
    void aSweepTooShortForAnySteadyP99999_saysSo_once() {
        List<String> shortSweep = StorageOutput.warnings(List.of(run(1, 0, 4_321), run(2, 0, 5_000)));
        List<String> oneShortRun = StorageOutput.warnings(List.of(run(1, 0, 4_321)));

        assertThat(shortSweep)
                .singleElement()
                .asString()
                .startsWith("no run measured the 100,000 steady-tenant requests a P99.999 needs (the most: 5000)");
        assertThat(oneShortRun).isEmpty();
        assertThat(StorageOutput.warnings(List.of(run(1, 0), run(2, 0)))).isEmpty();
    }

    private static StorageRunResult run(long seed, long refused) {
        return run(seed, refused, 100_000);
    }

    private static StorageRunResult run(long seed, long refused, long steadyRequests) {
        return StorageResults.result("segment-admission", seed, steadyRequests, refused);
    }
}
