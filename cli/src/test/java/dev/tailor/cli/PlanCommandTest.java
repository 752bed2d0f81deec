package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PlanCommandTest {

    @TempDir
    Path dir;

    /** Exit code, stdout and stderr of one in-process run. */
    record Result(int exitCode, String out, String err) {}

    static Result tailor(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Tailor.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(code, out.toString(), err.toString());
    }

    private static final String VALID = """
            {"windowSeconds": 30,
             "nodes": [{"name": "w1", "locality": "r1/z1/w1"}, {"name": "w2", "locality": "r1/z1/w2"}],
             "replicas": [
               {"pod": "a-1", "component": "a", "node": "w1", "ready": true, "cpuCores": 0.5, "requestsPerSecond": 50},
               {"pod": "a-2", "component": "a", "node": "w2", "ready": true, "cpuCores": 1.0, "requestsPerSecond": 50},
               {"pod": "b-1", "component": "b", "node": "w1", "ready": true, "cpuCores": 0.3, "requestsPerSecond": 50},
               {"pod": "b-2", "component": "b", "node": "w2", "ready": true, "cpuCores": 0.3, "requestsPerSecond": 50}],
             "calls": [{"caller": "ingress", "callee": "a", "requestsPerSecond": 100, "byCallerNode": {"w1": 50, "w2": 50}},
                       {"caller": "a", "callee": "b", "requestsPerSecond": 100}],
             "delays": [{"from": "w1", "to": "w1", "millis": 0.05}, {"from": "w2", "to": "w2", "millis": 0.05},
                        {"from": "w1", "to": "w2", "millis": 0.4}, {"from": "w2", "to": "w1", "millis": 0.4}]}
            """;

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    @Test
    void plan_withoutSnapshot_plansTheBundledPaperExampleAndSaysSo() {
        Result r = tailor("heart", "plan");
        // A new user's first command must work and must not hide that it used an example.
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).contains("bundled example paper-pairwise");
        assertThat(r.out()).contains("Shares (ATPM)", "Routes (NTAM)", "ingress -> a", "a -> b");
    }

    @Test
    void plan_explain_namesTheFilterStepsAndTheBasisOfEachLoad() {
        // The slow-link filter's steps: it is off by default, runs per edge (not under queue-aware
        // routing), and the spread raises the gap it needs to prune: the filter on, both others off.
        Result r = tailor(
                "heart",
                "plan",
                "--example",
                "paper-dag",
                "--explain",
                "--no-queue-aware-routing",
                "--spread-scale",
                "0",
                "--slow-link-filter");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("2-means on", "max-flow", "first measurement", "pruned:");
    }

    @Test
    void plan_paperDagExample_defaults_everyCalleeQueueAware_withItsHeadroom() {
        // b runs at 0.69 of its capacity: planned with the headroom it is at the 0.95 cap, where the
        // Newton solve must still find a start within every group's capacity.
        Result r = tailor("heart", "plan", "--example", "paper-dag", "--explain");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("headroom for load growth")
                .doesNotContain("did not converge")
                .doesNotContain("routed on the ATPM shares");
    }

    @Test
    void plan_loadHeadroomWithoutQueueAwareRouting_saysItHasNoEffect() {
        Result r = tailor("heart", "plan", "--load-headroom", "1", "--no-queue-aware-routing");
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).contains("--load-headroom has no effect with --no-queue-aware-routing");
        assertThat(tailor("heart", "plan", "--load-headroom", "1").err()).doesNotContain("no effect");
        // --spread-scale 0 turns queue-aware routing off as well, and with it the headroom.
        Result noSpread = tailor("heart", "plan", "--load-headroom", "1", "--spread-scale", "0");
        assertThat(noSpread.exitCode()).isZero();
        assertThat(noSpread.err()).contains("--load-headroom has no effect with --spread-scale 0");
    }

    @Test
    void plan_groupedOptionGivenTwice_exit2InOneShortLine() {
        // Was "Error: expected only one match but got [[--alpha-min=A] ... all 17 planner settings ...]={...}
        // and [...]={...}", some 1,500 characters, for a planner setting given twice.
        List<List<String>> twice = List.of(
                List.of("--alpha-min", "0.3", "--alpha-min=0.4"),
                List.of("--outlier-filter", "--no-outlier-filter"),
                List.of("--example", "paper-dag", "--example", "paper-dag"));
        List<String> expected = List.of(
                "option '--alpha-min' (A) should be specified only once",
                "option '--outlier-filter' should be specified only once",
                "option '--example' (NAME) should be specified only once");
        for (int i = 0; i < twice.size(); i++) {
            List<String> args = new ArrayList<>(List.of("heart", "plan"));
            args.addAll(twice.get(i));
            Result r = tailor(args.toArray(String[]::new));

            assertThat(r.exitCode()).as(args.toString()).isEqualTo(2);
            assertThat(r.err())
                    .as(args.toString())
                    .isEqualTo("tailor: " + expected.get(i) + "\nTry 'tailor heart plan --help'.\n");
            assertThat(r.out()).isEmpty();
        }
        Result both = tailor("heart", "plan", "--snapshot", "a.json", "--example", "paper-dag");
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err())
                .startsWith("tailor: --snapshot=FILE, --example=NAME are mutually exclusive (specify only one)\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--namespace=shop", "--selector-label=app", "--cluster-domain=example.org"})
    void plan_istioOptionWithoutIstioFormat_exit2NamingIt(String option) {
        for (String format : List.of("table", "json")) {
            Result r = tailor("heart", "plan", "--format", format, option);

            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.err()).contains(option.substring(0, option.indexOf('=')) + ": only with --format istio");
            assertThat(r.out()).isEmpty();
        }
        assertThat(tailor("heart", "plan", "--format", "istio", option).exitCode())
                .isZero();
    }

    @Test
    void plan_slowLinkFilterOn_underQueueAwareRouting_saysItDoesNotRunThere() {
        // Asked for, the filter runs only where a callee is planned the paper's way; the explanation of a
        // queue-aware callee must not claim it is off, nor leave the user thinking it acted.
        Result r = tailor("heart", "plan", "--example", "paper-dag", "--explain", "--slow-link-filter");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("the slow-link filter, though on, runs only on a callee planned the paper's way")
                .doesNotContain("no slow-link filter");
    }

    @Test
    void plan_json_hasSharesRoutesAndPrunedLinks_andEveryRouteSumsToOne() throws IOException {
        // Pruned links come from the slow-link filter (off by default): it runs per edge (not under
        // queue-aware routing), and the spread raises the gap it needs to prune: the filter on, both off.
        Result r = tailor(
                "heart",
                "plan",
                "--example",
                "paper-pairwise",
                "--format",
                "json",
                "--no-queue-aware-routing",
                "--spread-scale",
                "0",
                "--slow-link-filter");
        assertThat(r.exitCode()).isZero();
        JsonNode doc = Json.MAPPER.readTree(r.out());
        assertThat(doc.get("shares").get("a").get("w1").asDouble()).isBetween(0.0, 1.0);
        assertThat(doc.get("prunedLinks").size()).isPositive();
        assertThat(doc.get("routes").size()).isEqualTo(10);
        for (JsonNode route : doc.get("routes")) {
            assertThat(sum(route.get("to"))).isCloseTo(1.0, within(1e-9));
            assertThat(sum(route.get("replicas"))).isCloseTo(1.0, within(1e-9));
            assertThat(route.get("fromNode").asText()).isNotBlank();
        }
    }

    @Test
    void plan_istio_everyFromHasIntegerWeightsIn1To100SummingTo100() throws IOException {
        Result r = tailor("heart", "plan", "--example", "paper-dag", "--format", "istio", "--namespace", "shop");
        assertThat(r.exitCode()).isZero();
        List<JsonNode> rules = readYamlDocuments(r.out());
        assertThat(rules).hasSize(6);
        for (JsonNode rule : rules) {
            assertThat(rule.get("kind").asText()).isEqualTo("DestinationRule");
            assertThat(rule.at("/metadata/namespace").asText()).isEqualTo("shop");
            assertThat(rule.at("/spec/workloadSelector/matchLabels/app").asText())
                    .isNotBlank();
            assertThat(rule.at("/spec/trafficPolicy/outlierDetection").isObject())
                    .isTrue();
            JsonNode distribute = rule.at("/spec/trafficPolicy/loadBalancer/localityLbSetting/distribute");
            assertThat(distribute.size()).isEqualTo(5);
            for (JsonNode entry : distribute) {
                int total = 0;
                for (Iterator<Map.Entry<String, JsonNode>> it = entry.get("to").fields(); it.hasNext(); ) {
                    JsonNode weight = it.next().getValue();
                    assertThat(weight.isInt()).isTrue();
                    assertThat(weight.asInt()).isBetween(1, 100);
                    total += weight.asInt();
                }
                assertThat(total).isEqualTo(100);
            }
        }
    }

    @Test
    void plan_istio_ingressGateway_entryPointRuleTargetsTheGateway_othersStay() throws IOException {
        Path snapshot = write("s.json", VALID);
        Result r = tailor(
                "heart",
                "plan",
                "--snapshot",
                snapshot.toString(),
                "--format",
                "istio",
                "--namespace",
                "shop",
                "--ingress-gateway",
                "istio-system/istio=ingressgateway,app=istio-ingressgateway");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("--ingress-gateway");
        List<JsonNode> rules = readYamlDocuments(r.out());
        JsonNode ingress = rules.stream()
                .filter(rule -> rule.at("/metadata/name").asText().endsWith("ingress-to-a"))
                .findFirst()
                .orElseThrow();
        // Istio applies a workloadSelector only in the rule's own namespace: the gateway's.
        assertThat(ingress.at("/metadata/namespace").asText()).isEqualTo("istio-system");
        assertThat(ingress.at("/spec/workloadSelector/matchLabels").properties())
                .extracting(Map.Entry::getKey)
                .containsExactly("app", "istio");
        assertThat(ingress.at("/spec/workloadSelector/matchLabels/istio").asText())
                .isEqualTo("ingressgateway");
        assertThat(ingress.at("/spec/workloadSelector/matchLabels/app").asText())
                .isEqualTo("istio-ingressgateway");
        assertThat(ingress.at("/spec/host").asText()).isEqualTo("a.shop.svc.cluster.local");
        JsonNode inner = rules.stream()
                .filter(rule -> rule.at("/metadata/name").asText().endsWith("a-to-b"))
                .findFirst()
                .orElseThrow();
        assertThat(inner.at("/metadata/namespace").asText()).isEqualTo("shop");
        assertThat(inner.at("/spec/workloadSelector/matchLabels/app").asText()).isEqualTo("a");
    }

    @Test
    void plan_istio_withoutIngressGateway_saysWhereTheEntryPointRuleAims() throws IOException {
        Result r = tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--format", "istio");

        assertThat(r.exitCode()).isZero();
        assertThat(r.err())
                .contains("the rules of entry point ingress select pods labelled app=ingress in namespace" + " default")
                .contains("--ingress-gateway NAMESPACE/SELECTOR");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "istio=ingressgateway            | --ingress-gateway: \"istio=ingressgateway\" (expected: NAMESPACE/KEY=VALUE",
                "Istio-System/istio=gw           | --ingress-gateway: namespace \"Istio-System\"",
                "istio-system/istio              | --ingress-gateway: selector \"istio\" is not KEY=VALUE",
                "istio-system/istio-ingressgateway | e.g. istio-system/app=istio-ingressgateway",
                "istio-system/a=b,a=c            | --ingress-gateway: label key \"a\" given twice",
                "istio-system/istio=bad value    | --ingress-gateway: selector \"istio=bad value\""
            })
    void plan_istio_badIngressGateway_exit2NamingIt(String value, String message) throws IOException {
        Result r = tailor(
                "heart",
                "plan",
                "--snapshot",
                write("s.json", VALID).toString(),
                "--format",
                "istio",
                "--ingress-gateway",
                value);

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(message);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void plan_state_consecutiveRunsAreConsecutiveRounds() throws IOException {
        Path snapshot = write("s.json", VALID);
        Path state = dir.resolve("state.json");
        Result first = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());
        assertThat(first.exitCode()).isZero();
        assertThat(first.err()).contains("round 1");
        assertThat(Json.MAPPER.readTree(state.toFile()).get("rounds").asLong()).isEqualTo(1);

        Result second = tailor(
                "heart",
                "plan",
                "--snapshot",
                snapshot.toString(),
                "--state",
                state.toString(),
                "--format",
                "json",
                "--explain");
        assertThat(second.exitCode()).isZero();
        JsonNode doc = Json.MAPPER.readTree(second.out());
        assertThat(doc.get("round").asLong()).isEqualTo(2);
        // In round 2 the EWMA is updated, so the basis is "MEASURED" and alpha is reported.
        JsonNode group = doc.get("groups").get("a").get(0);
        assertThat(group.get("basis").asText()).isEqualTo("MEASURED");
        assertThat(group.get("alpha").asDouble()).isBetween(0.2, 0.8);
        assertThat(Json.MAPPER.readTree(state.toFile()).get("rounds").asLong()).isEqualTo(2);
    }

    @Test
    void plan_stateOfAnotherApplication_isRefusedWith2_namingTheFileBothApplicationsAndTheWayOut() throws IOException {
        Path state = dir.resolve("state.json");
        for (int round = 1; round <= 3; round++) {
            assertThat(tailor("heart", "plan", "--state", state.toString()).exitCode())
                    .isZero();
        }
        String before = Files.readString(state);

        Result r = tailor("heart", "plan", "--example", "paper-dag", "--state", state.toString(), "--explain");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("tailor: --state " + state + ": written for another application (round 3 of services a, b,"
                        + " ingress), this run plans bundled example paper-dag (services b, c, d, e, frontend,"
                        + " ingress); use --state with another file for this application, or delete " + state
                        + " to start it over at round 1\n");
        assertThat(r.out()).isEmpty();
        assertThat(Files.readString(state)).isEqualTo(before);
    }

    @Test
    void plan_stateOfTheSameApplicationGrown_continues_andTheNewComponentStartsFromItsFirstMeasurement()
            throws IOException {
        Path state = dir.resolve("state.json");
        assertThat(tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--state", state.toString())
                        .exitCode())
                .isZero();
        assertThat(Json.MAPPER.readTree(state.toFile()).get("services").toString())
                .isEqualTo("[\"a\",\"b\",\"ingress\"]");
        String grown = VALID.replace(
                        "\"requestsPerSecond\": 50}],",
                        "\"requestsPerSecond\": 50},\n"
                                + "   {\"pod\": \"c-1\", \"component\": \"c\", \"node\": \"w1\", \"ready\": true,"
                                + " \"cpuCores\": 0.2, \"requestsPerSecond\": 40}],")
                .replace(
                        "{\"caller\": \"a\", \"callee\": \"b\", \"requestsPerSecond\": 100}",
                        "{\"caller\": \"a\", \"callee\": \"b\", \"requestsPerSecond\": 100},"
                                + " {\"caller\": \"a\", \"callee\": \"c\", \"requestsPerSecond\": 40}");
        assertThat(grown).as("the component is added").contains("c-1", "\"callee\": \"c\"");

        Result r = tailor(
                "heart",
                "plan",
                "--snapshot",
                write("grown.json", grown).toString(),
                "--state",
                state.toString(),
                "--format",
                "json",
                "--explain");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("another application", "warning");
        JsonNode doc = Json.MAPPER.readTree(r.out());
        assertThat(doc.get("round").asLong()).isEqualTo(2);
        assertThat(doc.get("groups").get("a").get(0).get("basis").asText()).isEqualTo("MEASURED");
        assertThat(doc.get("groups").get("c").get(0).get("basis").asText()).isEqualTo("FIRST_MEASUREMENT");
        assertThat(Json.MAPPER.readTree(state.toFile()).get("services").toString())
                .isEqualTo("[\"a\",\"b\",\"c\",\"ingress\"]");

        // And back: the application without c is still the same one.
        Result shrunk =
                tailor("heart", "plan", "--snapshot", dir.resolve("s.json").toString(), "--state", state.toString());
        assertThat(shrunk.exitCode()).as(shrunk.err()).isZero();
    }

    @Test
    void plan_stateThatDoesNotNameItsServices_isTakenWithOneWarning_andSavedNamingThem() throws IOException {
        Path state = write("state.json", """
                {"rounds": 3, "groups": {"x": {"w1": {"loadCpuSecondsPerRequest": 0.01, "smoothedError": 0,
                 "smoothedAbsoluteError": 0, "alpha": 0.5, "measuredRounds": 3}}}}""");
        Path snapshot = write("s.json", VALID);

        Result first = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());

        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.err())
                .isEqualTo("tailor: warning: state " + state + " does not say which application it was written for"
                        + " (written by an older tailor): taking it for " + snapshot + "'s; the state saved now"
                        + " records its services\n"
                        + "tailor: note: state " + state + " has estimates for component x, which " + snapshot
                        + " does not have; the state saved now leaves it out\n");
        assertThat(Json.MAPPER.readTree(state.toFile()).get("rounds").asLong()).isEqualTo(4);
        Result second = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());
        assertThat(second.exitCode()).isZero();
        assertThat(second.err()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            unknown node        | "node": "w1", "ready": true, "cpuCores": 0.5 | "node": "w9", "ready": true, "cpuCores": 0.5 | replicas[0].node: "w9" is not a node of this snapshot (expected: one of [w1, w2]) at line 4
            negative CPU        | "cpuCores": 0.5 | "cpuCores": -4 | replicas[0].cpuCores: -4 (expected: cores in [0, 1e6], or absent for no data) at line 4
            NaN CPU             | "cpuCores": 0.5 | "cpuCores": NaN | replicas[0].cpuCores: NaN (expected: cores in [0, 1e6], or absent for no data) at line 4
            infinite rate       | "cpuCores": 0.5, "requestsPerSecond": 50 | "cpuCores": 0.5, "requestsPerSecond": Infinity | replicas[0].requestsPerSecond: Infinity (expected: requests per second in [0, 1e9], or absent for no data) at line 4
            negative delay      | "millis": 0.4} | "millis": -1} | 2 problems:\\n  delays[2].millis: -1 (expected: a one-way delay in ms in [0, 3.6e6]) at line 11\\n  delays[3].millis: -1 (expected: a one-way delay in ms in [0, 3.6e6]) at line 11
            duplicate pod       | "pod": "a-2" | "pod": "a-1" | replicas[1].pod: "a-1" is a duplicate (expected: unique pod names) at line 5
            no ready replica    | "ready": true, "cpuCores": 0.3 | "ready": false, "cpuCores": 0.3 | replicas[2].component: "b" has no ready replica (pods [b-1, b-2]) (expected: at least one ready replica per component) at line 6
            unknown field       | "cpuCores": 0.5, | "cpu": 0.5, | replicas[0].cpu: unknown field (expected one of component, cpuCores, cpuLimitCores, node, pod, ready, requestsPerSecond) at line 4
            entry without split | , "byCallerNode": {"w1": 50, "w2": 50} | | calls[0].byCallerNode: missing for entry point "ingress" (it has no replicas, so where its calls come from must be measured) (expected: requests per second by caller node) at line 8
            """)
    void plan_badSnapshot_exitsWith2_namesFieldAndValue_andWritesNothing(
            String name, String find, String replace, String expected) throws IOException {
        String broken = VALID.replaceAll(
                java.util.regex.Pattern.quote(find),
                java.util.regex.Matcher.quoteReplacement(replace == null ? "" : replace));
        assertThat(broken).as("the corruption applies").isNotEqualTo(VALID);
        Path snapshot = write("bad.json", broken);
        Path state = dir.resolve("state.json");
        Result r = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        // The file's name, then the problem (or their count and one indented line each), ending the output.
        assertThat(r.err()).isEqualTo("tailor: snapshot " + snapshot + ": " + expected.replace("\\n", "\n") + "\n");
        assertThat(r.out()).isEmpty();
        assertThat(state).doesNotExist();
    }

    @Test
    void plan_emptySnapshot_exitsWith2_andNamesWhatIsMissing() throws IOException {
        Result r =
                tailor("heart", "plan", "--snapshot", write("empty.json", "{}").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("windowSeconds: missing", "nodes: empty", "replicas: empty");
    }

    @Test
    void plan_malformedJson_exitsWith2_withLineAndField() throws IOException {
        Path broken = write("broken.json", "{\"windowSeconds\": 30,\n \"nodes\": [}");
        Result r = tailor("heart", "plan", "--snapshot", broken.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("tailor: snapshot " + broken + ": not valid JSON at line 2, field nodes")
                .contains("found '}' (expected: ']' to close the array)")
                .doesNotContain("Source: ", "column");
    }

    @Test
    void plan_syntaxErrorInsideARecord_isNotValidJson_atItsLine() throws IOException {
        // The binder wraps a syntax error inside a record with the record's path; it is still a syntax error.
        Path broken = write("broken.json", VALID.replace("\"requestsPerSecond\": 100,", "\"requestsPerSecond\": 100"));
        Result r = tailor("heart", "plan", "--snapshot", broken.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("tailor: snapshot " + broken + ": not valid JSON at line 8, field calls[0]")
                .contains("(expected: a comma between fields, or } to close the object)");
    }

    @Test
    void plan_prettyPrintedSnapshot_eachProblemAtItsOwnLine_numbersAsWritten() throws IOException {
        // Lines are counted from 1; an unknown field of a record is told at its key, not where the
        // record ends; range problems found after reading have their lines and the numbers as typed.
        String pretty = """
                {
                  "windowSeconds": 30,
                  "nodes": [
                    {"name": "w1", "locality": "r1/z1/w1", "cpuCores": -4},
                    {"name": "w2", "locality": "r1/z1/w2"}
                  ],
                  "replicas": [
                    {
                      "pod": "a-1",
                      "component": "a",
                      "node": "w1",
                      "ready": true,
                      "cpuCores": 0.5,
                      "requestsPerSecond": 50
                    },
                    {"pod": "a-2", "component": "a", "node": "w2", "ready": true, "cpuCores": 1.0,
                     "requestsPerSecond": 50}
                  ],
                  "calls": [{"caller": "ingress", "callee": "a", "requestsPerSecond": 100,
                             "byCallerNode": {"w1": 50, "w2": -2}}],
                  "delays": [
                    {"from": "w1", "to": "w1", "millis": 0.05},
                    {"from": "w2", "to": "w2", "millis": 1e9}
                  ]
                }
                """;
        Path file = write("pretty.json", pretty);
        Result r = tailor("heart", "plan", "--snapshot", file.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("tailor: snapshot " + file + ": 3 problems:\n"
                        + "  nodes[0].cpuCores: -4 (expected: cores in (0, 1e6], or absent) at line 4\n"
                        + "  calls[0].byCallerNode.w2: -2 (expected: requests per second in [0, 1e9]) at line 20\n"
                        + "  delays[1].millis: 1e9 (expected: a one-way delay in ms in [0, 3.6e6]) at line 23\n");

        // An unknown field is told at its key, with the file's other problems.
        Path unknown =
                write("unknown.json", pretty.replace("\"cpuCores\": 0.5,", "\"cpuCores\": 0.5,\n      \"cpu\": 1,"));
        r = tailor("heart", "plan", "--snapshot", unknown.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("tailor: snapshot " + unknown + ": 4 problems:\n"
                        + "  nodes[0].cpuCores: -4 (expected: cores in (0, 1e6], or absent) at line 4\n"
                        + "  replicas[0].cpu: unknown field (expected one of component, cpuCores, cpuLimitCores, node,"
                        + " pod, ready, requestsPerSecond) at line 14\n"
                        + "  calls[0].byCallerNode.w2: -2 (expected: requests per second in [0, 1e9]) at line 21\n"
                        + "  delays[1].millis: 1e9 (expected: a one-way delay in ms in [0, 3.6e6]) at line 24\n");
    }

    @Test
    void plan_snapshotWithUnknownFields_toldWithEveryOtherProblem_inOneError() throws IOException {
        // Was only "replicas[0].rps: unknown field ...": the other problems came one fix later.
        String replica = " (expected one of component, cpuCores, cpuLimitCores, node, pod, ready, requestsPerSecond)";
        Path file = write("b1.json", """
                {
                  "windowSeconds": 30,
                  "nodes": [
                    {"name": "w1", "cpuCores": 4},
                    {"name": "w1", "cpuCores": -2}
                  ],
                  "replicas": [
                    {"pod": "a-1", "rps": 3, "component": "a", "node": "w1", "ready": true, "cpuCores": -4},
                    {"pod": "a-1", "component": "a", "node": "w9", "ready": true, "cpuCores": 0.1, "colour": "red"}
                  ],
                  "calls": [],
                  "delays": [],
                  "extra": 1
                }
                """);
        Result r = tailor("heart", "plan", "--snapshot", file.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .isEqualTo("tailor: snapshot " + file + ": 8 problems:\n"
                        + "  nodes[1].name: \"w1\" is a duplicate (expected: unique node names) at line 5\n"
                        + "  nodes[1].cpuCores: -2 (expected: cores in (0, 1e6], or absent) at line 5\n"
                        + "  replicas[0].rps: unknown field" + replica + " at line 8\n"
                        + "  replicas[0].cpuCores: -4 (expected: cores in [0, 1e6], or absent for no data) at line 8\n"
                        + "  replicas[1].colour: unknown field" + replica + " at line 9\n"
                        + "  replicas[1].pod: \"a-1\" is a duplicate (expected: unique pod names) at line 9\n"
                        + "  replicas[1].node: \"w9\" is not a node of this snapshot (expected: one of [w1]) at line 9\n"
                        + "  extra: unknown field (expected one of calls, delays, nodes, replicas, windowSeconds) at line"
                        + " 13\n");
    }

    @Test
    void plan_stateThroughALink_replacesTheFileItNames_andKeepsTheLink() throws IOException {
        Path real = Files.createDirectories(dir.resolve("real")).resolve("state.json");
        Path link = Files.createSymbolicLink(dir.resolve("state.json"), real);
        Result first = tailor("heart", "plan", "--state", link.toString());
        assertThat(first.exitCode()).as(first.err()).isZero();
        // Was: the link replaced by a regular file, and the file it named never written.
        assertThat(link).isSymbolicLink();
        assertThat(Json.MAPPER.readTree(real.toFile()).get("rounds").asLong()).isEqualTo(1);
        assertThat(tailor("heart", "plan", "--state", link.toString()).exitCode())
                .isZero();
        assertThat(Json.MAPPER.readTree(real.toFile()).get("rounds").asLong()).isEqualTo(2);
    }

    @Test
    void plan_standardOutputFails_exit1AndSaysSo() throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path err = dir.resolve("err.txt");
        Process process = new ProcessBuilder(
                        javaBin, "-cp", System.getProperty("java.class.path"), "dev.tailor.cli.Tailor", "heart", "plan")
                .redirectOutput(new java.io.File("/dev/full")) // every write fails: no space left on device
                .redirectError(err.toFile())
                .start();
        assertThat(process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        // Was: exit 0, the plan lost without a word.
        assertThat(process.exitValue()).isEqualTo(1);
        assertThat(Files.readString(err))
                .endsWith("tailor: standard output could not be written (a full disk, a"
                        + " closed pipe or a file it cannot write): what it printed is incomplete\n");
    }

    @Test
    void plan_missingFile_exitsWith2() {
        Result r =
                tailor("heart", "plan", "--snapshot", dir.resolve("nope.json").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("nope.json: no such file");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            field left out    | "alpha": 0.5, | '' | groups.a.w1.alpha: missing (expected: a number) at line 2
            field null        | "alpha": 0.5, | "alpha": null, | groups.a.w1.alpha: null (expected: a number) at line 3
            rounds left out   | "rounds": 3, | '' | rounds: missing (expected: a whole number) at line 1
            rounds too large  | "rounds": 3, | "rounds": 99999999999999999999999, | rounds: 99999999999999999999999 \
            (expected: a whole number that fits in 64 bits) at line 1
            rounds at the end | "rounds": 3, | "rounds": 9223372036854775807, | rounds: 9223372036854775807 \
            (expected: rounds in [0, 1e12]) at line 1
            rounds negative   | "rounds": 3, | "rounds": -3, | rounds: -3 (expected: rounds in [0, 1e12]) at line 1
            second document   | "measuredRounds": 3}}}} | "measuredRounds": 3}}}}\\n{} | (top level): content after the end \
            of the document (expected: one JSON document, nothing after it) at line 5
            """)
    void plan_stateNotReadable_saysWhatIsWrong_atItsLine(String name, String find, String replace, String expected)
            throws IOException {
        String valid = """
                {"rounds": 3, "groups": {"a": {
                 "w1": {"loadCpuSecondsPerRequest": 0.01, "smoothedError": 0, "smoothedAbsoluteError": 0,
                 "alpha": 0.5,
                 "measuredRounds": 3}}}}""";
        String broken = valid.replace(find, replace.replace("\\n", "\n"));
        assertThat(broken).as("the corruption applies").isNotEqualTo(valid);
        Path state = write("state.json", broken);
        Result r =
                tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--state", state.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("tailor: state " + state + ": " + expected + "\n");
    }

    @Test
    void plan_corruptState_exitsWith2_andKeepsTheStateFileAsItWas() throws IOException {
        Path state = write("state.json", """
                {"rounds": 3, "groups": {"a": {"w1": {"loadCpuSecondsPerRequest": -1, "smoothedError": 0,
                 "smoothedAbsoluteError": 0, "alpha": 5, "measuredRounds": 3}}}}""");
        String before = Files.readString(state);
        Result r =
                tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--state", state.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("tailor: state " + state + ": 2 problems:\n"
                        + "  groups.a.w1.loadCpuSecondsPerRequest: -1 (expected: CPU-seconds per request in [1e-9, 1e6])"
                        + " at line 1\n"
                        + "  groups.a.w1.alpha: 5 (expected: a number in (0, 1]) at line 2\n");
        assertThat(Files.readString(state)).isEqualTo(before);
    }

    @Test
    void plan_stateWithUnknownFields_toldWithEveryOtherProblem_inOneError() throws IOException {
        Path state = write("state.json", """
                {"rounds": 3, "round": 4, "groups": {"a": {"w1": {"loadCpuSecondsPerRequest": -1, "smoothedError": 0,
                 "smoothedAbsoluteError": 0, "alfa": 0.5, "alpha": 5, "measuredRounds": 3}}}}""");
        Result r =
                tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--state", state.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("tailor: state " + state + ": 4 problems:\n" + "  round: unknown field (expected one of ")
                .contains("\n  groups.a.w1.loadCpuSecondsPerRequest: -1 (expected: CPU-seconds per request in [1e-9,"
                        + " 1e6]) at line 1\n"
                        + "  groups.a.w1.alfa: unknown field (expected one of ")
                .endsWith(") at line 2\n  groups.a.w1.alpha: 5 (expected: a number in (0, 1]) at line 2\n");
    }

    @Test
    void plan_inconsistentSettings_exitWith2_namingTheSetting() {
        Result r = tailor("heart", "plan", "--alpha-min", "0.9", "--alpha-max", "0.5");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--alpha-min: 0.9", "--alpha-max");
    }

    @Test
    void plan_departuresFromThePaper_areOptions_badValuesNamed() {
        Result paper = tailor(
                "heart", "plan", "--no-outlier-filter", "--idle-fit-rounds", "0", "--min-share-of-equal-split", "0");
        assertThat(paper.exitCode()).as(paper.err()).isZero();
        Result r = tailor("heart", "plan", "--idle-fit-rounds", "101");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--idle-fit-rounds: 101 (expected: 0 (off) .. 100)");
    }

    /** Every numeric setting echoes the value as typed (0, not 0.0) and writes its range as an interval. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--alpha-min 0 | --alpha-min: 0 (expected: a number in (0, 1])",
                "--alpha-max 1.5 | --alpha-max: 1.5 (expected: a number in (0, 1])",
                "--alpha-min NaN | --alpha-min: NaN (expected: a number in (0, 1])",
                "--alpha-min 0.9 --alpha-max 0.5 | --alpha-min: 0.9 (expected: <= --alpha-max, 0.5)",
                "--tracking-smoothing 0 | --tracking-smoothing: 0 (expected: a number in (0, 1])",
                "--batch-removal-max-fraction 2 | --batch-removal-max-fraction: 2 (expected: a number in [0, 1])",
                "--slow-cluster-min-gap-millis -1 | --slow-cluster-min-gap-millis: -1 (expected: ms in [0, 3.6e6])",
                "--unmeasured-link-penalty-millis 4e6 | --unmeasured-link-penalty-millis: 4000000 (expected: ms in",
                "--idle-fit-rounds 101 | --idle-fit-rounds: 101 (expected: 0 (off) .. 100)",
                "--idle-fit-min-rate-ratio 1 | --idle-fit-min-rate-ratio: 1 (expected: a ratio in (1, 1000000])",
                "--idle-max-cpu-fraction 1 | --idle-max-cpu-fraction: 1 (expected: a fraction in [0, 1))",
                "--min-share-of-equal-split 1 | --min-share-of-equal-split: 1 (expected: a fraction in [0, 1), 0 = off)",
                "--spread-scale -1 | --spread-scale: -1 (expected: a number in [0, 100], 0 = off, min-cost flow)",
                "--load-headroom 20 | --load-headroom: 20 (expected: a fraction of the measured load in [0, 10], 0 = off)",
            })
    void plan_badNumber_echoedAsTyped_rangeAsInterval(String options, String message) {
        List<String> args = new java.util.ArrayList<>(List.of("heart", "plan"));
        args.addAll(List.of(options.trim().split(" +")));
        Result r = tailor(args.toArray(String[]::new));
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(message);
    }

    @Test
    void plan_unknownExample_exitsWith2_listingTheKnownOnes() {
        Result r = tailor("heart", "plan", "--example", "nope");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("paper-dag", "paper-pairwise");
    }

    private static double sum(JsonNode fractions) {
        double s = 0;
        for (JsonNode v : fractions) {
            s += v.asDouble();
        }
        return s;
    }

    private static List<JsonNode> readYamlDocuments(String yaml) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it =
                new YAMLMapper().readerFor(JsonNode.class).readValues(yaml)) {
            while (it.hasNext()) {
                JsonNode node = it.next();
                if (node != null && !node.isNull() && !node.isMissingNode()) {
                    docs.add(node);
                }
            }
        }
        return docs;
    }

    @Test
    void plan_stateWithAComponentTheSnapshotLacks_notesIt_andSavesTheStateWithoutIt() throws IOException {
        Path snapshot = write("snapshot.json", VALID);
        Path state = dir.resolve("st.json");
        assertThat(tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString())
                        .exitCode())
                .isZero();
        com.fasterxml.jackson.databind.node.ObjectNode written =
                (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree(state.toFile());
        ((com.fasterxml.jackson.databind.node.ObjectNode) written.get("groups"))
                .set("zzz", written.get("groups").get("a").deepCopy());
        Files.writeString(state, Json.MAPPER.writeValueAsString(written));

        Result r = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        // Was accepted and rewritten without a word.
        assertThat(r.err())
                .isEqualTo("tailor: note: state " + state + " has estimates for component zzz, which " + snapshot
                        + " does not have; the state saved now leaves it out\n");
        JsonNode saved = Json.MAPPER.readTree(state.toFile());
        assertThat(saved.get("groups").has("zzz")).isFalse();
        assertThat(saved.get("rounds").asLong()).isEqualTo(2);

        Result again = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString());
        assertThat(again.err()).as("said once").isEmpty();
    }

    @Test
    void plan_aStateFileAsTheSnapshot_orASnapshotAsTheState_saysWhichOptionTakesIt() throws IOException {
        Path snapshot = write("snapshot.json", VALID);
        Path state = dir.resolve("st.json");
        assertThat(tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", state.toString())
                        .exitCode())
                .isZero();
        String written = Files.readString(state);

        Result swapped = tailor("heart", "plan", "--snapshot", state.toString());
        assertThat(swapped.exitCode()).isEqualTo(2);
        // Was "rounds: unknown field (expected one of calls, delays, nodes, replicas, windowSeconds)".
        assertThat(swapped.err())
                .isEqualTo("tailor: snapshot " + state + ": looks like a HEART state file (it has rounds and groups)"
                        + " (expected: a snapshot: windowSeconds, nodes, replicas, calls, delays; a HEART state file"
                        + " goes to heart plan --state)\n");
        assertThat(swapped.out()).isEmpty();

        Path other = write("other.json", VALID);
        Result asState = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--state", other.toString());
        assertThat(asState.exitCode()).isEqualTo(2);
        assertThat(asState.err())
                .isEqualTo("tailor: state " + other + ": looks like a HEART snapshot (it has windowSeconds, nodes and"
                        + " replicas) (expected: the state file heart plan --state writes; a HEART snapshot goes to"
                        + " heart plan --snapshot)\n");
        assertThat(asState.out()).isEmpty();
        assertThat(Files.readString(other)).as("nothing written").isEqualTo(VALID);
        assertThat(Files.readString(state)).isEqualTo(written);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            number as string   | "windowSeconds": 30 | "windowSeconds": "30" | windowSeconds: "30" (expected: a number) at line 1
            NaN as string      | "ready": true, "cpuCores": 0.5 | "ready": true, "cpuCores": "NaN" | replicas[0].cpuCores: "NaN" (expected: a number) at line 4
            Infinity as string | "windowSeconds": 30 | "windowSeconds": "Infinity" | windowSeconds: "Infinity" (expected: a number) at line 1
            padded number      | "windowSeconds": 30 | "windowSeconds": " 30" | windowSeconds: " 30" (expected: a number) at line 1
            boolean as number  | "ready": true, "cpuCores": 0.5 | "ready": 1, "cpuCores": 0.5 | replicas[0].ready: 1 (expected: true or false) at line 4
            boolean as string  | "ready": true, "cpuCores": 0.5 | "ready": "true", "cpuCores": 0.5 | replicas[0].ready: "true" (expected: true or false, unquoted: in quotes it is a text, not a boolean) at line 4
            string as number   | "pod": "a-1" | "pod": 7 | replicas[0].pod: 7 (expected: a string) at line 4
            duplicate key      | "nodes": [ | "windowSeconds": 60,\\n "nodes": [ | windowSeconds: duplicate key (expected: each key once per object) at line 2
            object for array   | "nodes": [{"name": "w1", "locality": "r1/z1/w1"}, {"name": "w2", "locality": "r1/z1/w2"}] | "nodes": {"name": "w1"} | nodes: {"name": "w1"} (expected: a JSON array) at line 2
            """)
    void plan_wrongJsonTypes_areErrors_notSilentlyCoerced(String name, String find, String replace, String expected)
            throws IOException {
        String broken = VALID.replace(find, replace.replace("\\n", "\n"));
        assertThat(broken).as("the corruption applies").isNotEqualTo(VALID);
        Path file = write("bad.json", broken);
        Result r = tailor("heart", "plan", "--snapshot", file.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("tailor: snapshot " + file + ": " + expected + "\n");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            empty file  | ''   | empty (expected: a JSON object)
            null        | null | null (expected: a JSON object)
            array       | []   | (top level): [] (expected: a JSON object)
            number      | 42   | (expected: a JSON object
            truncated   | '{"nodes": [' | the file ends too early
            """)
    void plan_notASnapshotAtAll_exitsWith2_inPlainWords(String name, String content, String expected)
            throws IOException {
        Result r = tailor(
                "heart",
                "plan",
                "--snapshot",
                write("odd.json", content == null ? "" : content).toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(expected).doesNotContain("java.", "REDACTED", "DeserializationFeature");
    }

    @Test
    void plan_stateCannotBeWritten_printsNoPlan_andExitsWith2WithTheReason() throws IOException {
        // In "plan --format istio | kubectl apply -f -" a plan that is applied must also be remembered.
        Result r = tailor(
                "heart",
                "plan",
                "--snapshot",
                write("s.json", VALID).toString(),
                "--state",
                dir.resolve("missing-folder").resolve("state.json").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("missing-folder", "does not exist");
        assertThat(dir.resolve("missing-folder")).doesNotExist();
    }

    @Test
    void plan_stateFile_isReplacedWithItsPermissionsKept() throws IOException {
        Path state = dir.resolve("state.json");
        assertThat(tailor("heart", "plan", "--snapshot", write("s.json", VALID).toString(), "--state", state.toString())
                        .exitCode())
                .isZero();
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(state)))
                .isEqualTo("rw-r--r--");
        Files.setPosixFilePermissions(state, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
        assertThat(tailor("heart", "plan", "--snapshot", dir.resolve("s.json").toString(), "--state", state.toString())
                        .exitCode())
                .isZero();
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(state)))
                .isEqualTo("rw-rw----");
    }

    @Test
    void plan_istio_componentThatIsNotADnsLabel_isRefusedBeforeApply() throws IOException {
        Path snapshot = write(
                "s.json",
                VALID.replace("\"component\": \"b\"", "\"component\": \"B b\"")
                        .replace("\"callee\": \"b\"", "\"callee\": \"B b\""));
        Result r = tailor("heart", "plan", "--snapshot", snapshot.toString(), "--format", "istio");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("\"B b\" cannot be a Kubernetes service name");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void plan_istio_emptyNamespace_isRefused() {
        Result r = tailor("heart", "plan", "--format", "istio", "--namespace", "");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--namespace: \"\"");
    }

    @Test
    void plan_istioWithExplain_putsTheReasoningInYamlComments() throws IOException {
        // The filter's reasoning in comments: it is off by default, runs per edge (not under queue-aware
        // routing), and the spread raises the gap it needs to prune: the filter on, both others off.
        Result r = tailor(
                "heart",
                "plan",
                "--format",
                "istio",
                "--explain",
                "--no-queue-aware-routing",
                "--spread-scale",
                "0",
                "--slow-link-filter");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("#   2-means on", "# ingress -> a");
        assertThat(readYamlDocuments(r.out())).hasSize(2);
    }

    @Test
    void plan_mistypedOption_saysWhatIsWrongInOneLine_notTheWholeUsage() {
        Result r = tailor("heart", "plan", "--format", "yaml");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--format", "yaml", "Try 'tailor heart plan --help'");
        assertThat(r.err().lines().count()).isLessThan(5);
    }

    @Test
    void version_onEverySubcommand_printsTheVersion() {
        assertThat(tailor("heart", "plan", "--version").out()).startsWith("tailor ");
        assertThat(tailor("heart", "--version").out()).startsWith("tailor ");
    }
}
