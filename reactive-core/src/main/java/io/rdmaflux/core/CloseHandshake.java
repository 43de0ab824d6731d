package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;

/**
 * Connection stage: the graceful close, in three steps (see {@code CloseFrameCodec}), one frame per rail
 * each (seed 000 &sect;5.3: one FIN per subchannel used). Once this side's sends are done, a CLOSE on
 * every live rail (no message after it; credits and CTSs still go, so the peer can finish its own
 * messages); once the peer's CLOSE arrived too, a FINAL on those rails (nothing at all after it); once
 * the peer's FINAL arrived, the receive side is done and this side's frames completed, the connection
 * terminates. Closing with no {@code receive()} subscriber closes the inbound side first, so the peer
 * fails what it cannot deliver rather than wait for a subscriber that will not come.
 *
 * <p>Also the other direction's news: the inbound side closed early (the subscriber cancelled) goes to
 * the peer on every rail as a CREDIT frame with {@code FLAG_INBOUND_CLOSED}.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class CloseHandshake {
    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    /** The rails this side's CLOSE (and FINAL) go on, fixed when the close starts. */
    private int localCloseMask;
    private int peerCloseMask;
    private int peerCloseExpected;
    /** Rails probed while the peer's CLOSE was missing on them ({@link #probeSilentRails}). */
    private int closeProbed;
    /** Rails the peer's last frame (FINAL or abort CLOSE) came on, and the rails it sends it on. */
    private int peerFinalMask;
    private int peerFinalExpected;
    private int peerNextPsn = -1;
    /** Rails still owed the news that the inbound side closed (a CREDIT frame with FLAG_INBOUND_CLOSED). */
    private int inboundNoticeRails;
    /** The first PSN the subscriber did not get, carried by that news. */
    private int firstUndeliveredPsn;

    CloseHandshake(DefaultRdmaConnection connection, Channel[] channels) {
        this.connection = connection;
        this.channels = channels;
        this.peerCloseExpected = channels.length == 32 ? -1 : (1 << channels.length) - 1;
        this.peerFinalExpected = peerCloseExpected;
    }

    /** The PSN after the peer's last message, from its CLOSE (-1 before it). */
    int peerNextPsn() {
        return peerNextPsn;
    }

    /** Whether the peer's CLOSE arrived on at least one rail. */
    boolean peerBegan() {
        return peerCloseMask != 0;
    }

    /** CLOSE arrived on every rail the peer sends it on (all rails, or those it named after a failover). */
    boolean peerClosed() {
        return arrivedOnEveryRail(peerCloseMask, peerCloseExpected);
    }

    /** The peer's last frame arrived on every rail it sends one on: nothing more comes from it. */
    boolean peerFinal() {
        return arrivedOnEveryRail(peerFinalMask, peerFinalExpected);
    }

    private boolean arrivedOnEveryRail(int arrived, int expected) {
        for (Channel ch : channels) {
            if (ch.isFailed()) {
                // nothing can come over a rail that failed here
                expected &= ~(1 << ch.rail());
            }
        }
        return arrived != 0 && (arrived & expected) == expected;
    }

    /** The peer sent CLOSE (or its FINAL, or an abort) on {@code ch}. */
    void onPeerClose(Channel ch, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        if (abort) {
            connection.termination().terminate(new ConnectionClosedException("peer aborted " + connection.name()
                + (reason.isEmpty() ? "" : ": " + reason), true));
            return;
        }
        int bit = 1 << ch.rail();
        if ((peerCloseMask & bit) == 0 && railMask != 0) {
            peerCloseExpected = railMask;
        }
        peerCloseMask |= bit;
        if (last) {
            peerFinalMask |= bit;
            if (railMask != 0) {
                peerFinalExpected = railMask;
            }
        }
        peerNextPsn = nextPsn;
        connection.requestGracefulClose();
    }

    /** Advances the graceful close as far as it can go now. @return work done */
    int progress() {
        if (connection.abortRequested()) {
            // an abort asked for during this duty cycle (e.g. from onNext) wins over the graceful steps
            return 0;
        }
        ConnectionState state = connection.state();
        if (state == ConnectionState.OPEN) {
            if (!connection.gracefulCloseRequested()) {
                return 0;
            }
            state = connection.advance(ConnectionState.CLOSING);
        }
        int work = probeSilentRails(state);
        if (state == ConnectionState.CLOSING) {
            InboundDelivery delivery = connection.delivery();
            if (!delivery.isSubscribed() && !delivery.receiveTerminated()) {
                delivery.endUnsubscribed();
                work++;
            }
            SendOps ops = connection.sendOps();
            ops.refuseNotStarted();
            if (!ops.isIdle() || !connection.sendPipeline().isIdle()) {
                return work;
            }
            int closeMask = 0;
            for (Channel ch : channels) {
                if (ch.framesInFlight() > 0 && !ch.isFailed()) {
                    return work;
                }
                if (ch.isUsable()) {
                    closeMask |= 1 << ch.rail();
                }
            }
            localCloseMask = closeMask;
            state = connection.advance(ConnectionState.CLOSE_SENT);
        }
        if (state == ConnectionState.CLOSE_SENT) {
            // after the peer's CLOSE this side has nothing more to send it: the CLOSE (or a second one) is the last frame
            boolean last = peerClosed();
            boolean all = true;
            int nextPsn = connection.sendPipeline().nextPsn();
            for (Channel ch : channels) {
                if ((localCloseMask & (1 << ch.rail())) == 0 || (last ? ch.finalSent() : ch.closeSent())) {
                    continue;
                }
                if (ch.sendGracefulClose(nextPsn, localCloseMask, last)) {
                    work++;
                } else {
                    all = false;
                }
            }
            if (!all || !last) {
                return work;
            }
            connection.advance(ConnectionState.FINAL_SENT);
        }
        if (peerFinal() && (connection.delivery().receiveTerminated() || !connection.delivery().hasReceiver())) {
            for (Channel ch : channels) {
                if (ch.sendBuffersInUse() > 0 && !ch.isFailed()) {
                    return work;
                }
            }
            connection.termination().terminate(null);
            return work + 1;
        }
        return work;
    }

    /**
     * The peer's CLOSE arrived on some rails but not yet on others: sends one CREDIT frame on each of
     * those others. A rail whose path died after it last carried anything from here has a QP that saw
     * nothing wrong; the peer's CLOSE lost on it would be waited for forever, and the peer, having sent
     * its last frame, cannot say the rail failed. The probe makes this side's QP retry on a dead path
     * until it fails, and the rail then counts as failed here (so its CLOSE is not waited for); on a
     * live path it is one credit frame, which carries nothing new.
     */
    private int probeSilentRails(ConnectionState state) {
        if (peerCloseMask == 0 || state == ConnectionState.FINAL_SENT || peerClosed()) {
            return 0;
        }
        int work = 0;
        for (Channel ch : channels) {
            int bit = 1 << ch.rail();
            if ((peerCloseExpected & bit) != 0 && (peerCloseMask & bit) == 0 && (closeProbed & bit) == 0
                && (ch.isFailed() || ch.finalSent() || ch.sendCreditFrame())) {
                closeProbed |= bit;
                work++;
            }
        }
        return work;
    }

    /**
     * The inbound side closed before the peer closed: tell it on every rail, so that it fails what it has
     * not sent instead of waiting for credit that will never come. After the peer's CLOSE it sends
     * nothing more and needs no notice.
     *
     * @param delivered messages the subscriber got: PSNs start at 0 and it gets them in order, so this is
     *                  the first PSN it did not get
     */
    void oweInboundClosedNotice(long delivered) {
        if (!connection.isTerminated() && !peerClosed()) {
            inboundNoticeRails = peerCloseExpected;
            firstUndeliveredPsn = (int) delivered;
        }
    }

    /** Sends the inbound-closed notice owed on each rail that can still carry control frames. */
    int sendInboundClosedNotices() {
        if (inboundNoticeRails == 0) {
            return 0;
        }
        if (peerClosed()) {
            inboundNoticeRails = 0;
            return 0;
        }
        int work = 0;
        for (Channel ch : channels) {
            int bit = 1 << ch.rail();
            if ((inboundNoticeRails & bit) == 0) {
                continue;
            }
            if (!ch.carriesControl()) {
                inboundNoticeRails &= ~bit;
            } else if (ch.sendInboundClosed(firstUndeliveredPsn)) {
                inboundNoticeRails &= ~bit;
                work++;
            }
        }
        return work;
    }

    String describe() {
        return "close: peer=" + Integer.toBinaryString(peerCloseMask) + " peerFinal=" + Integer.toBinaryString(peerFinalMask);
    }
}
