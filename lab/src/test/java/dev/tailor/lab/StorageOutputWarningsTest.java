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

    @Test
    void unfinishedRequests_onASaturatedBackend_areAQueueThatGrows() {
        List<String> warnings =
                StorageOutput.warnings(List.of(StorageResults.result("fifo", 1, 100_000, 0, 500, 99.2, 0)));

        assertThat(warnings)
                .containsExactly("robustness-mild fifo: 500 of 100000 measured requests were unfinished at the end;"
                        + " they enter the percentiles at their age, a lower bound (the backend was 99.2 % busy:"
                        + " more load than it serves, so its queues grow)");
    }

    @Test
    void unfinishedRequests_onABackendWithRoom_pointAtTheDrain_notAtTheLoad() {
        // One proxy, 64 MiB reads of 1.8 s each, a 1 s drain: every policy leaves the same reads unfinished,
        // whatever capacity the admission policies left unused meanwhile (was: "its queues grow", and then
        // "the policy held them" for those).
        for (double unusedPercent : new double[] {0, 62.9}) {
            String warning = StorageOutput.warnings(List.of(
                            StorageResults.result("segment-admission", 1, 100_000, 0, 300, 24.3, unusedPercent)))
                    .getFirst();

            assertThat(warning)
                    .endsWith("(the backend was 24.3 % busy, so not a load it cannot serve: they were still waiting"
                            + " or in service when the drain after the measured period ended (the scenario's"
                            + " drainSeconds, default 1 s; a longer one measures them))")
                    .doesNotContain("queues grow");
        }
    }

    @Test
    void aFewUnfinishedRequests_belowOnePerThousand_areNotWarnedAbout() {
        assertThat(StorageOutput.warnings(List.of(StorageResults.result("fifo", 1, 100_000, 0, 100, 24.3, 0))))
                .isEmpty();
    }

    private static StorageRunResult run(long seed, long refused) {
        return run(seed, refused, 100_000);
    }

    private static StorageRunResult run(long seed, long refused, long steadyRequests) {
        return StorageResults.result("segment-admission", seed, steadyRequests, refused);
    }
}
