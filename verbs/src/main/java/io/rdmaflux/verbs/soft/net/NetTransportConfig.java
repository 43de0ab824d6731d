package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.VerbsException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How a {@link NetTransport} binds and sizes its sockets. Build with {@link #builder()}; every value
 * is checked with a message naming it.
 *
 * <ul>
 *   <li>{@code addresses}: the local IP of each port, in port order (port {@code i} binds
 *       {@code addresses[(i - 1) % size]}), e.g. one address per rail; default {@code 127.0.0.1}.</li>
 *   <li>{@code basePort}: port {@code i} binds UDP and TCP port {@code basePort + i - 1};
 *       0 (default) takes any free port (the same number for UDP and TCP).</li>
 *   <li>{@code udpReceiveBufferBytes}/{@code udpSendBufferBytes}: SO_RCVBUF/SO_SNDBUF of each
 *       port's UDP socket (default 4 MiB each, so that loopback at full rate does not overflow the
 *       kernel queue; Linux caps them at {@code net.core.rmem_max}/{@code wmem_max}).</li>
 *   <li>{@code tcpBufferBytes}: SO_SNDBUF/SO_RCVBUF of RC streams; 0 (default) keeps the kernel's
 *       autotuning.</li>
 *   <li>{@code maxFrameBytes}: largest RC frame (header + message) a stream accepts; a longer one
 *       is a broken sender and closes the stream (default 64 MiB + header).</li>
 *   <li>{@code ackCoalescingNs}: how long a lone RC acknowledgement may wait for a frame to ride
 *       with (default 20 µs; 0 = never).</li>
 *   <li>{@code releaseLingerNs}: how long a released RC stream (its QP destroyed) waits for the peer
 *       to close its side before it is closed regardless (default 10 s; see {@link NetTransport},
 *       "Route release").</li>
 *   <li>{@code renewSilenceNs}: how long an RC stream's connection must have been silent before an
 *       RC ACK timer expiry replaces it (default 100 ms; see {@link NetTransport}, "Stalled streams").</li>
 *   <li>{@code allowPeers}: the hosts (CIDR blocks) whose streams, datagrams and connect requests
 *       this node hears ({@link NetPeerFilter}); default every host.</li>
 * </ul>
 *
 * <p>Immutable, thread-safe.
 */
public final class NetTransportConfig {
    /** Default largest RC frame: a 64 MiB message plus its header. */
    public static final int DEFAULT_MAX_FRAME_BYTES = (64 << 20) + NetFrameCodec.HEADER_BYTES;
    /** Default ACK coalescing: 20 µs, well below any retry timeout and about one loopback round trip. */
    public static final long DEFAULT_ACK_COALESCING_NS = 20_000;
    /** Default release linger: 10 s, ample for a loaded peer's engine to read the release and close. */
    public static final long DEFAULT_RELEASE_LINGER_NS = 10_000_000_000L;
    /**
     * Default silence before a stalled RC stream is renewed: 100 ms, half of Linux's minimum TCP
     * retransmission timeout (200 ms), so a connection that just read something is left alone.
     */
    public static final long DEFAULT_RENEW_SILENCE_NS = 100_000_000L;

    private final List<InetAddress> addresses;
    private final int basePort;
    private final int udpReceiveBufferBytes;
    private final int udpSendBufferBytes;
    private final int tcpBufferBytes;
    private final int maxFrameBytes;
    private final long ackCoalescingNs;
    private final long releaseLingerNs;
    private final long renewSilenceNs;
    private final NetPeerFilter peerFilter;

    private NetTransportConfig(Builder b) {
        this.ackCoalescingNs = b.ackCoalescingNs;
        this.releaseLingerNs = b.releaseLingerNs;
        this.renewSilenceNs = b.renewSilenceNs;
        this.peerFilter = b.peerFilter;
        this.addresses = List.copyOf(b.addresses.isEmpty() ? List.of(InetAddress.getLoopbackAddress()) : b.addresses);
        this.basePort = b.basePort;
        this.udpReceiveBufferBytes = b.udpReceiveBufferBytes;
        this.udpSendBufferBytes = b.udpSendBufferBytes;
        this.tcpBufferBytes = b.tcpBufferBytes;
        this.maxFrameBytes = b.maxFrameBytes;
    }

    /** A builder with the defaults above. */
    public static Builder builder() {
        return new Builder();
    }

    /** Loopback, any free ports, default buffers. */
    public static NetTransportConfig loopback() {
        return builder().build();
    }

    public List<InetAddress> addresses() {
        return addresses;
    }

    public int basePort() {
        return basePort;
    }

    public int udpReceiveBufferBytes() {
        return udpReceiveBufferBytes;
    }

    public int udpSendBufferBytes() {
        return udpSendBufferBytes;
    }

    public int tcpBufferBytes() {
        return tcpBufferBytes;
    }

    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    public long ackCoalescingNs() {
        return ackCoalescingNs;
    }

    /** How long a released RC stream waits for the peer to close its side, ns. */
    public long releaseLingerNs() {
        return releaseLingerNs;
    }

    /**
     * How long an RC stream's connection must have read nothing before an RC ACK timer expiry on its
     * route replaces it with a new connection, ns (see {@link NetTransport}, "Stalled streams").
     */
    public long renewSilenceNs() {
        return renewSilenceNs;
    }

    /** The hosts this node hears ({@link NetPeerFilter#any()} unless {@link Builder#allowPeers} was given). */
    public NetPeerFilter peerFilter() {
        return peerFilter;
    }

    /** Local address of port {@code number} (1-based). */
    InetAddress addressOfPort(int number) {
        return addresses.get((number - 1) % addresses.size());
    }

    @Override
    public String toString() {
        return "NetTransportConfig{addresses=" + addresses.stream().map(InetAddress::getHostAddress).toList() + ", basePort=" + basePort
            + ", udpReceiveBufferBytes=" + udpReceiveBufferBytes + ", maxFrameBytes=" + maxFrameBytes
            + (peerFilter.admitsAny() ? "" : ", allowPeers=" + peerFilter) + "}";
    }

    /** Builder of a {@link NetTransportConfig}. */
    public static final class Builder {
        private final List<InetAddress> addresses = new ArrayList<>();
        private int basePort;
        private int udpReceiveBufferBytes = 4 << 20;
        private int udpSendBufferBytes = 4 << 20;
        private int tcpBufferBytes;
        private int maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
        private long ackCoalescingNs = DEFAULT_ACK_COALESCING_NS;
        private long releaseLingerNs = DEFAULT_RELEASE_LINGER_NS;
        private long renewSilenceNs = DEFAULT_RENEW_SILENCE_NS;
        private NetPeerFilter peerFilter = NetPeerFilter.any();

        private Builder() {
        }

        /**
         * Hears only the hosts in {@code cidrs} (IP literals with an optional {@code /prefix}); others'
         * RC streams, UD datagrams and connect requests are refused and counted. The node's own
         * addresses are not added: list them if its ports talk to each other.
         *
         * @throws VerbsException naming an entry that is not an IP literal or has a bad prefix, or if the list is empty
         */
        public Builder allowPeers(List<String> cidrs) {
            if (cidrs.isEmpty()) {
                throw new VerbsException("allowPeers needs at least one CIDR block (an empty list would refuse every host);"
                    + " leave it unset to hear every host");
            }
            this.peerFilter = NetPeerFilter.of(cidrs);
            return this;
        }

        /** Adds the local IP of the next port (a literal IP or a host name resolved now). */
        public Builder address(String ipOrHost) {
            Objects.requireNonNull(ipOrHost, "ipOrHost");
            try {
                addresses.add(InetAddress.getByName(ipOrHost.trim()));
            } catch (UnknownHostException e) {
                throw new VerbsException("local address '" + ipOrHost + "' of the net fabric is not a known host or IP; "
                    + "give an IP address of a local interface, e.g. 127.0.0.1 or 10.77.1.1", e);
            }
            return this;
        }

        /** Adds the local IP of the next port. */
        public Builder address(InetAddress address) {
            addresses.add(Objects.requireNonNull(address, "address"));
            return this;
        }

        /** First UDP/TCP port, in [0, 65535]; 0 = any free port. */
        public Builder basePort(int port) {
            if (port < 0 || port > 65535) {
                throw new VerbsException("basePort must be in [0, 65535] but it was " + port);
            }
            this.basePort = port;
            return this;
        }

        /** SO_RCVBUF of UD sockets, bytes, >= 65536. */
        public Builder udpReceiveBufferBytes(int bytes) {
            this.udpReceiveBufferBytes = atLeast("udpReceiveBufferBytes", bytes, 65536);
            return this;
        }

        /** SO_SNDBUF of UD sockets, bytes, >= 65536. */
        public Builder udpSendBufferBytes(int bytes) {
            this.udpSendBufferBytes = atLeast("udpSendBufferBytes", bytes, 65536);
            return this;
        }

        /** SO_SNDBUF/SO_RCVBUF of RC streams, bytes; 0 keeps kernel autotuning. */
        public Builder tcpBufferBytes(int bytes) {
            if (bytes != 0) {
                atLeast("tcpBufferBytes", bytes, 4096);
            }
            this.tcpBufferBytes = bytes;
            return this;
        }

        /** Largest RC frame a stream accepts (header included), bytes, >= 65536. */
        public Builder maxFrameBytes(int bytes) {
            this.maxFrameBytes = atLeast("maxFrameBytes", bytes, 65536);
            return this;
        }

        /**
         * How long an RC stream may hold a lone ACK hoping to send it with the next frame, ns of the
         * NIC's clock, in [0, 1 ms]; 0 sends every ACK at the end of the engine pass that made it.
         */
        public Builder ackCoalescingNs(long ns) {
            if (ns < 0 || ns > 1_000_000) {
                throw new VerbsException("ackCoalescingNs must be in [0, 1000000] but it was " + ns);
            }
            this.ackCoalescingNs = ns;
            return this;
        }

        /**
         * How long a released RC stream (its QP destroyed, the route release sent) waits for the peer to
         * close its side before it is closed regardless, ns of the NIC's clock, &gt; 0. A peer cut off
         * this way sees a reset and fails the partner QP, as for a dead host; so keep it well above
         * the time a loaded peer takes to read the release.
         */
        public Builder releaseLingerNs(long ns) {
            if (ns <= 0) {
                throw new VerbsException("releaseLingerNs must be > 0 but it was " + ns);
            }
            this.releaseLingerNs = ns;
            return this;
        }

        /**
         * How long an RC stream's connection must have read nothing before an RC ACK timer expiry on its
         * route replaces it with a new connection, ns of the NIC's clock, in [1 ms, 1 h]; default 100 ms.
         * Shorter recovers sooner after a link flap when the QPs' retry timeout is short too; longer
         * renews less often when retry timeouts are below the round trip (see {@link NetTransport},
         * "Stalled streams").
         */
        public Builder renewSilenceNs(long ns) {
            if (ns < 1_000_000L || ns > 3_600_000_000_000L) {
                throw new VerbsException("renewSilenceNs must be in [1000000, 3600000000000] but it was " + ns);
            }
            this.renewSilenceNs = ns;
            return this;
        }

        private static int atLeast(String name, int value, int min) {
            if (value < min) {
                throw new VerbsException(name + " must be >= " + min + " but it was " + value);
            }
            return value;
        }

        public NetTransportConfig build() {
            return new NetTransportConfig(this);
        }
    }
}
