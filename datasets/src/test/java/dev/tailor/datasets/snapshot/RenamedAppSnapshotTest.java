package dev.tailor.datasets.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Options;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot.Result;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.Call;
import dev.tailor.heart.Heart;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import dev.tailor.heart.SnapshotValidator;
import dev.tailor.testkit.RenamedApp;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The builder on a second application, made from the public data at test time ({@link RenamedApp}):
 * every component renamed (the entry is {@code web-gateway}), emailservice's metrics left out, the
 * trace inside the folder under another name. Nothing is given but the folder and the pings, and the
 * snapshot must be OnlineBoutique's under the new names.
 */
class RenamedAppSnapshotTest {

    @TempDir
    Path tmp;

    private static Map<String, Double> lambdaByComponent(Snapshot s) {
        Map<String, Double> lambda = new TreeMap<>();
        for (Replica r : s.replicas()) {
            double rate = r.requestsPerSecond() == null ? Double.NaN : r.requestsPerSecond();
            lambda.merge(r.component(), rate, Double::sum);
        }
        return lambda;
    }

    private static Map<String, Double> callRates(Snapshot s) {
        Map<String, Double> rates = new TreeMap<>();
        for (Call c : s.calls()) {
            rates.put(c.caller() + " -> " + c.callee(), c.requestsPerSecond());
        }
        return rates;
    }

    private static String rename(String component) {
        return RenamedApp.RENAMES.getOrDefault(component, component);
    }

    @Test
    void build_renamedApp_findsItsEntryAndTraceAndEqualsOnlineBoutiqueUnderTheNewNames() throws IOException {
        Path pings = SharedData.require(RenamedApp.LATENCY);
        Path app = RenamedApp.write(tmp.resolve("shop"));
        Result renamed = OnlineBoutiqueSnapshot.build(
                Options.defaults(app).toBuilder().latencyFile(pings).build());
        Result original =
                OnlineBoutiqueSnapshot.build(Options.defaults(SharedData.require(RenamedApp.METRICS)).toBuilder()
                        .latencyFile(pings)
                        .build());

        assertThat(SnapshotValidator.validate(renamed.snapshot())).isEmpty();
        assertThat(renamed.entryComponent()).isEqualTo(RenamedApp.ENTRY);
        assertThat(renamed.notes())
                .anyMatch(n -> n.startsWith("entry component web-gateway, found from the trace")
                        && n.contains("260 of its 260 root spans"));
        assertThat(renamed.notes()).anyMatch(n -> n.contains("call mix from " + app.resolve(RenamedApp.SPANS)));
        assertThat(renamed.notes()).anyMatch(n -> n.contains("sample 821 of 1325 of web-gateway"));
        assertThat(renamed.notes()).noneMatch(n -> n.contains("frontend"));

        // Same λ per component, and the same call rates, as OnlineBoutique's under the new names.
        Map<String, Double> expectedLambda = new TreeMap<>();
        lambdaByComponent(original.snapshot()).forEach((c, l) -> {
            if (!c.equals(RenamedApp.LEFT_OUT)) {
                expectedLambda.put(rename(c), l);
            }
        });
        Map<String, Double> lambda = lambdaByComponent(renamed.snapshot());
        assertThat(lambda.keySet()).isEqualTo(expectedLambda.keySet());
        expectedLambda.forEach((c, l) -> assertThat(lambda.get(c)).as(c).isCloseTo(l, within(1e-12)));

        Map<String, Double> expectedCalls = new TreeMap<>();
        callRates(original.snapshot()).forEach((edge, rate) -> {
            String[] ends = edge.split(" -> ");
            if (!ends[1].equals(RenamedApp.LEFT_OUT)) {
                expectedCalls.put(rename(ends[0]) + " -> " + rename(ends[1]), rate);
            }
        });
        Map<String, Double> calls = callRates(renamed.snapshot());
        assertThat(calls.keySet()).isEqualTo(expectedCalls.keySet());
        expectedCalls.forEach((e, r) -> assertThat(calls.get(e)).as(e).isCloseTo(r, within(1e-12)));
        assertThat(calls).containsKey("ingress -> web-gateway");

        // The left-out component is still in the graph and the trace; both are said.
        assertThat(renamed.notes()).anyMatch(n -> n.contains("no metrics") && n.contains("orders -> mailer"));
        assertThat(renamed.notes())
                .anyMatch(n -> n.contains("trace edges not among the calls") && n.contains("orders -> mailer"));

        new Heart(HeartConfig.DEFAULTS).plan(renamed.snapshot(), AtpmState.EMPTY);
    }
}
