package dev.tailor.testkit;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A second application for tests, made at test time from the public OnlineBoutique data (see
 * {@link SharedData}): every component renamed, one left out, the span CSV moved into the folder
 * under another name. The data is never copied into the repository; the folder is written under a
 * test's temporary directory.
 *
 * <p>{@link #write} reads the day of metrics {@link #METRICS} (every {@code <pod>_metric.csv} and
 * {@code dependency.csv}) and the trace {@link #TRACE}, and writes to the target folder:
 * <ul>
 *   <li>{@code <pod>_metric.csv} for every pod whose component is not {@link #LEFT_OUT}, the pod
 *       renamed (component by {@link #RENAMES}, the two hashes kept) in the file name and in the
 *       {@code PodName} column; other bytes of the rows unchanged;</li>
 *   <li>{@code dependency.csv} with {@code Source} and {@code Target} renamed (names not in
 *       {@link #RENAMES}, such as {@code mysql} or node IPs, unchanged; rows of the left-out
 *       component kept, so it is in the graph without metrics);</li>
 *   <li>{@link #SPANS} (the trace) with {@code PodName} renamed.</li>
 * </ul>
 * The entry component becomes {@code web-gateway}, so nothing can find it by the name
 * {@code frontend}.
 */
public final class RenamedApp {

    /** The metrics day it is made from, inside the data folder. */
    public static final String METRICS = "microservices/trastrainer_onlineboutique/normal_2022-08-14";
    /** The trace it is made from, inside the data folder. */
    public static final String TRACE = "microservices/trastrainer_onlineboutique/faulty_2022-08-22/trace_06_20.csv";
    /** The AWS pings the tests give as link delays, inside the data folder. */
    public static final String LATENCY = "network_latency/aws_ec2_52node_pings/latency.csv.gz";
    /** Name of the span CSV in the written folder. */
    public static final String SPANS = "jaeger-spans.csv";
    /** OnlineBoutique component → its name in the second application. */
    public static final Map<String, String> RENAMES = Collections.unmodifiableMap(renames());
    /** The OnlineBoutique component whose metric file is not written. */
    public static final String LEFT_OUT = "emailservice";
    /** The renamed entry component. */
    public static final String ENTRY = "web-gateway";

    private RenamedApp() {}

    private static Map<String, String> renames() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("frontend", ENTRY);
        m.put("productcatalogservice", "catalog");
        m.put("cartservice", "basket");
        m.put("checkoutservice", "orders");
        m.put("currencyservice", "fx-rates");
        m.put("recommendationservice", "suggest");
        m.put("shippingservice", "delivery");
        m.put("paymentservice", "billing");
        m.put("emailservice", "mailer");
        m.put("adservice", "promo");
        return m;
    }

    /**
     * Writes the second application into {@code target} (created if needed); skips the calling
     * test when the public data is absent ({@link SharedData#require}).
     *
     * @return {@code target}
     * @throws IOException when a file cannot be read or written
     */
    public static Path write(Path target) throws IOException {
        Path metrics = SharedData.require(METRICS);
        Path trace = SharedData.require(TRACE);
        Files.createDirectories(target);
        List<Path> podFiles = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(metrics, "*_metric.csv")) {
            listing.forEach(podFiles::add);
        }
        for (Path file : podFiles) {
            String name = file.getFileName().toString();
            String pod = name.substring(0, name.length() - "_metric.csv".length());
            if (LEFT_OUT.equals(componentOf(pod))) {
                continue;
            }
            rewrite(file, target.resolve(renamePod(pod) + "_metric.csv"), Set.of("PodName"), RenamedApp::renamePod);
        }
        rewrite(
                metrics.resolve("dependency.csv"),
                target.resolve("dependency.csv"),
                Set.of("Source", "Target"),
                name -> RENAMES.getOrDefault(name, name));
        rewrite(trace, target.resolve(SPANS), Set.of("PodName"), RenamedApp::renamePod);
        return target;
    }

    /** {@code frontend-579b9bff58-svcgr} → {@code web-gateway-579b9bff58-svcgr}; other names unchanged. */
    public static String renamePod(String pod) {
        String component = componentOf(pod);
        if (component == null || !RENAMES.containsKey(component)) {
            return pod;
        }
        return RENAMES.get(component) + pod.substring(component.length());
    }

    private static String componentOf(String pod) {
        String[] parts = pod.split("-", -1);
        return parts.length < 3 ? null : String.join("-", Arrays.copyOf(parts, parts.length - 2));
    }

    /** Copies a header-first CSV (no quoting), mapping the cells of {@code columns} through {@code rename}. */
    private static void rewrite(
            Path from, Path to, Set<String> columns, java.util.function.UnaryOperator<String> rename)
            throws IOException {
        List<String> lines = Files.readAllLines(from, StandardCharsets.UTF_8);
        List<String> header = List.of(lines.get(0).split(",", -1));
        List<Integer> indices = new ArrayList<>();
        for (String column : columns) {
            int i = header.indexOf(column);
            if (i < 0) {
                throw new IOException(from + ": no column " + column + " in " + header);
            }
            indices.add(i);
        }
        try (BufferedWriter out = Files.newBufferedWriter(to, StandardCharsets.UTF_8)) {
            out.write(lines.get(0));
            out.newLine();
            for (String line : lines.subList(1, lines.size())) {
                String[] cells = line.split(",", -1);
                for (int i : indices) {
                    if (i < cells.length) {
                        cells[i] = rename.apply(cells[i]);
                    }
                }
                out.write(String.join(",", cells));
                out.newLine();
            }
        }
    }
}
