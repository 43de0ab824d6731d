package io.rdmaflux.micrometer;

import io.rdmaflux.core.ConnectionListener;
import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import reactor.core.Disposable;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * A node's counters summed over its connections: those still live (read from their metrics when asked)
 * plus those already freed (their final values, kept here), so a counter keeps what a closed connection
 * counted and never goes down. A connection moves from live to freed in one step under the lock that
 * readers take too.
 *
 * <p><b>Concurrency:</b> thread-safe; a read takes a lock and each live connection's
 * {@link RdmaConnection#metrics()} (a few hundred ns per connection): meant for a scrape, not a hot path.
 */
final class ConnectionTotals implements ConnectionListener {
    /** The counters kept across connections, each read from {@link ConnectionMetrics}. */
    enum Counter {
        MESSAGES_SENT(ConnectionMetrics::messagesSent),
        MESSAGES_RECEIVED(ConnectionMetrics::messagesReceived),
        MESSAGES_DELIVERED(ConnectionMetrics::messagesDelivered),
        BYTES_SENT(ConnectionMetrics::bytesSent),
        BYTES_RECEIVED(ConnectionMetrics::bytesReceived),
        CREDIT_STALLS(ConnectionMetrics::creditStalls),
        OUT_OF_ORDER(ConnectionMetrics::outOfOrder),
        MESSAGES_RESENT(ConnectionMetrics::messagesResent),
        DELIVERY_TOTAL_NS(ConnectionMetrics::deliveryTotalNs);

        final ToLongFunction<ConnectionMetrics> read;

        Counter(ToLongFunction<ConnectionMetrics> read) {
            this.read = read;
        }
    }

    private static final Counter[] COUNTERS = Counter.values();

    private final Set<RdmaConnection> live = new HashSet<>();
    private final long[] freed = new long[COUNTERS.length];
    private final long[] freedRailBytes;
    private Disposable registration = () -> { };

    /** @param rails the node's rail count: rail indexes {@code [0, rails)} are counted */
    ConnectionTotals(int rails) {
        this.freedRailBytes = new long[rails];
    }

    /** Starts following {@code node}: its connections not yet freed and every one opened later. */
    synchronized void follow(RdmaNode node) {
        // under the lock: a connection freed meanwhile waits for it, then finds itself in live
        registration = node.addConnectionListener(this);
        live.addAll(node.connections());
    }

    /** Stops following the node; the counts so far stay. */
    synchronized void stop() {
        registration.dispose();
    }

    @Override
    public synchronized void connectionOpened(RdmaConnection connection) {
        live.add(connection);
    }

    @Override
    public synchronized void connectionFreed(RdmaConnection connection, ConnectionMetrics metrics, List<SubchannelSnapshot> subchannels) {
        live.remove(connection);
        for (Counter k : COUNTERS) {
            freed[k.ordinal()] += k.read.applyAsLong(metrics);
        }
        for (SubchannelSnapshot s : subchannels) {
            if (s.rail() < freedRailBytes.length) {
                freedRailBytes[s.rail()] += s.bytesSent();
            }
        }
    }

    /** Connections open or closing, not yet freed; a copy. */
    synchronized List<RdmaConnection> live() {
        return List.copyOf(live);
    }

    /** {@code counter} over every connection followed, freed ones included: never decreases. */
    synchronized long total(Counter counter) {
        long sum = freed[counter.ordinal()];
        for (RdmaConnection c : live) {
            sum += counter.read.applyAsLong(c.metrics());
        }
        return sum;
    }

    /** {@code value} summed over the live connections only (for gauges: it goes down too). */
    synchronized long liveSum(ToLongFunction<ConnectionMetrics> value) {
        long sum = 0;
        for (RdmaConnection c : live) {
            sum += value.applyAsLong(c.metrics());
        }
        return sum;
    }

    /** Payload bytes sent on rail {@code rail} by every connection followed, freed ones included. */
    synchronized long railBytes(int rail) {
        long sum = freedRailBytes[rail];
        for (RdmaConnection c : live) {
            for (SubchannelSnapshot s : c.subchannels()) {
                if (s.rail() == rail) {
                    sum += s.bytesSent();
                }
            }
        }
        return sum;
    }
}
