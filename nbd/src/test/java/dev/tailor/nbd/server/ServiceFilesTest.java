package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tailor.nbd.config.NbdConfig;
import dev.tailor.nbd.config.NbdConfigFiles;
import dev.tailor.nbd.protocol.NbdProtocol;
import dev.tailor.nbd.testing.RawClient;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.Tools;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/nbd, what a host running {@code tailor nbd serve} gets: the systemd units (checked by
 * {@code systemd-analyze}) and their user (made by {@code systemd-sysusers} in a scratch root), the example
 * config (read and served), the Prometheus rules (checked and unit-tested by promtool) and the Grafana
 * dashboard; every series the rules and the dashboard name is on the /metrics of a real server, so a renamed
 * series fails here.
 */
class ServiceFilesTest {

    private static final Path PROJECT = Path.of(System.getProperty("tailor.projectDir", ".."));
    private static final Path DEPLOY = PROJECT.resolve("deploy/nbd");
    private static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> UNITS = List.of("tailor-nbd.service", "tailor-nbd@.service");
    private static final List<String> ALERTS = List.of(
            "TailorNbdDown",
            "TailorNbdErrorReplies",
            "TailorNbdExportLatencyHigh",
            "TailorNbdSlowRequests",
            "TailorNbdConnectionsRefused",
            "TailorNbdAdmissionHolding",
            "TailorNbdDoorHolding",
            "TailorNbdEventLoopStalled");
    /**
     * A PromQL aggregation that merges series, and its {@code by} labels (group 2; null without {@code by}, or with
     * it after the operand). Not {@code topk} and {@code bottomk}, which pick series and keep their labels.
     */
    private static final Pattern AGGREGATION =
            Pattern.compile("\\b(sum|min|max|avg|count|group|stddev|stdvar|quantile|count_values)\\s*"
                    + "(?:by\\s*\\(([^)]*)\\)\\s*)?\\(");
    /** The series a text names: the server's own and the JVM collectors'; not a prefix ending in "_" ("_*"). */
    private static final Pattern SERIES = Pattern.compile("\\b(?:tailor_nbd|jvm)_[a-z_]*[a-z]\\b");

    /**
     * A series selector in a query: the series (group 1) and its label matchers (group 2; null when it has none, so
     * that a selector without braces is caught too).
     */
    private static final Pattern SELECTOR = Pattern.compile("\\b(tailor_nbd_[a-z_]*[a-z])\\b(?:\\{([^}]*)})?");

    @TempDir
    Path dir;

    // ---- systemd units

    /** The unit's {@code [Service]} and {@code [Unit]} settings, each key with its values in order. */
    private static Map<String, List<String>> settings(String unit) throws IOException {
        Map<String, List<String>> settings = new LinkedHashMap<>();
        for (String line : Files.readAllLines(DEPLOY.resolve(unit))) {
            int eq = line.indexOf('=');
            if (line.isBlank() || line.startsWith("#") || line.startsWith("[") || eq < 0) {
                continue;
            }
            settings.computeIfAbsent(line.substring(0, eq), k -> new ArrayList<>())
                    .add(line.substring(eq + 1));
        }
        return settings;
    }

    private static String one(Map<String, List<String>> settings, String key) {
        assertThat(settings.get(key)).as(key).hasSize(1);
        return settings.get(key).get(0);
    }

    /**
     * What {@code systemd-analyze verify} says of the units in {@code folder} (the template as an instance),
     * about them: an unknown key or a bad value is only a warning there, with exit code 0, so any line naming
     * a unit counts.
     */
    private static List<String> verify(Path systemdAnalyze, Path folder) throws Exception {
        Process process = new ProcessBuilder(
                        systemdAnalyze.toString(),
                        "verify",
                        folder.resolve("tailor-nbd.service").toString(),
                        folder.resolve("tailor-nbd@nbd.service").toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        List<String> problems = new ArrayList<>(output.lines()
                .filter(l -> l.contains("tailor-nbd") || l.contains(folder.toString()))
                .toList());
        if (process.exitValue() != 0) {
            problems.add("exit code " + process.exitValue() + ": " + output);
        }
        return problems;
    }

    /**
     * The units copied into {@code folder}, the template under an instance's name; with their java swapped for
     * the one running this test where the host has no /usr/bin/java ({@code verify} checks that the program
     * exists).
     */
    private static void copyUnits(Path folder, String replace, String with) throws IOException {
        String java = Files.isExecutable(Path.of("/usr/bin/java"))
                ? "/usr/bin/java"
                : ProcessHandle.current().info().command().orElse("/usr/bin/java");
        for (String unit : UNITS) {
            String text = Files.readString(DEPLOY.resolve(unit))
                    .replace("ExecStart=/usr/bin/java ", "ExecStart=" + java + " ")
                    .replace(replace, with);
            Files.writeString(folder.resolve(unit), text);
        }
        Files.copy(folder.resolve("tailor-nbd@.service"), folder.resolve("tailor-nbd@nbd.service"));
    }

    @Test
    void units_passSystemdAnalyzeVerify_whichFindsAMisspeltSetting() throws Exception {
        Path systemdAnalyze = Tools.require("systemd-analyze", "systemd");
        Path good = Files.createDirectories(dir.resolve("good"));
        copyUnits(good, "", "");
        assertThat(verify(systemdAnalyze, good)).isEmpty();

        // The check must be able to fail: systemd ignores a setting it cannot parse, with a warning only.
        Path bad = Files.createDirectories(dir.resolve("bad"));
        copyUnits(bad, "Restart=on-failure", "Restart=on-falure");
        assertThat(verify(systemdAnalyze, bad))
                .hasSize(2)
                .allSatisfy(l -> assertThat(l).contains("Failed to parse service restart specifier"));
    }

    @Test
    void units_areHardened_perSystemdAnalyzeSecurity() throws Exception {
        Path systemdAnalyze = Tools.require("systemd-analyze", "systemd");
        copyUnits(dir, "", "");
        for (String unit : List.of("tailor-nbd.service", "tailor-nbd@nbd.service")) {
            Process process = new ProcessBuilder(
                            systemdAnalyze.toString(),
                            "security",
                            "--offline=yes",
                            dir.resolve(unit).toString())
                    .redirectErrorStream(true)
                    .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            Matcher level = Pattern.compile("Overall exposure level for \\S+: ([0-9.]+)")
                    .matcher(output);
            assertThat(level.find()).as(output).isTrue();
            // 0 is locked down, 10 unprotected; a service with no hardening scores 9.6.
            assertThat(Double.parseDouble(level.group(1))).as(unit).isLessThanOrEqualTo(2.0);
        }
    }

    @Test
    void units_runTheServerAsItStopsAndFails() throws Exception {
        // The longest stop on SIGTERM: the requests at the backends (the drain), the file I/O pool (as long
        // again), then the acceptor's and the event loops' 2 s each (NbdServer.close and shutDown).
        long longestStopSeconds = 2 * NbdServer.DRAIN_TIMEOUT_MILLIS / 1000 + 2 + 2;
        for (String unit : UNITS) {
            Map<String, List<String>> s = settings(unit);
            assertThat(one(s, "Type")).as(unit).isEqualTo("exec"); // no sd_notify in the server
            assertThat(one(s, "ExecStart"))
                    .as(unit)
                    .startsWith("/usr/bin/java ")
                    .contains(" -jar /opt/tailor/tailor.jar nbd serve --config /etc/tailor/nbd");
            assertThat(one(s, "User")).isEqualTo("tailor-nbd");
            assertThat(one(s, "Restart")).isEqualTo("on-failure");
            assertThat(one(s, "RestartPreventExitStatus")).isEqualTo("2"); // bad input: a restart cannot help
            assertThat(one(s, "KillSignal")).isEqualTo("SIGTERM");
            assertThat(one(s, "SuccessExitStatus")).contains("143"); // the JVM's exit on SIGTERM
            String timeout = one(s, "TimeoutStopSec");
            assertThat(timeout).endsWith("s");
            assertThat(Long.parseLong(timeout.substring(0, timeout.length() - 1)))
                    .as(unit + ": TimeoutStopSec beyond the server's longest stop, " + longestStopSeconds + " s")
                    .isGreaterThan(longestStopSeconds);
            assertThat(s).doesNotContainKey("MemoryDenyWriteExecute"); // the JIT writes code
        }
        assertThat(one(settings("tailor-nbd@.service"), "ExecStart")).endsWith("--config /etc/tailor/nbd/%i.yaml");
        assertThat(one(settings("tailor-nbd@.service"), "RuntimeDirectory")).isEqualTo("tailor-nbd/%i");
        assertThat(one(settings("tailor-nbd.service"), "ExecStart")).endsWith("--config /etc/tailor/nbd.yaml");
    }

    @Test
    void sysusers_makesTheUserAndGroupTheUnitsRunAs() throws Exception {
        Path sysusers = Tools.require("systemd-sysusers", "systemd");
        Path root = Files.createDirectories(dir.resolve("root/etc"));
        for (String file : List.of("passwd", "group", "shadow", "gshadow")) {
            Files.writeString(root.resolve(file), "");
        }
        assertThat(run(
                        sysusers,
                        dir,
                        "--root=" + dir.resolve("root"),
                        DEPLOY.resolve("tailor-nbd.sysusers.conf").toString()))
                .startsWith("exit 0");
        for (String unit : UNITS) {
            Map<String, List<String>> s = settings(unit);
            assertThat(Files.readString(root.resolve("passwd")))
                    .as(unit)
                    .startsWith(one(s, "User") + ":x:")
                    .contains(":/var/lib/tailor-nbd:");
            assertThat(Files.readString(root.resolve("group"))).as(unit).startsWith(one(s, "Group") + ":x:");
        }
    }

    // ---- Prometheus rules

    private static String run(Path program, Path workingDirectory, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of(program.toString()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command)
                .directory(workingDirectory.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return "exit " + process.exitValue() + "\n" + output;
    }

    private static JsonNode rules() throws IOException {
        return YAML.readTree(DEPLOY.resolve("tailor-nbd.rules.yaml").toFile());
    }

    private static List<JsonNode> alerts() throws IOException {
        List<JsonNode> alerts = new ArrayList<>();
        rules().path("groups").forEach(g -> g.path("rules").forEach(alerts::add));
        return alerts;
    }

    @Test
    void rules_eachAlertHasForSeveritySummaryAndDescription() throws Exception {
        assertThat(alerts()).extracting(a -> a.path("alert").asText()).containsExactlyElementsOf(ALERTS);
        assertThat(alerts()).allSatisfy(a -> {
            String name = a.path("alert").asText();
            assertThat(a.path("for").asText()).as(name).matches("\\d+m");
            assertThat(a.path("labels").path("severity").asText()).as(name).isIn("warning", "critical");
            assertThat(a.path("annotations").path("summary").asText()).as(name).isNotBlank();
            assertThat(a.path("annotations").path("description").asText().length())
                    .as(name + ": a description that says what to look at")
                    .isGreaterThan(100);
        });
    }

    @Test
    void rules_passPromtoolCheck_andTheirUnitTests_whichFailWithoutEachAlert() throws Exception {
        Path promtool = Tools.require("promtool", "prometheus");
        assertThat(run(promtool, DEPLOY, "check", "rules", "tailor-nbd.rules.yaml"))
                .startsWith("exit 0")
                .contains("SUCCESS: " + ALERTS.size() + " rules found");
        assertThat(run(promtool, DEPLOY, "test", "rules", "tailor-nbd.rules.test.yaml"))
                .startsWith("exit 0")
                .contains("SUCCESS");

        // Each alert's tests both expect it to fire and expect it silent on healthy series beside.
        JsonNode tests =
                YAML.readTree(DEPLOY.resolve("tailor-nbd.rules.test.yaml").toFile());
        for (String alert : ALERTS) {
            List<JsonNode> cases = new ArrayList<>();
            tests.path("tests")
                    .forEach(t -> t.path("alert_rule_test").forEach(c -> {
                        if (c.path("alertname").asText().equals(alert)) {
                            cases.add(c);
                        }
                    }));
            assertThat(cases).as(alert).anyMatch(c -> c.path("exp_alerts").isEmpty());
            assertThat(cases).as(alert).anyMatch(c -> !c.path("exp_alerts").isEmpty());
        }

        // The unit tests must be able to fail: with any one alert taken out of the rules, promtool's tests fail
        // on it (its expected alert does not come).
        Files.copy(DEPLOY.resolve("tailor-nbd.rules.test.yaml"), dir.resolve("tailor-nbd.rules.test.yaml"));
        for (String alert : ALERTS) {
            ObjectNode rules = (ObjectNode) rules();
            ArrayNode group = (ArrayNode) rules.path("groups").path(0).path("rules");
            for (int i = 0; i < group.size(); i++) {
                if (group.get(i).path("alert").asText().equals(alert)) {
                    group.remove(i);
                }
            }
            YAML.writeValue(dir.resolve("tailor-nbd.rules.yaml").toFile(), rules);
            assertThat(run(promtool, dir, "test", "rules", "tailor-nbd.rules.test.yaml"))
                    .as("without " + alert)
                    .startsWith("exit 1")
                    .contains("FAILED")
                    .contains("alertname: " + alert);
        }
    }

    // ---- Grafana dashboard

    private static JsonNode dashboard() throws IOException {
        return JSON.readTree(DEPLOY.resolve("tailor-nbd-dashboard.json").toFile());
    }

    private static List<String> dashboardExpressions() throws IOException {
        List<String> expressions = new ArrayList<>();
        dashboard()
                .path("panels")
                .forEach(p -> p.path("targets")
                        .forEach(t -> expressions.add(t.path("expr").asText())));
        return expressions;
    }

    @Test
    void dashboard_hasItsVariables_andEveryPanelReadsTheChosenDatasource() throws Exception {
        JsonNode dashboard = dashboard();
        Map<String, JsonNode> variables = new LinkedHashMap<>();
        dashboard
                .path("templating")
                .path("list")
                .forEach(v -> variables.put(v.path("name").asText(), v));
        assertThat(variables).containsKeys("datasource", "job", "instance", "export");
        // Servers are picked by job, then instance (several jobs may scrape servers at the same address).
        assertThat(variables.get("job").path("type").asText()).isEqualTo("query");
        assertThat(variables.get("job").path("multi").asBoolean()).isTrue();
        assertThat(variables.get("job").path("definition").asText())
                .isEqualTo("label_values(tailor_nbd_requests_total, job)");
        assertThat(variables.get("instance").path("definition").asText()).contains("job=~\"$job\"");
        assertThat(variables.get("export").path("definition").asText())
                .contains("job=~\"$job\", instance=~\"$instance\"");
        assertThat(variables.get("datasource").path("type").asText()).isEqualTo("datasource");
        assertThat(variables.get("datasource").path("query").asText()).isEqualTo("prometheus");
        assertThat(variables.get("export").path("type").asText()).isEqualTo("query");
        assertThat(variables.get("export").path("multi").asBoolean()).isTrue();

        List<String> titles = new ArrayList<>();
        dashboard.path("panels").forEach(p -> {
            String title = p.path("title").asText();
            titles.add(title);
            assertThat(p.path("datasource").path("uid").asText()).as(title).isEqualTo("${datasource}");
            assertThat(p.path("targets")).as(title).isNotEmpty();
            p.path("targets").forEach(t -> {
                assertThat(t.path("datasource").path("uid").asText()).as(title).isEqualTo("${datasource}");
                // Every series selector filters on the chosen jobs and servers, none reads all of them.
                Matcher selector = SELECTOR.matcher(t.path("expr").asText());
                int selectors = 0;
                while (selector.find()) {
                    selectors++;
                    assertThat(selector.group(2))
                            .as(title + ": " + selector.group(1))
                            .isNotNull()
                            .startsWith("job=~\"$job\", instance=~\"$instance\"");
                }
                assertThat(selectors).as(title).isPositive();
                // Several servers may serve exports of the same name: every aggregation (a quantile's sum by le,
                // a rate's sum, a gauge's max) keeps the server, and a graph's legend names it.
                String expr = t.path("expr").asText();
                Matcher aggregation = AGGREGATION.matcher(expr);
                while (aggregation.find()) {
                    assertThat(aggregation.group(2))
                            .as(title + ": " + aggregation.group(1) + " in " + expr)
                            .isNotNull()
                            .startsWith("job, instance");
                }
                if (!"table".equals(t.path("format").asText())) { // a table shows every label
                    assertThat(t.path("legendFormat").asText()).as(title).startsWith("{{job}} {{instance}} ");
                }
            });
        });
        assertThat(titles)
                .anyMatch(t -> t.startsWith("IOPS"))
                .anyMatch(t -> t.startsWith("Bytes"))
                .anyMatch(t -> t.contains("latency"))
                .anyMatch(t -> t.startsWith("Error"))
                .anyMatch(t -> t.startsWith("Slow"))
                .anyMatch(t -> t.startsWith("Connections"))
                .anyMatch(t -> t.startsWith("Admission"))
                .anyMatch(t -> t.startsWith("Fair dispatch door"));
        // The series each panel is for: every one is read by some selector above, so the check covers it.
        List<String> read = new ArrayList<>();
        dashboardExpressions().forEach(e -> {
            Matcher selector = SELECTOR.matcher(e);
            while (selector.find()) {
                read.add(selector.group(1));
            }
        });
        assertThat(read)
                .contains(
                        "tailor_nbd_request_errors_total",
                        "tailor_nbd_requests_dropped_total",
                        "tailor_nbd_admission_waiting",
                        "tailor_nbd_admission_export_waiting",
                        "tailor_nbd_admission_wait_seconds_bucket",
                        "tailor_nbd_fair_dispatch_wait_seconds_bucket",
                        "tailor_nbd_loop_health_check_window_max_age_seconds",
                        "tailor_nbd_loop_io_dispatch_delay_seconds_bucket");
        // The dispatch delay is a histogram per loop: its P99 over the rate window, per server and loop.
        assertThat(dashboardExpressions())
                .anyMatch(e -> e.startsWith("histogram_quantile(0.99, sum by (job, instance, loop, le) (rate(")
                        && e.contains("tailor_nbd_loop_io_dispatch_delay_seconds_bucket{")
                        && e.endsWith("[$__rate_interval])))"));
    }

    @Test
    void dashboard_everyExpressionIsPromQl_perPromtool() throws Exception {
        Path promtool = Tools.require("promtool", "prometheus");
        // Each expression with its Grafana variables given values.
        List<String> expressions = dashboardExpressions().stream()
                .map(e -> e.replace("$__rate_interval", "5m")
                        .replace("$job", ".*")
                        .replace("$instance", ".*")
                        .replace("$export", ".*"))
                .toList();
        assertThat(checkAsRecordingRules(promtool, "dashboard", expressions))
                .startsWith("exit 0")
                .contains("SUCCESS: " + expressions.size() + " rules found");
        assertThat(expressions).hasSizeGreaterThan(15);
    }

    /** What {@code promtool check rules} says of each expression as a recording rule, for its parser. */
    private String checkAsRecordingRules(Path promtool, String name, List<String> expressions) throws Exception {
        List<Map<String, String>> records = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            records.add(Map.of("record", name + ":expression_" + i, "expr", expressions.get(i)));
        }
        YAML.writeValue(
                dir.resolve(name + ".rules.yaml").toFile(),
                Map.of("groups", List.of(Map.of("name", name, "rules", records))));
        return run(promtool, dir, "check", "rules", name + ".rules.yaml");
    }

    // ---- docs/nbd.md's example queries

    /**
     * The PromQL of docs/nbd.md's examples: each fenced block without a language that names a tailor_nbd_ series,
     * one expression a line, a line starting with a blank, an operator or a closing parenthesis continuing the
     * expression before it; comments left out.
     */
    private static List<String> documentedQueries() throws IOException {
        Pattern continuation = Pattern.compile("[\\s/*+)-]|(?:and|or|unless)\\b");
        List<List<String>> blocks = new ArrayList<>();
        List<String> block = null;
        for (String line : Files.readAllLines(PROJECT.resolve("docs/nbd.md"))) {
            if (line.startsWith("```")) {
                if (block == null && line.equals("```")) {
                    block = new ArrayList<>();
                    blocks.add(block);
                } else if (block == null) {
                    block = new ArrayList<>(); // a block with a language: read past it, not kept
                } else {
                    block = null;
                }
            } else if (block != null) {
                block.add(line);
            }
        }
        List<String> queries = new ArrayList<>();
        for (List<String> lines : blocks) {
            if (lines.stream().noneMatch(l -> l.contains("tailor_nbd_"))) {
                continue;
            }
            List<String> inBlock = new ArrayList<>();
            for (String line : lines) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                if (!inBlock.isEmpty() && continuation.matcher(line).lookingAt()) {
                    inBlock.set(inBlock.size() - 1, inBlock.getLast() + "\n" + line);
                } else {
                    inBlock.add(line);
                }
            }
            queries.addAll(inBlock);
        }
        return queries;
    }

    @Test
    void docs_exampleQueriesArePromQl_perPromtool_andKeepTheServer() throws Exception {
        List<String> queries = documentedQueries();
        assertThat(queries)
                .anyMatch(q -> q.startsWith("histogram_quantile(") && q.contains("tailor_nbd_admission_wait_seconds"))
                .anyMatch(
                        q -> q.startsWith("histogram_quantile(") && q.contains("tailor_nbd_fair_dispatch_wait_seconds"))
                .anyMatch(q -> q.contains("\n  / sum by ("));
        // Several servers may serve exports of the same name: every aggregation keeps the server, as the alerts do.
        for (String query : queries) {
            Matcher aggregation = AGGREGATION.matcher(query);
            while (aggregation.find()) {
                assertThat(aggregation.group(2))
                        .as(aggregation.group(1) + " in " + query)
                        .isNotNull()
                        .startsWith("job, instance");
            }
        }
        Path promtool = Tools.require("promtool", "prometheus");
        assertThat(checkAsRecordingRules(promtool, "docs", queries))
                .startsWith("exit 0")
                .contains("SUCCESS: " + queries.size() + " rules found");
    }

    // ---- the bucket bounds' spellings: Prometheus 2.x stores le as the text format writes it, Prometheus 3
    // normalizes it on ingestion (its migration guide, "le and quantile label values")

    /**
     * {@link IoMetrics#WAIT_BUCKETS_SECONDS} as Prometheus 3 stores them: each as its labels.FormatOpenMetricsFloat
     * writes it (Go's shortest form, e-notation below 1e-4, ".0" added to whole numbers).
     */
    private static final List<String> WAIT_BOUNDS_PROMETHEUS_3 = List.of(
            "0.0", "0.0001", "0.00025", "0.0005", "0.001", "0.0015", "0.0022", "0.0033", "0.0047", "0.0068", "0.01",
            "0.015", "0.022", "0.033", "0.047", "0.068", "0.1", "0.15", "0.22", "0.33", "0.47", "0.68", "1.0", "2.5",
            "10.0");
    /** {@link IoMetrics#LOOP_BUCKETS_SECONDS} as Prometheus 3 stores them. */
    private static final List<String> LOOP_BOUNDS_PROMETHEUS_3 = List.of(
            "1e-06", "2.5e-06", "5e-06", "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025",
            "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "1.0");
    /** An {@code le} matcher, which names a bound by its spelling. */
    private static final Pattern LE_MATCHER = Pattern.compile("\\ble\\s*(=~|!~|!=|=)");

    /**
     * The ways a bound reaches a query, each the name of a job whose series spell it so: as Prometheus 2.x stores
     * Tailor's text format (Java's {@code Double.toString}, as {@code /metrics} writes it), as Prometheus 3 stores it,
     * and that relabelled as the migration guide's {@code metric_relabel_configs} that keep integer spellings do.
     */
    private static Map<String, List<String>> spellings(double[] bounds, List<String> prometheus3) {
        assertThat(prometheus3).hasSize(bounds.length);
        for (int i = 0; i < bounds.length; i++) {
            assertThat(Double.parseDouble(prometheus3.get(i)))
                    .as(prometheus3.get(i))
                    .isEqualTo(bounds[i]);
        }
        Map<String, List<String>> spellings = new LinkedHashMap<>();
        spellings.put(
                "prometheus-2",
                java.util.Arrays.stream(bounds).mapToObj(Double::toString).toList());
        spellings.put("prometheus-3", prometheus3);
        spellings.put(
                "prometheus-3-relabelled",
                prometheus3.stream()
                        .map(b -> b.replaceAll("^(\\d+)\\.0+$", "$1"))
                        .toList());
        return spellings;
    }

    /**
     * The promtool input series of one histogram per spelling (its job), the same counts under each: bucket i grows
     * by 50 + 3i a minute, {@code +Inf} and {@code _count} by 50 + 3n, {@code _sum} by 7.
     */
    private static void histogram(
            List<Map<String, String>> series, String name, String labels, Map<String, List<String>> spellings) {
        spellings.forEach((job, bounds) -> {
            String common = "job=\"" + job + "\", instance=\"a:9810\", " + labels;
            for (int i = 0; i <= bounds.size(); i++) {
                String le = i < bounds.size() ? bounds.get(i) : "+Inf";
                series.add(Map.of(
                        "series", name + "_bucket{" + common + ", le=\"" + le + "\"}",
                        "values", "0+" + (50 + 3 * i) + "x15"));
            }
            series.add(Map.of(
                    "series", name + "_count{" + common + "}", "values", "0+" + (50 + 3 * bounds.size()) + "x15"));
            series.add(Map.of("series", name + "_sum{" + common + "}", "values", "0+7x15"));
        });
    }

    @Test
    void docs_queriesThatReadBuckets_answerTheSameWhicheverWayTheBoundsAreSpelt_perPromtool() throws Exception {
        // Was: le="0.0" (not the relabelled "0") and le="1.0E-6" (Prometheus 2.x's alone; 3 stores "1e-06").
        List<String> queries =
                documentedQueries().stream().filter(q -> q.contains("_bucket")).toList();
        assertThat(queries)
                .anyMatch(q -> q.contains("tailor_nbd_admission_wait_seconds_bucket{le"))
                .anyMatch(q -> q.contains("tailor_nbd_request_loop_unrelated_wait_seconds_bucket{le"));
        // The alerts and the dashboard read buckets only through histogram_quantile, which reads le as a number.
        List<String> shipped = new ArrayList<>(dashboardExpressions());
        alerts().forEach(a -> shipped.add(a.path("expr").asText()));
        assertThat(shipped).noneMatch(e -> LE_MATCHER.matcher(e).find());

        List<Map<String, String>> series = new ArrayList<>();
        Map<String, List<String>> wait = spellings(IoMetrics.WAIT_BUCKETS_SECONDS, WAIT_BOUNDS_PROMETHEUS_3);
        histogram(series, "tailor_nbd_admission_wait_seconds", "export=\"vm1\"", wait);
        histogram(series, "tailor_nbd_fair_dispatch_wait_seconds", "backend=\"device:8:0\", export=\"vm1\"", wait);
        histogram(
                series,
                "tailor_nbd_request_loop_unrelated_wait_seconds",
                "export=\"vm1\"",
                spellings(IoMetrics.LOOP_BUCKETS_SECONDS, LOOP_BOUNDS_PROMETHEUS_3));
        // Each query answers once per spelling (its job), and the same.
        List<Map<String, Object>> checks = new ArrayList<>();
        for (String query : queries) {
            checks.add(Map.of(
                    "expr",
                    "count(" + query + ")",
                    "eval_time",
                    "10m",
                    "exp_samples",
                    List.of(Map.of("labels", "{}", "value", wait.size()))));
            checks.add(Map.of(
                    "expr",
                    "max(" + query + ") - min(" + query + ")",
                    "eval_time",
                    "10m",
                    "exp_samples",
                    List.of(Map.of("labels", "{}", "value", 0))));
        }
        YAML.writeValue(
                dir.resolve("spellings.test.yaml").toFile(),
                Map.of(
                        "rule_files",
                        List.of(),
                        "tests",
                        List.of(Map.of("interval", "1m", "input_series", series, "promql_expr_test", checks))));
        Path promtool = Tools.require("promtool", "prometheus");
        assertThat(run(promtool, dir, "test", "rules", "spellings.test.yaml"))
                .startsWith("exit 0")
                .contains("SUCCESS");
    }

    // ---- the series, on a real server's /metrics

    /** The series names a /metrics body has samples of. */
    private static Set<String> scraped(String body) {
        Set<String> names = new TreeSet<>();
        body.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).forEach(l -> names.add(l.split("[{ ]", 2)[0]));
        return names;
    }

    @Test
    void exampleConfig_servesAndItsMetricsHaveEverySeriesTheRulesAndTheDashboardName() throws Exception {
        Set<String> named = new TreeSet<>();
        List<String> texts = new ArrayList<>(dashboardExpressions());
        texts.add(Files.readString(DEPLOY.resolve("tailor-nbd.rules.yaml")));
        dashboard().path("panels").forEach(p -> texts.add(p.path("description").asText()));
        for (String text : texts) {
            Matcher m = SERIES.matcher(text);
            while (m.find()) {
                named.add(m.group());
            }
        }
        assertThat(named)
                .contains(
                        "tailor_nbd_request_errors_total",
                        "tailor_nbd_request_duration_seconds_bucket",
                        "tailor_nbd_slow_requests_total",
                        "tailor_nbd_connections_refused_total",
                        "tailor_nbd_admission_wait_seconds_bucket",
                        "tailor_nbd_admission_wait_seconds_count",
                        "tailor_nbd_fair_dispatch_wait_seconds_bucket",
                        "tailor_nbd_fair_dispatch_wait_seconds_count",
                        "tailor_nbd_slow_segment_requests",
                        "tailor_nbd_requests_dropped_total",
                        "tailor_nbd_admission_export_waiting",
                        "tailor_nbd_loop_io_dispatch_delay_seconds_bucket");

        // deploy/nbd/nbd.yaml as the service reads it, with its folders and ports moved to free ones, admission
        // on (commented out there) and every request slow, so that every family the rules name has a sample.
        Path state = Files.createDirectories(dir.resolve("var/lib/tailor-nbd"));
        String yaml = Files.readString(DEPLOY.resolve("nbd.yaml"))
                .replace("/var/lib/tailor-nbd", state.toString())
                .replace("port: 10809", "port: 0")
                .replace(
                        "metricsListen: 127.0.0.1:9810",
                        "metricsListen: 127.0.0.1:0\n  slowRequestThresholdMillis: 0.001")
                .replace("# admission:", "admission:")
                .replace("#   enabled: true", "  enabled: true")
                .replace("#   iops: 20000", "  iops: 20000");
        Path file = dir.resolve("etc/tailor/nbd.yaml");
        Files.createDirectories(file.getParent());
        Files.writeString(file, yaml);
        NbdConfig config = NbdConfigFiles.read(file);
        assertThat(config.admission().enabled()).isTrue();
        HttpClient http = HttpClient.newHttpClient();
        try (NbdServer server = NbdServer.start(config)) {
            try (RawClient client = RawClient.connect(server.localAddress()).handshake()) {
                RawClient.Go go = client.go("vm1-root", false);
                client.request(0, NbdProtocol.CMD_READ, 1, 0, 4096);
                assertThat(client.simpleReply(4096).error()).isZero();
                client.request(0, NbdProtocol.CMD_READ, 2, go.sizeBytes(), 4096); // past the end
                assertThat(client.simpleReply(0).error()).isEqualTo(NbdProtocol.EINVAL);
            }
            URI metrics =
                    URI.create("http://127.0.0.1:" + server.metricsAddress().getPort() + "/metrics");
            Set<String> seen = new TreeSet<>();
            Await.until("the error and the slow request on /metrics", () -> {
                try {
                    seen.clear();
                    seen.addAll(scraped(
                            http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
                                    .body()));
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError("GET " + metrics, e);
                }
                return seen.contains("tailor_nbd_request_errors_total")
                        && seen.contains("tailor_nbd_slow_segment_requests");
            });
            // A histogram or a summary is named by its family too (its samples are _bucket, _count, _sum).
            assertThat(named)
                    .allSatisfy(name -> assertThat(seen)
                            .as("the series the rules and the dashboard name, on /metrics")
                            .containsAnyOf(name, name + "_count"));
            // The read went through admission and the door at once: each wait histogram has it in its bucket 0.
            String body = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
                    .body();
            assertThat(body)
                    .contains("tailor_nbd_admission_wait_seconds_bucket{export=\"vm1-root\",le=\"0.0\"} 1\n")
                    .contains("tailor_nbd_admission_wait_seconds_count{export=\"vm1-root\"} 1\n")
                    .containsPattern(
                            "tailor_nbd_fair_dispatch_wait_seconds_bucket\\{backend=\"[^\"]+\",export=\"vm1-root\","
                                    + "le=\"0.0\"} 1\n");
        }
    }
}
