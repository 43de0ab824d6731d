package io.rdmaflux.ud;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ForwardingChannel;
import io.rdmaflux.core.frame.ControlFrameEncoder;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.ud.dr.DrStats;
import org.jspecify.annotations.Nullable;

import java.util.function.Consumer;

/**
 * A reliable UD channel ({@link ChannelKind#RELIABLE_UD}, seed 003 &sect;4), or an RC channel checked end to end by
 * DR ({@link ChannelKind#RC_DR}, &sect;3.1: its datagrams on an RC queue pair of its own, {@link RcDatagramRail}): the RC send/receive channel's frame
 * protocol, credits and rendezvous, run on a {@link ReliableDatagramQp} (a share of the node's UD rail made
 * reliable by DR) instead of an RC queue pair. So the frames, credits and close handshake are exactly those of
 * {@link ChannelKind#RC_SEND_RECV} and the Connection TCK holds unchanged; what differs is underneath: no
 * per-peer queue pair, datagrams of at most the UD MTU, CRC32C end to end, retransmission by DR.
 *
 * <p>Each duty cycle polls the rail's UD completion queue (datagrams of every peer go to their queue pairs), runs
 * this channel's DR endpoint, then the RC channel logic over the completions DR made. Every CTS it sends also
 * grants the peer its window for the RDMA WRITE that follows ({@link WriteGrants}). Everything else is the
 * wrapped channel's ({@link ForwardingChannel}), but for one-sided work and atomics, which a reliable datagram
 * rail does not carry (DR grants WRITE windows per CTS only), and unsignalled WRITEs (every WRITE is signalled).
 *
 * <p>On a node with a shared receive queue the RC channel runs in its SRQ mode and registers nothing: receive
 * buffers come from the node's reliable UD pool of the rail ({@link DatagramSharedReceiveQueue}, credits lent by
 * its budget's equal-share rule), send buffers from the rail's shared send region.
 *
 * <p><b>Concurrency:</b> progress thread only, as every {@link Channel}.
 */
public final class UdChannel extends ForwardingChannel {
    private final RcSubchannel rc;
    private final ReliableDatagramQp qp;
    private final DatagramRail rail;
    private final ChannelKind kind;
    private final WriteGrants grants;
    private final UdEventsRelay relay = new UdEventsRelay(this);
    private final Consumer<UdChannel> onClose;
    /** The node's shared buffers of the rail this channel draws from, or null (pools of its own). */
    private final @Nullable RailSharedBuffers shared;

    UdChannel(RcSubchannel inner, ReliableDatagramQp qp, UdPort rail, WriteGrants grants, @Nullable RailSharedBuffers shared,
              Consumer<UdChannel> onClose) {
        this(ChannelKind.RELIABLE_UD, inner, qp, rail, grants, shared, onClose);
    }

    /** A channel of {@code kind} ({@link ChannelKind#RELIABLE_UD} or {@link ChannelKind#RC_DR}) over {@code rail}. */
    UdChannel(ChannelKind kind, RcSubchannel inner, ReliableDatagramQp qp, DatagramRail rail, WriteGrants grants,
              @Nullable RailSharedBuffers shared, Consumer<UdChannel> onClose) {
        super(inner);
        this.kind = kind;
        this.shared = shared;
        this.rc = inner;
        this.onClose = onClose;
        this.qp = qp;
        this.rail = rail;
        this.grants = grants;
        inner.events(relay);
    }

    @Override
    public ChannelKind kind() {
        return kind;
    }

    @Override
    public void events(ChannelEvents events) {
        relay.listener(events);
    }

    @Override
    public int doWork(long nowNs) {
        return rail.poll(nowNs) + qp.doWork(nowNs) + delegate.doWork(nowNs);
    }

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        grants.grant(rkey, remoteAddress, messageLength);
        return delegate.sendCts(psn, messageLength, remoteAddress, rkey, flags);
    }

    /** One rkey for every rail (a grant carries one): rails over several devices are refused at connect. */
    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        for (int k : railRkeys) {
            if (k != railRkeys[0]) {
                throw new UnsupportedOperationException("a DR rail grants one rkey per CTS; use rails of one device for " + kind);
            }
        }
        return sendCts(psn, messageLength, remoteAddress, railRkeys[0], flags);
    }

    /** Every WRITE on a reliable datagram rail is signalled (DR acknowledges each). */
    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        return delegate.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag);
    }

    /** Settled when the RC channel is and DR owes the peer no ACK and has no datagram still being sent. */
    @Override
    public boolean settled() {
        return delegate.settled() && qp.settled();
    }

    @Override
    public boolean carriesOneSided() {
        return false;
    }

    @Override
    public boolean sendOneSidedControl(FrameType type, ControlFrameEncoder encoder) {
        return false;
    }

    @Override
    public boolean canPostAtomic() {
        return false;
    }

    @Override
    public void postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                           long token) {
        throw new UnsupportedOperationException(kind + " rails carry no atomics");
    }

    @Override
    public Channel downgrade() {
        throw new UnsupportedOperationException(kind + " has no fallback channel to downgrade to");
    }

    @Override
    public void close() {
        delegate.close();
        onClose.accept(this);
    }

    /** The DR counters of this channel's peer (retransmissions, corrupted datagrams dropped, RTT), or null before connect. */
    public @Nullable DrStats drStats() {
        return qp.stats();
    }

    /** The credit this channel's peer holds from the rail's shared receive pool, VFRAGs (-1 before connect). */
    public int receiveGrantVfrags() {
        return qp.receiveBudget();
    }

    /**
     * Buffers of the node's shared reliable UD pool this channel holds (credits its peer holds plus messages not
     * released); 0 when it has pools of its own (a node without {@code sharedReceiveQueue(..)}).
     */
    public int sharedBuffersHeld() {
        return rc.sharedBuffersHeld();
    }

    /** The node's shared reliable UD buffers of the rail this channel draws from, or null (for tests). */
    @Nullable RailSharedBuffers sharedBuffers() {
        return shared;
    }

    /** This channel's queue pair number on its rail (its tag, and its DR source id). */
    int tag() {
        return qp.qpNumber();
    }

    /** Datagrams on this channel's rail whose tag named no queue pair of the node, dropped. */
    public long foreignDatagramsDropped() {
        return rail.foreignDropped();
    }

    @Override
    public String toString() {
        return "UdChannel{" + qp + ", " + rail + "}";
    }
}
