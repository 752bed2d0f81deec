package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** What the controller logs when the API server does not answer a watch or a Lease call. */
class KubernetesFailureWordsTest {

    @Test
    void watch_noApiServer_saysWhichAddressAndWhy_notNull() {
        // What a pod watch hands back when the address does not answer: a ConnectException without a message.
        Throwable cause = new CompletionException(new ConnectException()).getCause();
        // Was "cannot watch pods in namespace shop (null)".
        assertThat(ControllerLoop.watchFailure(cause, "https://kubernetes.default.svc/"))
                .startsWith("no cluster reachable: https://kubernetes.default.svc/: ")
                .doesNotContain("null");
    }

    @Test
    void lease_noApiServer_saysWhichAddressAndWhy_notTheClientsOperationDump() {
        KubernetesClientException error = new KubernetesClientException(
                "Operation: [get]  for kind: [Lease]  with name: [tailor-heart]  in namespace: [tailor-system]"
                        + "  failed.",
                new ConnectException());
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder()
                        .withMasterUrl("https://127.0.0.1:1/")
                        .build())
                .build()) {
            // Was "-1 Operation: [get]  for kind: [Lease]  with name: [tailor-heart] ... failed.".
            assertThat(LeaseElector.words(error, client))
                    .startsWith("no cluster reachable: https://127.0.0.1:1/: ")
                    .doesNotContain("-1")
                    .doesNotContain("Operation: [get]");
        }
    }
}
