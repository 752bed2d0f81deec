package dev.tailor.nbd.server;

import dev.tailor.common.Problem;
import dev.tailor.nbd.config.TlsSettings;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * The server's TLS credentials and mode, loaded once at start: what {@code NBD_OPT_STARTTLS} upgrades a
 * connection with (proto.md, "TLS support"). Certificates come from one folder named as nbdkit and
 * qemu-nbd name them: {@value #SERVER_CERT} (the server's certificate, then any intermediate ones),
 * {@value #SERVER_KEY} (its private key, PEM: PKCS#8 {@code BEGIN PRIVATE KEY}, or an RSA key in PKCS#1
 * {@code BEGIN RSA PRIVATE KEY}, unencrypted), and {@value #CA_CERT} (the CA that signs client
 * certificates; needed only when the peer is verified).
 *
 * <p>TLS runs on the JDK's provider, TLS 1.3 and 1.2 only (proto.md: MUST support 1.2, older SHOULD NOT
 * be on by default).
 *
 * @param mode       {@link Mode#ON} or {@link Mode#REQUIRE}; a server with TLS off has no {@code ServerTls}
 * @param context    Netty's server context with the certificate, the key and, with {@code verifyPeer}, the CA
 * @param verifyPeer whether clients must present a certificate signed by the CA
 */
record ServerTls(Mode mode, SslContext context, boolean verifyPeer) {

    /** The server's certificate chain, PEM. */
    static final String SERVER_CERT = TlsSettings.SERVER_CERT;
    /** The server's private key, PEM. */
    static final String SERVER_KEY = TlsSettings.SERVER_KEY;
    /** The CA certificates client certificates are checked against, PEM. */
    static final String CA_CERT = TlsSettings.CA_CERT;

    /** TLS modes, named as nbdkit's {@code --tls} names them. */
    enum Mode {
        /** NOTLS: {@code NBD_OPT_STARTTLS} is refused with {@code NBD_REP_ERR_POLICY}. */
        OFF,
        /** SELECTIVETLS with no TLS-only export: a client may upgrade, or carry on in plain text. */
        ON,
        /** FORCEDTLS: every option but STARTTLS and ABORT is refused with {@code NBD_REP_ERR_TLS_REQD}. */
        REQUIRE;

        /** {@code off}, {@code on} or {@code require}; null for anything else. */
        static Mode of(String text) {
            return switch (text) {
                case "off" -> OFF;
                case "on" -> ON;
                case "require" -> REQUIRE;
                default -> null;
            };
        }

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A new engine's handler for one connection, in server mode. */
    SslHandler newHandler(ByteBufAllocator alloc) {
        return context.newHandler(alloc);
    }

    /**
     * Loads the credentials of {@code settings} (mode on or require).
     *
     * @throws IllegalArgumentException naming {@code tls.certificates} and the file, with what is wrong and
     *                                  what was expected
     */
    static ServerTls load(TlsSettings settings) {
        Mode mode = Mode.of(settings.mode());
        if (mode == null || mode == Mode.OFF) {
            throw new IllegalArgumentException("tls.mode: \"" + settings.mode() + "\" has no credentials to load");
        }
        Path folder = settings.certificates();
        List<X509Certificate> chain = certificates("tls.certificates", folder.resolve(SERVER_CERT));
        PrivateKey key = privateKey("tls.certificates", folder.resolve(SERVER_KEY));
        String mismatch = mismatch(key, chain.get(0));
        if (mismatch != null) {
            throw new IllegalArgumentException("tls.certificates: " + folder.resolve(SERVER_KEY) + " is not the key of"
                    + " the certificate in " + folder.resolve(SERVER_CERT) + " (" + mismatch + "; expected: the"
                    + " private key the certificate was issued for)");
        }
        SslContextBuilder builder = SslContextBuilder.forServer(key, chain.toArray(X509Certificate[]::new))
                .sslProvider(SslProvider.JDK)
                .protocols("TLSv1.3", "TLSv1.2");
        boolean verifyPeer = settings.verifyPeer();
        if (verifyPeer) {
            List<X509Certificate> authorities = certificates("tls.certificates", folder.resolve(CA_CERT));
            builder.trustManager(authorities.toArray(X509Certificate[]::new)).clientAuth(ClientAuth.REQUIRE);
        }
        try {
            return new ServerTls(mode, builder.build(), verifyPeer);
        } catch (SSLException e) {
            throw new IllegalArgumentException(
                    "tls.certificates: " + folder + ": the TLS context cannot be built from" + " these credentials ("
                            + e.getMessage() + ")",
                    e);
        }
    }

    /** The certificates of a PEM file, in order; at least one. */
    static List<X509Certificate> certificates(String field, Path file) {
        byte[] bytes = read(field, file);
        try {
            List<X509Certificate> certificates = new ArrayList<>();
            for (var certificate :
                    CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(bytes))) {
                certificates.add((X509Certificate) certificate);
            }
            if (!certificates.isEmpty()) {
                return certificates;
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(
                    field + ": " + file + " is not a PEM certificate (" + e.getMessage()
                            + "; expected: -----BEGIN CERTIFICATE----- blocks)",
                    e);
        }
        throw new IllegalArgumentException(
                field + ": " + file + " holds no certificate (expected: -----BEGIN" + " CERTIFICATE----- blocks)");
    }

    private static final Pattern PEM_KEY =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END \\1PRIVATE KEY-----");

    /** The private key of a PEM file: PKCS#8, or PKCS#1 for RSA. */
    static PrivateKey privateKey(String field, Path file) {
        String text = new String(read(field, file), StandardCharsets.US_ASCII);
        Matcher pem = PEM_KEY.matcher(text);
        if (!pem.find()) {
            throw new IllegalArgumentException(field + ": " + file + " holds no PEM private key (expected: a"
                    + " -----BEGIN PRIVATE KEY----- block, e.g. from openssl genpkey)");
        }
        String kind = pem.group(1).trim();
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(pem.group(2));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + ": " + file + ": the private key is not valid base64", e);
        }
        String convert = "; convert it with: openssl pkcs8 -topk8 -nocrypt -in " + file + " -out " + file + ".new";
        if (kind.equals("RSA")) {
            der = pkcs8OfRsa(der);
        } else if (kind.equals("ENCRYPTED")) {
            throw new IllegalArgumentException(field + ": " + file + " is encrypted (expected: an unencrypted key,"
                    + " readable only by the server's user" + convert + ")");
        } else if (!kind.isEmpty()) {
            String article = "AEIOU".indexOf(kind.charAt(0)) >= 0 ? "an" : "a";
            throw new IllegalArgumentException(field + ": " + file + " is " + article + " \"" + kind
                    + " PRIVATE KEY\" (expected: a PKCS#8 \"PRIVATE KEY\"" + convert + ")");
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS", "DSA"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw new IllegalArgumentException(field + ": " + file + ": the private key is not an RSA, EC or EdDSA key"
                + " this JDK can read (expected: PKCS#8, unencrypted)");
    }

    /**
     * Wraps a PKCS#1 RSA key in PKCS#8 (RFC 5208, section 5): {@code SEQUENCE { INTEGER 0, SEQUENCE { OID
     * rsaEncryption, NULL }, OCTET STRING pkcs1 }}, the form the JDK's {@link KeyFactory} reads.
     */
    static byte[] pkcs8OfRsa(byte[] pkcs1) {
        byte[] version = {0x02, 0x01, 0x00};
        byte[] algorithm = {
            0x30,
            0x0d,
            0x06,
            0x09,
            0x2a,
            (byte) 0x86,
            0x48,
            (byte) 0x86,
            (byte) 0xf7,
            0x0d,
            0x01,
            0x01,
            0x01,
            0x05,
            0x00
        };
        byte[] octets = der(0x04, pkcs1);
        byte[] body = new byte[version.length + algorithm.length + octets.length];
        System.arraycopy(version, 0, body, 0, version.length);
        System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
        System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
        return der(0x30, body);
    }

    /** One DER element: tag, definite length, content. */
    private static byte[] der(int tag, byte[] content) {
        int length = content.length;
        int lengthBytes = length < 0x80 ? 0 : length < 0x100 ? 1 : length < 0x10000 ? 2 : 3;
        byte[] out = new byte[2 + lengthBytes + length];
        out[0] = (byte) tag;
        if (lengthBytes == 0) {
            out[1] = (byte) length;
        } else {
            out[1] = (byte) (0x80 | lengthBytes);
            for (int i = 0; i < lengthBytes; i++) {
                out[2 + i] = (byte) (length >>> (8 * (lengthBytes - 1 - i)));
            }
        }
        System.arraycopy(content, 0, out, 2 + lengthBytes, length);
        return out;
    }

    /** Why {@code key} does not belong to {@code certificate} (a signature it makes does not verify), or null. */
    private static String mismatch(PrivateKey key, X509Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
            case "DSA" -> "SHA256withDSA";
            default -> null;
        };
        if (algorithm == null) {
            return null; // RSASSA-PSS needs parameters; the TLS handshake checks it
        }
        String certificateAlgorithm = certificate.getPublicKey().getAlgorithm();
        if (!certificateAlgorithm.equals(key.getAlgorithm())
                && !(key.getAlgorithm().startsWith("Ed") && certificateAlgorithm.startsWith("Ed"))) {
            return "a " + key.getAlgorithm() + " key for a " + certificateAlgorithm + " certificate";
        }
        try {
            byte[] probe = "tailor: does this key match its certificate?".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature) ? null : "a signature made with the key does not verify";
        } catch (GeneralSecurityException e) {
            return "a signature made with the key does not verify: " + e.getMessage();
        }
    }

    private static byte[] read(String field, Path file) {
        Problem problem = TlsSettings.fileProblem(field, file);
        if (problem != null) {
            throw new IllegalArgumentException(problem.message());
        }
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    new Problem(field, file + " cannot be read (" + e.getMessage() + ")", "a file the server can read")
                            .message(),
                    e);
        }
    }
}
