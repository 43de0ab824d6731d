package io.rdmaflux.core.channel;

/**
 * The kinds of {@link Channel}: what carries a connection's frames on one rail. Chosen per rail by
 * {@code ConnectionSpec.channelKind(..)} and agreed in the connection handshake (each side names the
 * kind of every rail; a peer that does not offer the asked kind refuses the connection with an error
 * naming both), so one connection can later mix kinds (eager RDMA rings on one rail, reliable UD on
 * another).
 *
 * <p>{@link #RC_SEND_RECV} is built in; {@link #EAGER_RDMA} is implemented by the {@code rdma-eager}
 * module and {@link #RELIABLE_UD} (seed 003 &sect;4) and {@link #RC_DR} (&sect;3.1) by {@code ud-reliable} (their providers are found by
 * {@link java.util.ServiceLoader}). Each kind adds a constant here, a {@link Channel} implementation and its
 * provider, and must pass the Connection TCK unchanged.
 */
public enum ChannelKind {
    /**
     * An RC queue pair doing SEND/RECV into pre-posted receive buffers, with credit flow control and
     * RDMA WRITE or RDMA READ rendezvous for large messages (seed 001 &sect;3.1; the rendezvous: &sect;3, Fig. 2).
     */
    RC_SEND_RECV(1, new ChannelCapabilities(0, true, true, true, true)),

    /**
     * Eager RDMA: small frames go as one RDMA WRITE into a ring of slots the receiver polls, over an RC
     * send/receive channel that carries everything else and is the fallback when the ring is full or
     * not polled (seed 001 &sect;4.1&ndash;4.6). A peer that does not offer it downgrades the rail to
     * {@link #RC_SEND_RECV} unless the connection asked for it explicitly.
     */
    EAGER_RDMA(2, new ChannelCapabilities(0, true, true, true, true)),

    /**
     * Reliable UD: the rail's frames travel as datagrams over the node's shared UD queue pairs (one receive
     * QP with a static pool, several send QPs in round robin, an address handle per peer), made reliable and
     * ordered by DR-style acknowledgement with CRC32C (seed 003 &sect;4, &sect;4.2). Implemented by the
     * {@code ud-reliable} module; RDMA WRITE is carried as datagrams into a window the receiver granted, no
     * RDMA READ. No fallback: a peer that does not offer it refuses the connection.
     */
    RELIABLE_UD(3, new ChannelCapabilities(0, true, false, true, true)),

    /**
     * RC checked end to end by DR: the rail's frames travel as DR datagrams (CRC32C over header and payload,
     * PSN/SACK acknowledgement, selective retransmission) on an RC queue pair of the connection's own, for the
     * errors the RC transport does not see &mdash; data damaged in host memory, on the bus or by a NIC after its
     * link-level check (seed 003 &sect;3.1: DR checks data "once it reaches main memory"). Implemented by the
     * {@code ud-reliable} module; RDMA WRITE is carried as datagrams into a window the receiver granted, no RDMA READ,
     * no atomics. No fallback: a peer that does not offer it refuses the connection.
     */
    RC_DR(4, new ChannelCapabilities(0, true, false, true, true));

    private final int wireCode;
    private final ChannelCapabilities capabilities;

    ChannelKind(int wireCode, ChannelCapabilities capabilities) {
        this.wireCode = wireCode;
        this.capabilities = capabilities;
    }

    /**
     * The kind a rail falls back to when the peer does not offer this one and the connection did not
     * insist on it: {@link #RC_SEND_RECV} for {@link #EAGER_RDMA}, itself otherwise.
     */
    public ChannelKind fallback() {
        return this == EAGER_RDMA ? RC_SEND_RECV : this;
    }

    /** The kind's code in the handshake, 1..255 (0 is never used, so an old peer's zero byte is no kind). */
    public int wireCode() {
        return wireCode;
    }

    /** What every channel of this kind can do. */
    public ChannelCapabilities capabilities() {
        return capabilities;
    }

    /**
     * The kind with handshake code {@code code}.
     *
     * @throws IllegalArgumentException naming the code and the kinds known, when none has it
     */
    public static ChannelKind ofWireCode(int code) {
        for (ChannelKind k : values()) {
            if (k.wireCode == code) {
                return k;
            }
        }
        throw new IllegalArgumentException("channel kind code " + code + " is unknown; this version knows "
            + java.util.Arrays.toString(values()) + " (codes 1.." + values().length + "): upgrade the side that sent it");
    }
}
