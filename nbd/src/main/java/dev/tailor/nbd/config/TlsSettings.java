package dev.tailor.nbd.config;

import static dev.tailor.nbd.config.NbdConfig.quote;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Problem;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * TLS through {@code NBD_OPT_STARTTLS} (proto.md, "TLS support"; docs/nbd.md, "TLS"), with the modes and
 * the certificate folder named as nbdkit names them.
 *
 * @param mode         {@code off} (default: NOTLS, STARTTLS refused with {@code NBD_REP_ERR_POLICY}),
 *                     {@code on} (a client may upgrade with STARTTLS or go on in plain text) or {@code require}
 *                     (every option but STARTTLS and ABORT is refused with {@code NBD_REP_ERR_TLS_REQD} until
 *                     TLS runs); {@code tailor nbd serve --tls}
 * @param certificates a folder with {@code server-cert.pem}, {@code server-key.pem} and, for
 *                     {@code verifyPeer}, {@code ca-cert.pem} (as nbdkit's {@code --tls-certificates} and
 *                     qemu's {@code tls-creds-x509} name them); in a config file, relative to its directory;
 *                     required unless the mode is off
 * @param verifyPeer   whether clients must present a certificate signed by {@code ca-cert.pem} (default
 *                     false); {@code tailor nbd serve --tls-verify-peer}
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record TlsSettings(String mode, Path certificates, Boolean verifyPeer) {

    /** TLS off. */
    public static final TlsSettings DEFAULTS = new TlsSettings("off", null, false);

    /** The server's certificate chain, PEM, in the certificate folder. */
    public static final String SERVER_CERT = "server-cert.pem";
    /** The server's private key, PEM, in the certificate folder. */
    public static final String SERVER_KEY = "server-key.pem";
    /** The CA certificates client certificates are checked against, PEM, in the certificate folder. */
    public static final String CA_CERT = "ca-cert.pem";

    public TlsSettings {
        // YAML 1.1 reads an unquoted on or off as a boolean, which arrives here as "true" or "false".
        mode = mode == null || mode.equals("false") ? "off" : mode.equals("true") ? "on" : mode;
        verifyPeer = verifyPeer != null && verifyPeer;
    }

    /** Whether STARTTLS is served ({@code on} or {@code require}). */
    public boolean enabled() {
        return mode.equals("on") || mode.equals("require");
    }

    /** This, with a relative certificate folder resolved against {@code directory}. */
    TlsSettings resolvedAgainst(Path directory) {
        return certificates == null || certificates.isAbsolute()
                ? this
                : new TlsSettings(mode, directory.resolve(certificates), verifyPeer);
    }

    /**
     * What is wrong with the fields, each problem starting with {@code tls.} and the field: the mode, and
     * the certificate folder and the files in it, each there and readable. What the files hold (PEM, a key
     * that is the certificate's) is checked by the server when it loads them, before it opens anything.
     */
    public List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        boolean badMode = !mode.equals("off") && !enabled();
        if (badMode) {
            // Which mode was meant is not known: certificates given are still looked at, as for TLS on.
            problems.add(new Problem("tls.mode", quote(mode), "off, on or require"));
        } else if (!enabled()) {
            if (certificates != null) {
                problems.add(new Problem(
                        "tls.certificates",
                        "given, but tls.mode is off",
                        "tls.mode on or require to serve TLS with them"));
            }
            if (verifyPeer) {
                problems.add(new Problem("tls.verifyPeer", "true, but tls.mode is off", "tls.mode on or require"));
            }
            return problems;
        }
        if (certificates == null) {
            if (!badMode) {
                problems.add(new Problem(
                        "tls.certificates",
                        "missing",
                        "a folder with " + SERVER_CERT + " and " + SERVER_KEY + " when tls.mode is " + mode));
            }
            return problems;
        }
        if (!java.nio.file.Files.isDirectory(certificates)) {
            problems.add(new Problem(
                    "tls.certificates",
                    certificates + (java.nio.file.Files.exists(certificates) ? " is not a folder" : " does not exist"),
                    "a folder with " + SERVER_CERT + " and " + SERVER_KEY));
            return problems; // the files in a folder that is not there are not looked for
        }
        for (String name : verifyPeer ? List.of(SERVER_CERT, SERVER_KEY, CA_CERT) : List.of(SERVER_CERT, SERVER_KEY)) {
            Problem problem = fileProblem("tls.certificates", certificates.resolve(name));
            if (problem != null) {
                problems.add(problem);
            }
        }
        return problems;
    }

    /**
     * What keeps {@code file}, one of the credentials, from being read, said for {@code field}, or
     * {@code null} when it is a file that can be opened.
     */
    public static Problem fileProblem(String field, Path file) {
        if (!java.nio.file.Files.isRegularFile(file)) {
            return new Problem(
                    field,
                    file + (java.nio.file.Files.exists(file) ? " is not a file" : " does not exist"),
                    SERVER_CERT + ", " + SERVER_KEY + " and, to verify clients, " + CA_CERT
                            + " in the folder; docs/nbd.md, TLS");
        }
        try {
            java.nio.file.Files.newByteChannel(file).close();
            return null;
        } catch (java.io.IOException e) {
            return new Problem(
                    field, file + " cannot be read (" + IoErrors.reason(e) + ")", "a file the server can read");
        }
    }
}
