package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tailor.heart.Link;
import dev.tailor.heart.Plan;
import dev.tailor.heart.Route;
import dev.tailor.heart.Snapshot;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code tailor heart plan --format istio}: one Istio {@code DestinationRule} per (caller workload,
 * callee host), as docs/design.md#actuation describes: {@code workloadSelector} = the caller's
 * pods, {@code localityLbSetting.distribute} = one {@code from} per caller node with integer weights
 * summing to 100, and {@code outlierDetection}, without which older meshes ignore
 * {@code distribute}. Apply with {@code kubectl apply -f -} or server-side apply.
 *
 * <p>Names that Kubernetes or Istio would reject (a component that is not a DNS label, a locality
 * with more than three parts) are refused here with a clear message, instead of producing YAML that
 * fails at apply time.
 */
public final class IstioRules {

    /** Label on every rule Tailor writes, so they can be listed and removed. */
    static final String MANAGED_BY = DestinationRules.MANAGED_BY;

    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern LABEL_NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    private IstioRules() {}

    /**
     * Where the rules of entry points (callers without replicas, e.g. the ingress) go.
     *
     * @param namespace the gateway's namespace, e.g. {@code istio-system}
     * @param selector  the labels of the gateway's pods, e.g. {@code istio=ingressgateway}
     */
    record Gateway(String namespace, Map<String, String> selector) {

        static final String EXPECTED =
                "expected: NAMESPACE/KEY=VALUE[,KEY=VALUE...], e.g." + " istio-system/istio=ingressgateway";

        /** {@code NAMESPACE/KEY=VALUE[,KEY=VALUE...]}, or a {@link IllegalArgumentException} naming what is wrong. */
        static Gateway parse(String text) {
            int slash = text.indexOf('/');
            if (slash <= 0 || slash == text.length() - 1) {
                throw invalid("--ingress-gateway: \"" + text + "\" (" + EXPECTED + ")");
            }
            String namespace = text.substring(0, slash);
            if (!isDnsLabel(namespace)) {
                throw invalid("--ingress-gateway: namespace \"" + namespace + "\" (expected: a DNS label,"
                        + " lowercase letters, digits and '-'; " + EXPECTED + ")");
            }
            Map<String, String> selector = new java.util.TreeMap<>();
            for (String pair : text.substring(slash + 1).split(",", -1)) {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? null : pair.substring(eq + 1);
                if (value == null && isLabelValue(pair)) {
                    // The controller's entryPoints also take namespace/workload; here a selector is needed.
                    throw invalid("--ingress-gateway: selector \"" + pair + "\" is not KEY=VALUE (a"
                            + " workload name? select its pods by a label, e.g. " + namespace + "/app=" + pair
                            + "; " + EXPECTED + ")");
                }
                if (value == null || !isLabelKey(key) || !(value.isEmpty() || isLabelValue(value))) {
                    throw invalid("--ingress-gateway: selector \"" + pair + "\" (expected: KEY=VALUE with a"
                            + " label key and value; " + EXPECTED + ")");
                }
                if (selector.put(key, value) != null) {
                    throw invalid("--ingress-gateway: label key \"" + key + "\" given twice (" + EXPECTED + ")");
                }
            }
            return new Gateway(namespace, Map.copyOf(selector));
        }

        @Override
        public String toString() {
            return namespace + "/"
                    + String.join(
                            ",",
                            new java.util.TreeMap<>(selector)
                                    .entrySet().stream()
                                            .map(e -> e.getKey() + "=" + e.getValue())
                                            .toList());
        }
    }

    /**
     * Options of the Istio output, checked.
     *
     * @param gateway where entry points' rules go, or {@code null}: then like any caller's, in
     *                {@code namespace} selecting {@code selectorLabel=<entry point>}
     */
    public record Options(String namespace, String selectorLabel, String clusterDomain, Gateway gateway) {

        Options(String namespace, String selectorLabel, String clusterDomain) {
            this(namespace, selectorLabel, clusterDomain, null);
        }

        /** The options, or a {@link IllegalArgumentException} naming the first that Kubernetes would reject. */
        public static Options checked(String namespace, String selectorLabel, String clusterDomain) {
            return checked(namespace, selectorLabel, clusterDomain, null);
        }

        /** The options, or a {@link IllegalArgumentException} naming the first that Kubernetes would reject. */
        public static Options checked(String namespace, String selectorLabel, String clusterDomain, String gateway) {
            if (!isDnsLabel(namespace)) {
                throw invalid("--namespace: \"" + namespace + "\" (expected: a DNS label, lowercase"
                        + " letters, digits and '-', at most 63 characters)");
            }
            String name = selectorLabel.contains("/")
                    ? selectorLabel.substring(selectorLabel.indexOf('/') + 1)
                    : selectorLabel;
            String prefix = selectorLabel.contains("/") ? selectorLabel.substring(0, selectorLabel.indexOf('/')) : null;
            if (name.length() > 63
                    || !LABEL_NAME.matcher(name).matches()
                    || (prefix != null
                            && (prefix.length() > 253
                                    || !DNS_SUBDOMAIN.matcher(prefix).matches()))) {
                throw invalid("--selector-label: \"" + selectorLabel + "\" (expected: a label key such as app"
                        + " or app.kubernetes.io/name)");
            }
            if (clusterDomain.length() > 253
                    || !DNS_SUBDOMAIN.matcher(clusterDomain).matches()) {
                throw invalid("--cluster-domain: \"" + clusterDomain + "\" (expected: a DNS name such as"
                        + " cluster.local)");
            }
            return new Options(
                    namespace, selectorLabel, clusterDomain, gateway == null ? null : Gateway.parse(gateway));
        }
    }

    /** Prints the rules as YAML documents; with {@code explain}, each rule's reasoning as comments. */
    public static void print(Plan plan, Snapshot snapshot, Options options, boolean explain, PrintWriter out) {
        List<Route> routes = plan.allocation().routes();
        List<ObjectNode> rules = of(routes, snapshot, options);
        YAMLMapper yaml = new YAMLMapper(new YAMLFactory()
                .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));
        out.println("# Generated by tailor heart plan (round " + plan.state().rounds() + "): one DestinationRule per"
                + " (caller, callee).");
        boolean first = true;
        for (Route route : routes) {
            ObjectNode rule = rules.stream()
                    .filter(r -> r.at("/metadata/name").asText().equals(name(route.caller(), route.callee())))
                    .findFirst()
                    .orElse(null);
            if (rule == null) {
                if (explain) {
                    out.println(
                            "# " + route.caller() + " -> " + route.callee() + ": no rule, no caller node sends calls");
                }
                continue;
            }
            if (!first) {
                out.println("---");
            }
            first = false;
            if (explain) {
                out.printf(
                        Locale.ROOT,
                        "# %s -> %s, %.1f req/s%s, mean link delay %s ms%n",
                        route.caller(),
                        route.callee(),
                        route.requestsPerSecond(),
                        route.entryPoint() ? " (entry point)" : "",
                        PlanTable.fixed3(route.meanDelayMillis()));
                for (String step : route.explain()) {
                    out.println("#   " + step);
                }
                if (!route.prunedLinks().isEmpty()) {
                    out.println("#   pruned: "
                            + String.join(
                                    ", ",
                                    route.prunedLinks().stream()
                                            .map(Link::toString)
                                            .toList()));
                }
            }
            try {
                out.print(yaml.writeValueAsString(rule));
            } catch (IOException e) {
                throw new IllegalStateException("cannot write YAML", e);
            }
        }
    }

    /** One DestinationRule per route that has at least one {@code from} entry, as JSON trees. */
    static List<ObjectNode> of(List<Route> routes, Snapshot snapshot, Options options) {
        Map<String, String> namespaceOf = new java.util.TreeMap<>();
        Map<String, Map<String, String>> selectorOf = new java.util.TreeMap<>();
        if (options.gateway() != null) {
            for (Route route : routes) {
                if (route.entryPoint()) {
                    namespaceOf.put(route.caller(), options.gateway().namespace());
                    selectorOf.put(route.caller(), options.gateway().selector());
                }
            }
        }
        try {
            return DestinationRules.of(
                    routes,
                    snapshot,
                    new DestinationRules.Options(
                            namespaceOf,
                            options.namespace(),
                            options.selectorLabel(),
                            options.clusterDomain(),
                            selectorOf));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    e.getMessage() + (e.getMessage().contains("locality") ? "" : "; use --format table or json"), e);
        }
    }

    static String name(String caller, String callee) {
        return DestinationRules.name(caller, callee);
    }

    /** Entry points whose rules select pods by {@code selectorLabel=<name>}, for want of {@code --ingress-gateway}. */
    public static List<String> entryPointsWithoutGateway(List<Route> routes, Options options) {
        if (options.gateway() != null) {
            return List.of();
        }
        return routes.stream()
                .filter(Route::entryPoint)
                .map(Route::caller)
                .distinct()
                .sorted()
                .toList();
    }

    private static boolean isLabelKey(String key) {
        String name = key.contains("/") ? key.substring(key.indexOf('/') + 1) : key;
        String prefix = key.contains("/") ? key.substring(0, key.indexOf('/')) : null;
        return name.length() <= 63
                && LABEL_NAME.matcher(name).matches()
                && (prefix == null
                        || (prefix.length() <= 253
                                && DNS_SUBDOMAIN.matcher(prefix).matches()));
    }

    private static boolean isLabelValue(String value) {
        return value.length() <= 63 && LABEL_NAME.matcher(value).matches();
    }

    private static boolean isDnsLabel(String value) {
        return value != null && value.length() <= 63 && DNS_LABEL.matcher(value).matches();
    }

    /** Bad input, named in {@code message}: the option, the value and what was expected. */
    private static IllegalArgumentException invalid(String message) {
        return new IllegalArgumentException(message);
    }
}
