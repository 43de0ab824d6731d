package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.ReadFinFrameCodec;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.credit.MessageCredits;
import org.jspecify.annotations.Nullable;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connection stage: the receive side of the RDMA WRITE rendezvous (seed 001 &sect;3, Fig. 2). An RTS
 * waits until every earlier PSN has arrived and a registered message buffer of the node's pool is free,
 * then gets a CTS (PSN, address, rkey); granting in PSN order means a buffer is never held by a message
 * that cannot be delivered before one still waiting for a buffer, so a pool of one cannot deadlock. The
 * message is delivered, as a view of its buffer, once the FIN of every stripe arrived (seed 000 &sect;5.3:
 * one FIN per subchannel used); its release returns the buffer to the pool.
 *
 * <p>The READ rendezvous (an RTS_READ with the sender's address and rkey) takes the same path up to the
 * buffer: in PSN order, once a buffer is free; then, instead of a CTS, this side RDMA-READs the message
 * into the buffer ({@link RendezvousReads}, striped over the rails) and, once every READ completed,
 * delivers it and answers READ_FIN so the sender completes the send and unpins its memory.
 *
 * <p>After a failover the sender repeats RTSs and stripes: a repeated RTS is answered again on the rail it
 * came by, one for a message already here with a discarding CTS, and a repeated stripe counts once.
 *
 * <p><b>Concurrency:</b> progress thread, except {@link #onReleased} (any thread).
 */
final class RendezvousReceiver {
    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    private final MessageCredits messageCredits;
    private final InboundDelivery delivery;
    private final @Nullable MessageBufferPool pool;
    private final int localMaxMessageBytes;
    private final RendezvousReceives t;
    private final RendezvousMessage[] messages;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final RendezvousReads reads;
    private int ctsRail;
    /** The node device of each rail: a connection over several devices grants with one rkey per rail. */
    private final RailDevices devices;
    /** The message buffers' rkey per rail, made on the first CTS of a connection over several devices. */
    private int @Nullable [] railRkeys;

    RendezvousReceiver(DefaultRdmaConnection connection, Channel[] channels, MessageCredits messageCredits,
                       InboundDelivery delivery, @Nullable MessageBufferPool pool, int buffers, int reorderWindow,
                       int localMaxMessageBytes, SubchannelScheduler scheduler, RailDevices devices) {
        this.devices = devices;
        this.reads = new RendezvousReads(connection, channels, scheduler, buffers);
        this.connection = connection;
        this.channels = channels;
        this.messageCredits = messageCredits;
        this.delivery = delivery;
        this.pool = pool;
        this.localMaxMessageBytes = localMaxMessageBytes;
        this.t = new RendezvousReceives(reorderWindow);
        this.messages = new RendezvousMessage[Math.max(1, buffers)];
    }

    /** RTSs waiting for a buffer plus messages granted one and not complete: each a message ahead of the ESN. */
    int inProgress() {
        return t.pending + t.granted;
    }

    /** Rendezvous messages delivered and not yet released (any thread). */
    int outstanding() {
        return outstanding.get();
    }

    void onReleased() {
        if (outstanding.decrementAndGet() == 0) {
            connection.resources().onDeliveredMessageGone();
        }
    }

    void onRts(Channel ch, int psn, int length) {
        boolean inboundClosed = delivery.inboundClosed();
        if (!inboundClosed && delivery.arrived(psn)) {
            // re-sent after a failover but the message is here already: tell the sender to stop
            t.oweDiscard(psn, length, ch.rail());
            return;
        }
        if (t.has(psn)) {
            // re-sent after a failover: answer on the rail it came by (again, if a CTS was sent)
            int i = t.index(psn);
            t.rail[i] = ch.rail();
            if (t.state[i] == RendezvousReceives.GRANTED) {
                t.oweCts(i);
            }
            return;
        }
        if (admit(ch, psn, length, "RTS")) {
            t.addPending(psn, ch.rail(), length);
        }
    }

    /**
     * An RTS_READ (the READ rendezvous): as an RTS, but the message is read from the sender's
     * {@code [address, +length)} with {@code rkey} once a buffer is free. Repeated after a failover: a
     * message already here is answered with a READ_FIN again, one being read is left to finish.
     */
    void onRtsRead(Channel ch, int psn, int length, long address, int rkey) {
        if (!delivery.inboundClosed() && delivery.arrived(psn)) {
            t.oweFin(psn, length, ch.rail(), 0);
            return;
        }
        if (t.has(psn)) {
            t.rail[t.index(psn)] = ch.rail();
            return;
        }
        if (admit(ch, psn, length, "RTS_READ")) {
            t.addPending(psn, ch.rail(), length);
            t.readFrom(t.index(psn), address, rkey);
        }
    }

    /** Checks a new RTS or RTS_READ (credit, length, window); a violation fails the connection. @return whether to add it */
    private boolean admit(Channel ch, int psn, int length, String frame) {
        boolean inboundClosed = delivery.inboundClosed();
        if (!messageCredits.onMessageArrived()) {
            connection.termination().protocolFailure("peer sent an " + frame + " for PSN " + psn + " on rail " + ch.rail() + " without holding a message credit");
            return false;
        }
        MessageBufferPool p = pool;
        int distance = psn - delivery.esn();
        if (p == null || length > localMaxMessageBytes || length > p.slotBytes() || length < 0) {
            connection.termination().protocolFailure(p == null
                ? "peer sent an " + frame + " (PSN " + psn + ") but this node has rendezvous off (rendezvousBuffers(0))"
                : "peer sent an " + frame + " for a message of " + length + " bytes but this node accepts at most " + localMaxMessageBytes);
            return false;
        }
        if (!inboundClosed && (distance < 0 || distance >= delivery.windowSize()) || t.has(psn)) {
            connection.termination().protocolFailure("peer sent an " + frame + " for PSN " + psn + " outside the window from ESN " + delivery.esn() + " or twice");
            return false;
        }
        return true;
    }

    /**
     * Grants {@code [address, +length)} of the message buffers to message {@code psn} on {@code ch}: with the
     * pool's one rkey, or, on a connection over several devices, with the rkey of each rail's device.
     */
    private boolean sendCts(Channel ch, int psn, int length, long address, MessageBufferPool p) {
        if (!devices.spansDevices()) {
            return ch.sendCts(psn, length, address, p.rkey(), 0);
        }
        int[] keys = railRkeys;
        if (keys == null) {
            keys = devices.rkeys(p);
            railRkeys = keys;
        }
        return ch.sendCts(psn, length, address, keys, 0);
    }

    /**
     * Replies CTS to waiting RTSs: in PSN order from the ESN, each only when every earlier PSN has
     * arrived (is queued or is a rendezvous in progress) and a message buffer is free. After the
     * inbound side closed, every waiting RTS gets a discarding CTS instead.
     */
    int grant() {
        MessageBufferPool p = pool;
        if (!t.hasWork() || p == null) {
            return 0;
        }
        int work = 0;
        while (t.finsOwed > 0 && ctsRailFor(t.nextFinRail()).sendReadFin(t.nextFinPsn(), t.nextFinLength(), t.nextFinFlags())) {
            t.finSent();
            work++;
        }
        int sent = 0;
        while (sent < t.discards && ctsRailFor(t.discardRail(sent)).sendCts(t.discardPsn(sent), t.discardLength(sent), 0, 0,
            CtsFrameCodec.DISCARD)) {
            sent++;
        }
        if (sent > 0) {
            t.discardsSent(sent);
            work += sent;
        }
        for (int i = 0; i < t.state.length && t.owed > 0; i++) {
            if (t.ctsOwed[i] && sendCts(ctsRailFor(t.rail[i]), t.psn[i], t.length[i], p.address(t.slot[i]), p)) {
                t.ctsSent(i);
                work++;
            }
        }
        if (t.pending == 0) {
            return work;
        }
        if (delivery.inboundClosed()) {
            for (int i = 0; i < t.state.length && t.pending > 0; i++) {
                if (t.state[i] != RendezvousReceives.PENDING) {
                    continue;
                }
                if (t.read[i] ? t.oweFin(t.psn[i], t.length[i], t.rail[i], ReadFinFrameCodec.DISCARD)
                    : ctsRailFor(t.rail[i]).sendCts(t.psn[i], t.length[i], 0, 0, CtsFrameCodec.DISCARD)) {
                    t.remove(i);
                    work++;
                }
            }
            return work;
        }
        int q = delivery.esn();
        for (int d = 0; d < delivery.windowSize() && t.pending > 0; d++, q++) {
            if (t.has(q)) {
                int i = t.index(q);
                if (t.state[i] == RendezvousReceives.PENDING) {
                    int slot = p.acquire(connection.wakeHandle());
                    if (slot < 0) {
                        // the node's pool is shared: the connection that frees a slot signals this one
                        return work;
                    }
                    if (t.read[i]) {
                        // no CTS: this side reads the message into the buffer now (RendezvousReads.post)
                        t.grant(i, slot);
                        reads.begin(slot, q, t.length[i], t.rail[i], t.remoteAddress[i], t.rkey[i], p.address(slot), p.lkey());
                        work++;
                        continue;
                    }
                    if (!sendCts(ctsRailFor(t.rail[i]), q, t.length[i], p.address(slot), p)) {
                        p.release(slot);
                        return work;
                    }
                    t.grant(i, slot);
                    work++;
                }
            } else if (!delivery.isQueued(q)) {
                return work;
            }
        }
        return work;
    }

    /** The RTS's rail if it can still send, else the next one that can (round robin). */
    private Channel ctsRailFor(int rail) {
        if (channels[rail].carriesControl()) {
            return channels[rail];
        }
        for (int k = 0; k < channels.length; k++) {
            ctsRail = ctsRail + 1 == channels.length ? 0 : ctsRail + 1;
            if (channels[ctsRail].carriesControl()) {
                return channels[ctsRail];
            }
        }
        return channels[rail];
    }

    void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        int i = t.index(psn);
        if (!t.has(psn) || t.state[i] != RendezvousReceives.GRANTED) {
            if (delivery.inboundClosed() || delivery.arrived(psn)) {
                // a stripe re-sent after a failover for a message that is complete
                return;
            }
            connection.termination().protocolFailure("peer sent a FIN for PSN " + psn + " on rail " + ch.rail() + " but no CTS was sent for it");
            return;
        }
        if (t.read[i]) {
            connection.termination().protocolFailure("peer sent a FIN for PSN " + psn + " on rail " + ch.rail() + " but announced it by RTS_READ (this side reads it)");
            return;
        }
        if ((t.finMask[i] & (1L << stripeIndex)) != 0) {
            // the same stripe again, re-sent after its rail failed: count it once
            return;
        }
        t.finMask[i] |= 1L << stripeIndex;
        int length = t.length[i];
        if (stripeOffset < 0 || stripeLength < 0 || (long) stripeOffset + stripeLength > length || stripes < 1
            || (t.stripes[i] != 0 && t.stripes[i] != stripes)) {
            connection.termination().protocolFailure("FIN of PSN " + psn + " names stripe [" + stripeOffset + ", +" + stripeLength + ") of " + stripes
                + " for a " + length + "-byte message");
            return;
        }
        t.stripes[i] = stripes;
        t.bytes[i] += stripeLength;
        if (++t.fins[i] < stripes) {
            return;
        }
        if (t.bytes[i] != length) {
            connection.termination().protocolFailure("the " + stripes + " stripes of PSN " + psn + " add up to " + t.bytes[i] + " bytes, not its " + length);
            return;
        }
        deliver(i);
    }

    /** Posts the READs of granted READ-rendezvous messages as rails have room. @return work done */
    int postReads(long nowNs) {
        return reads.post(nowNs);
    }

    /** An RDMA READ completed: once a message's last one did, it is delivered and its READ_FIN owed. */
    void onReadCompleted(long token, long nowNs) {
        int slot = reads.onCompleted(token, nowNs);
        if (slot < 0) {
            return;
        }
        for (int i = 0; i < t.state.length; i++) {
            if (t.state[i] == RendezvousReceives.GRANTED && t.read[i] && t.slot[i] == slot) {
                t.oweFin(t.psn[i], t.length[i], t.rail[i], 0);
                deliver(i);
                return;
            }
        }
    }

    /** Rail {@code failed} failed: READs not completed on it are posted again on the live rails. */
    void onRailFailed(int failed) {
        reads.onRailFailed(failed);
    }

    /** Delivers the message of granted entry {@code i}, complete in its buffer, in PSN order. */
    private void deliver(int i) {
        int psn = t.psn[i];
        int length = t.length[i];
        int slot = t.slot[i];
        t.remove(i);
        MessageBufferPool p = pool;
        if (p == null) {
            return;
        }
        if (delivery.inboundClosed() || connection.isTerminated()) {
            p.release(slot);
            return;
        }
        RendezvousMessage m = messages[slot];
        if (m == null) {
            m = new RendezvousMessage(connection, p, slot);
            messages[slot] = m;
        }
        m.init(psn, length);
        outstanding.incrementAndGet();
        delivery.offerInOrder(psn, m);
    }

    /** The rails are freed: buffers granted to messages not complete return to the pool. */
    void free() {
        MessageBufferPool p = pool;
        reads.clear();
        if (p != null) {
            t.clear(p::release);
        }
    }

    int heldByApplication(List<String> examples) {
        int held = 0;
        for (RendezvousMessage m : messages) {
            held += ReceiveBuffers.heldExample(m, examples);
        }
        return held;
    }

    String describe() {
        return "receives pending=" + t.pending + " granted=" + t.granted + " reading=" + reads.reading() + " readFinsOwed=" + t.finsOwed;
    }
}
