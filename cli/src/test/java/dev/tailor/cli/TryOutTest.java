package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tailor.heart.AtpmState;
import dev.tailor.heart.controller.Actuator;
import dev.tailor.heart.controller.ConfigFiles;
import dev.tailor.heart.controller.Controller;
import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.PrometheusClient;
import dev.tailor.heart.controller.StateStore;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller without a cluster (docs/controller.md, Try it without a cluster): the bundled
 * recording in examples/tryout, its metrics served by a real Prometheus that loaded them as the docs
 * say (promtool's backfill), the round run with the docs' own command line. And, without any
 * kubeconfig, the error that says no cluster is reachable and what to do. A real round on the same
 * cluster writes to the fabric8 mock API server (CRUD mode), loaded with the recording's objects.
 */
@EnableKubernetesMockClient(crud = true)
class TryOutTest {

    static KubernetesClient client;

    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path EXAMPLE = ROOT.resolve("examples/tryout");
    /** The recording's last instant: metrics.om covers 2026-01-01T00:00:00Z and the three minutes after. */
    private static final String AT = "2026-01-01T00:03:00Z";
    /** The command docs/controller.md gives, from the repository's root, with --prometheus added by the test. */
    private static final String DOCS_COMMAND = "tailor heart run --config examples/tryout/heart.yaml --once --dry-run"
            + " --cluster-from examples/tryout/cluster.yaml --at " + AT;

    private static PrometheusServer prometheus;

    @TempDir
    Path dir;

    /** A real Prometheus holding examples/tryout/metrics.om, started by the first test that needs it. */
    private static synchronized PrometheusServer prometheus() throws Exception {
        if (prometheus == null) {
            prometheus = PrometheusServer.start(
                    () -> "", new PrometheusServer.Options(Files.readString(EXAMPLE.resolve("metrics.om")), false));
        }
        return prometheus;
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    /** The docs' command with the example's paths under the repository root and this test's Prometheus. */
    private static String[] docsCommand(String clusterFile) throws Exception {
        List<String> args = new ArrayList<>();
        for (String word : DOCS_COMMAND.split(" ")) {
            args.add(word.startsWith("examples/") ? ROOT.resolve(word).toString() : word);
        }
        args.remove(0); // "tailor"
        if (clusterFile != null) {
            args.set(args.indexOf("--cluster-from") + 1, clusterFile);
        }
        args.addAll(List.of("--prometheus", prometheus().url().toString()));
        return args.toArray(String[]::new);
    }

    /** Without a Prometheus holding the recording, the help's last example fails: the help says so, and where to go. */
    @Test
    void runHelp_saysItsTryOutExampleNeedsPrometheusWithTheRecording_andPointsToTheSteps() throws Exception {
        PlanCommandTest.Result help = tailor("heart", "run", "--help");
        String text = help.out().replaceAll("\\s+", " ");
        assertThat(text)
                .contains("# without a cluster The last example needs no cluster but a Prometheus on 127.0.0.1:9090"
                        + " with the recording examples/tryout/metrics.om loaded: docs/controller.md, Try it without a"
                        + " cluster, has the steps.");
        assertThat(Files.readString(ROOT.resolve("docs/controller.md")))
                .contains("\n## Try it without a cluster\n")
                .contains("promtool tsdb create-blocks-from openmetrics examples/tryout/metrics.om")
                .contains("--web.listen-address=127.0.0.1:9090");
    }

    @Test
    void docsCommand_plansTheRecordedCluster_andPrintsThePlanAndTheRules() throws Exception {
        // The docs break the command over lines with "\\"; joined, it is this test's.
        assertThat(Files.readString(ROOT.resolve("docs/controller.md")).replaceAll(" \\\\\n *", " "))
                .contains(DOCS_COMMAND);

        PlanCommandTest.Result result = tailor(docsCommand(null));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err())
                .contains("cluster recorded in " + EXAMPLE.resolve("cluster.yaml")
                        + ": 3 node(s), 9 pod(s), 0 DestinationRule(s); left out: 2 Service object(s); a dry run")
                .contains("round 1 planned in")
                .contains(": 6 ready replicas, 2 call edges; 2 rule(s) would change");
        assertThat(result.out())
                .contains("HEART plan, round 1: 2 components, 6 ready replicas, 2 call edges")
                .contains("metrics at " + AT)
                .contains("create DestinationRule shop/tailor-heart-frontend-to-cart")
                .contains("create DestinationRule istio-system/tailor-heart-istio-ingressgateway-to-frontend");
        // w3 needs twice w1's CPU per request in the recording: every caller node sends it the least.
        Map<String, Map<String, Integer>> weights = weights(result.out());
        assertThat(weights).hasSize(6);
        weights.forEach((from, to) -> {
            assertThat(to.values().stream().mapToInt(Integer::intValue).sum())
                    .as(from)
                    .isEqualTo(100);
            assertThat(to.get("eu/eu-a/w3"))
                    .as(from)
                    .isLessThan(to.get("eu/eu-a/w2"))
                    .isLessThan(to.get("eu/eu-a/w1"));
        });
    }

    @Test
    void outputYaml_printsTheRulesARealRoundWrites_asDocumentsKubectlApplies() throws Exception {
        List<String> args = new ArrayList<>(List.of(docsCommand(null)));
        args.addAll(List.of("-o", "yaml"));

        PlanCommandTest.Result dry = tailor(args.toArray(String[]::new));

        assertThat(dry.exitCode()).as(dry.err()).isZero();
        // stdout is the YAML alone: the plan, the changes and the log lines are on stderr.
        assertThat(dry.out()).startsWith("---\n").doesNotContain("HEART plan").doesNotContain("tailor:");
        assertThat(dry.err())
                .contains("HEART plan, round 1: 2 components, 6 ready replicas, 2 call edges")
                .contains("create DestinationRule shop/tailor-heart-frontend-to-cart")
                .contains("2 DestinationRule(s) printed as YAML");
        List<JsonNode> printed = documents(dry.out());
        for (JsonNode rule : printed) {
            assertThat(rule.properties())
                    .extracting(Map.Entry::getKey)
                    .containsExactly("apiVersion", "kind", "metadata", "spec");
            assertThat(rule.get("metadata").properties())
                    .extracting(Map.Entry::getKey)
                    .containsExactly("name", "namespace", "labels");
        }
        // fabric8 reads them as kubectl's objects, with kind and namespace.
        Object objects = new KubernetesSerialization().unmarshal(dry.out());
        assertThat(objects).isInstanceOf(List.class);
        assertThat((List<?>) objects)
                .hasSize(2)
                .allSatisfy(o -> assertThat(((HasMetadata) o).getKind()).isEqualTo("DestinationRule"));

        // A real round (as tailor heart run --once makes it, state saved) on the recording's objects.
        KubernetesList recording = new KubernetesSerialization()
                .unmarshal(Files.readString(EXAMPLE.resolve("cluster.yaml")), KubernetesList.class);
        for (HasMetadata item : recording.getItems()) {
            client.resource(item).create();
        }
        ControllerConfig settings = ConfigFiles.read(EXAMPLE.resolve("heart.yaml"))
                .withPrometheusUrl(prometheus().url().toString());
        Controller controller = new Controller(
                settings,
                settings.planner().heartConfig(),
                PrometheusClient.of(settings.prometheus()),
                client,
                AtpmState.EMPTY,
                new StateStore(client, settings.kubernetes().stateConfigMap()),
                null);
        Controller.Round round = controller.round(java.time.Instant.parse(AT), false);
        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(round.applied()).isTrue();

        List<JsonNode> written =
                client.genericKubernetesResources(Actuator.DESTINATION_RULE).inAnyNamespace().list().getItems().stream()
                        .map(TryOutTest::asWritten)
                        .toList();
        assertThat(written).hasSize(2);
        assertThat(printed).containsExactlyInAnyOrderElementsOf(written);

        // Against that cluster, now holding the rules, a dry run prints them all again, unchanged ones too.
        List<String> live = new ArrayList<>(List.of(docsCommand(null)));
        int from = live.indexOf("--cluster-from");
        live.set(from, "--kubeconfig");
        live.set(
                from + 1,
                ControllerFiles.kubeconfig(dir, client.getMasterUrl().toString())
                        .toString());
        live.addAll(List.of("--output", "yaml"));
        PlanCommandTest.Result again = tailor(live.toArray(String[]::new));
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.err()).contains("0 rule(s) would change, 2 unchanged");
        assertThat(documents(again.out())).containsExactlyInAnyOrderElementsOf(written);
    }

    @Test
    void outputYaml_withoutOnceDryRun_exit2() throws Exception {
        PlanCommandTest.Result result =
                tailor("heart", "run", "--config", EXAMPLE.resolve("heart.yaml").toString(), "--once", "-o", "yaml");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .contains("--output: \"yaml\" prints the rules of one dry-run round and writes nothing (expected: with"
                        + " --once --dry-run, or --output diff)");
        assertThat(result.out()).isEmpty();
    }

    /** The YAML documents of {@code text}, as JSON trees. */
    private static List<JsonNode> documents(String text) throws Exception {
        try (var values = new YAMLMapper().readerFor(JsonNode.class).<JsonNode>readValues(text)) {
            return values.readAll();
        }
    }

    /** A rule as the API server holds it, reduced to what a manifest gives: no status, versions or uid. */
    private static JsonNode asWritten(GenericKubernetesResource rule) {
        ObjectMapper json = new ObjectMapper();
        JsonNode tree = json.valueToTree(rule);
        ObjectNode kept = json.createObjectNode();
        kept.set("apiVersion", tree.get("apiVersion"));
        kept.set("kind", tree.get("kind"));
        ObjectNode metadata = kept.putObject("metadata");
        for (String field : List.of("name", "namespace", "labels", "annotations")) {
            if (tree.path("metadata").has(field)) {
                metadata.set(field, tree.path("metadata").get(field));
            }
        }
        kept.set("spec", tree.get("spec"));
        return kept;
    }

    /** {@code rule from} → {@code to} → weight, read from the printed rules line by line. */
    private static Map<String, Map<String, Integer>> weights(String out) {
        Map<String, Map<String, Integer>> weights = new TreeMap<>();
        Pattern weight = Pattern.compile("\\+ +(eu/eu-a/w\\d): (\\d+)");
        String rule = "";
        Map<String, Integer> to = null;
        for (String line : out.lines().toList()) {
            Matcher m = weight.matcher(line.strip());
            if (line.startsWith("create DestinationRule ")) {
                rule = line.substring("create DestinationRule ".length());
            } else if (line.contains("- from: ")) {
                to = new TreeMap<>();
                weights.put(rule + " " + line.substring(line.indexOf("- from: ") + 8), to);
            } else if (to != null && m.matches()) {
                to.put(m.group(1), Integer.parseInt(m.group(2)));
            }
        }
        return weights;
    }

    @Test
    void recordedRules_theDiffIsAgainstTheRulesTailorOwns() throws Exception {
        String cluster = Files.readString(EXAMPLE.resolve("cluster.yaml")) + """
                - apiVersion: networking.istio.io/v1
                  kind: DestinationRule
                  metadata:
                    name: tailor-heart-checkout-to-cart
                    namespace: shop
                    labels: {app.kubernetes.io/managed-by: tailor-heart}
                  spec: {host: cart.shop.svc.cluster.local}
                - apiVersion: networking.istio.io/v1
                  kind: DestinationRule
                  metadata: {name: theirs, namespace: shop}
                  spec: {host: cart.shop.svc.cluster.local}
                """;
        Path file = Files.writeString(dir.resolve("cluster.yaml"), cluster);

        PlanCommandTest.Result result = tailor(docsCommand(file.toString()));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("2 DestinationRule(s)").contains("3 rule(s) would change");
        assertThat(result.out())
                .contains("delete DestinationRule shop/tailor-heart-checkout-to-cart")
                .doesNotContain("theirs");

        List<String> yaml = new ArrayList<>(List.of(docsCommand(file.toString())));
        yaml.addAll(List.of("-o", "yaml"));
        PlanCommandTest.Result printed = tailor(yaml.toArray(String[]::new));
        assertThat(printed.exitCode()).as(printed.err()).isZero();
        assertThat(printed.err())
                .contains("kubectl apply -f does not delete: the round would also delete"
                        + " shop/tailor-heart-checkout-to-cart"
                        + " (kubectl delete destinationrule -n shop tailor-heart-checkout-to-cart)");
    }

    @Test
    void recordedRulesAsTheRoundWantsThem_keysInTheApiServersOrder_unchanged() throws Exception {
        List<String> args = new ArrayList<>(List.of(docsCommand(null)));
        args.addAll(List.of("-o", "yaml"));
        PlanCommandTest.Result dry = tailor(args.toArray(String[]::new));
        assertThat(dry.exitCode()).as(dry.err()).isZero();
        // The API server and kubectl get -o yaml return a custom resource's keys sorted.
        YAMLMapper yaml = new YAMLMapper();
        ObjectNode cluster =
                (ObjectNode) yaml.readTree(EXAMPLE.resolve("cluster.yaml").toFile());
        for (JsonNode rule : documents(dry.out())) {
            cluster.withArray("items").add(keysSorted(rule));
        }
        Path file = Files.writeString(dir.resolve("cluster.yaml"), yaml.writeValueAsString(cluster));

        PlanCommandTest.Result result = tailor(docsCommand(file.toString()));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("2 DestinationRule(s)").contains("0 rule(s) would change, 2 unchanged");
    }

    private static JsonNode keysSorted(JsonNode node) {
        if (node.isObject()) {
            ObjectNode sorted = new ObjectMapper().createObjectNode();
            Map<String, JsonNode> fields = new TreeMap<>();
            node.properties().forEach(field -> fields.put(field.getKey(), keysSorted(field.getValue())));
            sorted.setAll(fields);
            return sorted;
        }
        if (node.isArray()) {
            var array = new ObjectMapper().createArrayNode();
            node.forEach(element -> array.add(keysSorted(element)));
            return array;
        }
        return node;
    }

    @Test
    void nodeWithoutSubzone_theNoteNamesTheNodeAndTheFix() throws Exception {
        String cluster =
                Files.readString(EXAMPLE.resolve("cluster.yaml")).replace("      topology.istio.io/subzone: w3\n", "");
        Path file = Files.writeString(dir.resolve("cluster.yaml"), cluster);

        PlanCommandTest.Result result = tailor(docsCommand(file.toString()));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).contains("note: ").contains("kubectl label node w3 topology.istio.io/subzone=");
        // The zone's nodes are written as one locality Istio can match, never as eu/eu-a/w3.
        assertThat(result.out()).contains("from: eu/eu-a\n").doesNotContain("eu/eu-a/w3");
    }

    @Test
    void metricsFile_isTheTestClusterRecordedEvery15s() throws Exception {
        // Reproducible: the bundled recording is ShopCluster's series over three minutes from AT - 180 s.
        String expected = ShopCluster.history(
                java.time.Instant.parse(AT).getEpochSecond() - 180,
                180,
                15,
                (node, t) -> ShopCluster.CPU_PER_REQUEST.get(node));
        assertThat(Files.readString(EXAMPLE.resolve("metrics.om"))).isEqualTo(expected);
    }

    @Test
    void replicaNotReady_theLogAndThePlanCountTheReadyReplicasAlike() throws Exception {
        String recorded = Files.readString(EXAMPLE.resolve("cluster.yaml"));
        int pod = recorded.indexOf("name: cart-w3");
        int ready = recorded.indexOf("{type: Ready, status: \"True\"}", pod);
        assertThat(pod).isPositive();
        assertThat(ready).isPositive();
        String readyTrue = "{type: Ready, status: \"True\"}";
        Path cluster = Files.writeString(
                dir.resolve("cluster.yaml"),
                recorded.substring(0, ready) + "{type: Ready, status: \"False\"}"
                        + recorded.substring(ready + readyTrue.length()));

        PlanCommandTest.Result result = tailor(docsCommand(cluster.toString()));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out()).contains("HEART plan, round 1: 2 components, 5 ready replicas, 2 call edges");
        assertThat(result.err())
                .contains("round 1 planned in")
                .contains(": 5 ready replicas (6 in all), 2 call" + " edges;");
    }

    @Test
    void clusterFrom_misused_exit2SayingWhatToDo() throws Exception {
        String cluster = EXAMPLE.resolve("cluster.yaml").toString();
        PlanCommandTest.Result writing = tailor("heart", "run", "--cluster-from", cluster, "--once");
        assertThat(writing.exitCode()).isEqualTo(2);
        assertThat(writing.err()).contains("--cluster-from plans one round and writes nothing: add --once --dry-run");

        PlanCommandTest.Result both = tailor(
                "heart",
                "run",
                "--cluster-from",
                cluster,
                "--kubeconfig",
                dir.resolve("kubeconfig").toString(),
                "--once",
                "--dry-run");
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err()).contains("--cluster-from and --kubeconfig: give one of them");

        PlanCommandTest.Result missing = tailor(
                "heart", "run", "--cluster-from", dir.resolve("none.yaml").toString(), "--once", "--dry-run");
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("--cluster-from: " + dir.resolve("none.yaml") + ": no such file");

        PlanCommandTest.Result badTime =
                tailor("heart", "run", "--cluster-from", cluster, "--once", "--dry-run", "--at", "yesterday");
        assertThat(badTime.exitCode()).isEqualTo(2);
        assertThat(badTime.err()).contains("--at: \"yesterday\" (expected: an instant in RFC 3339");

        PlanCommandTest.Result config = tailor(
                "heart", "run", "--cluster-from", EXAMPLE.resolve("heart.yaml").toString(), "--once", "--dry-run");
        assertThat(config.exitCode()).isEqualTo(2);
        assertThat(config.err())
                .contains("--cluster-from: " + EXAMPLE.resolve("heart.yaml") + ": not Kubernetes"
                        + " objects (found a mapping with the keys prometheus, kubernetes and no apiVersion or kind);"
                        + " expected Kubernetes objects with apiVersion and kind, as kubectl get nodes,pods,destinationrules"
                        + " -A -o yaml prints them")
                .doesNotContain("RawExtension");

        PlanCommandTest.Result future = tailor(
                "heart", "run", "--cluster-from", cluster, "--once", "--dry-run", "--at", "2999-01-01T00:00:00Z");
        assertThat(future.exitCode()).isEqualTo(2);
        assertThat(future.err())
                .contains(
                        "--at: \"2999-01-01T00:00:00Z\" is after now (",
                        "(expected: the past" + " instant the metrics were recorded at");
    }

    @Test
    void docsCommandWithoutAt_noMetricsNow_saysNothingWasAppliedAndToPassAt() throws Exception {
        List<String> args = new ArrayList<>(List.of(docsCommand(null)));
        int at = args.indexOf("--at");
        args.remove(at + 1);
        args.remove(at);

        PlanCommandTest.Result result = tailor(args.toArray(String[]::new));

        assertThat(result.exitCode()).isEqualTo(1);
        List<String> lines = result.err().lines().toList();
        assertThat(lines.get(lines.size() - 1))
                .contains("round failed (component_without_metrics): no CPU or"
                        + " request metrics for any replica of [cart, frontend]; dry run: nothing applied; the metrics of a"
                        + " recording are in the past: pass --at TIME (the recording's time");
        assertThat(result.err()).doesNotContain("already applied").doesNotContain("last applied plan");
        assertThat(result.out()).doesNotContain("DestinationRule");
    }

    /** What a child JVM's {@code tailor heart run --once --dry-run} ended with. */
    private record Child(int exitCode, String err) {}

    /**
     * Runs {@code tailor heart run --once --dry-run} against a Prometheus that does not answer, in a child JVM
     * with {@code jvmOptions} and its environment changed by {@code environment}: the only way to set a
     * process's environment variables.
     */
    private Child dryRunInChildJvm(
            List<String> jvmOptions, java.util.function.Consumer<Map<String, String>> environment) throws Exception {
        Path config = ControllerFiles.config(dir, "http://127.0.0.1:1");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                "dev.tailor.cli.Tailor",
                "heart",
                "run",
                "--config",
                config.toString(),
                "--once",
                "--dry-run"));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("out").toFile())
                .redirectError(dir.resolve("err").toFile());
        environment.accept(builder.environment());
        Process process = builder.start();
        try {
            assertThat(process.waitFor(120, TimeUnit.SECONDS))
                    .as("tailor heart run ended")
                    .isTrue();
        } finally {
            process.destroyForcibly();
        }
        return new Child(process.exitValue(), Files.readString(dir.resolve("err")));
    }

    @Test
    void docsCommandAtATimeBeforeTheRecording_saysToPassATimeWithinIt() throws Exception {
        List<String> args = new ArrayList<>(List.of(docsCommand(null)));
        args.set(args.indexOf("--at") + 1, "2025-06-01T00:00:00Z");

        PlanCommandTest.Result result = tailor(args.toArray(String[]::new));

        assertThat(result.exitCode()).isEqualTo(1);
        List<String> lines = result.err().lines().toList();
        assertThat(lines.get(lines.size() - 1))
                .contains("round failed (component_without_metrics)")
                .contains("; Prometheus has no series of these pods at --at 2025-06-01T00:00:00Z: pass a time within"
                        + " the recording (at least prometheus.windowSeconds after its start)")
                .doesNotContain("pass --at TIME");
    }

    @Test
    void kubeconfigEnvNamingNoFile_saysSoAsForTheOption() throws Exception {
        // A child JVM, so that its KUBECONFIG can be set.
        Path absent = dir.resolve("nonexistent");
        Child child = dryRunInChildJvm(List.of(), env -> env.put("KUBECONFIG", absent.toString()));
        String err = child.err();

        assertThat(child.exitCode()).as(err).isEqualTo(2);
        assertThat(err)
                .contains("KUBECONFIG: " + absent + ": cannot use it (no such file)")
                .doesNotContain("kubernetes.default.svc")
                .doesNotContain("current context");
    }

    @Test
    void noKubeconfig_noCluster_saysNoClusterReachable_andWhatToDo() throws Exception {
        // A child JVM, so that its environment has no KUBECONFIG, a home without ~/.kube/config, and no
        // in-cluster service: the client then tries its default address, which does not answer here.
        Path home = Files.createDirectories(dir.resolve("home"));
        Child child = dryRunInChildJvm(List.of("-Duser.home=" + home), env -> {
            env.remove("KUBECONFIG");
            env.remove("KUBERNETES_SERVICE_HOST");
            env.remove("KUBERNETES_SERVICE_PORT");
            env.put("HOME", home.toString());
        });
        String err = child.err();

        assertThat(child.exitCode()).as(err).isEqualTo(1);
        List<String> lines = err.lines().toList();
        assertThat(lines.get(0)).contains("tailor: cluster https://kubernetes.default.svc/ (no kubeconfig");
        assertThat(lines.get(lines.size() - 1))
                .contains("ERROR tailor: no cluster reachable: https://kubernetes.default.svc/: ")
                .contains("no kubeconfig was found (no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a pod):"
                        + " point KUBECONFIG or --kubeconfig at your cluster's")
                .contains("to try the controller without a cluster, --cluster-from FILE");
        assertThat(err).doesNotContain("\tat ").doesNotContain("cannot read the ATPM state");
    }
}
