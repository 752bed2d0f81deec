package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import dev.tailor.testkit.Tools;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
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
 * deploy/helm/tailor-heart: rendered by Helm's own template engine (helm-java runs Helm's library),
 * every manifest read strictly into the Kubernetes model (a field the API server does not know, or
 * one of the wrong type, fails), the prometheus-operator objects into the fields of their
 * monitoring.coreos.com/v1 schema (our reading) and their rules through promtool; and the install
 * pitfalls other controllers' charts hit.
 */
class HelmChartTest {

    private static final Path CHART =
            Path.of(System.getProperty("tailor.projectDir", "..")).resolve("deploy/helm/tailor-heart");
    private static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final KubernetesSerialization KUBERNETES = new KubernetesSerialization();

    /** The Kubernetes kinds the chart may render, with the model class each must read into. */
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
            "ServiceAccount",
            ServiceAccount.class,
            "ClusterRole",
            ClusterRole.class,
            "ClusterRoleBinding",
            ClusterRoleBinding.class,
            "Role",
            Role.class,
            "RoleBinding",
            RoleBinding.class,
            "ConfigMap",
            ConfigMap.class,
            "Deployment",
            Deployment.class,
            "Service",
            Service.class,
            "PodDisruptionBudget",
            PodDisruptionBudget.class);

    private static List<JsonNode> render(String namespace, Map<String, Object> values) throws Exception {
        TemplateCommand template = new Helm(CHART)
                .template()
                .withName("tailor")
                .withNamespace(namespace)
                .withKubeVersion("1.31.0");
        values.forEach(template::set);
        String yaml = template.call();
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(yaml)) {
            while (it.hasNext()) {
                JsonNode document = it.next();
                if (document != null && !document.isNull() && !document.isEmpty()) {
                    documents.add(document);
                }
            }
        }
        return documents;
    }

    private static List<JsonNode> all(List<JsonNode> documents, String kind) {
        return documents.stream()
                .filter(d -> d.path("kind").asText().equals(kind))
                .toList();
    }

    private static <T extends HasMetadata> T only(List<JsonNode> documents, Class<T> type) {
        List<JsonNode> found = all(documents, HasMetadata.getKind(type));
        assertThat(found).as(HasMetadata.getKind(type)).hasSize(1);
        return read(found.get(0), type);
    }

    /** The manifest as the Kubernetes model reads it (fabric8's own mapper, from the manifest's text). */
    private static <T extends HasMetadata> T read(JsonNode document, Class<T> type) {
        try {
            return KUBERNETES.unmarshal(JSON.writeValueAsString(document), type);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * heart.yaml parsed as the controller in the pod parses it: the files the pod has mounted under
     * /etc/tailor/prometheus (Secrets) are made under {@code mounts} instead, and the paths moved there.
     */
    private static ControllerConfig parseAsInThePod(String yaml, Path mounts) throws java.io.IOException {
        Matcher file =
                Pattern.compile("/etc/tailor/prometheus/[A-Za-z0-9._/-]+").matcher(yaml);
        while (file.find()) {
            Path local = mounts.resolve(file.group().substring(1));
            Files.createDirectories(local.getParent());
            Files.writeString(local, "secret\n");
        }
        return ConfigFiles.parse(
                yaml.replace("/etc/tailor/prometheus/", mounts + "/etc/tailor/prometheus/"), "the chart's ConfigMap");
    }

    /** Every value the chart can switch on, so that each template renders in the validation. */
    private static Map<String, Object> everything() {
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("serviceMonitor.enabled", true);
        values.put("prometheusRule.enabled", true);
        values.put("grafanaDashboard.enabled", true);
        values.put("prometheus.url", "https://prometheus.monitoring:9090");
        values.put("prometheus.bearerToken.secretName", "prometheus-token");
        values.put("prometheus.tls.caSecretName", "prometheus-ca");
        values.put("prometheus.headers.X-Scope-OrgID", "tenant-1");
        values.put("config.roundSeconds", 20);
        return values;
    }

    @Test
    void lint_strict_passes() {
        LintResult lint = new Helm(CHART).lint().strict().call();
        assertThat(lint.isFailed()).as(String.join("\n", lint.getMessages())).isFalse();
    }

    @Test
    void everyManifest_readsStrictlyIntoItsSchema_withDefaultsAndWithEverythingOn(@TempDir Path mounts)
            throws Exception {
        for (Map<String, Object> values : List.of(Map.<String, Object>of(), everything())) {
            List<JsonNode> documents = render("tailor-system", values);
            assertThat(documents).isNotEmpty();
            for (JsonNode document : documents) {
                String kind = document.path("kind").asText();
                String where =
                        kind + " " + document.path("metadata").path("name").asText() + " (values " + values + ")";
                if (kind.equals("ServiceMonitor") || kind.equals("PrometheusRule")) {
                    assertThat(document.path("apiVersion").asText()).as(where).isEqualTo("monitoring.coreos.com/v1");
                    Class<?> type = kind.equals("ServiceMonitor")
                            ? Monitoring.ServiceMonitor.class
                            : Monitoring.PrometheusRule.class;
                    Monitoring.STRICT.treeToValue(document, type); // throws on an unknown field
                    continue;
                }
                Class<? extends HasMetadata> type = KINDS.get(kind);
                assertThat(type)
                        .as("a kind the chart should not render: " + where)
                        .isNotNull();
                assertThat(document.path("apiVersion").asText()).as(where).isEqualTo(HasMetadata.getApiVersion(type));
                HasMetadata object = read(document, type);
                List<String> unknown = new ArrayList<>();
                unknownFields(object, kind, unknown, new IdentityHashMap<>());
                assertThat(unknown)
                        .as("fields the Kubernetes API does not know, in " + where)
                        .isEmpty();
                // Written back, the object says what the manifest says: no field lost or read as another.
                assertThat(JSON.readTree(KUBERNETES.asJson(object)))
                        .as(where)
                        .isEqualTo(JSON.readTree(JSON.writeValueAsString(document)));
            }
            // The controller's own config parser is strict too: unknown fields and bad values are errors.
            ConfigMap config = only(
                    documents.stream()
                            .filter(d ->
                                    !d.path("metadata").path("name").asText().endsWith("-dashboard"))
                            .toList(),
                    ConfigMap.class);
            parseAsInThePod(config.getData().get("heart.yaml"), mounts);
        }
    }

    @Test
    void validation_findsAFieldKubernetesDoesNotKnow_deepInTheDeployment() throws Exception {
        // The check above must be able to fail: a misspelt affinity field (passed through toYaml)
        // reads into fabric8's model without error, and the walk finds it.
        List<JsonNode> documents = render("tailor-system", Map.of("affinity.nodeAfinity.weight", 1));
        Deployment deployment = only(documents, Deployment.class);
        List<String> unknown = new ArrayList<>();
        unknownFields(deployment, "Deployment", unknown, new IdentityHashMap<>());
        assertThat(unknown).singleElement().asString().endsWith(".Affinity.nodeAfinity");
    }

    /**
     * Collects the paths of fields the model did not know: fabric8 keeps them in each object's
     * {@code additionalProperties} instead of failing, so every object in the tree is asked.
     */
    private static void unknownFields(Object object, String path, List<String> unknown, Map<Object, Boolean> seen)
            throws Exception {
        if (object == null || seen.put(object, true) != null) {
            return;
        }
        if (object instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                unknownFields(item, path + "[" + i++ + "]", unknown, seen);
            }
            return;
        }
        if (object instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                unknownFields(e.getValue(), path + "." + e.getKey(), unknown, seen);
            }
            return;
        }
        if (!object.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method method : object.getClass().getMethods()) {
            if (method.getParameterCount() != 0
                    || Modifier.isStatic(method.getModifiers())
                    || !method.getName().startsWith("get")
                    || method.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value = method.invoke(object);
            if (method.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    extra.keySet().forEach(k -> unknown.add(path + "." + k));
                }
                continue;
            }
            unknownFields(value, path + "." + method.getName().substring(3), unknown, seen);
        }
    }

    @Test
    void leaseAndItsRole_followTheReleaseNamespaceAndTheConfiguredLease() throws Exception {
        // Charts elsewhere looped on "leases ... forbidden" when the Lease moved and the Role did not.
        List<JsonNode> documents =
                render("ops", Map.of("leaderElection.lease", "heart-leader", "stateConfigMap", "heart-state"));
        ControllerConfig config = ConfigFiles.parse(
                only(documents, ConfigMap.class).getData().get("heart.yaml"), "the chart's ConfigMap");
        assertThat(config.kubernetes().lease()).isEqualTo("ops/heart-leader");
        assertThat(config.kubernetes().stateConfigMap()).isEqualTo("ops/heart-state");
        Role role = only(documents, Role.class);
        assertThat(role.getMetadata().getNamespace()).isEqualTo("ops");
        assertThat(role.getRules())
                .filteredOn(r -> r.getResources().contains("leases"))
                .flatExtracting(PolicyRule::getResourceNames)
                .containsExactly("heart-leader");
        RoleBinding binding = only(documents, RoleBinding.class);
        assertThat(binding.getMetadata().getNamespace()).isEqualTo("ops");
        assertThat(binding.getSubjects().get(0).getNamespace()).isEqualTo("ops");
        assertThat(only(documents, ServiceAccount.class).getMetadata().getNamespace())
                .isEqualTo("ops");

        // Every permission the preflight asks about, for this config, is granted by the rendered roles.
        ClusterRole clusterRole = only(documents, ClusterRole.class);
        List<Preflight.Permission> needed = new Preflight(null, null, config).permissions();
        assertThat(needed).hasSizeGreaterThan(10);
        assertThat(needed)
                .allSatisfy(p -> assertThat(clusterRole.getRules().stream().anyMatch(r -> grants(r, p))
                                || (p.namespace().equals(role.getMetadata().getNamespace())
                                        && role.getRules().stream().anyMatch(r -> grants(r, p))))
                        .as(p.toString())
                        .isTrue());
    }

    /** Whether {@code rule} grants {@code p}; in RBAC, a rule with resourceNames grants named requests only. */
    private static boolean grants(PolicyRule rule, Preflight.Permission p) {
        boolean named =
                rule.getResourceNames() != null && !rule.getResourceNames().isEmpty();
        return rule.getApiGroups().contains(p.group())
                && rule.getResources().contains(p.resource())
                && rule.getVerbs().contains(p.verb())
                && (!named || (!p.name().isEmpty() && rule.getResourceNames().contains(p.name())));
    }

    @Test
    void oneReplica_rendersNoDisruptionBudget_twoAllowOneEviction() throws Exception {
        // With one replica any budget (minAvailable 1, maxUnavailable 0) blocks `kubectl drain`.
        List<JsonNode> one = render("tailor-system", Map.of("replicas", 1));
        assertThat(all(one, "PodDisruptionBudget")).isEmpty();
        assertThat(only(one, Deployment.class).getSpec().getReplicas()).isEqualTo(1);

        List<JsonNode> two = render("tailor-system", Map.of());
        PodDisruptionBudget budget = only(two, PodDisruptionBudget.class);
        assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(budget.getSpec().getMinAvailable()).isNull();
        assertThat(budget.getSpec().getSelector().getMatchLabels())
                .isEqualTo(only(two, Deployment.class).getSpec().getSelector().getMatchLabels());
    }

    @Test
    void serviceMonitorAndRule_carryTheLabelKubePrometheusStackSelects() throws Exception {
        assertThat(all(render("tailor-system", Map.of()), "ServiceMonitor")).isEmpty();
        for (String release : List.of("kube-prometheus-stack", "monitoring")) {
            Map<String, Object> values = new LinkedHashMap<>(everything());
            if (!release.equals("kube-prometheus-stack")) { // the default
                values.put("serviceMonitor.labels.release", release);
                values.put("prometheusRule.labels.release", release);
            }
            List<JsonNode> documents = render("tailor-system", values);
            for (String kind : List.of("ServiceMonitor", "PrometheusRule")) {
                assertThat(all(documents, kind)).hasSize(1);
                assertThat(all(documents, kind)
                                .get(0)
                                .path("metadata")
                                .path("labels")
                                .path("release")
                                .asText())
                        .as(kind)
                        .isEqualTo(release);
            }
            // The ServiceMonitor selects the metrics Service by its labels and port name.
            JsonNode monitor = all(documents, "ServiceMonitor").get(0);
            Service service = only(documents, Service.class);
            Map<String, String> selector = JSON.convertValue(
                    monitor.path("spec").path("selector").path("matchLabels"),
                    JSON.getTypeFactory().constructMapType(Map.class, String.class, String.class));
            assertThat(service.getMetadata().getLabels()).containsAllEntriesOf(selector);
            assertThat(service.getSpec().getPorts())
                    .extracting(p -> p.getName())
                    .contains(monitor.path("spec")
                            .path("endpoints")
                            .path(0)
                            .path("port")
                            .asText());
        }
    }

    @Test
    void prometheusAuth_mountsTheSecretsWhereTheConfigReadsThem(@TempDir Path local) throws Exception {
        Map<String, Object> values = new LinkedHashMap<>(everything());
        values.put("prometheus.url", "https://mimir.example:8080/prometheus");
        values.put("prometheus.bearerToken.secretName", "");
        values.put("prometheus.basicAuth.username", "tailor");
        values.put("prometheus.basicAuth.passwordSecretName", "prometheus-password");
        List<JsonNode> documents = render("tailor-system", values);
        ControllerConfig config = parseAsInThePod(
                documents.stream()
                        .filter(d -> d.path("metadata").path("name").asText().endsWith("-config"))
                        .findFirst()
                        .orElseThrow()
                        .path("data")
                        .path("heart.yaml")
                        .asText(),
                local);
        Deployment deployment = only(documents, Deployment.class);
        var container =
                deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, String> mounts = new LinkedHashMap<>();
        container.getVolumeMounts().forEach(m -> mounts.put(m.getMountPath(), m.getName()));
        Map<String, String> secrets = new LinkedHashMap<>();
        deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getSecret() != null)
                .forEach(v -> secrets.put(v.getName(), v.getSecret().getSecretName()));

        String passwordFile = config.prometheus()
                .basicAuth()
                .passwordFile()
                .substring(local.toString().length());
        String caFile =
                config.prometheus().tls().caFile().substring(local.toString().length());
        assertThat(secrets.get(mounts.get(Path.of(passwordFile).getParent().toString())))
                .isEqualTo("prometheus-password");
        assertThat(secrets.get(mounts.get(Path.of(caFile).getParent().toString())))
                .isEqualTo("prometheus-ca");
        assertThat(config.prometheus().headers()).containsEntry("X-Scope-OrgID", "tenant-1");
        assertThat(container.getArgs()).containsSequence("--log-format", "json");
    }

    @Test
    void alertsAndDashboard_useTheControllersMetricNames_andPromtoolAcceptsTheRules(@TempDir Path dir)
            throws Exception {
        Set<String> exported = exportedMetricNames();
        List<JsonNode> documents = render("tailor-system", everything());
        JsonNode rule = all(documents, "PrometheusRule").get(0);
        List<String> expressions = new ArrayList<>();
        rule.path("spec")
                .path("groups")
                .forEach(g -> g.path("rules")
                        .forEach(r -> expressions.add(r.path("expr").asText())));
        assertThat(rule.path("spec").path("groups").path(0).path("rules"))
                .extracting(r -> r.path("alert").asText())
                .contains(
                        "TailorHeartPlanStale",
                        "TailorHeartRoundsFailing",
                        "TailorHeartRulesNotMatching",
                        "TailorHeartLeaseFlapping",
                        "TailorHeartPodWatchDown");
        JsonNode dashboard = JSON.readTree(Files.readString(CHART.resolve("dashboards/tailor-heart.json")));
        List<String> panels = new ArrayList<>();
        dashboard.path("panels").forEach(p -> {
            panels.add(p.path("title").asText());
            p.path("targets").forEach(t -> expressions.add(t.path("expr").asText()));
        });
        assertThat(panels)
                .anyMatch(t -> t.startsWith("Rounds"))
                .anyMatch(t -> t.startsWith("Failed rounds"))
                .anyMatch(t -> t.startsWith("Planning time"))
                .anyMatch(t -> t.startsWith("Route shares"))
                .anyMatch(t -> t.startsWith("Links pruned"));
        // The dashboard the chart ships in its ConfigMap is the file.
        JsonNode shipped = all(documents, "ConfigMap").stream()
                .filter(d -> d.path("metadata").path("name").asText().endsWith("-dashboard"))
                .findFirst()
                .orElseThrow();
        assertThat(JSON.readTree(shipped.path("data").path("tailor-heart.json").asText()))
                .isEqualTo(dashboard);
        assertThat(shipped.path("metadata")
                        .path("labels")
                        .path("grafana_dashboard")
                        .asText())
                .isEqualTo("1");

        Pattern metric = Pattern.compile("\\btailor_heart_[a-z_]+");
        Set<String> used = new TreeSet<>();
        for (String expression : expressions) {
            Matcher m = metric.matcher(expression);
            while (m.find()) {
                used.add(m.group());
            }
        }
        assertThat(used).hasSizeGreaterThan(8);
        assertThat(exported).containsAll(used);

        Path promtool = Tools.require("promtool", "prometheus");
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, YAML.writeValueAsString(rule.path("spec")));
        Process process = new ProcessBuilder(promtool.toString(), "check", "rules", rules.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("SUCCESS: 6 rules found");
    }

    /**
     * The series names the controller's /metrics can export: every metric its registry holds, with or
     * without samples yet (histograms with _bucket, _sum and _count, counters with _total).
     */
    private static Set<String> exportedMetricNames() throws Exception {
        java.lang.reflect.Field field = ControllerMetrics.class.getDeclaredField("registry");
        field.setAccessible(true);
        var registry =
                (io.prometheus.metrics.model.registry.PrometheusRegistry) field.get(new ControllerMetrics(() -> 1_000));
        Set<String> names = new TreeSet<>();
        for (var snapshot : registry.scrape()) {
            String name = snapshot.getMetadata().getPrometheusName();
            if (snapshot instanceof io.prometheus.metrics.model.snapshots.HistogramSnapshot) {
                names.addAll(List.of(name + "_bucket", name + "_sum", name + "_count"));
            } else if (snapshot instanceof io.prometheus.metrics.model.snapshots.CounterSnapshot) {
                names.add(name + "_total");
            } else {
                names.add(name);
            }
        }
        return names;
    }

    /**
     * The fields of prometheus-operator's monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule
     * that the chart may set (our reading of their CRDs), read with unknown fields failing.
     */
    static final class Monitoring {
        static final ObjectMapper STRICT = JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .build();

        record Metadata(String name, String namespace, Map<String, String> labels, Map<String, String> annotations) {}

        record LabelSelector(Map<String, String> matchLabels) {}

        record NamespaceSelector(List<String> matchNames, Boolean any) {}

        record Endpoint(String port, String path, String interval, String scrapeTimeout, String scheme) {}

        record ServiceMonitorSpec(
                LabelSelector selector,
                NamespaceSelector namespaceSelector,
                List<Endpoint> endpoints,
                String jobLabel) {}

        record ServiceMonitor(String apiVersion, String kind, Metadata metadata, ServiceMonitorSpec spec) {}

        record Rule(
                String alert,
                String record,
                String expr,
                String keep_firing_for,

                @com.fasterxml.jackson.annotation.JsonProperty("for")
                String forDuration,

                Map<String, String> labels,
                Map<String, String> annotations) {}

        record RuleGroup(String name, String interval, List<Rule> rules) {}

        record PrometheusRuleSpec(List<RuleGroup> groups) {}

        record PrometheusRule(String apiVersion, String kind, Metadata metadata, PrometheusRuleSpec spec) {}

        private Monitoring() {}
    }
}
