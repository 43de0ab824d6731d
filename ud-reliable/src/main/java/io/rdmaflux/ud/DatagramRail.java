package io.rdmaflux.ud;

import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;

/**
 * What carries the DR datagrams of a {@link ReliableDatagramQp}: the node's shared UD queue pairs of a rail
 * ({@link UdPort}, {@link io.rdmaflux.core.channel.ChannelKind#RELIABLE_UD}) or one RC queue pair of the
 * connection's own ({@link RcDatagramRail}, {@link io.rdmaflux.core.channel.ChannelKind#RC_DR}: DR's end-to-end
 * CRC32C and acknowledgement over RC, seed 003 &sect;3.1). The queue pair above it does not know which.
 *
 * <p><b>Concurrency:</b> {@link #send} and {@link #poll} on the progress thread of the node; {@link #register}
 * and {@link #release} may come from the setup path.
 */
interface DatagramRail {
    /** The port the datagrams leave from. */
    Port port();

    /** Largest DR datagram this rail carries, bytes. */
    int drDatagramBytes();

    /**
     * Takes {@code qp} on as a user; grants it its receive share ({@link ReliableDatagramQp#receiveShare(int)}).
     *
     * @return the queue pair's number on this rail: its DR source id
     */
    int register(ReliableDatagramQp qp);

    /** The endpoint a peer's queue pair connects to, for the queue pair numbered {@code qpNumber} here. */
    QpEndpoint localEndpoint(int qpNumber);

    /** How errors name {@code peer} (an endpoint the peer's rail gave): its address and what carries it there. */
    String describe(QpEndpoint peer);

    /**
     * Connects the queue pair numbered {@code qpNumber} to {@code peer} (the endpoint the peer's rail gave).
     *
     * @return the peer queue pair's DR source id
     */
    int connect(int qpNumber, QpEndpoint peer);

    /**
     * Sends one DR datagram of {@code owner} to {@code peer}.
     *
     * @return {@link io.rdmaflux.ud.dr.DatagramSink#POSTED}, or {@link io.rdmaflux.ud.dr.DatagramSink#BACK_PRESSURED}
     *         when no send buffer or work request is free
     */
    int send(QpEndpoint peer, byte[] datagram, int length, ReliableDatagramQp owner, int psn);

    /** Whether a datagram {@code owner} sent is still posted and not completed (its ACKs and DATA must leave before it closes). */
    boolean sending(ReliableDatagramQp owner);

    /** Polls the rail's completions: datagrams to their queue pairs, send buffers back. @return completions handled */
    int poll(long nowNs);

    /** The queue pair numbered {@code qpNumber} closed: it stops using this rail, which closes with its last user. */
    void release(int qpNumber);

    /** Datagrams that named no queue pair of this rail (or came malformed), dropped. */
    long foreignDropped();
}
