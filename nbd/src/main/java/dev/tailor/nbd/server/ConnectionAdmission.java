package dev.tailor.nbd.server;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Which connections the server takes: at most {@code maxConnections} open, of which at most
 * {@code maxHandshakes} still in the handshake and at most {@code maxConnectionsPerAddress} from one
 * client address. A newcomer that would exceed a limit makes room by closing the connection that has
 * gone longest in the handshake without sending anything (for the per-address limit, the longest idle
 * one of its own address); only when there is none is the newcomer itself refused. So sockets that
 * connect and never speak, however many, cannot lock real clients out until the handshake timeout:
 * each new connection pushes out the stalest idle one, and a real client needs the few round trips of
 * its handshake. Connections past their handshake are never closed here: one that stays idle is
 * closed by the idle timeout ({@link TransmissionHandler}), and the per-address limit keeps one client
 * from holding every slot meanwhile.
 *
 * <p>A refused newcomer is never refused silently: the first refusal is logged at once with its
 * reason (which limit, and for the per-address limit which address), further ones within 10 s are
 * counted, and a summary line with their number and reasons follows 10 s later, or when the server
 * stops, whichever comes first.
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
 * (the handshakes are kept in an access-ordered map, least recently active first), plus, when an
 * address is at its limit, a walk over the handshakes; the others O(1).
 */
final class ConnectionAdmission {

    /** Why a newcomer was refused, for the log and the metrics. */
    enum Refusal {
        /** Every open connection, {@code maxConnections} of them, is past its handshake. */
        MAX_CONNECTIONS("max_connections"),
        /** Its address has {@code maxConnectionsPerAddress} connections, all past their handshake. */
        MAX_CONNECTIONS_PER_ADDRESS("max_connections_per_address");

        final String label;

        Refusal(String label) {
            this.label = label;
        }
    }

    private static final System.Logger LOG = System.getLogger(ConnectionAdmission.class.getName());

    private final int maxConnections;
    private final int maxHandshakes;
    private final int maxPerAddress;
    private final Set<Channel> open = new HashSet<>();
    /** Connections in the handshake, least recently active first (access order: {@link #active} moves one last). */
    private final LinkedHashMap<Channel, Boolean> handshaking = new LinkedHashMap<>(16, 0.75f, true);
    /** Open connections per client address (absent: none). */
    private final Map<InetAddress, Integer> perAddress = new HashMap<>();

    private final long[] refused = new long[Refusal.values().length];
    private long evictions;
    private long idleClosed;
    /** Refusal warnings: when the last was logged, and what was refused since without a line of its own. */
    private final RefusalWarnings refusalWarnings = new RefusalWarnings(Refusal.values().length, System::nanoTime);

    /**
     * @param maxConnections connections open at once, at least 1
     * @param maxHandshakes  of those, connections in the handshake at once, 1 to {@code maxConnections}
     */
    ConnectionAdmission(int maxConnections, int maxHandshakes) {
        this(maxConnections, maxHandshakes, maxConnections);
    }

    /**
     * @param maxConnections connections open at once, at least 1
     * @param maxHandshakes  of those, connections in the handshake at once, 1 to {@code maxConnections}
     * @param maxPerAddress  of those, connections from one client address, 1 to {@code maxConnections}
     */
    ConnectionAdmission(int maxConnections, int maxHandshakes, int maxPerAddress) {
        if (maxConnections < 1 || maxHandshakes < 1 || maxHandshakes > maxConnections) {
            throw new IllegalArgumentException("maxConnections: " + maxConnections + ", maxHandshakes: " + maxHandshakes
                    + " (expected: 1 <= maxHandshakes <= maxConnections)");
        }
        if (maxPerAddress < 1 || maxPerAddress > maxConnections) {
            throw new IllegalArgumentException("maxConnectionsPerAddress: " + maxPerAddress + " (expected: 1 to"
                    + " maxConnections, " + maxConnections + ")");
        }
        this.maxConnections = maxConnections;
        this.maxHandshakes = maxHandshakes;
        this.maxPerAddress = maxPerAddress;
    }

    /** The client's address, or null for channels without one (tests' embedded channels). */
    private static InetAddress addressOf(Channel channel) {
        return channel.remoteAddress() instanceof InetSocketAddress socket ? socket.getAddress() : null;
    }

    /**
     * Takes a new connection, which starts in the handshake, closing the least recently active
     * handshakes if the limits need room.
     *
     * @return false when the connection must be refused (the reason is logged); the caller closes it
     */
    boolean admit(Channel channel) {
        InetAddress address = addressOf(channel);
        List<Channel> evicted = new ArrayList<>(1);
        Refusal refusal = null;
        int fromAddress;
        synchronized (this) {
            fromAddress = address == null ? 0 : perAddress.getOrDefault(address, 0);
            if (fromAddress >= maxPerAddress) {
                // Its own address's stalest handshake makes room, if it has one.
                for (Iterator<Channel> it = handshaking.keySet().iterator(); it.hasNext(); ) {
                    Channel victim = it.next();
                    if (address.equals(addressOf(victim))) {
                        it.remove();
                        forget(victim);
                        evicted.add(victim);
                        fromAddress--;
                        break;
                    }
                }
                if (fromAddress >= maxPerAddress) {
                    refusal = Refusal.MAX_CONNECTIONS_PER_ADDRESS;
                }
            }
            if (refusal == null) {
                Iterator<Channel> stalest = handshaking.keySet().iterator();
                while ((open.size() >= maxConnections || handshaking.size() >= maxHandshakes) && stalest.hasNext()) {
                    Channel victim = stalest.next();
                    stalest.remove();
                    forget(victim);
                    evicted.add(victim);
                }
                if (open.size() >= maxConnections) {
                    refusal = Refusal.MAX_CONNECTIONS;
                }
            }
            evictions += evicted.size();
            if (refusal == null) {
                open.add(channel);
                handshaking.put(channel, Boolean.TRUE);
                if (address != null) {
                    perAddress.merge(address, 1, Integer::sum);
                }
            } else {
                refused[refusal.ordinal()]++;
            }
        }
        for (Channel victim : evicted) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> victim + ": closed, the longest idle connection in the" + " handshake, to make room for "
                            + channel);
            victim.close();
        }
        if (refusal != null) {
            warnRefused(channel, refusal, address, fromAddress);
        }
        return refusal == null;
    }

    /** Drops {@code channel} from the counts; the caller holds the lock. */
    private void forget(Channel channel) {
        if (open.remove(channel)) {
            InetAddress address = addressOf(channel);
            if (address != null) {
                perAddress.computeIfPresent(address, (a, n) -> n > 1 ? n - 1 : null);
            }
        }
    }

    /**
     * Logs a refusal: at once when none was logged in the last 10 s, else counted, with a summary of
     * what was counted 10 s later (scheduled on the refused channel's event loop).
     */
    private void warnRefused(Channel channel, Refusal refusal, InetAddress address, int fromAddress) {
        long decision = refusalWarnings.refused(refusal.ordinal());
        if (decision == RefusalWarnings.LOG_NOW) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    () -> "connection from " + channel.remoteAddress() + " refused: "
                            + switch (refusal) {
                                case MAX_CONNECTIONS ->
                                    connections(maxConnections) + " " + isAre(maxConnections)
                                            + " open, all past their handshake (limits.maxConnections)";
                                case MAX_CONNECTIONS_PER_ADDRESS ->
                                    connections(fromAddress) + " from " + address.getHostAddress() + " "
                                            + isAre(fromAddress) + " open, all past their handshake"
                                            + " (limits.maxConnectionsPerAddress, --max-connections-per-address)";
                            }
                            + "; further refusals within 10 s are counted and summed up then");
        }
        if (decision >= 0) {
            channel.eventLoop().schedule(this::summarizeRefusals, decision, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Logs the refusals counted since the last warning, if any: 10 s after the first of them, and when
     * the server stops (its event loops drop the scheduled summary), so none goes unreported.
     */
    void summarizeRefusals() {
        long[] counted = refusalWarnings.summarize();
        long total = RefusalWarnings.total(counted);
        if (total > 0) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    () -> total + (total == 1 ? " more connection" : " more connections")
                            + " refused in the last 10 s: "
                            + counted[Refusal.MAX_CONNECTIONS.ordinal()] + " over limits.maxConnections, "
                            + counted[Refusal.MAX_CONNECTIONS_PER_ADDRESS.ordinal()]
                            + " over limits.maxConnectionsPerAddress");
        }
    }

    /** "1 connection", "2 connections". */
    private static String connections(long count) {
        return count + (count == 1 ? " connection" : " connections");
    }

    /** The verb that goes with {@link #connections}. */
    private static String isAre(long count) {
        return count == 1 ? "is" : "are";
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
        forget(channel);
        handshaking.remove(channel);
    }

    /** {@code channel} is being closed by the idle timeout; counted. */
    synchronized void closedIdle(Channel channel) {
        idleClosed++;
    }

    /** Connections closed so far to make room for newer ones. */
    synchronized long evictions() {
        return evictions;
    }

    /** Newcomers refused so far for {@code reason}. */
    synchronized long refused(Refusal reason) {
        return refused[reason.ordinal()];
    }

    /** Connections closed by the idle timeout so far. */
    synchronized long idleClosed() {
        return idleClosed;
    }

    /** Connections open now, and in the handshake now, as {@code [open, handshaking]}. */
    synchronized int[] counts() {
        return new int[] {open.size(), handshaking.size()};
    }

    /** Connections open now from {@code address}. */
    synchronized int openFrom(InetAddress address) {
        return perAddress.getOrDefault(address, 0);
    }
}
