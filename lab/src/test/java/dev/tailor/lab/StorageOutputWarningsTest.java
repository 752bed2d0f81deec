package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.storage.LatencySummary;
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
        LatencySummary latency = steadyRequests >= 100_000
                ? new LatencySummary(steadyRequests, 1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 5.0)
                : new LatencySummary(steadyRequests, 1.0, 2.0, 3.0, 4.0, null, 1.0, 5.0);
        return new StorageRunResult(
                "robustness-mild",
                null,
                "segment-admission",
                seed,
                20,
                100_000,
                latency,
                latency,
                latency,
                latency,
                latency,
                latency,
                0,
                0,
                0,
                0,
                0,
                refused,
                0,
                null,
                null,
                0,
                0,
                0,
                null,
                null,
                null);
    }
}
