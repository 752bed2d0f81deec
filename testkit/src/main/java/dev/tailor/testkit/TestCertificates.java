package dev.tailor.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA of the test's own and the certificates it signs, written as PEM files in the layout nbdkit,
 * qemu ({@code tls-creds-x509}) and libnbd ({@code tls-certificates=}) read from one folder:
 * {@code ca-cert.pem}, {@code server-cert.pem}, {@code server-key.pem}, {@code client-cert.pem},
 * {@code client-key.pem}. Keys are ECDSA P-256 in PKCS#8; the server certificate names
 * {@code localhost} and {@code 127.0.0.1}; certificates are valid from an hour ago for a day. Key
 * usages are those gnutls and qemu check: the CA may sign certificates, the others sign and encipher,
 * for server or client authentication.
 */
public final class TestCertificates {

    private static final java.security.Provider BOUNCY_CASTLE =
            new org.bouncycastle.jce.provider.BouncyCastleProvider();

    private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime() & 0xffff_ffffL);

    /** The CA's key pair and certificate. */
    public final KeyPair caKeys;
    /** The CA's certificate ({@code ca-cert.pem}). */
    public final X509Certificate ca;

    private TestCertificates(KeyPair caKeys, X509Certificate ca) {
        this.caKeys = caKeys;
        this.ca = ca;
    }

    /** A new CA named {@code CN=name}. */
    public static TestCertificates newCa(String name) {
        KeyPair keys = ecKeys();
        X500Name subject = new X500Name("CN=" + name);
        X509Certificate certificate = sign(subject, keys, subject, keys, builder -> {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        });
        return new TestCertificates(keys, certificate);
    }

    /**
     * Writes {@code ca-cert.pem}, {@code server-cert.pem} and {@code server-key.pem} (for {@code localhost}
     * and {@code 127.0.0.1}), {@code client-cert.pem} and {@code client-key.pem} into {@code folder}
     * (created if needed), and returns it.
     */
    public Path writeAll(Path folder) {
        writeCa(folder);
        writeServer(folder);
        writeClient(folder, "client");
        return folder;
    }

    /** Writes {@code ca-cert.pem} into {@code folder} (created if needed) and returns it. */
    public Path writeCa(Path folder) {
        write(folder.resolve("ca-cert.pem"), pem("CERTIFICATE", encoded(ca)));
        return folder;
    }

    /** Writes {@code server-cert.pem} and {@code server-key.pem}, signed by this CA, into {@code folder}. */
    public Path writeServer(Path folder) {
        KeyPair keys = ecKeys();
        X509Certificate certificate = sign(new X500Name("CN=localhost"), keys, issuer(), caKeys, builder -> {
            leaf(builder, KeyPurposeId.id_kp_serverAuth);
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")
            }));
        });
        write(folder.resolve("server-cert.pem"), pem("CERTIFICATE", encoded(certificate)));
        write(
                folder.resolve("server-key.pem"),
                pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        return folder;
    }

    /** Writes {@code client-cert.pem} and {@code client-key.pem} for {@code CN=name}, signed by this CA. */
    public Path writeClient(Path folder, String name) {
        KeyPair keys = ecKeys();
        X509Certificate certificate = sign(
                new X500Name("CN=" + name),
                keys,
                issuer(),
                caKeys,
                builder -> leaf(builder, KeyPurposeId.id_kp_clientAuth));
        write(folder.resolve("client-cert.pem"), pem("CERTIFICATE", encoded(certificate)));
        write(
                folder.resolve("client-key.pem"),
                pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        return folder;
    }

    /** A TLS client context that trusts this CA only (and presents no certificate). */
    public SSLContext clientContext() {
        try {
            java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trust);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code -----BEGIN type-----}, the base64 of {@code der} in lines of 64, {@code -----END type-----}. */
    public static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /**
     * A new ECDSA P-256 key pair, from Bouncy Castle's provider: its PKCS#8 encoding carries the curve and
     * the public key inside the private key, which gnutls needs (it cannot read the JDK's encoding, which
     * leaves them out).
     */
    public static KeyPair ecKeys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC", BOUNCY_CASTLE);
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private X500Name issuer() {
        return X500Name.getInstance(ca.getSubjectX500Principal().getEncoded());
    }

    private static void leaf(X509v3CertificateBuilder builder, KeyPurposeId purpose) throws IOException {
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(
                Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
        builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
    }

    @FunctionalInterface
    private interface Extensions {
        void add(X509v3CertificateBuilder builder) throws IOException;
    }

    private static X509Certificate sign(
            X500Name subject, KeyPair subjectKeys, X500Name issuer, KeyPair issuerKeys, Extensions extensions) {
        Instant now = Instant.now();
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                    issuer,
                    BigInteger.valueOf(SERIAL.incrementAndGet()),
                    Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(Duration.ofDays(1))),
                    subject,
                    subjectKeys.getPublic());
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            builder.addExtension(
                    Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(subjectKeys.getPublic()));
            builder.addExtension(
                    Extension.authorityKeyIdentifier,
                    false,
                    utils.createAuthorityKeyIdentifier(issuerKeys.getPublic()));
            extensions.add(builder);
            return new JcaX509CertificateConverter()
                    .getCertificate(builder.build(
                            new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
        } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] encoded(X509Certificate certificate) {
        try {
            return certificate.getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
