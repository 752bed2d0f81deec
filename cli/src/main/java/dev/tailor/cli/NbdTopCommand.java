package dev.tailor.cli;

import dev.tailor.lab.NbdTop;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor nbd top}: a live view of a running server's {@code /metrics}, like {@code top} for storage
 * engineers. Every {@code --interval} it reads the endpoint and shows, from the difference with the previous
 * reading: per export the IOPS, throughput, latency percentiles, error replies, requests dropped (their client went
 * away) and slow requests; admission's decisions and waits (mean and P99 over the interval) when it is on; per export its wait at its fair dispatch door (the same) when
 * the door is on; per export the per-request loop tracing (unrelated work waited behind, own work); per loop the
 * health-check age and the dispatch-delay bound (P99 over the interval); and, over the server's slow window (the last
 * 30 to 60 s by default), the (export, segment) pairs with the most slow requests, with where their time went
 * (admission queue, backend) and the class admission gave them. {@code --once} prints one frame (two readings an interval
 * apart) and exits, for scripts. docs/nbd.md, "Live view".
 */
@Command(
        name = "top",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "A live view of a running tailor nbd serve, from its metrics endpoint (--metrics-listen): IOPS, MiB/s and"
                    + " latency per export, admission's waits and those at the fair dispatch doors (mean and P99),"
                    + " per-request loop tracing, the event loops' dispatch delay (P99), and the segments with the"
                    + " most slow requests (where their time went: admission queue or backend; the class admission"
                    + " gave them). Rates, percentiles, waits and the dispatch delay cover the last interval; the slow"
                    + " segments, the server's slow window (the last 30 to 60 s by default). Ctrl-C ends it. docs/nbd.md, \"Live"
                    + " view\".",
            "",
        })
final class NbdTopCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--metrics",
            paramLabel = "URL",
            required = true,
            description = "The server's metrics endpoint:"
                    + " http://HOST:PORT/metrics, or HOST:PORT for that (what tailor nbd serve --metrics-listen prints);"
                    + " HOST:PORT/PATH is http://HOST:PORT/PATH; :PORT is 127.0.0.1:PORT, as tailor nbd serve"
                    + " --metrics-listen takes it.")
    String metrics;

    @Option(
            names = "--interval",
            paramLabel = "SECONDS",
            defaultValue = "2",
            description = "Seconds between" + " readings, 0.1 to 3600. Default: ${DEFAULT-VALUE}.")
    double intervalSeconds;

    @Option(names = "--once", description = "Print one frame (two readings an interval apart) and exit.")
    boolean once;

    @Option(
            names = "--top",
            paramLabel = "N",
            defaultValue = "10",
            description = "Slow segments shown, 1 to 100" + " (the server keeps 10). Default: ${DEFAULT-VALUE}.")
    int top;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        URI uri = NbdTop.uri(metrics);
        NbdExperimentCommand.check("--interval", intervalSeconds, 0.1, true, 3600, "seconds");
        NbdExperimentCommand.check("--top", top, 1, 100, "segments");
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long intervalNanos = (long) (intervalSeconds * 1e9);
        NbdTop.Reading previous = NbdTop.read(client, uri, once);
        boolean terminal = !once && System.console() != null;
        while (true) {
            LockSupport.parkNanos(intervalNanos);
            if (Thread.currentThread().isInterrupted()) {
                return 0;
            }
            NbdTop.Reading current = NbdTop.read(client, uri, once);
            List<String> lines = NbdTop.frame(uri, previous, current, intervalSeconds, Instant.now(), top);
            if (current.text() != null) {
                previous = current;
            }
            if (terminal) {
                out.print("\033[H\033[2J");
            }
            lines.forEach(out::println);
            if (!terminal && !once) {
                out.println();
            }
            out.flush();
            if (once) {
                return 0;
            }
        }
    }
}
