package dev.tailor.nbd;

import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * Which connections the server takes: at most {@code maxConnections} open, of which at most
 * {@code maxHandshakes} still in the handshake. A newcomer that would exceed either limit makes room by
 * closing the connection that has gone longest in the handshake without sending anything; only when
 * every open connection is past its handshake is the newcomer itself refused. So sockets that connect
 * and never speak, however many, cannot lock real clients out until the handshake timeout: each new
 * connection pushes out the stalest idle one, and a real client needs the few round trips of its
 * handshake.
 *
 * <p>Maintainers: the usual NBD servers offer no model here. qemu-nbd serves one client unless told
 * otherwise ({@code --shared}); nbdkit 1.32 has no connection limit (a thread per connection) and kept a
 * connection that never sent a byte open for over 75 s in our check. Servers facing slowloris-style
 * clients either shorten the timeout for clients that send nothing, which still locks everyone out for
 * that long, or close idle connections when they are full; we do the second. Evicting the least
 * recently active handshake rather than refusing the newcomer is what keeps the server reachable: to
 * crowd out a real client, an attacker has to open {@code maxHandshakes} connections within the few
 * round trips of that client's handshake. The limit on handshakes keeps idle sockets from holding the
 * slots of clients in the transmission phase, which are never evicted. The price: a real client that
 * stalls mid-handshake under such pressure is closed and has to reconnect.
 *
 * <p>Threads: called from every event loop, under one lock. {@link #admit} costs O(1) per eviction
 * (the handshakes are kept in an access-ordered map, least recently active first); the others O(1).
 */
final class ConnectionAdmission {

    private static final System.Logger LOG = System.getLogger(ConnectionAdmission.class.getName());
    private static final long REFUSAL_WARNING_INTERVAL_NANOS = 10_000_000_000L;
    private long refused;
    private long refusedAtWarning;
    private long lastRefusalWarningNanos;

    private final int maxConnections;
    private final int maxHandshakes;
    private final Set<Channel> open = new HashSet<>();
    /** Connections in the handshake, least recently active first (access order: {@link #active} moves one last). */
    private final LinkedHashMap<Channel, Boolean> handshaking = new LinkedHashMap<>(16, 0.75f, true);
    private long evictions;

    /**
     * @param maxConnections connections open at once, at least 1
     * @param maxHandshakes  of those, connections in the handshake at once, 1 to {@code maxConnections}
     */
    ConnectionAdmission(int maxConnections, int maxHandshakes) {
        if (maxConnections < 1 || maxHandshakes < 1 || maxHandshakes > maxConnections) {
            throw new IllegalArgumentException("maxConnections: " + maxConnections + ", maxHandshakes: "
                    + maxHandshakes + " (expected: 1 <= maxHandshakes <= maxConnections)");
        }
        this.maxConnections = maxConnections;
        this.maxHandshakes = maxHandshakes;
    }

    /**
     * Takes a new connection, which starts in the handshake, closing the least recently active
     * handshakes if the limits need room.
     *
     * @return false when the connection must be refused (every open connection is past its handshake);
     *         the caller closes it
     */
    boolean admit(Channel channel) {
        List<Channel> evicted = new ArrayList<>(1);
        boolean admitted;
        synchronized (this) {
            Iterator<Channel> stalest = handshaking.keySet().iterator();
            while ((open.size() >= maxConnections || handshaking.size() >= maxHandshakes) && stalest.hasNext()) {
                Channel victim = stalest.next();
                stalest.remove();
                open.remove(victim);
                evicted.add(victim);
            }
            evictions += evicted.size();
            admitted = open.size() < maxConnections;
            if (admitted) {
                open.add(channel);
                handshaking.put(channel, Boolean.TRUE);
            }
        }
        for (Channel victim : evicted) {
            LOG.log(System.Logger.Level.DEBUG, () -> victim + ": closed, the longest idle of "
                    + maxHandshakes + " connections in the handshake, to make room for " + channel);
            victim.close();
        }
        if (!admitted) {
            warnRefused(channel);
        }
        return admitted;
    }

    /** Says, at most every 10 s, that a newcomer was turned away: an operator must see a full server. */
    private void warnRefused(Channel channel) {
        long now = System.nanoTime();
        long refusedSinceWarning;
        synchronized (this) {
            refused++;
            if (lastRefusalWarningNanos != 0 && now - lastRefusalWarningNanos < REFUSAL_WARNING_INTERVAL_NANOS) {
                return;
            }
            lastRefusalWarningNanos = now;
            refusedSinceWarning = refused - refusedAtWarning;
            refusedAtWarning = refused;
        }
        LOG.log(System.Logger.Level.WARNING, () -> "connection from " + channel.remoteAddress() + " refused: "
                + maxConnections + " connections are open, all past their handshake (limits.maxConnections); "
                + refusedSinceWarning + " refused since the last such warning");
    }

    /** Notes that {@code channel} sent something in its handshake (it becomes the last to be evicted). */
    synchronized void active(Channel channel) {
        handshaking.get(channel);
    }

    /** {@code channel} reached the transmission phase: it is never evicted. */
    synchronized void handshakeDone(Channel channel) {
        handshaking.remove(channel);
    }

    /** {@code channel} closed; idempotent. */
    synchronized void closed(Channel channel) {
        open.remove(channel);
        handshaking.remove(channel);
    }

    /** Connections closed so far to make room for newer ones. */
    synchronized long evictions() {
        return evictions;
    }

    /** Connections open now, and in the handshake now, as {@code [open, handshaking]}. */
    synchronized int[] counts() {
        return new int[] {open.size(), handshaking.size()};
    }
}
