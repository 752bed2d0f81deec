package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** deploy/tailor-heart.yaml parses as Kubernetes objects and grants what the controller uses, no more. */
class DeployManifestsTest {

    private static List<HasMetadata> objects() throws Exception {
        Path file = Path.of(System.getProperty("tailor.projectDir", "..")).resolve("deploy/tailor-heart.yaml");
        if (!Files.exists(file)) {
            file = Path.of("..", "deploy", "tailor-heart.yaml");
        }
        try (InputStream in = Files.newInputStream(file)) {
            return new KubernetesSerialization().unmarshal(in);
        }
    }

    private static <T> T only(List<HasMetadata> objects, Class<T> type) {
        return objects.stream()
                .filter(type::isInstance)
                .map(type::cast)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void manifests_parse_andTheConfigIsValid() throws Exception {
        List<HasMetadata> objects = objects();
        assertThat(objects)
                .extracting(HasMetadata::getKind)
                .containsExactly(
                        "Namespace",
                        "ServiceAccount",
                        "ClusterRole",
                        "ClusterRoleBinding",
                        "Role",
                        "RoleBinding",
                        "ConfigMap",
                        "Deployment");
        ConfigMap config = only(objects, ConfigMap.class);
        ControllerConfig parsed = ConfigFiles.parse(config.getData().get("heart.yaml"), "deploy ConfigMap");
        assertThat(parsed.kubernetes().lease()).isEqualTo("tailor-system/tailor-heart");
        Deployment deployment = only(objects, Deployment.class);
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
        assertThat(deployment
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getArgs())
                .containsExactly("heart", "run", "--config", "/etc/tailor/heart.yaml");
    }

    @Test
    void rbac_coversWhatTheControllerDoes_andNoMore() throws Exception {
        List<HasMetadata> objects = objects();
        List<PolicyRule> cluster = only(objects, ClusterRole.class).getRules();
        assertThat(cluster).anySatisfy(r -> {
            assertThat(r.getResources()).containsExactlyInAnyOrder("pods", "nodes");
            assertThat(r.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
        });
        assertThat(cluster).anySatisfy(r -> {
            assertThat(r.getApiGroups()).containsExactly("networking.istio.io");
            assertThat(r.getResources()).containsExactly("destinationrules");
        });
        assertThat(cluster).allSatisfy(r -> assertThat(r.getResources()).doesNotContain("secrets", "*"));
        List<PolicyRule> local = only(objects, Role.class).getRules();
        assertThat(local)
                .filteredOn(r ->
                        r.getResourceNames() != null && !r.getResourceNames().isEmpty())
                .flatExtracting(PolicyRule::getResourceNames)
                .containsExactlyInAnyOrder("tailor-heart", "tailor-heart-state");
    }

    /** Whether {@code rule} grants {@code p}; in RBAC, a rule with resourceNames grants named requests only. */
    private static boolean grants(PolicyRule rule, Preflight.Permission p) {
        boolean named =
                rule.getResourceNames() != null && !rule.getResourceNames().isEmpty();
        return (rule.getApiGroups().contains(p.group()) || rule.getApiGroups().contains("*"))
                && (rule.getResources().contains(p.resource())
                        || rule.getResources().contains("*"))
                && (rule.getVerbs().contains(p.verb()) || rule.getVerbs().contains("*"))
                && (!named || (!p.name().isEmpty() && rule.getResourceNames().contains(p.name())));
    }

    @Test
    void rbac_grantsEveryPermissionThePreflightChecks_forTheShippedConfig() throws Exception {
        // The permissions `tailor heart check` asks the API server about, computed from the shipped
        // ConfigMap, must all be granted by the shipped roles: a Lease or state ConfigMap renamed in
        // one place and not the other would leave the controller looping on "forbidden".
        List<HasMetadata> objects = objects();
        ControllerConfig config =
                ConfigFiles.parse(only(objects, ConfigMap.class).getData().get("heart.yaml"), "deploy ConfigMap");
        ClusterRole clusterRole = only(objects, ClusterRole.class);
        Role role = only(objects, Role.class);
        List<Preflight.Permission> needed = new Preflight(null, null, config).permissions();

        assertThat(needed).hasSizeGreaterThan(10);
        assertThat(needed)
                .allSatisfy(p -> assertThat(clusterRole.getRules().stream().anyMatch(r -> grants(r, p))
                                || (p.namespace().equals(role.getMetadata().getNamespace())
                                        && role.getRules().stream().anyMatch(r -> grants(r, p))))
                        .as(p.toString())
                        .isTrue());
    }
}
