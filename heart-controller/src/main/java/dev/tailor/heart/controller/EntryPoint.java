package dev.tailor.heart.controller;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * An entry point of {@code kubernetes.entryPoints}: a workload whose calls Tailor does not route
 * (the ingress gateway), written {@code namespace/workload} (its pods carry
 * {@code <componentLabel>=<workload>}) or {@code namespace/KEY=VALUE[,KEY=VALUE...]} (its pods carry
 * those labels, e.g. {@code istio-system/istio=ingressgateway}). Its rules go to its namespace and
 * select its pods by the same labels.
 *
 * @param namespace the pods' namespace
 * @param name      its name in plans and rule names: the workload, or the selector's values joined
 *                  by '-' ({@code istio=ingressgateway} → {@code ingressgateway})
 * @param selector  the labels its pods are listed and its rules select by
 */
public record EntryPoint(String namespace, String name, Map<String, String> selector) {

    private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    private static final Pattern LABEL_KEY =
            Pattern.compile("([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?" + "[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");

    public EntryPoint {
        selector = Map.copyOf(new TreeMap<>(selector));
    }

    /**
     * Parses one entry of {@code kubernetes.entryPoints}.
     *
     * @throws IllegalArgumentException saying what is expected
     */
    public static EntryPoint parse(String entry, String componentLabel) {
        String expected = "expected: namespace/workload, or namespace/KEY=VALUE[,KEY=VALUE...] such as"
                + " istio-system/istio=ingressgateway";
        int slash = entry == null ? -1 : entry.indexOf('/');
        if (slash <= 0 || !NAME.matcher(entry.substring(0, slash)).matches()) {
            throw new IllegalArgumentException(expected);
        }
        String namespace = entry.substring(0, slash);
        String rest = entry.substring(slash + 1);
        if (!rest.contains("=")) {
            if (!NAME.matcher(rest).matches()) {
                throw new IllegalArgumentException(expected);
            }
            return new EntryPoint(namespace, rest, Map.of(componentLabel, rest));
        }
        Map<String, String> selector = new TreeMap<>();
        StringBuilder name = new StringBuilder();
        for (String pair : rest.split(",", -1)) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? "" : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            if (!LABEL_KEY.matcher(key).matches()
                    || value.isEmpty()
                    || value.length() > 63
                    || !LABEL_VALUE.matcher(value).matches()
                    || selector.put(key, value) != null) {
                throw new IllegalArgumentException(
                        "label " + (pair.isEmpty() ? "(empty)" : pair) + " (" + expected + ", each key once)");
            }
            name.append(name.isEmpty() ? "" : "-")
                    .append(value.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-"));
        }
        String joined = name.toString().replaceAll("-{2,}", "-").replaceAll("^-|-$", "");
        if (joined.isEmpty() || joined.length() > 63) {
            throw new IllegalArgumentException("its label values make no name of 1..63 characters (" + expected + ")");
        }
        return new EntryPoint(namespace, joined, selector);
    }

    /** Whether its pods are selected by labels other than {@code <componentLabel>=<name>}. */
    public boolean bySelector(String componentLabel) {
        return !selector.equals(Map.of(componentLabel, name));
    }
}
