package dev.tailor.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The controller's log: text and JSON lines, levels, Kubernetes errors on one line, stack traces at debug only. */
class LogsTest {

    private final StringWriter buffer = new StringWriter();

    @AfterEach
    void reset() {
        Logs.reset();
    }

    /** What fabric8 throws when the API server answers 403 to a list of pods. */
    private static KubernetesClientException forbidden() {
        return new KubernetesClientException(
                "Failure executing: GET at:"
                        + " https://10.0.0.1:6443/api/v1/namespaces/shop/pods. Message: pods is forbidden: User \"system:serviceaccount:tailor-system:tailor-heart\" cannot list"
                        + " resource \"pods\" in API group \"\" in the namespace \"shop\". Received status: Status(code=403).",
                403,
                new StatusBuilder()
                        .withCode(403)
                        .withReason("Forbidden")
                        .withMessage("pods is forbidden: User"
                                + " \"system:serviceaccount:tailor-system:tailor-heart\" cannot list resource \"pods\" in API group"
                                + " \"\" in the namespace \"shop\"")
                        .build());
    }

    private List<String> logAll(Logs.Format format, Logs.Threshold threshold) {
        Logs.configure(format, threshold, new PrintWriter(buffer, true));
        Logs.TAILOR.info("round 1 planned");
        Logs.TAILOR.debug("detail of the round");
        // A library's watch failure: fabric8 logs it with the exception at WARN.
        LoggerFactory.getLogger("io.fabric8.kubernetes.client.informers.impl.cache.Reflector")
                .warn("Watch failed", new RuntimeException("watch closed", forbidden()));
        // A library's information: the mock server's and the HTTP client's chatter.
        LoggerFactory.getLogger("io.fabric8.kubernetes.client.Config").info("Trying to configure client");
        return buffer.toString().lines().toList();
    }

    @Test
    void text_info_timestampLevelAndOneLinePerEvent_kubernetesErrorAsVerbResourceCodeMessage() {
        List<String> lines = logAll(Logs.Format.text, Logs.Threshold.info);

        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  tailor: round 1" + " planned");
        // One line: no stack trace, no Status(...) dump, the verb, the URL, the code and the message.
        assertThat(lines.get(1))
                .contains("WARN  Reflector: Watch failed (GET"
                        + " https://10.0.0.1:6443/api/v1/namespaces/shop/pods: 403 Forbidden: pods is forbidden: User")
                .doesNotContain("Status(");
    }

    @Test
    void text_debug_addsDebugLinesAndStackTraces() {
        List<String> lines = logAll(Logs.Format.text, Logs.Threshold.debug);

        assertThat(lines).anyMatch(l -> l.contains("DEBUG tailor: detail of the round"));
        assertThat(lines).anyMatch(l -> l.startsWith("\tat "));
        assertThat(lines).anyMatch(l -> l.contains("INFO  Config: Trying to configure client"));
    }

    @Test
    void json_everyLineParses_withTimeLevelLoggerMessage_andTheErrorOnOneLine() throws Exception {
        List<String> lines = logAll(Logs.Format.json, Logs.Threshold.info);

        ObjectMapper json = new ObjectMapper();
        assertThat(lines).hasSize(2);
        for (String line : lines) {
            JsonNode event = json.readTree(line);
            assertThat(event.isObject()).isTrue();
            assertThat(event.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
            assertThat(event.has("level") && event.has("logger") && event.has("message"))
                    .isTrue();
        }
        JsonNode warning = json.readTree(lines.get(1));
        assertThat(warning.get("level").asText()).isEqualTo("WARN");
        assertThat(warning.get("error").asText()).contains("403 Forbidden").doesNotContain("\n");
        assertThat(warning.has("stack")).isFalse();
    }

    @Test
    void json_debug_carriesTheStack() throws Exception {
        List<String> lines = logAll(Logs.Format.json, Logs.Threshold.debug);

        ObjectMapper json = new ObjectMapper();
        JsonNode warning = null;
        for (String line : lines) {
            JsonNode event = json.readTree(line);
            if (event.get("level").asText().equals("WARN")) {
                warning = event;
            }
        }
        assertThat(warning).isNotNull();
        assertThat(warning.get("stack").asText()).contains("at dev.tailor.cli.LogsTest");
    }

    /**
     * What {@code tailor heart run} logged with no API server answering: fabric8's ERROR for the pod watch
     * that could not start, again at each round's retry, beside the controller's own warning.
     */
    private List<String> watchCannotStart(Logs.Format format, Logs.Threshold threshold) {
        Logs.configure(format, threshold, new PrintWriter(buffer, true));
        org.slf4j.Logger reflector =
                LoggerFactory.getLogger("io.fabric8.kubernetes.client.informers.impl.cache.Reflector");
        for (int round = 1; round <= 3; round++) {
            reflector.error(
                    "{} failed for {}, will stop",
                    "listSyncAndWatch",
                    "v1/namespaces/shop/pods",
                    new java.util.concurrent.CompletionException(new java.net.ConnectException(null)
                            .initCause(new java.nio.channels.ClosedChannelException())));
            if (round == 1) {
                Logs.TAILOR.warn("cannot watch pods in namespace shop (no cluster reachable: https://127.0.0.1:1/:"
                        + " connection refused): re-plans on pod events are off until it can; retried before"
                        + " every round; rounds go on");
            }
            Logs.TAILOR.error("round " + round + " failed");
        }
        return buffer.toString().lines().toList();
    }

    @Test
    void text_info_aLibrarysRepeatedError_isOneWarning_besideOurLines_whichAllStay() {
        List<String> lines = watchCannotStart(Logs.Format.text, Logs.Threshold.info);

        assertThat(lines).noneMatch(l -> l.contains("ERROR Reflector"));
        assertThat(lines)
                .filteredOn(l -> l.contains("Reflector"))
                .singleElement()
                .asString()
                .contains("WARN  Reflector: listSyncAndWatch failed for v1/namespaces/shop/pods, will stop"
                        + " (no API server reachable: connection refused)");
        assertThat(lines)
                .filteredOn(l -> l.contains("WARN  tailor: cannot watch pods"))
                .hasSize(1);
        assertThat(lines).filteredOn(l -> l.contains("ERROR tailor: round")).hasSize(3);
    }

    @Test
    void json_info_aLibrarysErrorIsAWarning() throws Exception {
        List<String> lines = watchCannotStart(Logs.Format.json, Logs.Threshold.info);

        ObjectMapper json = new ObjectMapper();
        List<JsonNode> library = lines.stream()
                .map(line -> {
                    try {
                        return json.readTree(line);
                    } catch (java.io.IOException e) {
                        throw new AssertionError(line, e);
                    }
                })
                .filter(event -> event.get("logger").asText().startsWith("io.fabric8"))
                .toList();
        assertThat(library).singleElement().satisfies(event -> {
            assertThat(event.get("level").asText()).isEqualTo("WARN");
            assertThat(event.get("error").asText()).isEqualTo("no API server reachable: connection refused");
        });
    }

    @Test
    void text_debug_showsEveryRepeat() {
        List<String> lines = watchCannotStart(Logs.Format.text, Logs.Threshold.debug);

        assertThat(lines)
                .filteredOn(l -> l.contains("WARN  Reflector: listSyncAndWatch"))
                .hasSize(3);
    }

    @Test
    void reset_stopsWritingToTheCommandsStream() {
        Logs.configure(Logs.Format.text, Logs.Threshold.info, new PrintWriter(buffer, true));
        Logs.reset();
        Logs.TAILOR.warn("after the command");

        assertThat(buffer.toString()).isEmpty();
    }
}
