package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.ud.dr.DrStats;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * A reliable UD channel ({@link ChannelKind#RELIABLE_UD}, seed 003 &sect;4): the RC send/receive channel's frame
 * protocol, credits and rendezvous, run on a {@link ReliableDatagramQp} (a share of the node's UD rail made
 * reliable by DR) instead of an RC queue pair. So the frames, credits and close handshake are exactly those of
 * {@link ChannelKind#RC_SEND_RECV} and the Connection TCK holds unchanged; what differs is underneath: no
 * per-peer queue pair, datagrams of at most the UD MTU, CRC32C end to end, retransmission by DR.
 *
 * <p>Each duty cycle polls the rail's UD completion queue (datagrams of every peer go to their queue pairs), runs
 * this channel's DR endpoint, then the RC channel logic over the completions DR made. Every CTS it sends also
 * grants the peer its window for the RDMA WRITE that follows ({@link WriteGrants}).
 *
 * <p><b>Concurrency:</b> progress thread only, as every {@link Channel}.
 */
public final class UdChannel implements Channel {
    private final RcSubchannel inner;
    private final ReliableDatagramQp qp;
    private final UdPort rail;
    private final WriteGrants grants;
    private final UdEventsRelay relay = new UdEventsRelay(this);

    private final java.util.function.Consumer<UdChannel> onClose;

    UdChannel(RcSubchannel inner, ReliableDatagramQp qp, UdPort rail, WriteGrants grants, java.util.function.Consumer<UdChannel> onClose) {
        this.onClose = onClose;
        this.inner = inner;
        this.qp = qp;
        this.rail = rail;
        this.grants = grants;
        inner.events(relay);
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.RELIABLE_UD;
    }

    @Override
    public Object identity() {
        return inner.identity();
    }

    @Override
    public void events(ChannelEvents events) {
        relay.listener(events);
    }

    @Override
    public QpEndpoint localEndpoint() {
        return inner.localEndpoint();
    }

    @Override
    public void connect(QpEndpoint remote, int peerBufferBytes, int peerReceiveBuffers, int initialCredits, boolean connecting) {
        inner.connect(remote, peerBufferBytes, peerReceiveBuffers, initialCredits, connecting);
    }

    @Override
    public int doWork(long nowNs) {
        return rail.poll(nowNs) + qp.doWork(nowNs) + inner.doWork(nowNs);
    }

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        grants.grant(rkey, remoteAddress, messageLength);
        return inner.sendCts(psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public void abort() {
        inner.abort();
    }

    @Override
    public void close() {
        inner.close();
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

    /** Datagrams on this channel's rail whose tag named no queue pair of the node, dropped. */
    public long foreignDatagramsDropped() {
        return rail.foreignDropped();
    }

    @Override
    public String toString() {
        return "UdChannel{" + qp + ", " + rail + "}";
    }

    @Override
    public int rail() {
        return inner.rail();
    }

    @Override
    public Port port() {
        return inner.port();
    }

    @Override
    public long sendCredits() {
        return inner.sendCredits();
    }

    @Override
    public int freeSendBuffers() {
        return inner.freeSendBuffers();
    }

    @Override
    public boolean canSend() {
        return inner.canSend();
    }

    @Override
    public boolean isUsable() {
        return inner.isUsable();
    }

    @Override
    public int maxFramePayloadBytes() {
        return inner.maxFramePayloadBytes();
    }

    @Override
    public int framesInFlight() {
        return inner.framesInFlight();
    }

    @Override
    public long bytesSent() {
        return inner.bytesSent();
    }

    @Override
    public long messagesCompleted() {
        return inner.messagesCompleted();
    }

    @Override
    public void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        inner.sendData(message, srcOffset, length, first, last, psn, token);
    }

    @Override
    public void openPack(int psn) {
        inner.openPack(psn);
    }

    @Override
    public void packAppend(RdmaMessage message) {
        inner.packAppend(message);
    }

    @Override
    public void closePack(long token) {
        inner.closePack(token);
    }

    @Override
    public void sendRts(int psn, int messageLength, long token) {
        inner.sendRts(psn, messageLength, token);
    }

    @Override
    public void flushSends() {
        inner.flushSends();
    }

    @Override
    public boolean canWriteStripe() {
        return inner.canWriteStripe();
    }

    @Override
    public void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey, int stripeOffset, int length, int stripes, int stripeIndex, long token) {
        inner.writeStripe(psn, messageLength, localAddress, lkey, remoteAddress, rkey, stripeOffset, length, stripes, stripeIndex, token);
    }

    @Override
    public int writesInFlight() {
        return inner.writesInFlight();
    }

    @Override
    public void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        inner.sendRtsRead(psn, messageLength, address, rkey, token);
    }

    @Override
    public boolean canReadStripe() {
        return inner.canReadStripe();
    }

    @Override
    public void readStripe(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        inner.readStripe(localAddress, lkey, remoteAddress, rkey, length, token);
    }

    @Override
    public boolean sendReadFin(int psn, int messageLength, int flags) {
        return inner.sendReadFin(psn, messageLength, flags);
    }

    @Override
    public int readsInFlight() {
        return inner.readsInFlight();
    }

    @Override
    public boolean canPostWrite() {
        return inner.canPostWrite();
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag) {
        return inner.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag);
    }

    @Override
    public boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        return inner.sendChannelControl(src, offset, length);
    }

    @Override
    public boolean sendRailDown(int failedRail) {
        return inner.sendRailDown(failedRail);
    }

    @Override
    public boolean sendInboundClosed(int firstUndeliveredPsn) {
        return inner.sendInboundClosed(firstUndeliveredPsn);
    }

    @Override
    public boolean sendCreditFrame() {
        return inner.sendCreditFrame();
    }

    @Override
    public int flushCredits() {
        return inner.flushCredits();
    }

    @Override
    public boolean sendGracefulClose(int nextPsn, int railMask, boolean last) {
        return inner.sendGracefulClose(nextPsn, railMask, last);
    }

    @Override
    public void sendAbort(int nextPsn, String reason) {
        inner.sendAbort(nextPsn, reason);
    }

    @Override
    public void releaseReceiveBuffer(int slot) {
        inner.releaseReceiveBuffer(slot);
    }

    @Override
    public int receiveSlots() {
        return inner.receiveSlots();
    }

    @Override
    public int freeReceiveBuffers() {
        return inner.freeReceiveBuffers();
    }

    @Override
    public int receiveBuffersHeld() {
        return inner.receiveBuffersHeld();
    }

    @Override
    public boolean carriesControl() {
        return inner.carriesControl();
    }

    @Override
    public boolean isFailed() {
        return inner.isFailed();
    }

    @Override
    public boolean isClosed() {
        return inner.isClosed();
    }

    @Override
    public boolean closeSent() {
        return inner.closeSent();
    }

    @Override
    public boolean finalSent() {
        return inner.finalSent();
    }

    @Override
    public int sendBuffersInUse() {
        return inner.sendBuffersInUse();
    }

    @Override
    public int sendBufferCount() {
        return inner.sendBufferCount();
    }

    @Override
    public int peerReceiveBuffers() {
        return inner.peerReceiveBuffers();
    }

    @Override
    public long framesSent(FrameType type) {
        return inner.framesSent(type);
    }

    @Override
    public long framesReceived(FrameType type) {
        return inner.framesReceived(type);
    }

    @Override
    public long packedFramesSent() {
        return inner.packedFramesSent();
    }

    @Override
    public void forEachUnackedSend(UnackedSend visitor) {
        inner.forEachUnackedSend(visitor);
    }

    @Override
    public void failedByPeer() {
        inner.failedByPeer();
    }
}
