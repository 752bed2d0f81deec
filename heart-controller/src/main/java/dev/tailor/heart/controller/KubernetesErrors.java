package dev.tailor.heart.controller;

import dev.tailor.common.IoErrors;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * Kubernetes API errors as one line an operator can act on: the verb, the resource, the HTTP code
 * and the API server's message ({@code GET pods in shop: 403 Forbidden: pods is forbidden: ...}), or,
 * when no API server answered at all, {@code no cluster reachable: <address>: <why>} instead of the
 * client's exception chain ({@code UnresolvedAddressException} and the like).
 *
 * <p>fabric8's message has the form {@code Failure executing: GET at: <url>. Message: <text>.
 * Received status: Status(...)}; the verb and the URL are taken from it, the code and the message
 * from the exception's {@link Status} when it carries one. Our reading of fabric8 8.0's
 * {@code OperationSupport.requestFailure}.
 */
public final class KubernetesErrors {

    private static final Pattern FAILURE = Pattern.compile("Failure executing: (\\w+) at: (\\S+?)\\.? ");

    private KubernetesErrors() {}

    /**
     * Whether no API server answered: the address did not resolve, the connection was refused or
     * timed out, TLS failed, or the call failed before any HTTP status (code 0 with an I/O cause).
     */
    public static boolean unreachable(Throwable error) {
        if (error instanceof KubernetesClientException k && k.getCode() > 0) {
            return false;
        }
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof UnresolvedAddressException
                    || cause instanceof UnknownHostException
                    || cause instanceof ConnectException
                    || cause instanceof HttpConnectTimeoutException
                    || cause instanceof SSLException
                    || cause instanceof java.net.http.HttpTimeoutException
                    || cause instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    /**
     * One line for {@code error}: {@code VERB resource[/name] [in namespace]: CODE Reason: message},
     * or {@code no cluster reachable: <master>: <root cause>} when no API server answered.
     *
     * @param masterUrl the API server's address, named when it cannot be reached
     */
    public static String describe(KubernetesClientException error, String masterUrl) {
        if (unreachable(error)) {
            return "no cluster reachable: " + masterUrl + ": " + why(error);
        }
        StringBuilder line = new StringBuilder();
        String message = error.getMessage() == null
                ? ""
                : error.getMessage().replaceAll("\\s+", " ").strip();
        Matcher failure = FAILURE.matcher(message + " ");
        String verb = failure.find() ? failure.group(1) : null;
        String resource = resource(error);
        if (verb != null || resource != null) {
            line.append(verb == null ? "" : verb + " ")
                    .append(resource == null ? failure.group(2) : resource)
                    .append(": ");
        }
        Status status = error.getStatus();
        int code = error.getCode();
        if (code > 0) {
            line.append(code);
            if (status != null
                    && status.getReason() != null
                    && !status.getReason().isBlank()) {
                line.append(' ').append(status.getReason());
            }
            line.append(": ");
        }
        String text = status != null
                        && status.getMessage() != null
                        && !status.getMessage().isBlank()
                ? status.getMessage()
                : messageOnly(message);
        line.append(text.replaceAll("\\s+", " ").strip());
        if (code <= 0 && error.getCause() != null) {
            line.append(" (").append(rootCause(error)).append(')');
        }
        return line.toString();
    }

    /** {@code plural[.group][/name][ in namespace]}, or {@code null} when the exception does not say. */
    private static String resource(KubernetesClientException error) {
        String plural = error.getResourcePlural();
        if (plural == null || plural.isBlank()) {
            return null;
        }
        String group = error.getGroup();
        StringBuilder text = new StringBuilder(plural);
        if (group != null && !group.isBlank()) {
            text.append('.').append(group);
        }
        if (error.getName() != null && !error.getName().isBlank()) {
            text.append('/').append(error.getName());
        }
        if (error.getNamespace() != null && !error.getNamespace().isBlank()) {
            text.append(" in ").append(error.getNamespace());
        }
        return text.toString();
    }

    /** fabric8's message without its "Failure executing" prefix and its Status dump. */
    private static String messageOnly(String message) {
        String text = message;
        int at = text.indexOf("Message: ");
        if (at >= 0) {
            text = text.substring(at + "Message: ".length());
        }
        int status = text.indexOf(" Received status: ");
        if (status >= 0) {
            text = text.substring(0, status);
        }
        return text.endsWith(".") ? text.substring(0, text.length() - 1) : text;
    }

    /** Why a call got no answer, in words ({@link IoErrors#connectionReason}). */
    public static String why(Throwable error) {
        return IoErrors.connectionReason(error, null);
    }

    /** The innermost cause as {@code Type: message} (the type alone when it has no message). */
    static String rootCause(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : ": " + message);
    }
}
