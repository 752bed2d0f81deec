package dev.tailor.heart.controller;

import dev.tailor.heart.controller.PrometheusClient.InstantVector;
import dev.tailor.heart.controller.PrometheusClient.PrometheusException;
import dev.tailor.heart.controller.PrometheusClient.Series;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the controller needs from the cluster, checked before it is installed ({@code tailor heart
 * check}) and when it starts: the API server answers; this identity may do what a round does
 * (SelfSubjectAccessReview per verb and resource); Istio serves {@code networking.istio.io/v1}
 * DestinationRules (Istio 1.22 and later); the application's pods carry the Istio sidecar; every
 * node has the locality labels Istio reads ({@code topology.kubernetes.io/region} and {@code zone},
 * {@code topology.istio.io/subzone}), with the {@code kubectl label} commands that add them;
 * Prometheus answers each configured query with data; the delay exporter (kubenurse) runs.
 *
 * <p>Each check ends {@link Status#OK}, {@link Status#WARN} (rounds work, but less well, or the
 * check could not tell) or {@link Status#FAIL} (rounds fail, or write rules that do nothing). When
 * the API server cannot be reached, the Kubernetes checks are not run: the first says so, as
 * {@code no cluster reachable: ...}. Reads only; never writes to the cluster (a
 * SelfSubjectAccessReview is not stored).
 *
 * <p>Not thread-safe; one {@link #run} at a time.
 */
public final class Preflight {

    /** A check's outcome. */
    public enum Status {
        OK,
        WARN,
        FAIL;

        /** {@code ok}, {@code warn} or {@code fail}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One check.
     *
     * @param name    short and stable, e.g. {@code node-localities}
     * @param status  its outcome
     * @param message one line: what was found
     * @param fixes   commands or steps that fix a warning or a failure, one per line (may be empty)
     */
    public record Check(String name, Status status, String message, List<String> fixes) {
        public Check {
            fixes = List.copyOf(fixes);
        }

        static Check ok(String name, String message) {
            return new Check(name, Status.OK, message, List.of());
        }
    }

    /** The lowest Istio minor version that serves {@code networking.istio.io/v1} DestinationRules. */
    static final int MIN_ISTIO_MINOR = 22;
    /** Istio's DestinationRule CRD. */
    static final String DESTINATION_RULE_CRD = "destinationrules.networking.istio.io";
    /** The container Istio injects; a native sidecar (Istio 1.19 and later) is an init container of that name. */
    static final String SIDECAR = "istio-proxy";
    /** How many names a line lists before it says "and N more". */
    private static final int NAMES_SHOWN = 5;

    private static final Pattern VERSION = Pattern.compile(":(\\d+)\\.(\\d+)(?:\\.(\\d+))?");

    private final KubernetesClient kubernetes;
    private final PrometheusClient prometheus;
    private final ControllerConfig config;
    /** The application's and the entry points' pods found by the sidecar check (for later checks). */
    private final List<Pod> pods = new ArrayList<>();

    private final Map<String, Map<String, String>> nodeLabels = new TreeMap<>();
    private int delaySeries = -1;
    private boolean noKubeconfig;

    /**
     * @param kubernetes the cluster's client (its identity is the one whose permissions are checked)
     * @param prometheus the configured Prometheus
     * @param config     the controller's configuration (namespaces, entry points, queries, Lease, state)
     */
    public Preflight(KubernetesClient kubernetes, PrometheusClient prometheus, ControllerConfig config) {
        this.kubernetes = kubernetes;
        this.prometheus = prometheus;
        this.config = config;
    }

    /**
     * Says that the client found no kubeconfig at all (no {@code --kubeconfig}, {@code KUBECONFIG} or
     * {@code ~/.kube/config}, and not in a pod), so an unreachable API server's fix names the
     * kubeconfig to provide rather than a context to check.
     */
    public Preflight noKubeconfig(boolean none) {
        this.noKubeconfig = none;
        return this;
    }

    /** The fix for an API server that does not answer. */
    private String unreachableFix() {
        return noKubeconfig
                ? "no kubeconfig was found (no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a pod): point"
                        + " KUBECONFIG or --kubeconfig at your cluster's; the Kubernetes checks were not run"
                : "check the kubeconfig's current context (kubectl config current-context) or --kubeconfig; the"
                        + " Kubernetes checks were not run";
    }

    /** Whether some check failed. */
    public static boolean failed(List<Check> checks) {
        return checks.stream().anyMatch(c -> c.status() == Status.FAIL);
    }

    /**
     * Runs every check, in order: Kubernetes API, RBAC, Istio, sidecars, node localities, Prometheus,
     * each query, the delay exporter.
     *
     * @param time the instant the queries are evaluated at (usually now)
     */
    public List<Check> run(Instant time) {
        pods.clear();
        nodeLabels.clear();
        delaySeries = -1;
        List<Check> checks = new ArrayList<>();
        Check api = api();
        checks.add(api);
        boolean cluster = api.status() != Status.FAIL;
        if (cluster) {
            checks.add(guarded("rbac", this::rbac));
            checks.add(guarded("istio", this::istio));
            checks.add(guarded("sidecars", this::sidecars));
            checks.add(guarded("node-localities", this::nodeLocalities));
        }
        Check reachable = prometheusReachable(time);
        checks.add(reachable);
        if (reachable.status() != Status.FAIL) {
            checks.add(rateWindow(time));
            ControllerConfig.Queries queries = config.prometheus().queries();
            checks.add(query("cpuCores", queries.cpuCores(), time));
            checks.add(query("servedRequestsPerSecond", queries.servedRequestsPerSecond(), time));
            checks.add(query("callsPerSecond", queries.callsPerSecond(), time));
            checks.add(query("delaySeconds", queries.delaySeconds(), time));
        }
        if (cluster) {
            checks.add(guarded("delay-exporter", this::delayExporter));
        }
        return checks;
    }

    /** A check that the API server failed in an unexpected way is a failure naming the call, not an exception. */
    private Check guarded(String name, java.util.function.Supplier<Check> check) {
        try {
            return check.get();
        } catch (KubernetesClientException e) {
            return new Check(name, Status.FAIL, KubernetesErrors.describe(e, master()), List.of());
        }
    }

    private String master() {
        return String.valueOf(kubernetes.getMasterUrl());
    }

    // --- Kubernetes API -------------------------------------------------------------------------

    private Check api() {
        try {
            VersionInfo version = kubernetes.getKubernetesVersion();
            String git = version == null ? null : version.getGitVersion();
            return Check.ok(
                    "kubernetes-api",
                    "the API server at " + master() + " answers"
                            + (git == null || git.isBlank() ? "" : " (Kubernetes " + git + ")"));
        } catch (KubernetesClientException e) {
            if (KubernetesErrors.unreachable(e)) {
                return new Check(
                        "kubernetes-api",
                        Status.FAIL,
                        KubernetesErrors.describe(e, master()),
                        List.of(unreachableFix()));
            }
            // It answered, only not /version (some proxies hide it): the cluster is reachable.
            return Check.ok(
                    "kubernetes-api",
                    "the API server at " + master() + " answers (version not shown: "
                            + KubernetesErrors.describe(e, master()) + ")");
        } catch (RuntimeException e) {
            if (KubernetesErrors.unreachable(e)) {
                return new Check(
                        "kubernetes-api",
                        Status.FAIL,
                        "no cluster reachable: " + master() + ": " + KubernetesErrors.why(e),
                        List.of(unreachableFix()));
            }
            throw e;
        }
    }

    // --- RBAC -----------------------------------------------------------------------------------

    /** A permission a round uses: verb on group/resource [name] in namespace ("" for cluster-wide). */
    record Permission(String verb, String group, String resource, String namespace, String name) {
        @Override
        public String toString() {
            return verb + " " + resource + (group.isEmpty() ? "" : "." + group) + (name.isEmpty() ? "" : "/" + name)
                    + (namespace.isEmpty() ? "" : " in " + namespace);
        }

        String canI() {
            return "kubectl auth can-i " + verb + " " + resource + (group.isEmpty() ? "" : "." + group)
                    + (name.isEmpty() ? "" : "/" + name) + (namespace.isEmpty() ? "" : " -n " + namespace);
        }
    }

    /** Every permission the controller's rounds, watches, leader election and state use with this config. */
    List<Permission> permissions() {
        ControllerConfig.Kubernetes k = config.kubernetes();
        List<Permission> needed = new ArrayList<>();
        needed.add(new Permission("list", "", "nodes", "", ""));
        Set<String> ruleNamespaces = new TreeSet<>(k.namespaces());
        for (String namespace : k.namespaces()) {
            needed.add(new Permission("list", "", "pods", namespace, ""));
            needed.add(new Permission("watch", "", "pods", namespace, ""));
        }
        for (String entry : k.entryPoints()) {
            String namespace = EntryPoint.parse(entry, k.componentLabel()).namespace();
            if (ruleNamespaces.add(namespace)) {
                needed.add(new Permission("list", "", "pods", namespace, ""));
            }
        }
        for (String namespace : ruleNamespaces) {
            for (String verb : List.of("get", "list", "create", "update", "patch", "delete")) {
                needed.add(new Permission(verb, "networking.istio.io", "destinationrules", namespace, ""));
            }
            // The Events on the rules it writes (RoundEvents).
            needed.add(new Permission("create", "events.k8s.io", "events", namespace, ""));
        }
        if (!k.lease().isEmpty()) {
            String[] lease = k.lease().split("/", 2);
            needed.add(new Permission("create", "coordination.k8s.io", "leases", lease[0], ""));
            needed.add(new Permission("get", "coordination.k8s.io", "leases", lease[0], lease[1]));
            needed.add(new Permission("update", "coordination.k8s.io", "leases", lease[0], lease[1]));
            // The Events on its own pod, which runs in the Lease's namespace in the bundled manifests, and
            // the read of that pod for its uid, by which kubectl describe finds them (RoundEvents).
            if (!ruleNamespaces.contains(lease[0])) {
                needed.add(new Permission("create", "events.k8s.io", "events", lease[0], ""));
            }
            needed.add(new Permission("get", "", "pods", lease[0], ""));
        }
        if (!k.stateConfigMap().isEmpty()) {
            String[] state = k.stateConfigMap().split("/", 2);
            needed.add(new Permission("create", "", "configmaps", state[0], ""));
            needed.add(new Permission("get", "", "configmaps", state[0], state[1]));
            needed.add(new Permission("update", "", "configmaps", state[0], state[1]));
        }
        return needed;
    }

    private Check rbac() {
        List<Permission> needed = permissions();
        List<Permission> denied = new ArrayList<>();
        List<Permission> unknown = new ArrayList<>();
        for (Permission permission : needed) {
            SelfSubjectAccessReview review = new SelfSubjectAccessReviewBuilder()
                    .withNewSpec()
                    .withNewResourceAttributes()
                    .withVerb(permission.verb())
                    .withGroup(permission.group())
                    .withResource(permission.resource())
                    .withNamespace(permission.namespace())
                    .withName(permission.name())
                    .endResourceAttributes()
                    .endSpec()
                    .build();
            SelfSubjectAccessReview answer =
                    kubernetes.authorization().v1().selfSubjectAccessReview().create(review);
            Boolean allowed = answer == null || answer.getStatus() == null
                    ? null
                    : answer.getStatus().getAllowed();
            if (allowed == null) {
                unknown.add(permission);
            } else if (!allowed) {
                denied.add(permission);
            }
        }
        if (!denied.isEmpty()) {
            List<String> fixes = new ArrayList<>();
            fixes.add("grant them to the controller's identity (deploy/tailor-heart.yaml: the ClusterRole and the Role"
                    + " in the Lease's namespace, whose resourceNames must match kubernetes.lease and"
                    + " kubernetes.stateConfigMap)");
            fixes.add("test one: " + denied.get(0).canI());
            return new Check(
                    "rbac",
                    Status.FAIL,
                    denied.size() + " of " + needed.size()
                            + " permissions the controller uses are not granted: "
                            + names(denied.stream().map(Permission::toString).toList()),
                    fixes);
        }
        if (!unknown.isEmpty()) {
            return new Check(
                    "rbac",
                    Status.WARN,
                    "the API server did not say whether " + unknown.size() + " of "
                            + needed.size() + " permissions are granted: "
                            + names(unknown.stream().map(Permission::toString).toList()),
                    List.of("test one: " + unknown.get(0).canI()));
        }
        return Check.ok(
                "rbac",
                "all " + needed.size() + " permissions the controller uses are granted (nodes, pods,"
                        + " DestinationRules, Events"
                        + (config.kubernetes().lease().isEmpty() ? "" : ", the Lease")
                        + (config.kubernetes().stateConfigMap().isEmpty() ? "" : ", the state ConfigMap") + ")");
    }

    // --- Istio ----------------------------------------------------------------------------------

    private Check istio() {
        CustomResourceDefinition crd;
        try {
            crd = kubernetes
                    .apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName(DESTINATION_RULE_CRD)
                    .get();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 403) {
                throw e;
            }
            // The controller's own RBAC does not read CRDs: ask for what it writes instead.
            try {
                kubernetes
                        .genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace(config.kubernetes().namespaces().get(0))
                        .list();
                return withIstioVersion(
                        "networking.istio.io/v1 DestinationRules are served (CRD not readable by" + " this identity)",
                        Status.OK);
            } catch (KubernetesClientException listed) {
                return new Check(
                        "istio",
                        listed.getCode() == 404 ? Status.FAIL : Status.WARN,
                        "cannot tell whether Istio serves networking.istio.io/v1 DestinationRules: "
                                + KubernetesErrors.describe(listed, master()),
                        List.of("install Istio 1." + MIN_ISTIO_MINOR
                                + " or later (istioctl install, or its Helm charts base and istiod)"));
            }
        }
        if (crd == null) {
            return new Check(
                    "istio",
                    Status.FAIL,
                    "Istio's DestinationRule CRD (" + DESTINATION_RULE_CRD + ") is not installed",
                    List.of("install Istio 1." + MIN_ISTIO_MINOR + " or later (istioctl"
                            + " install, or its Helm charts base and istiod)"));
        }
        List<String> versions = crd.getSpec() == null || crd.getSpec().getVersions() == null
                ? List.of()
                : crd.getSpec().getVersions().stream()
                        .filter(v -> Boolean.TRUE.equals(v.getServed()))
                        .map(CustomResourceDefinitionVersion::getName)
                        .toList();
        if (!versions.contains("v1")) {
            return new Check(
                    "istio",
                    Status.FAIL,
                    DESTINATION_RULE_CRD + " serves " + versions + ", not v1: the"
                            + " controller writes networking.istio.io/v1, served by Istio 1." + MIN_ISTIO_MINOR
                            + " and later",
                    List.of("upgrade Istio to 1." + MIN_ISTIO_MINOR + " or later"));
        }
        return withIstioVersion("DestinationRule CRD serves " + String.join(", ", versions), Status.OK);
    }

    /** Adds istiod's version (from its image tag) when this identity may list Deployments. */
    private Check withIstioVersion(String served, Status status) {
        List<Deployment> istiods;
        try {
            istiods = kubernetes
                    .apps()
                    .deployments()
                    .inAnyNamespace()
                    .withLabel("app", "istiod")
                    .list()
                    .getItems();
        } catch (KubernetesClientException e) {
            return new Check(
                    "istio",
                    status,
                    served + "; Istio's version not discoverable (" + e.getCode() + " listing Deployments app=istiod)",
                    List.of());
        }
        Set<String> found = new TreeSet<>();
        List<String> old = new ArrayList<>();
        for (Deployment istiod : istiods) {
            List<Container> containers = istiod.getSpec() == null
                            || istiod.getSpec().getTemplate() == null
                            || istiod.getSpec().getTemplate().getSpec() == null
                    ? List.of()
                    : istiod.getSpec().getTemplate().getSpec().getContainers();
            for (Container container : containers) {
                Matcher version = VERSION.matcher(container.getImage() == null ? "" : container.getImage());
                if (version.find()) {
                    String text = version.group(1) + "." + version.group(2)
                            + (version.group(3) == null ? "" : "." + version.group(3));
                    found.add(text + " (" + istiod.getMetadata().getNamespace() + "/"
                            + istiod.getMetadata().getName() + ")");
                    int major = Integer.parseInt(version.group(1));
                    if (major == 1 && Integer.parseInt(version.group(2)) < MIN_ISTIO_MINOR) {
                        old.add(text);
                    }
                }
            }
        }
        if (found.isEmpty()) {
            return new Check(
                    "istio",
                    status,
                    served + "; Istio's version not discoverable (no Deployment labelled"
                            + " app=istiod with a versioned image)",
                    List.of());
        }
        if (!old.isEmpty()) {
            return new Check(
                    "istio",
                    Status.FAIL,
                    served + "; istiod " + String.join(", ", found) + " is older than 1." + MIN_ISTIO_MINOR,
                    List.of("upgrade Istio to 1." + MIN_ISTIO_MINOR + " or later"));
        }
        return new Check("istio", status, served + "; istiod " + String.join(", ", found), List.of());
    }

    // --- Sidecars -------------------------------------------------------------------------------

    private Check sidecars() {
        ControllerConfig.Kubernetes k = config.kubernetes();
        List<String> without = new ArrayList<>();
        Set<String> namespacesWithout = new TreeSet<>();
        int app = 0;
        for (String namespace : k.namespaces()) {
            for (Pod pod : kubernetes
                    .pods()
                    .inNamespace(namespace)
                    .withLabel(k.componentLabel())
                    .list()
                    .getItems()) {
                app++;
                pods.add(pod);
                if (!hasSidecar(pod)) {
                    without.add(namespace + "/" + pod.getMetadata().getName());
                    namespacesWithout.add(namespace);
                }
            }
        }
        List<String> emptyEntries = new ArrayList<>();
        for (String entry : k.entryPoints()) {
            EntryPoint point = EntryPoint.parse(entry, k.componentLabel());
            List<Pod> entryPods = kubernetes
                    .pods()
                    .inNamespace(point.namespace())
                    .withLabels(point.selector())
                    .list()
                    .getItems();
            if (entryPods.isEmpty()) {
                emptyEntries.add(entry);
            }
            for (Pod pod : entryPods) {
                pods.add(pod);
                if (!hasSidecar(pod)) {
                    without.add(point.namespace() + "/" + pod.getMetadata().getName());
                }
            }
        }
        if (app == 0) {
            return new Check(
                    "sidecars",
                    Status.FAIL,
                    "no pod labelled " + k.componentLabel() + " in " + k.namespaces() + ": rounds fail with no_pods",
                    List.of("deploy the application, or set kubernetes.namespaces and"
                            + " kubernetes.componentLabel to where its pods are and the label naming their workload"));
        }
        if (!without.isEmpty()) {
            List<String> fixes = new ArrayList<>();
            for (String namespace : namespacesWithout) {
                fixes.add("kubectl label namespace " + namespace + " istio-injection=enabled --overwrite && kubectl -n "
                        + namespace + " rollout restart deployment");
            }
            return new Check(
                    "sidecars",
                    Status.FAIL,
                    without.size() + " of " + pods.size() + " pods have no "
                            + SIDECAR
                            + " sidecar, so rules do not route their calls and Istio reports no requests for them: "
                            + names(without),
                    fixes);
        }
        String pods = app + " application pod(s)"
                + (this.pods.size() > app ? " and " + (this.pods.size() - app) + " entry-point pod(s)" : "")
                + " carry the " + SIDECAR + " sidecar";
        if (!emptyEntries.isEmpty()) {
            return new Check(
                    "sidecars",
                    Status.WARN,
                    pods + "; no pods for entry point(s) " + emptyEntries + ": their calls get no rule",
                    List.of("set kubernetes.entryPoints to your ingress gateway:"
                            + " namespace/" + k.componentLabel()
                            + "-value, or namespace/KEY=VALUE of its pods' labels, e.g."
                            + " istio-ingress/istio=ingressgateway"));
        }
        return Check.ok("sidecars", pods);
    }

    private static boolean hasSidecar(Pod pod) {
        if (pod.getSpec() == null) {
            return false;
        }
        Stream<Container> all = Stream.concat(
                pod.getSpec().getContainers() == null ? Stream.empty() : pod.getSpec().getContainers().stream(),
                pod.getSpec().getInitContainers() == null
                        ? Stream.empty()
                        : pod.getSpec().getInitContainers().stream());
        return all.anyMatch(c -> SIDECAR.equals(c.getName()));
    }

    // --- Node localities ------------------------------------------------------------------------

    private Check nodeLocalities() {
        for (Node node : kubernetes.nodes().list().getItems()) {
            Map<String, String> labels = node.getMetadata().getLabels();
            nodeLabels.put(node.getMetadata().getName(), labels == null ? Map.of() : labels);
        }
        if (nodeLabels.isEmpty()) {
            return new Check("node-localities", Status.FAIL, "the node list is empty", List.of());
        }
        // Nodes whose pods take their locality from the node (no locality label of their own).
        Set<String> hosting = new TreeSet<>();
        for (Pod pod : pods) {
            String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
            Map<String, String> labels = pod.getMetadata().getLabels() == null
                    ? Map.of()
                    : pod.getMetadata().getLabels();
            if (node != null
                    && !labels.containsKey(IstioLocality.POD_LOCALITY)
                    && !labels.containsKey(IstioLocality.POD_LOCALITY_LEGACY)) {
                hosting.add(node);
            }
        }
        Map<String, List<String>> missingByLabel = new LinkedHashMap<>();
        List<String> failing = new ArrayList<>();
        List<String> warning = new ArrayList<>();
        Map<String, List<String>> byLocality = new TreeMap<>();
        nodeLabels.forEach((node, labels) -> {
            IstioLocality.Locality locality = IstioLocality.ofNode(labels);
            List<String> missing = new ArrayList<>();
            if (locality.region().isEmpty()) {
                missing.add(IstioLocality.REGION);
            }
            if (locality.zone().isEmpty()) {
                missing.add(IstioLocality.ZONE);
            }
            if (locality.subzone().isEmpty()) {
                missing.add(IstioLocality.SUBZONE);
            }
            if (missing.isEmpty()) {
                if (hosting.contains(node)) {
                    byLocality
                            .computeIfAbsent(locality.toString(), l -> new ArrayList<>())
                            .add(node);
                }
                return;
            }
            missing.forEach(label -> missingByLabel
                    .computeIfAbsent(label, l -> new ArrayList<>())
                    .add(node));
            // A node hosting none of the pods (while some node does) only matters once pods land there.
            (hosting.isEmpty() || hosting.contains(node) ? failing : warning).add(node);
        });
        List<String> shared = new ArrayList<>();
        byLocality.forEach((locality, nodes) -> {
            if (nodes.size() > 1) {
                shared.add(String.join(", ", nodes) + " share " + locality);
            }
        });
        if (failing.isEmpty() && warning.isEmpty()) {
            if (!shared.isEmpty()) {
                return new Check(
                        "node-localities",
                        Status.WARN,
                        "nodes that share a locality are one for Istio," + " and their routes are written as one: "
                                + String.join("; ", shared),
                        List.of("give each node its own sub-zone: kubectl label node NODE " + IstioLocality.SUBZONE
                                + "=NODE --overwrite"));
            }
            return Check.ok(
                    "node-localities",
                    "all " + nodeLabels.size() + " nodes carry " + IstioLocality.REGION + ", " + IstioLocality.ZONE
                            + " and " + IstioLocality.SUBZONE);
        }
        StringBuilder message = new StringBuilder();
        missingByLabel.forEach((label, nodes) -> message.append(message.isEmpty() ? "" : "; ")
                .append(nodes.size())
                .append(" node(s) without ")
                .append(label)
                .append(": ")
                .append(names(nodes)));
        List<String> fixes = new ArrayList<>();
        List<String> all = new ArrayList<>(failing);
        all.addAll(warning);
        fixes.add(IstioLocality.command(all, nodeLabels));
        fixes.add("then restart the application's pods on them (Istio reads a pod's locality when its sidecar"
                + " connects)");
        if (failing.isEmpty()) {
            message.append(" (no application pod runs there yet; pods scheduled there later get coarser rules)");
            return new Check("node-localities", Status.WARN, message.toString(), fixes);
        }
        message.append(
                missingByLabel.containsKey(IstioLocality.SUBZONE)
                        ? ": Istio takes a pod's sub-zone only"
                                + " from " + IstioLocality.SUBZONE
                                + " (never the node's name), so rules cannot address these nodes"
                                + " one by one"
                        : ": Istio gives their pods no complete locality, so rules cannot address these nodes"
                                + " one by one");
        return new Check("node-localities", Status.FAIL, message.toString(), fixes);
    }

    // --- Prometheus -----------------------------------------------------------------------------

    private Check prometheusReachable(Instant time) {
        try {
            prometheus.query("vector(1)", time);
            return Check.ok("prometheus", "Prometheus at " + prometheus.base() + " answers queries");
        } catch (PrometheusException e) {
            return new Check(
                    "prometheus",
                    Status.FAIL,
                    e.getMessage(),
                    List.of("set prometheus.url (or --prometheus)"
                            + " to a Prometheus this machine can reach; the query checks were not run"));
        }
    }

    /** Samples a rate window should hold at least: with two, series drop in and out between rounds. */
    static final int MIN_SAMPLES_PER_WINDOW = 4;

    /**
     * Whether {@code prometheus.windowSeconds} holds enough scrapes: the median over Prometheus's
     * targets of the samples of {@code up} in one window, which is the window over the scrape
     * interval.
     */
    private Check rateWindow(Instant time) {
        long window = Math.round(config.prometheus().windowSeconds());
        InstantVector vector;
        try {
            vector = prometheus.query("quantile(0.5, count_over_time(up[" + window + "s]))", time);
        } catch (PrometheusException e) {
            return new Check(
                    "rate-window",
                    Status.WARN,
                    "cannot tell how many scrapes a " + window + " s window holds" + " (" + e.getMessage() + ")",
                    List.of());
        }
        if (vector.series().isEmpty() || !Double.isFinite(vector.series().get(0).value())) {
            return new Check(
                    "rate-window",
                    Status.WARN,
                    "cannot tell how many scrapes a " + window + " s window holds" + " (no up series)",
                    List.of());
        }
        double samples = vector.series().get(0).value();
        if (samples < MIN_SAMPLES_PER_WINDOW) {
            long interval = Math.max(1, Math.round(window / Math.max(samples, 1)));
            return new Check(
                    "rate-window",
                    Status.WARN,
                    String.format(
                            Locale.ROOT,
                            "prometheus.windowSeconds %d holds"
                                    + " %.0f scrape(s) of a typical target (about every %d s): with fewer than %d, rate() has no"
                                    + " value in some rounds and series drop in and out",
                            window,
                            samples,
                            interval,
                            MIN_SAMPLES_PER_WINDOW),
                    List.of("set prometheus.windowSeconds to at least " + MIN_SAMPLES_PER_WINDOW * interval + " ("
                            + MIN_SAMPLES_PER_WINDOW + " × the scrape interval)"));
        }
        return Check.ok(
                "rate-window",
                String.format(
                        Locale.ROOT, "a %d s window holds %.0f scrapes of a typical" + " target", window, samples));
    }

    /** The labels a query's series must carry for a round to use them. */
    private List<String> requiredLabels(String name) {
        ControllerConfig.Labels labels = config.prometheus().labels();
        return switch (name) {
            case "callsPerSecond" -> List.of(labels.namespace(), labels.pod(), labels.destinationWorkload());
            case "delaySeconds" -> List.of(labels.delayFromNode(), labels.delayTarget());
            default -> List.of(labels.namespace(), labels.pod());
        };
    }

    private Check query(String name, String template, Instant time) {
        String check = "query " + name;
        boolean delay = name.equals("delaySeconds");
        InstantVector vector;
        try {
            vector = prometheus.query(config.query(template), time);
        } catch (PrometheusException e) {
            return new Check(check, Status.FAIL, e.getMessage(), List.of("fix prometheus.queries." + name));
        }
        if (delay) {
            delaySeries = 0;
        }
        if (!vector.warnings().isEmpty()) {
            return new Check(
                    check,
                    Status.WARN,
                    "Prometheus warned " + vector.warnings() + ": the answer may be"
                            + " partial, and rounds count it as no data",
                    List.of());
        }
        List<String> required = requiredLabels(name);
        List<Series> usable = vector.series().stream()
                .filter(s -> Double.isFinite(s.value()))
                .filter(s -> required.stream()
                        .allMatch(l -> s.label(l) != null && !s.label(l).isEmpty()))
                .toList();
        if (usable.isEmpty()) {
            String why = vector.series().isEmpty()
                    ? "no series"
                    : vector.series().size() + " series, none with a finite value and the labels " + required;
            if (delay) {
                return new Check(
                        check,
                        Status.WARN,
                        why + ": rounds plan every link between nodes with the" + " unmeasured-link rule",
                        List.of("install the delay exporter (kubenurse) and scrape it;"
                                + " see docs/controller.md, Before you install"));
            }
            return new Check(
                    check,
                    Status.FAIL,
                    why + " (rounds fail with component_without_metrics)",
                    List.of("check that Prometheus scrapes " + (name.equals("cpuCores") ? "cAdvisor" : "the sidecars")
                            + " and relabels " + required + "; run the query in the Prometheus UI"));
        }
        if (delay) {
            delaySeries = usable.size();
            Set<String> from = new TreeSet<>();
            usable.forEach(s -> from.add(s.label(config.prometheus().labels().delayFromNode())));
            Set<String> unmeasured = new TreeSet<>();
            for (Pod pod : pods) {
                String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
                if (node != null && !from.contains(node)) {
                    unmeasured.add(node);
                }
            }
            if (!unmeasured.isEmpty()) {
                return new Check(
                        check,
                        Status.WARN,
                        usable.size() + " series, but none from node(s) "
                                + names(List.copyOf(unmeasured))
                                + ": links from there are planned with the unmeasured-link"
                                + " rule",
                        List.of("check that the delay exporter runs on every node (a DaemonSet without"
                                + " tolerations skips tainted nodes)"));
            }
            return Check.ok(check, usable.size() + " series from " + from.size() + " node(s)");
        }
        if (name.equals("callsPerSecond")) {
            return Check.ok(check, usable.size() + " series");
        }
        Set<String> covered = new TreeSet<>();
        ControllerConfig.Labels labels = config.prometheus().labels();
        usable.forEach(s -> covered.add(s.label(labels.namespace()) + "/" + s.label(labels.pod())));
        List<String> uncovered = new ArrayList<>();
        int appPods = 0;
        for (Pod pod : pods) {
            String key =
                    pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
            if (!config.kubernetes().namespaces().contains(pod.getMetadata().getNamespace())) {
                continue; // entry points are not planned for: their CPU and requests do not matter
            }
            appPods++;
            if (!covered.contains(key)) {
                uncovered.add(key);
            }
        }
        if (appPods == 0) {
            return Check.ok(check, usable.size() + " series");
        }
        if (!uncovered.isEmpty()) {
            return new Check(
                    check,
                    Status.WARN,
                    usable.size() + " series, none for " + uncovered.size() + " of "
                            + appPods + " application pods: " + names(uncovered)
                            + " (no data for them; a pod just started"
                            + " has none until two scrapes fall in the window)",
                    List.of("check the query's " + required + " labels match the pods' namespace and name"));
        }
        return Check.ok(check, usable.size() + " series, covering all " + appPods + " application pods");
    }

    // --- Delay exporter -------------------------------------------------------------------------

    private Check delayExporter() {
        List<DaemonSet> found;
        try {
            found = kubernetes.apps().daemonSets().inAnyNamespace().list().getItems().stream()
                    .filter(d -> d.getMetadata().getName().contains("kubenurse")
                            || "kubenurse".equals(label(d, "app.kubernetes.io/name"))
                            || "kubenurse".equals(label(d, "app")))
                    .toList();
        } catch (KubernetesClientException e) {
            return new Check(
                    "delay-exporter",
                    delaySeries > 0 ? Status.OK : Status.WARN,
                    "cannot list DaemonSets ("
                            + KubernetesErrors.describe(e, master()) + ")"
                            + (delaySeries > 0 ? "; delaySeconds returns " + delaySeries + " series" : ""),
                    List.of());
        }
        if (found.isEmpty()) {
            if (delaySeries > 0) {
                return Check.ok(
                        "delay-exporter",
                        "no kubenurse DaemonSet, but delaySeconds returns " + delaySeries
                                + " series (another exporter)");
            }
            return new Check(
                    "delay-exporter",
                    Status.WARN,
                    "no kubenurse DaemonSet in any namespace and no delay"
                            + " series: every link between nodes is planned with the unmeasured-link rule",
                    List.of("install kubenurse as a DaemonSet with its neighbour checks, scraped with a node label"
                            + " (docs/controller.md, Before you install)"));
        }
        List<String> parts = new ArrayList<>();
        boolean short_ = false;
        for (DaemonSet d : found) {
            int desired = d.getStatus() == null || d.getStatus().getDesiredNumberScheduled() == null
                    ? 0
                    : d.getStatus().getDesiredNumberScheduled();
            int ready = d.getStatus() == null || d.getStatus().getNumberReady() == null
                    ? 0
                    : d.getStatus().getNumberReady();
            short_ |= ready < desired || desired == 0;
            parts.add(d.getMetadata().getNamespace() + "/" + d.getMetadata().getName() + " " + ready + " of " + desired
                    + " pods ready");
        }
        String message = "DaemonSet " + String.join(", ", parts);
        if (short_) {
            return new Check(
                    "delay-exporter",
                    Status.WARN,
                    message + ": links from nodes without a ready exporter are" + " unmeasured",
                    List.of("kubectl -n " + found.get(0).getMetadata().getNamespace() + " describe daemonset "
                            + found.get(0).getMetadata().getName()));
        }
        return Check.ok("delay-exporter", message);
    }

    private static String label(DaemonSet d, String key) {
        return d.getMetadata().getLabels() == null
                ? null
                : d.getMetadata().getLabels().get(key);
    }

    /** At most {@link #NAMES_SHOWN} names, then "and N more". */
    static String names(List<String> names) {
        if (names.size() <= NAMES_SHOWN) {
            return String.join(", ", names);
        }
        return String.join(", ", names.subList(0, NAMES_SHOWN)) + " and " + (names.size() - NAMES_SHOWN) + " more";
    }
}
