package io.rdmaflux.core.channel;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.frame.ControlFrameEncoder;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import org.agrona.DirectBuffer;

/**
 * A {@link Channel} that forwards every call to the channel it decorates, for channel kinds built over
 * another one (the eager ring over RC send/receive, reliable datagrams over their RC-shaped
 * subchannel): a decorator overrides only what its kind changes, and every method the SPI gains later
 * reaches the decorated channel instead of silently taking the interface's default. {@link #kind()} (and
 * so {@link #capabilities()}) and {@link #events(ChannelEvents)} are the decorator's own: it listens to
 * the decorated channel itself (typically through a {@link RelayingChannelEvents}) and reports to the
 * connection as itself. {@link #identity()} is the decorated channel's: the same rail.
 *
 * <p>Forwarding costs one field read and one interface call per method, the same as a hand-written
 * delegation.
 *
 * <p><b>Concurrency:</b> as the decorated channel (the Channel SPI's rule: progress thread only, after
 * construction).
 */
public abstract class ForwardingChannel implements Channel {
    /** The decorated channel. */
    protected final Channel delegate;

    protected ForwardingChannel(Channel delegate) {
        this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
    }

    /** The decorated channel. */
    public final Channel delegate() {
        return delegate;
    }

    @Override
    public abstract ChannelKind kind();

    @Override
    public abstract void events(ChannelEvents events);

    // ---------------------------------------------------------------- identity and state

    @Override
    public Object identity() {
        return delegate.identity();
    }

    @Override
    public QpEndpoint localEndpoint() {
        return delegate.localEndpoint();
    }

    @Override
    public void connect(QpEndpoint remote, int peerBufferBytes, int peerReceiveBuffers, int initialCredits, boolean connecting) {
        delegate.connect(remote, peerBufferBytes, peerReceiveBuffers, initialCredits, connecting);
    }

    @Override
    public int rail() {
        return delegate.rail();
    }

    @Override
    public Port port() {
        return delegate.port();
    }

    @Override
    public boolean isUsable() {
        return delegate.isUsable();
    }

    @Override
    public int maxFramePayloadBytes() {
        return delegate.maxFramePayloadBytes();
    }

    @Override
    public boolean carriesControl() {
        return delegate.carriesControl();
    }

    @Override
    public boolean isFailed() {
        return delegate.isFailed();
    }

    @Override
    public boolean isClosed() {
        return delegate.isClosed();
    }

    @Override
    public boolean closeSent() {
        return delegate.closeSent();
    }

    @Override
    public boolean finalSent() {
        return delegate.finalSent();
    }

    // ---------------------------------------------------------------- duty cycle and credit-taking frames

    @Override
    public int doWork(long nowNs) {
        return delegate.doWork(nowNs);
    }

    /**
     * False, not forwarded: a decorating kind usually has work of its own that arrives unsignalled (eager's
     * ring in memory, reliable UD's timers). A kind whose every arrival comes through the delegate's
     * completions overrides this to forward.
     */
    @Override
    public boolean signalArrivals(Runnable hint) {
        return false;
    }

    @Override
    public boolean waitsOnlyForSignals() {
        return delegate.waitsOnlyForSignals();
    }

    @Override
    public boolean canSend() {
        return delegate.canSend();
    }

    @Override
    public long sendCredits() {
        return delegate.sendCredits();
    }

    @Override
    public int freeSendBuffers() {
        return delegate.freeSendBuffers();
    }

    @Override
    public void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        delegate.sendData(message, srcOffset, length, first, last, psn, token);
    }

    @Override
    public void openPack(int psn) {
        delegate.openPack(psn);
    }

    @Override
    public void packAppend(RdmaMessage message) {
        delegate.packAppend(message);
    }

    @Override
    public void closePack(long token) {
        delegate.closePack(token);
    }

    @Override
    public void sendRts(int psn, int messageLength, long token) {
        delegate.sendRts(psn, messageLength, token);
    }

    @Override
    public void flushSends() {
        delegate.flushSends();
    }

    // ---------------------------------------------------------------- rendezvous and bare RDMA

    @Override
    public boolean canWriteStripe() {
        return delegate.canWriteStripe();
    }

    @Override
    public void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey, int stripeOffset,
                            int length, int stripes, int stripeIndex, long token) {
        delegate.writeStripe(psn, messageLength, localAddress, lkey, remoteAddress, rkey, stripeOffset, length, stripes, stripeIndex, token);
    }

    @Override
    public int writesInFlight() {
        return delegate.writesInFlight();
    }

    @Override
    public void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        delegate.sendRtsRead(psn, messageLength, address, rkey, token);
    }

    @Override
    public boolean canReadStripe() {
        return delegate.canReadStripe();
    }

    @Override
    public void readStripe(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        delegate.readStripe(localAddress, lkey, remoteAddress, rkey, length, token);
    }

    @Override
    public boolean sendReadFin(int psn, int messageLength, int flags) {
        return delegate.sendReadFin(psn, messageLength, flags);
    }

    @Override
    public int readsInFlight() {
        return delegate.readsInFlight();
    }

    @Override
    public boolean canPostAtomic() {
        return delegate.canPostAtomic();
    }

    @Override
    public void postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                           long token) {
        delegate.postAtomic(fetchAdd, localAddress, lkey, remoteAddress, rkey, compareAdd, swap, token);
    }

    @Override
    public boolean canPostWrite() {
        return delegate.canPostWrite();
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag) {
        return delegate.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag);
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        return delegate.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, signaled);
    }

    @Override
    public boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        return delegate.sendChannelControl(src, offset, length);
    }

    @Override
    public boolean carriesOneSided() {
        return delegate.carriesOneSided();
    }

    @Override
    public boolean sendOneSidedControl(FrameType type, ControlFrameEncoder encoder) {
        return delegate.sendOneSidedControl(type, encoder);
    }

    // ---------------------------------------------------------------- control frames

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        return delegate.sendCts(psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        return delegate.sendCts(psn, messageLength, remoteAddress, railRkeys, flags);
    }

    @Override
    public boolean sendRailDown(int failedRail) {
        return delegate.sendRailDown(failedRail);
    }

    @Override
    public boolean sendInboundClosed(int firstUndeliveredPsn) {
        return delegate.sendInboundClosed(firstUndeliveredPsn);
    }

    @Override
    public boolean sendCreditFrame() {
        return delegate.sendCreditFrame();
    }

    @Override
    public int flushCredits() {
        return delegate.flushCredits();
    }

    @Override
    public boolean sendGracefulClose(int nextPsn, int railMask, boolean last) {
        return delegate.sendGracefulClose(nextPsn, railMask, last);
    }

    @Override
    public void sendAbort(int nextPsn, String reason) {
        delegate.sendAbort(nextPsn, reason);
    }

    // ---------------------------------------------------------------- receive buffers

    @Override
    public void releaseReceiveBuffer(int slot) {
        delegate.releaseReceiveBuffer(slot);
    }

    @Override
    public int receiveSlots() {
        return delegate.receiveSlots();
    }

    @Override
    public int freeReceiveBuffers() {
        return delegate.freeReceiveBuffers();
    }

    @Override
    public int receiveBuffersHeld() {
        return delegate.receiveBuffersHeld();
    }

    // ---------------------------------------------------------------- counters

    @Override
    public int sendBuffersInUse() {
        return delegate.sendBuffersInUse();
    }

    /** Settled when this channel's own send slots (a subclass may count more than the delegate's) and the delegate are. */
    @Override
    public boolean settled() {
        return sendBuffersInUse() == 0 && delegate.settled();
    }

    @Override
    public int sendBufferCount() {
        return delegate.sendBufferCount();
    }

    @Override
    public int peerReceiveBuffers() {
        return delegate.peerReceiveBuffers();
    }

    @Override
    public long framesSent(FrameType type) {
        return delegate.framesSent(type);
    }

    @Override
    public long framesReceived(FrameType type) {
        return delegate.framesReceived(type);
    }

    @Override
    public long packedFramesSent() {
        return delegate.packedFramesSent();
    }

    @Override
    public int framesInFlight() {
        return delegate.framesInFlight();
    }

    @Override
    public long bytesSent() {
        return delegate.bytesSent();
    }

    @Override
    public long messagesCompleted() {
        return delegate.messagesCompleted();
    }

    // ---------------------------------------------------------------- failure and close

    @Override
    public void forEachUnackedSend(UnackedSend visitor) {
        delegate.forEachUnackedSend(visitor);
    }

    @Override
    public void failedByPeer() {
        delegate.failedByPeer();
    }

    @Override
    public void abort() {
        delegate.abort();
    }

    @Override
    public Channel downgrade() {
        return delegate.downgrade();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
