package io.rdmaflux.eager;

import io.rdmaflux.core.RdmaProtocolException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameFormatException;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RtsFrameCodec;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The receive side of an {@link EagerChannel}: its ring's place in the node's {@link PollingSet}, the
 * offer/revoke handshake with the sender, polling and dispatching ring frames as the same
 * {@link ChannelEvents} the RC channel reports, and returning ring credits (seed 001 &sect;4.4, &sect;4.6).
 *
 * <h2>States</h2>
 * <pre>
 * IDLE ──seat──▶ OFFER_DUE ──OFFER sent──▶ POLLING ──asked to leave──▶ REVOKE_DUE ──REVOKE sent──▶ REVOKING
 *   ▲                                                                                               │ REVOKE_ACK(s)
 *   └──────────────────────── seat given back ◀── DRAINING (until every sequence before s is polled) ◀┘
 * </pre>
 * The sender stops writing when the REVOKE arrives and answers REVOKE_ACK with its next sequence number
 * {@code s}; RC places every WRITE posted before that SEND, so the receiver polls the ring up to
 * {@code s} and only then stops. No ring frame is ever lost to a demotion, and the ring (registered once)
 * keeps the slots the application still holds.
 *
 * <p><b>Concurrency:</b> the channel's progress thread, except {@link #requestDemotion()} and
 * {@link #lastRingArrivalNs()} (the polling set, any thread, through volatile fields).
 */
final class RingPolling implements PollingSet.Member {
    enum State { IDLE, OFFER_DUE, POLLING, REVOKE_DUE, REVOKING, DRAINING }

    private final EagerChannel channel;
    private final RingReceiver ring;
    private final PollingSet set;
    private final EagerPolicy policy;
    private final int creditThreshold;
    private final UnsafeBuffer control = new UnsafeBuffer(new byte[64]);
    private State state = State.IDLE;
    private long drainTarget;
    /** The freed sequence last told to the sender (OFFER, CREDIT, or piggybacked on a ring frame back). */
    private long announcedFreed;
    private volatile long lastRingArrivalNs;
    private volatile boolean demotionRequested;
    private long fallbackSinceCheck;
    private long nextCheckNs = Long.MIN_VALUE;
    private long nowNs;
    private long offersSent;
    private long revokesSent;
    private long creditsSent;
    private long takenBeforeFallback;

    RingPolling(EagerChannel channel, RingReceiver ring, PollingSet set, EagerPolicy policy) {
        this.channel = channel;
        this.ring = ring;
        this.set = set;
        this.policy = policy;
        this.creditThreshold = Math.max(1, ring.slots() / 4);
    }

    State state() {
        return state;
    }

    @Override
    public long lastRingArrivalNs() {
        return lastRingArrivalNs;
    }

    @Override
    public void requestDemotion() {
        demotionRequested = true;
    }

    @Override
    public boolean demotionRequested() {
        return demotionRequested;
    }

    long offersSent() {
        return offersSent;
    }

    long revokesSent() {
        return revokesSent;
    }

    long creditsSent() {
        return creditsSent;
    }

    /** A message arrived over send/receive: counts towards promotion. */
    void onFallbackArrival() {
        fallbackSinceCheck++;
    }

    /** The freed sequence goes piggybacked on a ring frame this side writes: remember it was told. */
    int takePiggybackCredit() {
        long f = ring.freedSeq();
        if (state != State.IDLE && state != State.OFFER_DUE) {
            announcedFreed = Math.max(announcedFreed, f);
        }
        return (int) f;
    }

    private boolean polled() {
        return state == State.POLLING || state == State.REVOKE_DUE || state == State.REVOKING || state == State.DRAINING;
    }

    /**
     * One duty cycle: promotion and demotion, due control messages, polling the ring, credits.
     *
     * @param rc     the RC channel the control messages go on
     * @param events where ring frames are reported
     * @return work done
     */
    int doWork(long nowNs, Channel rc, ChannelEvents events) {
        this.nowNs = nowNs;
        if (state == State.POLLING && nowNs < nextCheckNs && !demotionRequested) {
            // the steady state, every duty cycle: only the next slot's head is read, and credits when slots were freed
            int work = ring.headArrived() ? pollAll(events) : 0;
            if (ring.freedSeq() != announcedFreed) {
                work += returnCredits(rc);
            }
            return work;
        }
        int work = 0;
        if (!channel.isFailed() && !channel.isClosed()) {
            work += manage(nowNs, rc);
        }
        if (polled() || channel.isFailed()) {
            work += pollAll(events);
        }
        if (state == State.DRAINING && ring.nextSeq() >= drainTarget) {
            finishDrain();
        }
        if (!channel.isFailed()) {
            work += returnCredits(rc);
        }
        return work;
    }

    private int manage(long nowNs, Channel rc) {
        int work = 0;
        if (nextCheckNs == Long.MIN_VALUE) {
            nextCheckNs = nowNs + policy.checkIntervalNs();
        }
        switch (state) {
            case IDLE -> {
                boolean busy = fallbackSinceCheck >= policy.promoteAfterMessages();
                // first come, first polled: a free seat is taken at once; a busy rail asks for one
                if (set.capacity() > 0 && (offersSent == 0 || busy) && set.tryEnter(this)) {
                    state = State.OFFER_DUE;
                    demotionRequested = false;
                } else if (busy && nowNs >= nextCheckNs) {
                    set.requestSeat(nowNs, policy.idleNs());
                }
            }
            case POLLING -> {
                if (demotionRequested) {
                    state = State.REVOKE_DUE;
                }
            }
            default -> {
            }
        }
        if (nowNs >= nextCheckNs) {
            nextCheckNs = nowNs + policy.checkIntervalNs();
            fallbackSinceCheck = 0;
        }
        if (state == State.OFFER_DUE) {
            int len = EagerControlCodec.encodeOffer(control, ring.slots(), ring.slotBytes(), ring.crc(), ring.address(), ring.rkey(),
                ring.nextSeq(), ring.freedSeq());
            if (rc.sendChannelControl(control, 0, len)) {
                announcedFreed = ring.freedSeq();
                lastRingArrivalNs = nowNs;
                offersSent++;
                state = State.POLLING;
                work++;
            }
        }
        if (state == State.REVOKE_DUE) {
            int len = EagerControlCodec.encodeShort(control, EagerControlCodec.REVOKE, 0);
            if (rc.sendChannelControl(control, 0, len)) {
                revokesSent++;
                state = State.REVOKING;
                work++;
            }
        }
        return work;
    }

    /** The sender's REVOKE_ACK: it writes nothing from {@code nextSeqLow32} on; poll up to it, then leave. */
    void onRevokeAck(int nextSeqLow32, ChannelEvents events) {
        if (state != State.REVOKING) {
            channel.protocolFailure(new RdmaProtocolException("eager REVOKE_ACK arrived on rail " + channel.rail() + " in state " + state));
            return;
        }
        drainTarget = EagerControlCodec.extend(nextSeqLow32, ring.nextSeq());
        state = State.DRAINING;
        // RC placed every WRITE before this SEND: the ring holds them all now
        pollAll(events);
        if (ring.nextSeq() >= drainTarget) {
            finishDrain();
        }
    }

    private void finishDrain() {
        if (ring.nextSeq() != drainTarget) {
            channel.protocolFailure(new RdmaProtocolException("eager ring of rail " + channel.rail() + " polled to sequence "
                + ring.nextSeq() + " but the sender stopped at " + drainTarget));
        }
        state = State.IDLE;
        demotionRequested = false;
        set.leave(this);
    }

    /** Gives the seat back (the channel failed or closed). */
    void leave() {
        set.leave(this);
        if (state != State.IDLE) {
            state = State.IDLE;
        }
    }

    /**
     * Before a frame of {@code psn} that came over send/receive is reported: dispatches the ring frames already
     * placed whose PSN is before it, so that one rail's frames reach the connection in the order they were sent
     * although they took two paths (issue 19).
     *
     * <p>Why this restores the order: the ring's WRITEs and the RC channel's SENDs share the rail's queue pair,
     * and RC places a WRITE before a later SEND on it completes, so every ring frame posted before that SEND is
     * in the ring by now. A rail posts its frames in PSN order, so those are the ring frames before
     * {@code psn}; frames of the ring after it (WRITEs the NIC placed after the SEND) stay for the next poll.
     * The other way round, a SEND posted before a ring WRITE, needs nothing: the RC channel's completions are
     * taken before the ring is polled ({@link EagerChannel#doWork}), and on the soft provider nothing is placed
     * between the two. Taking a frame early is never wrong either way: the connection's PSN window orders
     * whatever arrives.
     *
     * @return frames dispatched
     */
    int pollBefore(int psn, ChannelEvents events) {
        if (!polled()) {
            return 0;
        }
        int n = 0;
        while (ring.arrived() && FrameHeader.psn(ring.memory(), ring.frameOffset()) - psn < 0) {
            n++;
            if (!dispatch(ring.take(), events)) {
                break;
            }
        }
        if (n > 0) {
            lastRingArrivalNs = nowNs;
            takenBeforeFallback += n;
        }
        return n;
    }

    /** Ring frames {@link #pollBefore} dispatched ahead of a send/receive frame. */
    long takenBeforeFallback() {
        return takenBeforeFallback;
    }

    /** Polls and dispatches every complete slot. @return frames dispatched */
    int pollAll(ChannelEvents events) {
        int n = 0;
        int slot;
        while ((slot = ring.poll()) >= 0) {
            n++;
            if (!dispatch(slot, events)) {
                break;
            }
        }
        if (n > 0) {
            lastRingArrivalNs = nowNs;
        }
        return n;
    }

    /** A ring frame: the same checks and events as the RC channel's dispatch. @return false after a failure */
    private boolean dispatch(int slot, ChannelEvents events) {
        UnsafeBuffer mem = ring.memory();
        int off = ring.frameOffset();
        int len = ring.frameLength();
        channel.onPiggybackedCredit(ring.piggybackedCredit());
        FrameType type;
        try {
            type = FrameHeader.validate(mem, off, len);
            if (FrameHeader.bufferCredits(mem, off) != 0) {
                throw new FrameFormatException("ring frame grants " + FrameHeader.bufferCredits(mem, off)
                    + " buffer credits; ring credits travel in the slot head");
            }
            if (type == FrameType.DATA) {
                if (DataFrameCodec.isPacked(mem, off)) {
                    DataFrameCodec.validatePacked(mem, off);
                } else if (!DataFrameCodec.isFirst(mem, off) || !DataFrameCodec.isLast(mem, off)) {
                    throw new FrameFormatException("ring frame carries a fragment of PSN " + FrameHeader.psn(mem, off)
                        + "; fragments go over send/receive");
                }
            } else if (type == FrameType.RTS) {
                RtsFrameCodec.validatePayload(mem, off);
            } else {
                throw new FrameFormatException("ring frame of type " + type + "; only DATA and RTS go through the ring");
            }
        } catch (FrameFormatException e) {
            ring.release(slot);
            channel.protocolFailure(e);
            return false;
        }
        channel.onRingFrame(type);
        events.onMessageCreditTotal(FrameHeader.messageCredits(mem, off));
        int eventSlot = channel.ringEventSlot(slot);
        if (type == FrameType.RTS) {
            int psn = FrameHeader.psn(mem, off);
            int length = RtsFrameCodec.messageLength(mem, off);
            // parsed: the slot is free at once, as the RC channel reposts an RTS's buffer
            ring.release(slot);
            events.onRts(channel, psn, length);
            return true;
        }
        if (DataFrameCodec.isPacked(mem, off)) {
            events.onPackedData(channel, eventSlot, mem, DataFrameCodec.payloadOffset(off), FrameHeader.psn(mem, off),
                FrameHeader.messageLength(mem, off));
        } else {
            events.onData(channel, eventSlot, mem, DataFrameCodec.payloadOffset(off), FrameHeader.payloadLength(mem, off),
                FrameHeader.psn(mem, off), true, true, FrameHeader.messageLength(mem, off));
        }
        return true;
    }

    /**
     * Sends a CREDIT when freed slots accumulated ({@code slots / 4}) or the sender has used every slot it
     * was told of (it waits, or falls back, until it hears).
     */
    private int returnCredits(Channel rc) {
        if (!polled() && state != State.OFFER_DUE) {
            return 0;
        }
        long freed = ring.freedSeq();
        long unannounced = freed - announcedFreed;
        if (unannounced <= 0) {
            return 0;
        }
        boolean exhausted = ring.nextSeq() >= announcedFreed + ring.slots();
        if (unannounced < creditThreshold && !exhausted) {
            return 0;
        }
        int len = EagerControlCodec.encodeShort(control, EagerControlCodec.CREDIT, freed);
        if (rc.sendChannelControl(control, 0, len)) {
            announcedFreed = freed;
            creditsSent++;
            return 1;
        }
        return 0;
    }

    @Override
    public String toString() {
        return "RingPolling{rail " + channel.rail() + ", " + state + ", " + ring + "}";
    }

}
