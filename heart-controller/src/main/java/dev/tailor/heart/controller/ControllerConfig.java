package dev.tailor.heart.controller;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.heart.HeartConfig;
import dev.tailor.heart.ShareMoveCap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The controller's configuration: where Prometheus is and what to ask it, which pods form the
 * application, how to write DestinationRules, and how often. Read from YAML, or JSON ({@link ConfigFiles});
 * every field has a default (docs/design.md#metrics, #actuation), so an empty file is valid.
 * {@link #problems()} lists every invalid field at once.
 *
 * @param prometheus  the metrics source
 * @param kubernetes  discovery and actuation
 * @param roundSeconds seconds between rounds (default 30, the paper's)
 * @param sameNodeDelayMillis one-way delay within a node when nothing measures it (default 0.05:
 *                     loopback through two sidecars; kubenurse does not probe its own node)
 * @param maxShareMovePerRound the most the fraction of a caller node's calls to one callee node may
 *                     change from one applied plan to the next, in (0, 1] (default 0.2 =
 *                     {@link ShareMoveCap#DEFAULT_MAX_MOVE}: one bad round moves at most 20 points;
 *                     1 = no cap, the paper). Nodes without a ready replica drop to 0 regardless, and
 *                     the cap never plans a node above its capacity. It continues from the routes
 *                     saved with the ATPM state, so it holds across restarts and take-overs.
 * @param capacityShortfall what a round does when some component is asked for more than its ready
 *                     groups can serve: {@code proceed} (default) applies the plan, whose shares stay
 *                     proportional to capacity so every group is overloaded alike; {@code hold}
 *                     keeps the rules and the state as they are (the round fails with reason
 *                     {@code capacity_shortfall}). Either way the shortfall is logged and exported.
 * @param planner      ATPM's departures from the paper (default: all on, {@link HeartConfig#DEFAULTS})
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record ControllerConfig(
        Prometheus prometheus,
        Kubernetes kubernetes,
        Double roundSeconds,
        Double sameNodeDelayMillis,
        Double maxShareMovePerRound,
        String capacityShortfall,
        Planner planner) {

    /** {@link #capacityShortfall()}: apply the capacity-proportional plan. */
    public static final String PROCEED = "proceed";
    /** {@link #capacityShortfall()}: keep the rules and the state of the last round. */
    public static final String HOLD = "hold";

    /**
     * ATPM's departures from the paper, as {@link HeartConfig} fields of the same names (their docs
     * give the reasons); absent fields take {@link HeartConfig#DEFAULTS}.
     *
     * @param outlierFilter        median of a group's last three measurements into the EWMA (default
     *                             true; false = the paper)
     * @param idleFitRounds        rounds kept to fit and subtract idle CPU (default 10; 0 = the paper)
     * @param minShareOfEqualSplit share floor as a fraction of an equal split (default 0.05; 0 = the
     *                             paper)
     * @param spreadScale          NTAM's entropic transport, ε in units of the callee's expected sojourn
     *                             (default {@link HeartConfig#SPREAD_SCALE_GUMBEL} ≈ 0.78; 0 = min-cost flow,
     *                             the paper)
     * @param latencyOptimalShares ATPM's square-root rule instead of capacity-proportional shares (default
     *                             false, the paper's)
     * @param queueAwareRouting    all calls into a callee planned at once with a queueing cost per group
     *                             (default true; false = every edge meets the ATPM shares, the paper)
     * @param loadHeadroom         the queue-aware split is planned for (1 + this) × the measured calls,
     *                             so it stays within capacity if the load grows that much before the next
     *                             round (default 0.5; 0 = the measured load only)
     * @param slowLinkFilter       the paper's slow-link filter before the flow (default false: it showed
     *                             no contribution under queue-aware routing, docs/heart.md; true = the paper)
     */
    public record Planner(
            Boolean outlierFilter,
            Double idleFitRounds,
            Double minShareOfEqualSplit,
            Double spreadScale,
            Boolean latencyOptimalShares,
            Boolean queueAwareRouting,
            Double loadHeadroom,
            Boolean slowLinkFilter) {
        public Planner {
            outlierFilter = outlierFilter == null ? HeartConfig.DEFAULTS.outlierFilter() : outlierFilter;
            idleFitRounds = idleFitRounds == null ? (double) HeartConfig.DEFAULTS.idleFitRounds() : idleFitRounds;
            minShareOfEqualSplit =
                    minShareOfEqualSplit == null ? HeartConfig.DEFAULTS.minShareOfEqualSplit() : minShareOfEqualSplit;
            spreadScale = spreadScale == null ? HeartConfig.DEFAULTS.spreadScale() : spreadScale;
            latencyOptimalShares =
                    latencyOptimalShares == null ? HeartConfig.DEFAULTS.latencyOptimalShares() : latencyOptimalShares;
            queueAwareRouting =
                    queueAwareRouting == null ? HeartConfig.DEFAULTS.queueAwareRouting() : queueAwareRouting;
            loadHeadroom = loadHeadroom == null ? HeartConfig.DEFAULTS.loadHeadroom() : loadHeadroom;
            slowLinkFilter = slowLinkFilter == null ? HeartConfig.DEFAULTS.slowLinkFilter() : slowLinkFilter;
        }

        /** The paper's planner: every departure off; {@link #heartConfig()} is {@link HeartConfig#PAPER}. */
        public static final Planner PAPER = builder()
                .outlierFilter(false)
                .idleFitRounds(0.0)
                .minShareOfEqualSplit(0.0)
                .spreadScale(0.0)
                .latencyOptimalShares(false)
                .queueAwareRouting(false)
                .loadHeadroom(0.0)
                .slowLinkFilter(true)
                .build();

        /** A builder with every field unset: {@code build()} gives {@link HeartConfig#DEFAULTS}'s planner. */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds a {@link Planner} by field name; unset fields take their defaults. */
        public static final class Builder {
            private Boolean outlierFilter;
            private Double idleFitRounds;
            private Double minShareOfEqualSplit;
            private Double spreadScale;
            private Boolean latencyOptimalShares;
            private Boolean queueAwareRouting;
            private Double loadHeadroom;
            private Boolean slowLinkFilter;

            private Builder() {}

            /** See {@link Planner#outlierFilter()}. */
            public Builder outlierFilter(Boolean value) {
                this.outlierFilter = value;
                return this;
            }

            /** See {@link Planner#idleFitRounds()}. */
            public Builder idleFitRounds(Double value) {
                this.idleFitRounds = value;
                return this;
            }

            /** See {@link Planner#minShareOfEqualSplit()}. */
            public Builder minShareOfEqualSplit(Double value) {
                this.minShareOfEqualSplit = value;
                return this;
            }

            /** See {@link Planner#spreadScale()}. */
            public Builder spreadScale(Double value) {
                this.spreadScale = value;
                return this;
            }

            /** See {@link Planner#latencyOptimalShares()}. */
            public Builder latencyOptimalShares(Boolean value) {
                this.latencyOptimalShares = value;
                return this;
            }

            /** See {@link Planner#queueAwareRouting()}. */
            public Builder queueAwareRouting(Boolean value) {
                this.queueAwareRouting = value;
                return this;
            }

            /** See {@link Planner#loadHeadroom()}. */
            public Builder loadHeadroom(Double value) {
                this.loadHeadroom = value;
                return this;
            }

            /** See {@link Planner#slowLinkFilter()}. */
            public Builder slowLinkFilter(Boolean value) {
                this.slowLinkFilter = value;
                return this;
            }

            /** The configuration (not validated; see {@link ControllerConfig#problems()}). */
            public Planner build() {
                return new Planner(
                        outlierFilter,
                        idleFitRounds,
                        minShareOfEqualSplit,
                        spreadScale,
                        latencyOptimalShares,
                        queueAwareRouting,
                        loadHeadroom,
                        slowLinkFilter);
            }
        }

        /** {@link HeartConfig#DEFAULTS} with these fields (call after {@link ControllerConfig#problems()}). */
        public HeartConfig heartConfig() {
            return HeartConfig.DEFAULTS.toBuilder()
                    .outlierFilter(outlierFilter)
                    .idleFitRounds(idleFitRounds.intValue())
                    .minShareOfEqualSplit(minShareOfEqualSplit)
                    .spreadScale(spreadScale)
                    .latencyOptimalShares(latencyOptimalShares)
                    .queueAwareRouting(queueAwareRouting)
                    .loadHeadroom(loadHeadroom)
                    .slowLinkFilter(slowLinkFilter)
                    .build();
        }
    }

    /** Placeholder in queries for the rate window, e.g. {@code [${window}]} becomes {@code [30s]}. */
    public static final String WINDOW = "${window}";
    /** Placeholder in the delay query for its (longer) window. */
    public static final String DELAY_WINDOW = "${delayWindow}";

    /**
     * @param url                 base URL (default {@code http://prometheus.istio-system:9090}, Istio's addon)
     * @param timeoutSeconds      per query (default 10)
     * @param windowSeconds       the rate window of the CPU and request queries (default 30 = one round)
     * @param delayWindowSeconds  the window of the delay query (default 300: probes are sparse)
     * @param queries             the PromQL; each must keep the labels named in {@code labels}
     * @param labels              which labels carry what
     * @param delayTargetPrefix   the delay query's target label value is this prefix + node name
     *                            (default {@code path_}, kubenurse's neighbour checks)
     * @param delayOneWayFraction one-way delay = this × the measured request duration (default 0.5: an
     *                            HTTP probe takes a round trip; our reading)
     * @param bearerTokenFile     a file whose content (trimmed) is sent as {@code Authorization: Bearer},
     *                            read again for every query so a rotated token is picked up (default
     *                            none); not with {@code basicAuth}
     * @param basicAuth           HTTP basic authentication (default none)
     * @param tls                 how the server's certificate is checked on an {@code https://} URL
     *                            (default: the JVM's trusted CAs and the host name)
     * @param headers             more request headers, e.g. {@code X-Scope-OrgID} for Grafana Mimir or
     *                            Cortex (default none); not {@code Authorization} when an
     *                            authentication above is set
     */
    public record Prometheus(
            String url,
            Double timeoutSeconds,
            Double windowSeconds,
            Double delayWindowSeconds,
            Queries queries,
            Labels labels,
            String delayTargetPrefix,
            Double delayOneWayFraction,
            String bearerTokenFile,
            BasicAuth basicAuth,
            Tls tls,
            Map<String, String> headers) {

        public Prometheus {
            url = url == null ? "http://prometheus.istio-system:9090" : url;
            timeoutSeconds = timeoutSeconds == null ? 10.0 : timeoutSeconds;
            windowSeconds = windowSeconds == null ? 30.0 : windowSeconds;
            delayWindowSeconds = delayWindowSeconds == null ? 300.0 : delayWindowSeconds;
            queries = queries == null ? Queries.builder().build() : queries;
            labels = labels == null ? Labels.DEFAULTS : labels;
            delayTargetPrefix = delayTargetPrefix == null ? "path_" : delayTargetPrefix;
            delayOneWayFraction = delayOneWayFraction == null ? 0.5 : delayOneWayFraction;
            tls = tls == null ? Tls.DEFAULTS : tls;
            headers = headers == null ? Map.of() : Map.copyOf(new java.util.TreeMap<>(headers));
        }

        /** This configuration with another URL. */
        public Prometheus withUrl(String other) {
            return toBuilder().url(other).build();
        }

        /** A builder with every field unset (its default); {@code build()} gives the defaults above. */
        public static Builder builder() {
            return new Builder();
        }

        /** A builder holding this configuration's fields. */
        public Builder toBuilder() {
            Builder b = new Builder();
            b.url = url;
            b.timeoutSeconds = timeoutSeconds;
            b.windowSeconds = windowSeconds;
            b.delayWindowSeconds = delayWindowSeconds;
            b.queries = queries;
            b.labels = labels;
            b.delayTargetPrefix = delayTargetPrefix;
            b.delayOneWayFraction = delayOneWayFraction;
            b.bearerTokenFile = bearerTokenFile;
            b.basicAuth = basicAuth;
            b.tls = tls;
            b.headers = headers;
            return b;
        }

        /** Builds a {@link Prometheus} by field name; unset fields take their defaults. */
        public static final class Builder {
            private String url;
            private Double timeoutSeconds;
            private Double windowSeconds;
            private Double delayWindowSeconds;
            private Queries queries;
            private Labels labels;
            private String delayTargetPrefix;
            private Double delayOneWayFraction;
            private String bearerTokenFile;
            private BasicAuth basicAuth;
            private Tls tls;
            private Map<String, String> headers;

            private Builder() {}

            /** See {@link Prometheus#url()}. */
            public Builder url(String value) {
                this.url = value;
                return this;
            }

            /** See {@link Prometheus#timeoutSeconds()}. */
            public Builder timeoutSeconds(Double value) {
                this.timeoutSeconds = value;
                return this;
            }

            /** See {@link Prometheus#windowSeconds()}. */
            public Builder windowSeconds(Double value) {
                this.windowSeconds = value;
                return this;
            }

            /** See {@link Prometheus#delayWindowSeconds()}. */
            public Builder delayWindowSeconds(Double value) {
                this.delayWindowSeconds = value;
                return this;
            }

            /** See {@link Prometheus#queries()}. */
            public Builder queries(Queries value) {
                this.queries = value;
                return this;
            }

            /** See {@link Prometheus#labels()}. */
            public Builder labels(Labels value) {
                this.labels = value;
                return this;
            }

            /** See {@link Prometheus#delayTargetPrefix()}. */
            public Builder delayTargetPrefix(String value) {
                this.delayTargetPrefix = value;
                return this;
            }

            /** See {@link Prometheus#delayOneWayFraction()}. */
            public Builder delayOneWayFraction(Double value) {
                this.delayOneWayFraction = value;
                return this;
            }

            /** See {@link Prometheus#bearerTokenFile()}. */
            public Builder bearerTokenFile(String value) {
                this.bearerTokenFile = value;
                return this;
            }

            /** See {@link Prometheus#basicAuth()}. */
            public Builder basicAuth(BasicAuth value) {
                this.basicAuth = value;
                return this;
            }

            /** See {@link Prometheus#tls()}. */
            public Builder tls(Tls value) {
                this.tls = value;
                return this;
            }

            /** See {@link Prometheus#headers()}. */
            public Builder headers(Map<String, String> value) {
                this.headers = value;
                return this;
            }

            /** The configuration (not validated; see {@link ControllerConfig#problems()}). */
            public Prometheus build() {
                return new Prometheus(
                        url,
                        timeoutSeconds,
                        windowSeconds,
                        delayWindowSeconds,
                        queries,
                        labels,
                        delayTargetPrefix,
                        delayOneWayFraction,
                        bearerTokenFile,
                        basicAuth,
                        tls,
                        headers);
            }
        }
    }

    /**
     * HTTP basic authentication to Prometheus: a user name and its password, given in the file or
     * (for trying out; a Secret mounted as a file is the way in a cluster) inline.
     *
     * @param username     the user
     * @param password     the password inline; not with {@code passwordFile}
     * @param passwordFile a file holding the password (trailing newline ignored), read for every query
     */
    public record BasicAuth(String username, String password, String passwordFile) {}

    /**
     * How the Prometheus server's certificate is checked.
     *
     * @param caFile             PEM file of the CA certificate(s) to trust instead of the JVM's
     *                           (default: the JVM's)
     * @param insecureSkipVerify accept any certificate for any host name (default false; for trying
     *                           out only: anyone on the path can then read the queries and forge
     *                           the answers)
     */
    public record Tls(String caFile, Boolean insecureSkipVerify) {
        /** The JVM's trusted CAs and the host name checked. */
        public static final Tls DEFAULTS = new Tls(null, false);

        public Tls {
            insecureSkipVerify = insecureSkipVerify != null && insecureSkipVerify;
        }
    }

    /**
     * The four queries of a round (docs/design.md#metrics). Defaults:
     * <ul>
     *   <li>{@code cpuCores}: cAdvisor CPU of the app container per pod, in cores;</li>
     *   <li>{@code servedRequestsPerSecond}: Istio's destination-reported requests per pod;</li>
     *   <li>{@code callsPerSecond}: Istio's source-reported requests per caller pod and destination
     *       workload;</li>
     *   <li>{@code delaySeconds}: kubenurse's median neighbour-probe duration per (source node,
     *       target).</li>
     * </ul>
     */
    public record Queries(String cpuCores, String servedRequestsPerSecond, String callsPerSecond, String delaySeconds) {
        public Queries {
            cpuCores = cpuCores != null
                    ? cpuCores
                    : "sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!=\"\","
                            + " container!=\"POD\", container!=\"istio-proxy\"}[" + WINDOW + "]))";
            servedRequestsPerSecond = servedRequestsPerSecond != null
                    ? servedRequestsPerSecond
                    : "sum by (namespace, pod) (rate(istio_requests_total{reporter=\"destination\"}[" + WINDOW + "]))";
            callsPerSecond = callsPerSecond != null
                    ? callsPerSecond
                    : "sum by (namespace, pod, destination_workload, destination_workload_namespace)"
                            + " (rate(istio_requests_total{reporter=\"source\"}[" + WINDOW + "]))";
            delaySeconds = delaySeconds != null
                    ? delaySeconds
                    : "histogram_quantile(0.5, sum by (le, node, type) (rate("
                            + "kubenurse_httpclient_request_duration_seconds_bucket{type=~\"path_.+\"}[" + DELAY_WINDOW
                            + "])))";
        }

        /** A builder with every field unset (its default); {@code build()} gives the default queries. */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds a {@link Queries} by field name; unset fields take their defaults. */
        public static final class Builder {
            private String cpuCores;
            private String servedRequestsPerSecond;
            private String callsPerSecond;
            private String delaySeconds;

            private Builder() {}

            /** See {@link Queries#cpuCores()}. */
            public Builder cpuCores(String value) {
                this.cpuCores = value;
                return this;
            }

            /** See {@link Queries#servedRequestsPerSecond()}. */
            public Builder servedRequestsPerSecond(String value) {
                this.servedRequestsPerSecond = value;
                return this;
            }

            /** See {@link Queries#callsPerSecond()}. */
            public Builder callsPerSecond(String value) {
                this.callsPerSecond = value;
                return this;
            }

            /** See {@link Queries#delaySeconds()}. */
            public Builder delaySeconds(String value) {
                this.delaySeconds = value;
                return this;
            }

            /** The configuration (not validated; see {@link ControllerConfig#problems()}). */
            public Queries build() {
                return new Queries(cpuCores, servedRequestsPerSecond, callsPerSecond, delaySeconds);
            }
        }
    }

    /**
     * Label names in the query results.
     *
     * @param namespace                    pod namespace (default {@code namespace})
     * @param pod                          pod name (default {@code pod})
     * @param destinationWorkload          callee workload of a call (default {@code destination_workload})
     * @param destinationWorkloadNamespace its namespace (default {@code destination_workload_namespace})
     * @param delayFromNode                source node of a delay probe (default {@code node})
     * @param delayTarget                  target of a delay probe (default {@code type})
     */
    public record Labels(
            String namespace,
            String pod,
            String destinationWorkload,
            String destinationWorkloadNamespace,
            String delayFromNode,
            String delayTarget) {
        /** Istio's and kubenurse's label names. */
        public static final Labels DEFAULTS = builder().build();

        public Labels {
            namespace = namespace == null ? "namespace" : namespace;
            pod = pod == null ? "pod" : pod;
            destinationWorkload = destinationWorkload == null ? "destination_workload" : destinationWorkload;
            destinationWorkloadNamespace = destinationWorkloadNamespace == null
                    ? "destination_workload_namespace"
                    : destinationWorkloadNamespace;
            delayFromNode = delayFromNode == null ? "node" : delayFromNode;
            delayTarget = delayTarget == null ? "type" : delayTarget;
        }

        /** A builder with every field unset: {@link Builder#build} gives the defaults. */
        public static Builder builder() {
            return new Builder();
        }

        /** A builder starting from this configuration's values. */
        public Builder toBuilder() {
            return new Builder(this);
        }

        /**
         * Builds {@link Labels} by field name; a field left unset, or set to {@code null}, takes its default in
         * the canonical constructor.
         */
        public static final class Builder {
            private String namespace;
            private String pod;
            private String destinationWorkload;
            private String destinationWorkloadNamespace;
            private String delayFromNode;
            private String delayTarget;

            private Builder() {}

            private Builder(Labels from) {
                namespace = from.namespace;
                pod = from.pod;
                destinationWorkload = from.destinationWorkload;
                destinationWorkloadNamespace = from.destinationWorkloadNamespace;
                delayFromNode = from.delayFromNode;
                delayTarget = from.delayTarget;
            }

            /** {@link Labels#namespace}. */
            public Builder namespace(String value) {
                namespace = value;
                return this;
            }

            /** {@link Labels#pod}. */
            public Builder pod(String value) {
                pod = value;
                return this;
            }

            /** {@link Labels#destinationWorkload}. */
            public Builder destinationWorkload(String value) {
                destinationWorkload = value;
                return this;
            }

            /** {@link Labels#destinationWorkloadNamespace}. */
            public Builder destinationWorkloadNamespace(String value) {
                destinationWorkloadNamespace = value;
                return this;
            }

            /** {@link Labels#delayFromNode}. */
            public Builder delayFromNode(String value) {
                delayFromNode = value;
                return this;
            }

            /** {@link Labels#delayTarget}. */
            public Builder delayTarget(String value) {
                delayTarget = value;
                return this;
            }

            /**
             * The label names, each left unset at its default.
             */
            public Labels build() {
                return new Labels(
                        namespace, pod, destinationWorkload, destinationWorkloadNamespace, delayFromNode, delayTarget);
            }
        }
    }

    /**
     * @param namespaces     namespaces of the application (default {@code [default]})
     * @param componentLabel the pod label naming a pod's component = its workload (default {@code app})
     * @param clusterDomain  for callee hosts {@code <component>.<namespace>.svc.<domain>} (default
     *                       {@code cluster.local})
     * @param fieldManager   server-side-apply field manager (default {@code tailor-heart})
     * @param entryPoints    workloads whose calls Tailor does not route, e.g. the ingress gateway:
     *                       {@code namespace/workload} (pods labelled {@code componentLabel=workload})
     *                       or {@code namespace/KEY=VALUE[,KEY=VALUE...]} (pods with those labels),
     *                       see {@link EntryPoint} (default {@code istio-system/istio-ingressgateway})
     * @param stateConfigMap {@code namespace/name} of the ConfigMap holding the ATPM state between
     *                       restarts (default {@code tailor-system/tailor-heart-state}; {@code ""} to
     *                       keep it in memory only)
     * @param lease          {@code namespace/name} of the Lease for leader election among replicas
     *                       (default {@code tailor-system/tailor-heart}; {@code ""} for a single
     *                       replica that always leads)
     * @param leaseSeconds   how long a lease holds without renewal (default 15)
     */
    public record Kubernetes(
            List<String> namespaces,
            String componentLabel,
            String clusterDomain,
            String fieldManager,
            List<String> entryPoints,
            String stateConfigMap,
            String lease,
            Double leaseSeconds) {
        public Kubernetes {
            namespaces = namespaces == null ? List.of("default") : List.copyOf(namespaces);
            componentLabel = componentLabel == null ? "app" : componentLabel;
            clusterDomain = clusterDomain == null ? "cluster.local" : clusterDomain;
            fieldManager = fieldManager == null ? "tailor-heart" : fieldManager;
            entryPoints = entryPoints == null ? List.of("istio-system/istio-ingressgateway") : List.copyOf(entryPoints);
            stateConfigMap = stateConfigMap == null ? "tailor-system/tailor-heart-state" : stateConfigMap;
            lease = lease == null ? "tailor-system/tailor-heart" : lease;
            leaseSeconds = leaseSeconds == null ? 15.0 : leaseSeconds;
        }

        /** A builder with every field unset (its default); {@code build()} gives the defaults above. */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds a {@link Kubernetes} by field name; unset fields take their defaults. */
        public static final class Builder {
            private List<String> namespaces;
            private String componentLabel;
            private String clusterDomain;
            private String fieldManager;
            private List<String> entryPoints;
            private String stateConfigMap;
            private String lease;
            private Double leaseSeconds;

            private Builder() {}

            /** See {@link Kubernetes#namespaces()}. */
            public Builder namespaces(List<String> value) {
                this.namespaces = value;
                return this;
            }

            /** See {@link Kubernetes#componentLabel()}. */
            public Builder componentLabel(String value) {
                this.componentLabel = value;
                return this;
            }

            /** See {@link Kubernetes#clusterDomain()}. */
            public Builder clusterDomain(String value) {
                this.clusterDomain = value;
                return this;
            }

            /** See {@link Kubernetes#fieldManager()}. */
            public Builder fieldManager(String value) {
                this.fieldManager = value;
                return this;
            }

            /** See {@link Kubernetes#entryPoints()}. */
            public Builder entryPoints(List<String> value) {
                this.entryPoints = value;
                return this;
            }

            /** See {@link Kubernetes#stateConfigMap()}. */
            public Builder stateConfigMap(String value) {
                this.stateConfigMap = value;
                return this;
            }

            /** See {@link Kubernetes#lease()}. */
            public Builder lease(String value) {
                this.lease = value;
                return this;
            }

            /** See {@link Kubernetes#leaseSeconds()}. */
            public Builder leaseSeconds(Double value) {
                this.leaseSeconds = value;
                return this;
            }

            /** The configuration (not validated; see {@link ControllerConfig#problems()}). */
            public Kubernetes build() {
                return new Kubernetes(
                        namespaces,
                        componentLabel,
                        clusterDomain,
                        fieldManager,
                        entryPoints,
                        stateConfigMap,
                        lease,
                        leaseSeconds);
            }
        }
    }

    public ControllerConfig {
        prometheus = prometheus == null ? Prometheus.builder().build() : prometheus;
        kubernetes = kubernetes == null ? Kubernetes.builder().build() : kubernetes;
        roundSeconds = roundSeconds == null ? 30.0 : roundSeconds;
        sameNodeDelayMillis = sameNodeDelayMillis == null ? 0.05 : sameNodeDelayMillis;
        maxShareMovePerRound = maxShareMovePerRound == null ? ShareMoveCap.DEFAULT_MAX_MOVE : maxShareMovePerRound;
        capacityShortfall = capacityShortfall == null ? PROCEED : capacityShortfall;
        planner = planner == null ? Planner.builder().build() : planner;
    }

    /** A builder with every field unset (its default); {@code build()} gives {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's fields. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.prometheus = prometheus;
        b.kubernetes = kubernetes;
        b.roundSeconds = roundSeconds;
        b.sameNodeDelayMillis = sameNodeDelayMillis;
        b.maxShareMovePerRound = maxShareMovePerRound;
        b.capacityShortfall = capacityShortfall;
        b.planner = planner;
        return b;
    }

    /** Builds a {@link ControllerConfig} by field name; unset fields take their defaults. */
    public static final class Builder {
        private Prometheus prometheus;
        private Kubernetes kubernetes;
        private Double roundSeconds;
        private Double sameNodeDelayMillis;
        private Double maxShareMovePerRound;
        private String capacityShortfall;
        private Planner planner;

        private Builder() {}

        /** See {@link ControllerConfig#prometheus()}. */
        public Builder prometheus(Prometheus value) {
            this.prometheus = value;
            return this;
        }

        /** See {@link ControllerConfig#kubernetes()}. */
        public Builder kubernetes(Kubernetes value) {
            this.kubernetes = value;
            return this;
        }

        /** See {@link ControllerConfig#roundSeconds()}. */
        public Builder roundSeconds(Double value) {
            this.roundSeconds = value;
            return this;
        }

        /** See {@link ControllerConfig#sameNodeDelayMillis()}. */
        public Builder sameNodeDelayMillis(Double value) {
            this.sameNodeDelayMillis = value;
            return this;
        }

        /** See {@link ControllerConfig#maxShareMovePerRound()}. */
        public Builder maxShareMovePerRound(Double value) {
            this.maxShareMovePerRound = value;
            return this;
        }

        /** See {@link ControllerConfig#capacityShortfall()}. */
        public Builder capacityShortfall(String value) {
            this.capacityShortfall = value;
            return this;
        }

        /** See {@link ControllerConfig#planner()}. */
        public Builder planner(Planner value) {
            this.planner = value;
            return this;
        }

        /** The configuration (not validated; see {@link ControllerConfig#problems()}). */
        public ControllerConfig build() {
            return new ControllerConfig(
                    prometheus,
                    kubernetes,
                    roundSeconds,
                    sameNodeDelayMillis,
                    maxShareMovePerRound,
                    capacityShortfall,
                    planner);
        }
    }

    /** All defaults. */
    public static final ControllerConfig DEFAULTS = builder().build();

    /** Whether a round in capacity shortfall keeps the last rules ({@code capacityShortfall: hold}). */
    public boolean holdOnShortfall() {
        return HOLD.equals(capacityShortfall);
    }

    /** This configuration with another Prometheus URL (not validated; see {@link #problems()}). */
    public ControllerConfig withPrometheusUrl(String url) {
        return toBuilder().prometheus(prometheus.withUrl(url)).build();
    }

    /** A query with its windows filled in. */
    public String query(String template) {
        return template.replace(WINDOW, seconds(prometheus.windowSeconds()))
                .replace(DELAY_WINDOW, seconds(prometheus.delayWindowSeconds()));
    }

    private static String seconds(double value) {
        return Math.round(value) + "s";
    }

    /** Every invalid field, named with its path and value, and what was expected. */
    public List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        String url = prometheus.url();
        if (!validHttpUrl(url)) {
            problems.add(new Problem(
                    "prometheus.url",
                    quote(url),
                    "an http:// or https:// URL with a host, e.g. http://prometheus.istio-system:9090"));
        }
        range(problems, "prometheus.timeoutSeconds", prometheus.timeoutSeconds(), 0.1, 600);
        authProblems(problems);
        range(problems, "prometheus.windowSeconds", prometheus.windowSeconds(), 1, 3600);
        range(problems, "prometheus.delayWindowSeconds", prometheus.delayWindowSeconds(), 1, 86_400);
        range(problems, "prometheus.delayOneWayFraction", prometheus.delayOneWayFraction(), 0.01, 1);
        range(problems, "roundSeconds", roundSeconds, 1, 3600);
        range(problems, "sameNodeDelayMillis", sameNodeDelayMillis, 0, 3.6e6);
        if (!(maxShareMovePerRound > 0 && maxShareMovePerRound <= 1)) {
            problems.add(new Problem(
                    "maxShareMovePerRound", maxShareMovePerRound, Numbers.interval(true, 0, 1) + ", 1 = no cap"));
        }
        if (!PROCEED.equals(capacityShortfall) && !HOLD.equals(capacityShortfall)) {
            problems.add(new Problem("capacityShortfall", quote(capacityShortfall), "proceed or hold"));
        }
        double fitRounds = planner.idleFitRounds();
        if (!(fitRounds >= 0 && fitRounds <= HeartConfig.MAX_IDLE_FIT_ROUNDS && fitRounds == Math.rint(fitRounds))) {
            problems.add(new Problem(
                    "planner.idleFitRounds",
                    fitRounds,
                    "a whole number of rounds, 0 (off) .. " + HeartConfig.MAX_IDLE_FIT_ROUNDS));
        }
        if (!(planner.minShareOfEqualSplit() >= 0 && planner.minShareOfEqualSplit() < 1)) {
            problems.add(new Problem(
                    "planner.minShareOfEqualSplit", planner.minShareOfEqualSplit(), "a fraction in [0, 1), 0 = off"));
        }
        if (!(planner.spreadScale() >= 0 && planner.spreadScale() <= HeartConfig.MAX_SPREAD_SCALE)) {
            problems.add(new Problem(
                    "planner.spreadScale",
                    planner.spreadScale(),
                    Numbers.interval(false, 0, HeartConfig.MAX_SPREAD_SCALE) + ", 0 = off, min-cost flow"));
        }
        if (!(planner.loadHeadroom() >= 0 && planner.loadHeadroom() <= HeartConfig.MAX_LOAD_HEADROOM)) {
            problems.add(new Problem(
                    "planner.loadHeadroom",
                    planner.loadHeadroom(),
                    "a fraction of the measured load in [0, " + Numbers.written(HeartConfig.MAX_LOAD_HEADROOM)
                            + "], 0 = off"));
        }
        Map<String, String> queries = Map.of(
                "cpuCores",
                prometheus.queries().cpuCores(),
                "servedRequestsPerSecond",
                prometheus.queries().servedRequestsPerSecond(),
                "callsPerSecond",
                prometheus.queries().callsPerSecond(),
                "delaySeconds",
                prometheus.queries().delaySeconds());
        queries.forEach((name, query) -> {
            if (query.isBlank()) {
                problems.add(new Problem("prometheus.queries." + name, "empty", "PromQL"));
            }
        });
        if (kubernetes.namespaces().isEmpty()) {
            problems.add(new Problem("kubernetes.namespaces", "empty", "at least one namespace"));
        }
        for (int i = 0; i < kubernetes.namespaces().size(); i++) {
            String ns = kubernetes.namespaces().get(i);
            if (ns == null || !ns.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
                problems.add(new Problem("kubernetes.namespaces[" + i + "]", quote(ns), "a namespace name"));
            }
        }
        if (!kubernetes.componentLabel().matches("([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")) {
            problems.add(new Problem("kubernetes.componentLabel", quote(kubernetes.componentLabel()), "a label key"));
        }
        if (!kubernetes.clusterDomain().matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) {
            problems.add(new Problem("kubernetes.clusterDomain", quote(kubernetes.clusterDomain()), "a DNS name"));
        }
        if (kubernetes.fieldManager().isBlank() || kubernetes.fieldManager().length() > 128) {
            problems.add(new Problem("kubernetes.fieldManager", quote(kubernetes.fieldManager()), "1..128 characters"));
        }
        if (!kubernetes.stateConfigMap().isEmpty()
                && !kubernetes.stateConfigMap().matches("[a-z0-9-]+/[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) {
            problems.add(new Problem(
                    "kubernetes.stateConfigMap",
                    quote(kubernetes.stateConfigMap()),
                    "namespace/name, or \"\" for memory only"));
        }
        if (!kubernetes.lease().isEmpty() && !kubernetes.lease().matches("[a-z0-9-]+/[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) {
            problems.add(new Problem(
                    "kubernetes.lease", quote(kubernetes.lease()), "namespace/name, or \"\" for a single replica"));
        }
        range(problems, "kubernetes.leaseSeconds", kubernetes.leaseSeconds(), 2, 600);
        for (int i = 0; i < kubernetes.entryPoints().size(); i++) {
            String entry = kubernetes.entryPoints().get(i);
            try {
                EntryPoint.parse(entry, kubernetes.componentLabel());
            } catch (IllegalArgumentException e) {
                problems.add(entryPointProblem("kubernetes.entryPoints[" + i + "]", entry, e.getMessage()));
            }
        }
        return problems;
    }

    /**
     * What {@link EntryPoint#parse} said of {@code entry} ({@code expected: ...}, or what is wrong and then
     * {@code (expected: ...)}), as the problem of {@code path}.
     */
    private static Problem entryPointProblem(String path, String entry, String message) {
        String expected = "expected: ";
        if (message.startsWith(expected)) {
            return new Problem(path, quote(entry), message.substring(expected.length()));
        }
        int at = message.indexOf(" (" + expected);
        if (at < 0 || !message.endsWith(")")) {
            return new Problem(path, quote(entry) + ": " + message, "an entry point");
        }
        return new Problem(
                path,
                quote(entry) + ": " + message.substring(0, at),
                message.substring(at + 2 + expected.length(), message.length() - 1));
    }

    /** Authentication, TLS and headers of {@code prometheus}: contradictions and unreadable files. */
    private void authProblems(List<Problem> problems) {
        Prometheus p = prometheus;
        BasicAuth basic = p.basicAuth();
        if (p.bearerTokenFile() != null) {
            if (basic != null) {
                problems.add(new Problem(
                        "prometheus.bearerTokenFile and prometheus.basicAuth", "both set", "one authentication"));
            }
            readable(problems, "prometheus.bearerTokenFile", p.bearerTokenFile());
        }
        if (basic != null) {
            if (basic.username() == null
                    || basic.username().isEmpty()
                    || basic.username().contains(":")) {
                problems.add(new Problem(
                        "prometheus.basicAuth.username", quote(basic.username()), "a user name without ':'"));
            }
            if ((basic.password() == null) == (basic.passwordFile() == null)) {
                problems.add(new Problem(
                        "prometheus.basicAuth",
                        basic.password() == null
                                ? "neither password nor passwordFile"
                                : "both password and passwordFile",
                        "one of them"));
            }
            if (basic.passwordFile() != null) {
                readable(problems, "prometheus.basicAuth.passwordFile", basic.passwordFile());
            }
        }
        Tls tls = p.tls();
        if (tls.caFile() != null) {
            if (tls.insecureSkipVerify()) {
                problems.add(new Problem(
                        "prometheus.tls",
                        "caFile and insecureSkipVerify: true both set",
                        "one; a CA is not checked when verification is skipped"));
            }
            readable(problems, "prometheus.tls.caFile", tls.caFile());
        }
        if ((tls.caFile() != null || tls.insecureSkipVerify()) && p.url().startsWith("http://")) {
            problems.add(new Problem("prometheus.tls", "set for " + quote(p.url()), "an https:// URL"));
        }
        p.headers().forEach((name, value) -> {
            if (name == null || !name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
                problems.add(new Problem("prometheus.headers", quote(name), "an HTTP header name"));
            } else if (value == null || value.chars().anyMatch(c -> c == '\r' || c == '\n')) {
                problems.add(new Problem(
                        "prometheus.headers." + name,
                        value == null ? "missing" : "holds a line break",
                        "a one-line value"));
            } else if (name.equalsIgnoreCase("Authorization") && (p.bearerTokenFile() != null || basic != null)) {
                problems.add(new Problem(
                        "prometheus.headers.Authorization",
                        "set with bearerTokenFile or basicAuth",
                        "one authentication"));
            } else if (java.util.Set.of("host", "content-length", "connection", "expect", "upgrade")
                    .contains(name.toLowerCase(java.util.Locale.ROOT))) {
                problems.add(new Problem("prometheus.headers." + name, "set by the HTTP client", "another header"));
            }
        });
    }

    private static void readable(List<Problem> problems, String field, String file) {
        java.nio.file.Path path = java.nio.file.Path.of(file);
        if (!java.nio.file.Files.isRegularFile(path) || !java.nio.file.Files.isReadable(path)) {
            problems.add(new Problem(field, quote(file), "a readable file"));
        }
    }

    private static boolean validHttpUrl(String url) {
        if (!(url.startsWith("http://") || url.startsWith("https://"))) {
            return false;
        }
        try {
            java.net.URI uri = new java.net.URI(url);
            return uri.getHost() != null && !uri.getHost().isEmpty();
        } catch (java.net.URISyntaxException e) {
            return false;
        }
    }

    private static void range(List<Problem> problems, String name, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            problems.add(new Problem(name, value, Numbers.interval(false, min, max)));
        }
    }

    private static String quote(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }
}
