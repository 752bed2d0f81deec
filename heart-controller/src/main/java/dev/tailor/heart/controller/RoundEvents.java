package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Kubernetes Events for what the controller's rounds do, as operators record them, so that {@code kubectl
 * describe destinationrule NAME} and {@code kubectl get events} tell what Tailor changed and when:
 * <ul>
 *   <li>a {@code Normal} event on each DestinationRule a round creates ({@code RuleCreated}, with how many locality weights it sets), updates
 *       ({@code WeightsUpdated}, with how many locality weights moved and the largest move, in
 *       percentage points) or deletes ({@code RuleDeleted});</li>
 *   <li>a {@code Warning} event on the controller's own pod when rounds start failing, or fail for
 *       another reason than the round before (the reason in UpperCamelCase, e.g.
 *       {@code PrometheusUnreachable}; the note is the round's message), and a {@code Normal}
 *       {@code RoundsRecovered} when a round applies again. Rounds that keep failing for the same
 *       reason add no event: the log and {@code tailor_heart_round_failures_total} count them.</li>
 * </ul>
 * events.k8s.io/v1, reporting controller {@value #REPORTING_CONTROLLER}, reporting instance the
 * replica's identity. The pod events need the pod's name ({@code POD_NAME}, which the bundled
 * manifests set from the downward API); without it only the rules' events are recorded. Dry runs
 * record nothing.
 *
 * <p>Best effort: the events are sent on their own thread ({@code sender}), so a slow or refusing API
 * server never delays or fails a round; an event the API server refuses (e.g. the role lacks
 * {@code create} on {@code events.events.k8s.io}) is dropped, and the first refusal of each HTTP status is
 * logged, a 403 with the {@code kubectl auth can-i} command that checks the permission. Each event carries
 * the uid of what it is about, read on the sender's thread, so {@code kubectl describe} shows it; an
 * object that cannot be read (a deleted rule) leaves it out. The controller's pod is read until its uid is
 * known, and the first failure of each HTTP status is logged, as the refusals are; so is the first failure of
 * each HTTP status to read a rule (a deleted rule, 404, is not a failure).
 *
 * <p>Not thread-safe: {@link #after} is called on the rounds thread only.
 */
final class RoundEvents {

    /** The events' {@code reportingController}. */
    static final String REPORTING_CONTROLLER = "tailor.dev/heart";
    /** The API server's limit on an event's note, in bytes of UTF-8. */
    static final int NOTE_LIMIT = 1024;
    /** Events waiting to be sent at most; see {@link #sender()}. */
    static final int QUEUED = 256;

    private static final ObjectMapper YAML = new YAMLMapper();
    private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter.ofPattern(
                    "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private final KubernetesClient client;
    private final String instance;
    /** The controller's pod, or {@code null} when it is not known. */
    private final ObjectReference pod;

    private final LongSupplier epochMillis;
    private final Consumer<String> log;
    private final Executor sender;
    private Controller.FailureReason lastFailure;
    /** The HTTP statuses of the refusals logged so far (0: no answer). */
    private final Set<Integer> refusalsLogged = ConcurrentHashMap.newKeySet();
    /** The HTTP statuses of the failed reads of the controller pod's uid logged so far (0: no answer). */
    private final Set<Integer> lookupFailuresLogged = ConcurrentHashMap.newKeySet();
    /** The HTTP statuses of the failed reads of a DestinationRule's uid logged so far (0: no answer). */
    private final Set<Integer> ruleLookupFailuresLogged = ConcurrentHashMap.newKeySet();
    /** The controller pod's uid once read, on the sender's thread. */
    private volatile String podUid;

    private long sequence;

    /**
     * @param client       where events are created
     * @param instance     the replica's identity (the pod's name in a cluster)
     * @param podNamespace the controller pod's namespace, or {@code null}
     * @param podName      the controller pod's name, or {@code null} when not running in a pod: then no
     *                     pod events
     * @param epochMillis  the wall clock (events carry wall-clock times)
     * @param log          where a refusal is said, once
     * @param sender       where the events are sent from (e.g. {@link #sender()}); it may drop them
     */
    RoundEvents(
            KubernetesClient client,
            String instance,
            String podNamespace,
            String podName,
            LongSupplier epochMillis,
            Consumer<String> log,
            Executor sender) {
        this.client = client;
        this.instance = instance;
        this.pod = podName == null || podName.isBlank() || podNamespace == null || podNamespace.isBlank()
                ? null
                : new ObjectReferenceBuilder()
                        .withApiVersion("v1")
                        .withKind("Pod")
                        .withNamespace(podNamespace)
                        .withName(podName)
                        .build();
        this.epochMillis = epochMillis;
        this.log = log;
        this.sender = sender;
    }

    /**
     * A thread of its own for the events, with at most {@value #QUEUED} waiting: more are dropped, as an
     * API server that far behind would not take them either. Shut it down when the controller stops.
     */
    static ThreadPoolExecutor sender() {
        return new ThreadPoolExecutor(
                1,
                1,
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(QUEUED),
                runnable -> {
                    Thread thread = new Thread(runnable, "tailor-heart-events");
                    thread.setDaemon(true);
                    return thread;
                },
                new ThreadPoolExecutor.DiscardPolicy());
    }

    /** Records the events of {@code round}, one that was not a dry run. */
    void after(Controller.Round round) {
        if (round.failure() != null) {
            if (round.failure() != lastFailure && pod != null) {
                create(pod, "Warning", reason(round.failure()), "Round", round.message());
            }
            lastFailure = round.failure();
            return;
        }
        if (!round.applied()) {
            return;
        }
        if (lastFailure != null && pod != null) {
            create(
                    pod,
                    "Normal",
                    "RoundsRecovered",
                    "Round",
                    "rounds apply their plans again (they failed with " + reason(lastFailure) + ")");
        }
        lastFailure = null;
        for (Actuator.Change change : round.changes()) {
            switch (change.action()) {
                case CREATE -> create(rule(change), "Normal", "RuleCreated", "Apply", created(change));
                case UPDATE -> create(rule(change), "Normal", "WeightsUpdated", "Apply", summary(change));
                case DELETE ->
                    create(
                            rule(change),
                            "Normal",
                            "RuleDeleted",
                            "Delete",
                            "deleted: no plan routes this caller to this host any more");
                case UNCHANGED -> {
                    // Nothing written, nothing to tell.
                }
            }
        }
    }

    /** {@code PROMETHEUS_UNREACHABLE} → {@code PrometheusUnreachable}. */
    static String reason(Controller.FailureReason failure) {
        StringBuilder out = new StringBuilder();
        for (String word : failure.name().split("_")) {
            out.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        }
        return out.toString();
    }

    /** What a new rule sets, e.g. {@code "created with 6 locality weights"}. */
    static String created(Actuator.Change change) {
        int weights = weights(change.after()).size();
        return weights == 0
                ? "created without locality weights"
                : "created with " + weights + (weights == 1 ? " locality weight" : " locality weights");
    }

    /**
     * What an update does to the locality weights ({@code spec.trafficPolicy.loadBalancer.localityLbSetting.distribute}):
     * how many (from, to) weights it moves and the largest move in percentage points, e.g.
     * {@code "2 locality weights set by tailor heart, the largest move 12 points (eu/eu-a/* → eu/eu-a/*: 60 → 72)"}.
     */
    static String summary(Actuator.Change change) {
        Map<String, Integer> before = weights(change.before());
        Map<String, Integer> after = weights(change.after());
        int moved = 0;
        int largest = 0;
        String where = null;
        Map<String, Integer> keys = new TreeMap<>(before);
        keys.putAll(after);
        for (String key : keys.keySet()) {
            int from = before.getOrDefault(key, 0);
            int to = after.getOrDefault(key, 0);
            if (from != to) {
                moved++;
                if (Math.abs(to - from) > largest) {
                    largest = Math.abs(to - from);
                    where = key + ": " + from + " → " + to;
                }
            }
        }
        if (moved == 0) {
            return "locality weights unchanged (other fields of the rule changed)";
        }
        return moved + (moved == 1 ? " locality weight" : " locality weights")
                + " set by tailor heart, the largest move " + largest + (largest == 1 ? " point (" : " points (")
                + where + ")";
    }

    /** (from → to) → weight, from a rule's YAML as {@link Actuator.Change} carries it; empty when none. */
    private static Map<String, Integer> weights(String yaml) {
        Map<String, Integer> out = new TreeMap<>();
        if (yaml == null || yaml.isBlank()) {
            return out;
        }
        JsonNode rule;
        try {
            rule = YAML.readTree(yaml);
        } catch (IOException e) {
            return out;
        }
        for (JsonNode entry : rule.at("/spec/trafficPolicy/loadBalancer/localityLbSetting/distribute")) {
            String from = entry.path("from").asText();
            entry.path("to")
                    .properties()
                    .forEach(to ->
                            out.put(from + " → " + to.getKey(), to.getValue().asInt()));
        }
        return out;
    }

    /**
     * {@code note} when it fits in {@value #NOTE_LIMIT} bytes of UTF-8; else its longest start that fits
     * with an ellipsis after it, cut between code points.
     */
    static String cut(String note) {
        if (note.getBytes(StandardCharsets.UTF_8).length <= NOTE_LIMIT) {
            return note;
        }
        int room = NOTE_LIMIT - "…".getBytes(StandardCharsets.UTF_8).length;
        int end = 0;
        while (end < note.length()) {
            int codePoint = note.codePointAt(end);
            int bytes = codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
            if (bytes > room) {
                break;
            }
            room -= bytes;
            end += Character.charCount(codePoint);
        }
        return note.substring(0, end) + "…";
    }

    private static ObjectReference rule(Actuator.Change change) {
        return new ObjectReferenceBuilder()
                .withApiVersion(Actuator.DESTINATION_RULE.getGroup() + "/" + Actuator.DESTINATION_RULE.getVersion())
                .withKind(Actuator.DESTINATION_RULE.getKind())
                .withNamespace(change.namespace())
                .withName(change.name())
                .build();
    }

    private void create(ObjectReference regarding, String type, String reason, String action, String note) {
        long millis = epochMillis.getAsLong();
        String trimmed = cut(note == null ? "" : note);
        Event event = new EventBuilder()
                .withNewMetadata()
                .withNamespace(regarding.getNamespace())
                // As client-go names them: the object's name and a unique hexadecimal suffix.
                .withName(regarding.getName() + "." + Long.toHexString(millis * 1_000_000L + (sequence++ % 1_000_000L)))
                .endMetadata()
                .withRegarding(regarding)
                .withType(type)
                .withReason(reason)
                .withAction(action)
                .withNote(trimmed)
                .withReportingController(REPORTING_CONTROLLER)
                .withReportingInstance(instance)
                .withEventTime(new MicroTime(MICRO_TIME.format(Instant.ofEpochMilli(millis))))
                .build();
        sender.execute(() -> send(event));
    }

    /** On the sender's thread. */
    private void send(Event event) {
        String namespace = event.getMetadata().getNamespace();
        String uid = uid(event.getRegarding());
        if (uid != null) {
            event.setRegarding(new ObjectReferenceBuilder(event.getRegarding())
                    .withUid(uid)
                    .build());
        }
        try {
            client.events().v1().events().inNamespace(namespace).resource(event).create();
        } catch (KubernetesClientException e) {
            if (refusalsLogged.add(e.getCode())) {
                log.accept("cannot record Kubernetes Events ("
                        + KubernetesErrors.describe(e, client.getMasterUrl().toString())
                        + "); rounds go on without them"
                        + (e.getCode() == 403
                                ? ". Check the role: kubectl auth can-i create events.events.k8s.io -n " + namespace
                                        + " --as " + account()
                                : ""));
            }
        }
    }

    /**
     * The uid of what an event is about, by which {@code kubectl describe} finds its events (the pod's read
     * once); {@code null} when it cannot be read: the event goes without it. A deleted rule has none; any other
     * failure is logged once per HTTP status, as the pod's (see {@link #ruleUidFailure}).
     */
    private String uid(ObjectReference regarding) {
        if ("Pod".equals(regarding.getKind())) {
            if (podUid == null) {
                podUid = podUid(regarding.getNamespace(), regarding.getName());
            }
            return podUid;
        }
        try {
            GenericKubernetesResource found = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                    .inNamespace(regarding.getNamespace())
                    .withName(regarding.getName())
                    .get();
            return found == null ? null : found.getMetadata().getUid();
        } catch (KubernetesClientException e) {
            ruleUidFailure(regarding, e);
            return null;
        }
    }

    /**
     * Logs the first failure of each HTTP status to read a DestinationRule for its uid (0: no API server answered)
     * with what the rules' events lack, a 403 with the {@code kubectl auth can-i} command that checks the
     * permission; later failures of that status, in any round and on any rule, are not logged again.
     */
    private void ruleUidFailure(ObjectReference rule, KubernetesClientException e) {
        int status = e.getCode();
        if (!ruleLookupFailuresLogged.add(status)) {
            return;
        }
        String namespace = rule.getNamespace();
        String name = rule.getName();
        log.accept("cannot read the DestinationRule " + namespace + "/" + name + " for its uid ("
                + KubernetesErrors.describe(e, client.getMasterUrl().toString())
                + "); the events about the rules go without it, so kubectl describe destinationrule " + name + " -n "
                + namespace + " will not list them (kubectl get events -n " + namespace + " still does)"
                + (status == 403
                        ? ". Check the role: kubectl auth can-i get destinationrules.networking.istio.io -n "
                                + namespace + " --as " + account()
                        : ""));
    }

    /**
     * The controller pod's uid, or {@code null} when it cannot be read (it is read again for the next pod event):
     * the first failure of each HTTP status is logged (404: no such pod; 0: no API server answered) with what the
     * events lack, a 403 with the {@code kubectl auth can-i} command that checks the permission.
     */
    private String podUid(String namespace, String name) {
        String why;
        int status;
        try {
            Pod found = client.pods().inNamespace(namespace).withName(name).get();
            if (found != null) {
                return found.getMetadata().getUid();
            }
            status = 404;
            why = "GET pods/" + name + " in " + namespace + ": 404 Not Found: no such pod (expected: POD_NAME to name"
                    + " the controller's own pod, as the bundled manifests set it from the downward API)";
        } catch (KubernetesClientException e) {
            status = e.getCode();
            why = KubernetesErrors.describe(e, client.getMasterUrl().toString());
        }
        if (lookupFailuresLogged.add(status)) {
            log.accept("cannot read the controller's pod " + namespace + "/" + name + " for its uid (" + why
                    + "); the events about it (failing and recovered rounds) go without it, so kubectl describe pod "
                    + name + " -n " + namespace + " will not list them (kubectl get events -n " + namespace
                    + " still does)"
                    + (status == 403
                            ? ". Check the role: kubectl auth can-i get pods -n " + namespace + " --as " + account()
                            : ""));
        }
        return null;
    }

    /**
     * The user the controller acts as, for {@code kubectl auth can-i --as}: the service account its token
     * names (the client's, else the pod's), or a placeholder saying what to put in.
     */
    private String account() {
        String token = client.getConfiguration().getOauthToken();
        if (token == null) {
            token = client.getConfiguration().getAutoOAuthToken();
        }
        if (token == null) {
            try {
                token = Files.readString(Path.of(Config.KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH));
            } catch (IOException | RuntimeException e) {
                token = null;
            }
        }
        String account = serviceAccount(token);
        return account != null
                ? account
                : "system:serviceaccount:NAMESPACE:NAME (the namespace and service account the controller runs as:"
                        + " its credentials do not say)";
    }

    /** The {@code sub} of a service account's token, {@code system:serviceaccount:NAMESPACE:NAME}, or {@code null}. */
    static String serviceAccount(String token) {
        if (token == null) {
            return null;
        }
        String[] parts = token.trim().split("\\.");
        if (parts.length != 3) {
            return null;
        }
        try {
            String subject = YAML.readTree(Base64.getUrlDecoder().decode(parts[1]))
                    .path("sub")
                    .asText("");
            return subject.startsWith("system:serviceaccount:") ? subject : null;
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }
}
