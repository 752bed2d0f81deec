package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.lab.report.StorageFigures;
import dev.tailor.lab.report.StorageReport;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageScenario;
import dev.tailor.sim.storage.StorageScenarios;
import dev.tailor.sim.storage.StorageSetup;
import dev.tailor.sim.storage.StorageSimulation;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-tenant table: in the text behind an option, in the report always, each cell the run's. */
class StorageOutputTenantsTest {

    private static final List<String> POLICIES = List.of("fifo", "segment-admission");

    @Test
    void text_perTenant_aRowPerTenantAndPolicy_theTenantsColumnsOnItsFirst_offByDefault() {
        List<StorageRunResult> runs = runs();
        String without = table(runs, false);
        String with = table(runs, true);

        assertThat(without).doesNotContain("per tenant");
        assertThat(with).startsWith(without.substring(0, without.indexOf("\n\nsteady/hot tenants")));
        assertThat(with).contains("  per tenant, latency ms\n").contains("\nper tenant: class = ground truth");
        List<String> rows = with.lines()
                .dropWhile(line -> !line.equals("  per tenant, latency ms"))
                .skip(2)
                .takeWhile(line -> !line.isEmpty())
                .toList();
        List<StorageRunResult.TenantResult> tenants = runs.get(0).tenants();
        assertThat(rows).hasSize(tenants.size() * POLICIES.size());
        for (int i = 0; i < tenants.size(); i++) {
            StorageRunResult.TenantResult t = tenants.get(i);
            String first = rows.get(i * POLICIES.size());
            String second = rows.get(i * POLICIES.size() + 1);
            assertThat(first.trim().split("\\s+"))
                    .startsWith(t.name(), t.tenantClass(), String.valueOf(t.proxy()))
                    .contains(String.valueOf(t.requests()), "fifo")
                    .endsWith(StorageFigures.percentiles(t.latency()).toArray(String[]::new));
            assertThat(second.trim().split("\\s+"))
                    .containsExactly(
                            concat("segment-admission", runs.get(1).tenants().get(i)));
        }
    }

    @Test
    void text_perTenant_severalProxies_eachTenantsRowNamesItsProxy_theLegendSaysWhatItIs() {
        // Tenants are spread over the proxies round-robin in the order listed: 8 steady, then 2 bursty.
        List<StorageRunResult> runs = runs(2);
        String with = table(runs, true);

        List<String> lines = with.lines()
                .dropWhile(line -> !line.equals("  per tenant, latency ms"))
                .skip(1)
                .takeWhile(line -> !line.isEmpty())
                .toList();
        assertThat(lines.get(0).trim().split("\\s+"))
                .startsWith("tenant", "class", "proxy", "baseline", "offered", "within", "requests", "policy");
        List<StorageRunResult.TenantResult> tenants = runs.get(0).tenants();
        assertThat(tenants).extracting(StorageRunResult.TenantResult::proxy).containsOnly(0, 1);
        for (int i = 0; i < tenants.size(); i++) {
            StorageRunResult.TenantResult t = tenants.get(i);
            assertThat(t.proxy()).isEqualTo(i % 2);
            assertThat(lines.get(1 + i * POLICIES.size()).trim().split("\\s+"))
                    .startsWith(t.name(), t.tenantClass(), String.valueOf(i % 2));
        }
        assertThat(with).contains("; proxy = the proxy it uses, numbered from 0;");
    }

    @Test
    void report_perTenantTable_eachTenantsP99999UnderEachPolicySideBySide() {
        List<StorageRunResult> runs = runs();
        String html = StorageReport.tenantTable(runs);

        assertThat(html).contains("<caption>Per tenant, latency ms</caption>");
        assertThat(html).contains("<th>fifo</th><th>segment-admission</th><th>fifo</th><th>segment-admission</th>");
        for (int i = 0; i < runs.get(0).tenants().size(); i++) {
            StorageRunResult.TenantResult t = runs.get(0).tenants().get(i);
            StringBuilder row = new StringBuilder("<tr>");
            StorageFigures.tenant(t)
                    .forEach(c -> row.append("<td")
                            .append(c.equals(t.name()) || c.equals(t.tenantClass()) ? " class=\"l\">" : ">")
                            .append(c)
                            .append("</td>"));
            for (String p : List.of("p99", "p99999")) {
                for (StorageRunResult r : runs) {
                    var l = r.tenants().get(i).latency();
                    row.append("<td>")
                            .append(StorageFigures.ms(p.equals("p99") ? l.p99Millis() : l.p99999Millis()))
                            .append("</td>");
                }
            }
            assertThat(html).contains(row.append("</tr>").toString());
        }
        // Results without per-tenant figures (as before them) have no table.
        assertThat(StorageReport.tenantTable(List.of(withoutTenants(runs.get(0)))))
                .isEmpty();
    }

    private static String[] concat(String policy, StorageRunResult.TenantResult t) {
        List<String> cells = new java.util.ArrayList<>(List.of(policy));
        cells.addAll(StorageFigures.percentiles(t.latency()));
        return cells.toArray(String[]::new);
    }

    private static List<StorageRunResult> runs() {
        return runs(1);
    }

    private static List<StorageRunResult> runs(int proxies) {
        StorageScenario s = StorageScenarios.load("burst-microbench").toBuilder()
                .proxies(proxies)
                .warmupSeconds(0.2)
                .build()
                .withDuration(0.5);
        StorageSetup setup = StorageRuns.setup(s, relative -> {
                    throw new IllegalArgumentException(relative);
                })
                .variants()
                .get(1);
        return POLICIES.stream().map(p -> StorageSimulation.run(setup, p, null)).toList();
    }

    private static StorageRunResult withoutTenants(StorageRunResult r) {
        return new StorageRunResult(
                r.scenario(),
                r.burstMultiplier(),
                r.policy(),
                r.seed(),
                r.measuredSeconds(),
                r.offeredRequests(),
                r.steady(),
                r.hot(),
                r.steadySegments(),
                r.hotSegments(),
                r.steadyWithinBaseline(),
                r.allWithinBaseline(),
                r.throughputRequestsPerSecond(),
                r.throughputMiBPerSecond(),
                r.backendUtilizationPercent(),
                r.unusedCapacityPercent(),
                r.waitingTimePercent(),
                r.refused(),
                r.unfinished(),
                r.admission(),
                r.mclockReservationPercent(),
                r.simulatedRequests(),
                r.eventsFired(),
                r.wallMillis(),
                r.steadyLatency(),
                r.hotLatency(),
                r.series());
    }

    private static String table(List<StorageRunResult> runs, boolean perTenant) {
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            StorageOutput.table(out, runs, perTenant);
        }
        return text.toString();
    }
}
