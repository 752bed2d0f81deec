package dev.tailor.nbd.config;

import static dev.tailor.nbd.config.NbdConfig.whole;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.nbd.protocol.BlockSizes;
import java.util.ArrayList;
import java.util.List;

/**
 * Limits that keep one client from taking the server down (docs/nbd.md, "Limits").
 *
 * @param maxRequestSize                   longest read, write or write-zeroes (default 32 MiB, the
 *                                         size proto.md says clients may always send); advertised as
 *                                         the maximum block size
 * @param maxInFlightPerConnection         bytes of write payloads and read replies a connection may
 *                                         hold before the server stops reading from it (default
 *                                         64 MiB; at least maxRequestSize)
 * @param maxInFlightRequestsPerConnection requests a connection may have outstanding before the
 *                                         server stops reading from it (default 256)
 * @param maxConnections                   connections at once (default 256); a newcomer over the limit
 *                                         closes the longest idle connection still in the handshake, or
 *                                         is closed itself when every connection is past its handshake
 * @param maxHandshakes                    of those, connections in the handshake at once (default 64, at
 *                                         most maxConnections); a newcomer over the limit closes the
 *                                         longest idle one (the server's connection admission)
 * @param handshakeTimeoutSeconds          time a client has to finish the handshake (default 10)
 * @param idleTimeoutSeconds               a connection past its handshake with no request in flight
 *                                         and nothing sent or received for this long is closed; 0 is
 *                                         off, never (default {@link #DEFAULT_IDLE_TIMEOUT_SECONDS};
 *                                         docs/nbd.md, "Limits", says why)
 * @param maxConnectionsPerAddress         connections from one client address at once (default
 *                                         maxConnections less a quarter of it, rounded down: 192 of
 *                                         256, so a quarter is always left to other addresses; at most
 *                                         maxConnections); a newcomer over it closes that address's
 *                                         longest idle handshake, or is refused, with the reason in the
 *                                         log
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record Limits(
        ByteSize maxRequestSize,
        ByteSize maxInFlightPerConnection,
        Integer maxInFlightRequestsPerConnection,
        Integer maxConnections,
        Integer maxHandshakes,
        Double handshakeTimeoutSeconds,
        Double idleTimeoutSeconds,
        Integer maxConnectionsPerAddress) {

    /** Every limit at its default. */
    public static final Limits DEFAULTS = builder().build();

    /** The default of {@link #maxHandshakes} (lowered to maxConnections when that is smaller). */
    public static final int DEFAULT_MAX_HANDSHAKES = 64;

    /**
     * The default of {@link #idleTimeoutSeconds}: 0, off, as in qemu-nbd and nbdkit. qemu's NBD client
     * keeps an idle disk's connection open for as long as the VM runs, and by default (reconnect-delay
     * 0) fails every later request with EIO once the server has closed it (docs/nbd.md, "Limits").
     */
    public static final double DEFAULT_IDLE_TIMEOUT_SECONDS = 0;

    /** Largest {@link #idleTimeoutSeconds}: a year. */
    public static final double MAX_IDLE_TIMEOUT_SECONDS = 31_536_000;

    /** What {@link #idleTimeoutSeconds} takes (and {@code --idle-timeout}, in seconds), in words. */
    public static final String IDLE_TIMEOUT_EXPECTED =
            "0 for off, or " + Numbers.interval(false, 0.01, MAX_IDLE_TIMEOUT_SECONDS) + " (a year)";

    public Limits {
        maxRequestSize = maxRequestSize == null ? new ByteSize(32L << 20) : maxRequestSize;
        maxInFlightPerConnection =
                maxInFlightPerConnection == null ? new ByteSize(64L << 20) : maxInFlightPerConnection;
        maxInFlightRequestsPerConnection =
                maxInFlightRequestsPerConnection == null ? 256 : maxInFlightRequestsPerConnection;
        maxConnections = maxConnections == null ? 256 : maxConnections;
        maxHandshakes =
                maxHandshakes == null ? Math.max(1, Math.min(DEFAULT_MAX_HANDSHAKES, maxConnections)) : maxHandshakes;
        handshakeTimeoutSeconds = handshakeTimeoutSeconds == null ? 10.0 : handshakeTimeoutSeconds;
        idleTimeoutSeconds = idleTimeoutSeconds == null ? DEFAULT_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds;
        maxConnectionsPerAddress = maxConnectionsPerAddress == null
                ? Math.max(1, maxConnections - maxConnections / 4)
                : maxConnectionsPerAddress;
    }

    /** The idle timeout in nanoseconds, 0 when it is off. */
    public long idleTimeoutNanos() {
        return (long) (idleTimeoutSeconds * 1e9);
    }

    /**
     * The most requests the server can have outstanding, {@code maxInFlightRequestsPerConnection} on each of
     * {@code maxConnections} connections (65,536 by default): one export can have as many, since no limit is
     * per export. A connection at its limit is not read from until a reply goes out.
     */
    public long maxRequestsInFlight() {
        return (long) maxInFlightRequestsPerConnection * maxConnections;
    }

    /** The maximum request size in bytes. */
    public int maxRequestBytes() {
        return (int) Math.min(maxRequestSize.bytes(), Integer.MAX_VALUE);
    }

    /** The handshake timeout in nanoseconds. */
    public long handshakeTimeoutNanos() {
        return (long) (handshakeTimeoutSeconds * 1e9);
    }

    List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        long max = maxRequestSize.bytes();
        if (max < 4096 || max > BlockSizes.LARGEST_MAXIMUM_BYTES) {
            problems.add(new Problem("limits.maxRequestSize", maxRequestSize, "a size in [4KiB, 1GiB]"));
        } else if (maxInFlightPerConnection.bytes() < max) { // measured against a valid maxRequestSize only
            problems.add(new Problem(
                    "limits.maxInFlightPerConnection",
                    maxInFlightPerConnection,
                    "at least limits.maxRequestSize, " + maxRequestSize));
        }
        if (maxInFlightRequestsPerConnection < 1 || maxInFlightRequestsPerConnection > 65_536) {
            problems.add(new Problem(
                    "limits.maxInFlightRequestsPerConnection", maxInFlightRequestsPerConnection, whole(1, 65_536)));
        }
        if (maxConnections < 1) {
            problems.add(new Problem("limits.maxConnections", maxConnections, "a whole number >= 1"));
            if (maxHandshakes < 1) {
                problems.add(new Problem("limits.maxHandshakes", maxHandshakes, "a whole number >= 1"));
            }
        } else if (maxHandshakes < 1 || maxHandshakes > maxConnections) {
            problems.add(new Problem(
                    "limits.maxHandshakes",
                    maxHandshakes,
                    whole(1, maxConnections) + ", at most limits.maxConnections"));
        }
        if (!(handshakeTimeoutSeconds > 0) || handshakeTimeoutSeconds > 86_400) {
            problems.add(new Problem(
                    "limits.handshakeTimeoutSeconds",
                    Numbers.written(handshakeTimeoutSeconds),
                    Numbers.interval(true, 0, 86_400)));
        }
        if (!(idleTimeoutSeconds == 0
                || idleTimeoutSeconds >= 0.01 && idleTimeoutSeconds <= MAX_IDLE_TIMEOUT_SECONDS)) {
            problems.add(new Problem(
                    "limits.idleTimeoutSeconds", Numbers.written(idleTimeoutSeconds), IDLE_TIMEOUT_EXPECTED));
        }
        if (maxConnections >= 1 && (maxConnectionsPerAddress < 1 || maxConnectionsPerAddress > maxConnections)) {
            problems.add(new Problem(
                    "limits.maxConnectionsPerAddress",
                    maxConnectionsPerAddress,
                    whole(1, maxConnections) + ", at most limits.maxConnections"));
        }
        return problems;
    }

    /** A builder with every field unset: {@link Builder#build} gives the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds {@link Limits}: named setters; a field left unset, or set to {@code null}, takes its default
     * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
     * read with).
     */
    public static final class Builder {
        private ByteSize maxRequestSize;
        private ByteSize maxInFlightPerConnection;
        private Integer maxInFlightRequestsPerConnection;
        private Integer maxConnections;
        private Integer maxHandshakes;
        private Double handshakeTimeoutSeconds;
        private Double idleTimeoutSeconds;
        private Integer maxConnectionsPerAddress;

        private Builder() {}

        private Builder(Limits from) {
            maxRequestSize = from.maxRequestSize;
            maxInFlightPerConnection = from.maxInFlightPerConnection;
            maxInFlightRequestsPerConnection = from.maxInFlightRequestsPerConnection;
            maxConnections = from.maxConnections;
            maxHandshakes = from.maxHandshakes;
            handshakeTimeoutSeconds = from.handshakeTimeoutSeconds;
            idleTimeoutSeconds = from.idleTimeoutSeconds;
            maxConnectionsPerAddress = from.maxConnectionsPerAddress;
        }

        /** {@link Limits#maxRequestSize}. */
        public Builder maxRequestSize(ByteSize value) {
            maxRequestSize = value;
            return this;
        }

        /** {@link Limits#maxInFlightPerConnection}. */
        public Builder maxInFlightPerConnection(ByteSize value) {
            maxInFlightPerConnection = value;
            return this;
        }

        /** {@link Limits#maxInFlightRequestsPerConnection}. */
        public Builder maxInFlightRequestsPerConnection(Integer value) {
            maxInFlightRequestsPerConnection = value;
            return this;
        }

        /** {@link Limits#maxConnections}. */
        public Builder maxConnections(Integer value) {
            maxConnections = value;
            return this;
        }

        /** {@link Limits#maxHandshakes}. */
        public Builder maxHandshakes(Integer value) {
            maxHandshakes = value;
            return this;
        }

        /** {@link Limits#handshakeTimeoutSeconds}. */
        public Builder handshakeTimeoutSeconds(Double value) {
            handshakeTimeoutSeconds = value;
            return this;
        }

        /** {@link Limits#idleTimeoutSeconds}. */
        public Builder idleTimeoutSeconds(Double value) {
            idleTimeoutSeconds = value;
            return this;
        }

        /** {@link Limits#maxConnectionsPerAddress}. */
        public Builder maxConnectionsPerAddress(Integer value) {
            maxConnectionsPerAddress = value;
            return this;
        }

        /**
         * The limits, each field left unset at its default. Its values are checked where a config file's are,
         * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
         * listed at once, each as {@code field: value (expected: ...)}.
         */
        public Limits build() {
            return new Limits(
                    maxRequestSize,
                    maxInFlightPerConnection,
                    maxInFlightRequestsPerConnection,
                    maxConnections,
                    maxHandshakes,
                    handshakeTimeoutSeconds,
                    idleTimeoutSeconds,
                    maxConnectionsPerAddress);
        }
    }
}
