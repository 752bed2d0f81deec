package dev.tailor.testkit;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Answers to {@code SelfSubjectAccessReview}s for the fabric8 mock API server, which stores the
 * review as it came (without a {@code status}) in CRUD mode. A test wires it as
 * {@code server.expect().post().withPath(AccessReviews.PATH).andReply(201, r ->
 * AccessReviews.answer(r.getUtf8Body(), denied)).always()}.
 */
public final class AccessReviews {

    /** Where reviews are posted. */
    public static final String PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

    private AccessReviews() {}

    /**
     * The review with its status: allowed unless {@code denied} holds {@code "verb resource"} or
     * {@code "verb resource namespace"} (the resource's plural, without group), e.g.
     * {@code "patch destinationrules shop"}.
     */
    public static String answer(String requestBody, Set<String> denied) {
        String verb = field(requestBody, "verb");
        String resource = field(requestBody, "resource");
        String namespace = field(requestBody, "namespace");
        boolean no = denied.contains(verb + " " + resource) || denied.contains(verb + " " + resource + " " + namespace);
        String body = requestBody.strip();
        String status = "\"status\":{\"allowed\":" + !no + (no ? ",\"reason\":\"denied by the test\"" : "") + "}";
        return body.substring(0, body.length() - 1) + "," + status + "}";
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        return m.find() ? m.group(1) : "";
    }
}
