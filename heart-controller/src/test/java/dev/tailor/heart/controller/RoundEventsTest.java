package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The rounds' Kubernetes Events, on the mock API server: which rounds record what, about what. */
@EnableKubernetesMockClient(crud = true)
class RoundEventsTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static final String BEFORE = """
            metadata:
              labels: {app.kubernetes.io/managed-by: tailor-heart}
            spec:
              host: cart.shop.svc.cluster.local
              trafficPolicy:
                loadBalancer:
                  localityLbSetting:
                    distribute:
                      - from: eu/eu-a/*
                        to: {eu/eu-a/*: 60, eu/eu-b/*: 40}
                      - from: eu/eu-b/*
                        to: {eu/eu-b/*: 100}
            """;
    private static final String AFTER = """
            metadata:
              labels: {app.kubernetes.io/managed-by: tailor-heart}
            spec:
              host: cart.shop.svc.cluster.local
              trafficPolicy:
                loadBalancer:
                  localityLbSetting:
                    distribute:
                      - from: eu/eu-a/*
                        to: {eu/eu-a/*: 72, eu/eu-b/*: 28}
                      - from: eu/eu-b/*
                        to: {eu/eu-b/*: 100}
            """;

    private final List<String> log = new ArrayList<>();
    private long millis = 1_780_000_000_000L;

    @BeforeEach
    void clean() {
        client.events().v1().events().inAnyNamespace().delete();
        client.pods().inAnyNamespace().delete();
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
    }

    private RoundEvents events(String podName) {
        return new RoundEvents(
                client, "tailor-heart-0", "tailor-system", podName, () -> millis++, log::add, Runnable::run);
    }

    private static Controller.Round applied(Actuator.Change... changes) {
        return new Controller.Round(true, null, null, null, null, List.of(), List.of(), List.of(changes), List.of(), 0);
    }

    private static Controller.Round failed(Controller.FailureReason reason, String message) {
        return new Controller.Round(false, reason, message, null, null, List.of(), List.of(), List.of(), List.of(), 0);
    }

    private static List<Event> in(String namespace) {
        return client.events().v1().events().inNamespace(namespace).list().getItems().stream()
                .sorted(Comparator.comparing(e -> e.getEventTime().getTime()))
                .toList();
    }

    @Test
    void appliedChanges_oneEventPerRuleWritten_withTheLargestWeightMove() {
        events("tailor-heart-0")
                .after(applied(
                        new Actuator.Change(Actuator.Action.CREATE, "shop", "frontend-to-cart", "", AFTER),
                        new Actuator.Change(Actuator.Action.UPDATE, "shop", "checkout-to-cart", BEFORE, AFTER),
                        new Actuator.Change(Actuator.Action.UNCHANGED, "shop", "checkout-to-payment", AFTER, AFTER),
                        new Actuator.Change(Actuator.Action.DELETE, "shop", "old-to-cart", BEFORE, "")));

        List<Event> shop = in("shop");
        assertThat(shop)
                .extracting(e -> e.getRegarding().getName() + " " + e.getReason() + " " + e.getType())
                .containsExactly(
                        "frontend-to-cart RuleCreated Normal",
                        "checkout-to-cart WeightsUpdated Normal",
                        "old-to-cart RuleDeleted Normal");
        Event updated = shop.get(1);
        assertThat(updated.getNote())
                .isEqualTo("2 locality weights set by tailor heart, the largest move 12 points"
                        + " (eu/eu-a/* → eu/eu-a/*: 60 → 72)");
        assertThat(updated.getRegarding().getApiVersion()).isEqualTo("networking.istio.io/v1");
        assertThat(updated.getRegarding().getNamespace()).isEqualTo("shop");
        assertThat(updated.getAction()).isEqualTo("Apply");
        assertThat(updated.getEventTime().getTime()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
        assertThat(shop.get(0).getNote()).isEqualTo("created with 3 locality weights");
        assertThat(in("tailor-system"))
                .as("nothing failed: no event on the pod")
                .isEmpty();
        assertThat(log).isEmpty();
    }

    @Test
    void failures_aWarningWhenTheyStartOrChangeReason_andOneEventWhenRoundsApplyAgain() {
        RoundEvents events = events("tailor-heart-0");
        events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
        events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
        events.after(failed(Controller.FailureReason.KUBERNETES_READ, "cannot list pods"));
        events.after(applied());
        events.after(applied());

        assertThat(in("tailor-system"))
                .extracting(e -> e.getRegarding().getKind() + "/"
                        + e.getRegarding().getName() + " " + e.getType() + " " + e.getReason() + ": " + e.getNote())
                .containsExactly(
                        "Pod/tailor-heart-0 Warning PrometheusUnreachable: cannot reach http://prom:9090",
                        "Pod/tailor-heart-0 Warning KubernetesRead: cannot list pods",
                        "Pod/tailor-heart-0 Normal RoundsRecovered: rounds apply their plans again (they failed with"
                                + " KubernetesRead)");
    }

    @Test
    void withoutThePodsName_onlyTheRulesEvents() {
        RoundEvents events = events(null);
        events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
        events.after(applied(new Actuator.Change(Actuator.Action.CREATE, "shop", "frontend-to-cart", "", AFTER)));

        assertThat(in("tailor-system")).isEmpty();
        assertThat(in("shop")).extracting(Event::getReason).containsExactly("RuleCreated");
    }

    @Test
    void aLongMessage_isCutToTheApiServersLimit() {
        events("tailor-heart-0").after(failed(Controller.FailureReason.PROMETHEUS_QUERY, "x".repeat(5_000)));

        String note = in("tailor-system").get(0).getNote();
        assertThat(note.getBytes(StandardCharsets.UTF_8)).hasSize(RoundEvents.NOTE_LIMIT);
        assertThat(note).endsWith("…");
    }

    @Test
    void aLongNote_isCutInBytes_betweenCodePoints() {
        for (String character : List.of("é", "→", "😀")) {
            String cut = RoundEvents.cut("x" + character.repeat(1_000));

            byte[] bytes = cut.getBytes(StandardCharsets.UTF_8);
            assertThat(bytes.length).as(character).isLessThanOrEqualTo(RoundEvents.NOTE_LIMIT);
            assertThat(bytes.length).as(character).isGreaterThan(RoundEvents.NOTE_LIMIT - 4 - 3);
            assertThat(new String(bytes, StandardCharsets.UTF_8))
                    .as("no code point split")
                    .isEqualTo(cut);
            assertThat(cut).as(character).startsWith("x" + character).endsWith(character + "…");
        }
        assertThat(RoundEvents.cut("→".repeat(341))).as("1,023 bytes fit").isEqualTo("→".repeat(341));
    }

    @Test
    void theEvents_carryTheUidOfWhatTheyAreAbout_soKubectlDescribeShowsThem() {
        String podUid = client.pods()
                .inNamespace("tailor-system")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("tailor-heart-0")
                        .withUid("uid-of-the-pod")
                        .endMetadata()
                        .build())
                .create()
                .getMetadata()
                .getUid();
        String ruleUid = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .resource(new GenericKubernetesResourceBuilder()
                        .withApiVersion("networking.istio.io/v1")
                        .withKind("DestinationRule")
                        .withNewMetadata()
                        .withName("checkout-to-cart")
                        .withUid("uid-of-the-rule")
                        .endMetadata()
                        .build())
                .create()
                .getMetadata()
                .getUid();
        RoundEvents events = events("tailor-heart-0");

        events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
        client.pods().inNamespace("tailor-system").withName("tailor-heart-0").delete();
        events.after(failed(Controller.FailureReason.KUBERNETES_READ, "cannot list pods"));
        events.after(applied(
                new Actuator.Change(Actuator.Action.UPDATE, "shop", "checkout-to-cart", BEFORE, AFTER),
                new Actuator.Change(Actuator.Action.DELETE, "shop", "old-to-cart", BEFORE, "")));

        assertThat(podUid).isNotBlank();
        assertThat(in("tailor-system"))
                .as("the pod's uid, read once")
                .extracting(e -> e.getRegarding().getUid())
                .containsExactly(podUid, podUid, podUid);
        assertThat(in("shop"))
                .extracting(
                        e -> e.getRegarding().getName() + " " + e.getRegarding().getUid())
                .containsExactly("checkout-to-cart " + ruleUid, "old-to-cart null");
        assertThat(log).isEmpty();
    }

    @Test
    void anApiServerThatRefuses_isSaidOnce_andTheRoundsGoOn() {
        try (KubernetesClient unreachable = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder()
                        .withMasterUrl("http://127.0.0.1:1")
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build()) {
            RoundEvents events = new RoundEvents(
                    unreachable,
                    "tailor-heart-0",
                    "tailor-system",
                    "tailor-heart-0",
                    () -> 0L,
                    log::add,
                    Runnable::run);
            events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
            events.after(applied(new Actuator.Change(Actuator.Action.CREATE, "shop", "frontend-to-cart", "", AFTER)));
        }

        assertThat(log)
                .as("the second event's refusal has the status of the first")
                .hasSize(3);
        assertThat(log.get(0))
                .startsWith("cannot read the controller's pod tailor-system/tailor-heart-0 for its uid (no cluster"
                        + " reachable: http://127.0.0.1:1/")
                .as("no answer is not a matter of the role")
                .doesNotContain("auth can-i");
        assertThat(log.get(2))
                .startsWith("cannot read the DestinationRule shop/frontend-to-cart for its uid (no cluster"
                        + " reachable: http://127.0.0.1:1/")
                .as("no answer is not a matter of the role")
                .doesNotContain("auth can-i");
        assertThat(log.get(1))
                .startsWith("cannot record Kubernetes Events (")
                .contains("rounds go on without them")
                .as("no answer is not a matter of the role")
                .doesNotContain("auth can-i");
    }

    /** A client of the mock API server whose token names the service account {@code tailor-system:tailor-heart}. */
    private static KubernetesClient withServiceAccountToken() {
        String token = "e30."
                + Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString("{\"sub\":\"system:serviceaccount:tailor-system:tailor-heart\"}"
                                .getBytes(StandardCharsets.UTF_8))
                + ".c2ln";
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withOauthToken(token)
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build();
    }

    @Test
    void aPodThatCannotBeRead_theFirstFailureOfEachStatusIsSaid_a403WithTheCheckOfTheRole_andItIsReadAgain() {
        // Was: nothing logged, and the pod's events went without its uid, out of kubectl describe pod's sight.
        String podUid = client.pods()
                .inNamespace("tailor-system")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("tailor-heart-0")
                        .endMetadata()
                        .build())
                .create()
                .getMetadata()
                .getUid();
        server.expect()
                .get()
                .withPath("/api/v1/namespaces/tailor-system/pods/tailor-heart-0")
                .andReturn(403, "forbidden")
                .times(2);
        server.expect()
                .get()
                .withPath("/api/v1/namespaces/tailor-system/pods/tailor-heart-0")
                .andReturn(500, "broken")
                .once();
        try (KubernetesClient withToken = withServiceAccountToken()) {
            RoundEvents events = new RoundEvents(
                    withToken,
                    "tailor-heart-0",
                    "tailor-system",
                    "tailor-heart-0",
                    () -> millis++,
                    log::add,
                    Runnable::run);
            events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
            events.after(failed(Controller.FailureReason.KUBERNETES_READ, "cannot list pods"));
            events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
            events.after(applied());
        }

        assertThat(in("tailor-system"))
                .as("recorded all the same; the uid once the pod could be read")
                .extracting(e -> e.getReason() + " " + e.getRegarding().getUid())
                .containsExactly(
                        "PrometheusUnreachable null",
                        "KubernetesRead null",
                        "PrometheusUnreachable null",
                        "RoundsRecovered " + podUid);
        assertThat(log).hasSize(2);
        assertThat(log.get(0))
                .startsWith("cannot read the controller's pod tailor-system/tailor-heart-0 for its uid (GET"
                        + " pods/tailor-heart-0 in tailor-system: 403")
                .contains("; the events about it (failing and recovered rounds) go without it, so kubectl describe"
                        + " pod tailor-heart-0 -n tailor-system will not list them (kubectl get events -n"
                        + " tailor-system still does)")
                .endsWith(". Check the role: kubectl auth can-i get pods -n tailor-system"
                        + " --as system:serviceaccount:tailor-system:tailor-heart");
        assertThat(log.get(1))
                .startsWith("cannot read the controller's pod tailor-system/tailor-heart-0 for its uid (")
                .contains("500")
                .endsWith("will not list them (kubectl get events -n tailor-system still does)");
    }

    @Test
    void aRuleThatCannotBeRead_theFirstFailureOfEachStatusIsSaid_a403WithTheCheckOfTheRole_notEachRound() {
        // Was: nothing logged, and the rules' events went without their uid, out of kubectl describe's sight.
        String ruleUid = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .resource(new GenericKubernetesResourceBuilder()
                        .withApiVersion("networking.istio.io/v1")
                        .withKind("DestinationRule")
                        .withNewMetadata()
                        .withName("checkout-to-cart")
                        .endMetadata()
                        .build())
                .create()
                .getMetadata()
                .getUid();
        String path = "/apis/networking.istio.io/v1/namespaces/shop/destinationrules/checkout-to-cart";
        server.expect().get().withPath(path).andReturn(403, "forbidden").times(3);
        server.expect().get().withPath(path).andReturn(500, "broken").once();
        try (KubernetesClient withToken = withServiceAccountToken()) {
            RoundEvents events = new RoundEvents(
                    withToken, "tailor-heart-0", "tailor-system", null, () -> millis++, log::add, Runnable::run);
            for (int round = 0; round < 5; round++) {
                events.after(applied(
                        new Actuator.Change(Actuator.Action.UPDATE, "shop", "checkout-to-cart", BEFORE, AFTER)));
            }
        }

        assertThat(in("shop"))
                .as("recorded all the same; the uid once the rule could be read")
                .extracting(e -> e.getReason() + " " + e.getRegarding().getUid())
                .containsExactly(
                        "WeightsUpdated null",
                        "WeightsUpdated null",
                        "WeightsUpdated null",
                        "WeightsUpdated null",
                        "WeightsUpdated " + ruleUid);
        assertThat(log).as("three rounds refused, one logged").hasSize(2);
        assertThat(log.get(0))
                .startsWith("cannot read the DestinationRule shop/checkout-to-cart for its uid (GET"
                        + " destinationrules.networking.istio.io/checkout-to-cart in shop: 403")
                .contains("; the events about the rules go without it, so kubectl describe destinationrule"
                        + " checkout-to-cart -n shop will not list them (kubectl get events -n shop still does)")
                .endsWith(". Check the role: kubectl auth can-i get destinationrules.networking.istio.io -n shop"
                        + " --as system:serviceaccount:tailor-system:tailor-heart");
        assertThat(log.get(1))
                .startsWith("cannot read the DestinationRule shop/checkout-to-cart for its uid (")
                .contains("500")
                .endsWith("will not list them (kubectl get events -n shop still does)");
    }

    @Test
    void aPodThatIsNotThere_isSaidOnce_namingPodName() {
        RoundEvents events = events("tailor-heart-7");
        events.after(failed(Controller.FailureReason.PROMETHEUS_UNREACHABLE, "cannot reach http://prom:9090"));
        events.after(failed(Controller.FailureReason.KUBERNETES_READ, "cannot list pods"));

        assertThat(in("tailor-system"))
                .hasSize(2)
                .allSatisfy(e -> assertThat(e.getRegarding().getUid()).isNull());
        assertThat(log)
                .containsExactly("cannot read the controller's pod tailor-system/tailor-heart-7 for its uid (GET"
                        + " pods/tailor-heart-7 in tailor-system: 404 Not Found: no such pod (expected: POD_NAME to"
                        + " name the controller's own pod, as the bundled manifests set it from the downward API));"
                        + " the events about it (failing and recovered rounds) go without it, so kubectl describe pod"
                        + " tailor-heart-7 -n tailor-system will not list them (kubectl get events -n tailor-system"
                        + " still does)");
    }

    @Test
    void refusals_theFirstOfEachStatusIsSaid_a403WithTheCheckOfTheRole() {
        String token = "e30."
                + Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString("{\"sub\":\"system:serviceaccount:tailor-system:tailor-heart\"}"
                                .getBytes(StandardCharsets.UTF_8))
                + ".c2ln";
        server.expect()
                .post()
                .withPath("/apis/events.k8s.io/v1/namespaces/shop/events")
                .andReturn(403, "forbidden")
                .times(2);
        server.expect()
                .post()
                .withPath("/apis/events.k8s.io/v1/namespaces/shop/events")
                .andReturn(500, "broken")
                .once();
        try (KubernetesClient withToken = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withOauthToken(token)
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build()) {
            RoundEvents events = new RoundEvents(
                    withToken, "tailor-heart-0", "tailor-system", null, () -> millis++, log::add, Runnable::run);
            for (int i = 0; i < 3; i++) {
                events.after(applied(new Actuator.Change(Actuator.Action.CREATE, "shop", "r" + i, "", AFTER)));
            }
        }

        assertThat(log).hasSize(2);
        assertThat(log.get(0))
                .contains("403")
                .endsWith("Check the role: kubectl auth can-i create events.events.k8s.io -n shop"
                        + " --as system:serviceaccount:tailor-system:tailor-heart");
        assertThat(log.get(1)).contains("500").doesNotContain("auth can-i");
        assertThat(RoundEvents.serviceAccount("not a token")).isNull();
    }

    @Test
    void theEvents_areSentBySender_notOnTheRoundsThread() {
        List<Runnable> queued = new ArrayList<>();
        RoundEvents events = new RoundEvents(
                client, "tailor-heart-0", "tailor-system", "tailor-heart-0", () -> millis++, log::add, queued::add);
        events.after(applied(new Actuator.Change(Actuator.Action.CREATE, "shop", "frontend-to-cart", "", AFTER)));

        assertThat(in("shop")).as("nothing sent while the round ends").isEmpty();
        assertThat(queued).hasSize(1);
        queued.forEach(Runnable::run);
        assertThat(in("shop")).extracting(Event::getReason).containsExactly("RuleCreated");
    }

    @Test
    void reasons_areUpperCamelCase() {
        assertThat(RoundEvents.reason(Controller.FailureReason.NODE_WITHOUT_LOCALITY))
                .isEqualTo("NodeWithoutLocality");
        assertThat(RoundEvents.reason(Controller.FailureReason.NO_PODS)).isEqualTo("NoPods");
    }
}
