package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.verbs.WcStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.util.zip.CRC32C;

/**
 * The timers of one peer's {@link DrEndpoint} and what they lead to (seed 003 &sect;4.2): the retransmission timer
 * (RTO with backoff, {@link RtoEstimator}), the per-VFRAG local-completion timer, the keepalive probe of an idle
 * peer and the persist probe of a sender blocked on credit, the probes of failed rails, failover to the next rail
 * and giving up on the peer when every rail failed.
 *
 * <p><b>Giving up</b> (see {@link RailSet}): a rail fails once more than {@link DrConfig#maxRetriesPerRail()}
 * timeouts fired in a row without progress <em>and</em> no ACK came on it for {@link DrConfig#railTimeoutNs()};
 * overdue local completions count one retry per pass. When the last rail fails, {@link #failure()} names the peer,
 * each rail with its retries and silence, the VFRAGs in flight, retransmissions and timeouts; it comes within
 * {@link DrConfig#failureBoundNs(int)} of the peer going silent while work is outstanding (plus
 * {@link DrConfig#keepaliveNs()} when only waiting to receive).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by its {@link DrEndpoint}.
 */
final class DrTimers {
    private final DrConfig config;
    private final int localId;
    private final String peerName;
    private final DatagramSink sink;
    private final SendWindow send;
    private final ReceiveWindow receive;
    private final RtoEstimator rto;
    private final RailSet rails;
    private final RetransmitPolicy retx;
    private final byte[] control = new byte[DrDatagram.HEADER_BYTES];
    private final UnsafeBuffer controlView = new UnsafeBuffer(control);
    private final CRC32C crc = new CRC32C();

    private long retxDeadlineNs = Long.MAX_VALUE;
    private boolean probeOutstanding;
    private long persistIntervalNs;
    private long lastHeardNs;
    private boolean expectingInbound = true;
    private @Nullable RdmaTransportException failure;
    private long timeouts;
    private long failovers;
    private long railsRevived;

    DrTimers(DrConfig config, int localId, String peerName, DatagramSink sink, SendWindow send, ReceiveWindow receive,
             RtoEstimator rto, RailSet rails, RetransmitPolicy retx, long nowNs) {
        this.config = config;
        this.localId = localId;
        this.peerName = peerName;
        this.sink = sink;
        this.send = send;
        this.receive = receive;
        this.rto = rto;
        this.rails = rails;
        this.retx = retx;
        this.lastHeardNs = nowNs;
        this.persistIntervalNs = rto.rtoNs();
    }

    void expectingInbound(boolean expecting) {
        this.expectingInbound = expecting;
    }

    /** A valid datagram from the peer arrived (the keepalive clock restarts). */
    void heard(long nowNs) {
        lastHeardNs = nowNs;
    }

    /** A first VFRAG went out while none was in flight: the retransmission timer starts. */
    void sentFromIdle(long nowNs) {
        // with a probe outstanding its timer runs on, but there must be one: a lost first VFRAG is found only by it
        if (!probeOutstanding || retxDeadlineNs == Long.MAX_VALUE) {
            retxDeadlineNs = nowNs + rto.rtoNs();
        }
    }

    /**
     * An ACK was applied to the send window.
     *
     * @param progress      it acknowledged or SACKed something new
     * @param duplicate     it repeated the cumulative PSN while VFRAGs are in flight
     * @param creditChanged it raised the credit limit
     */
    void onAck(int rail, boolean probeReply, boolean progress, boolean duplicate, boolean creditChanged, long nowNs) {
        rails.ackOn(rail, nowNs);
        if (probeReply) {
            if (rails.revive(rail)) {
                railsRevived++;
            }
            if (rail == rails.current()) {
                probeOutstanding = false;
                rails.progress();
            }
        }
        if (creditChanged) {
            persistIntervalNs = rto.rtoNs();
        }
        if (progress) {
            rails.progress();
            retx.progress();
            retxDeadlineNs = send.inFlight() > 0 || probeOutstanding ? nowNs + rto.rtoNs() : Long.MAX_VALUE;
        } else if (duplicate && !probeReply) {
            retx.duplicateAck();
        }
        if (send.inFlight() == 0 && !probeOutstanding) {
            retxDeadlineNs = Long.MAX_VALUE;
        }
        retx.afterAck(nowNs);
    }

    /** Runs the timers that are due. @return work done (timers fired, probes sent) */
    int run(long nowNs) {
        int work = 0;
        if (nowNs - retxDeadlineNs >= 0) {
            work++;
            timeouts++;
            rails.countRetry();
            if (rails.exhausted(nowNs, config.maxRetriesPerRail(), config.railTimeoutNs())) {
                if (!failover(nowNs)) {
                    return work;
                }
            } else {
                long before = nowNs - rto.rtoNs();
                rto.backoff();
                if (send.inFlight() > 0) {
                    retx.retransmitFrom(send.una(), nowNs, before);
                }
                if (probeOutstanding) {
                    sendProbe(rails.current(), nowNs);
                }
            }
            retxDeadlineNs = send.inFlight() > 0 || probeOutstanding ? nowNs + rto.rtoNs() : Long.MAX_VALUE;
        }
        if (send.inFlight() > 0) {
            work += localCompletionTimers(nowNs);
            if (failure != null) {
                return work;
            }
        }
        if (send.inFlight() == 0 && !probeOutstanding && wantsPeer() && nowNs - keepaliveDeadlineNs() >= 0) {
            if (send.blockedOnCredit()) {
                persistIntervalNs = Math.min(config.maxRtoNs(), persistIntervalNs * 2);
            }
            sendProbe(rails.current(), nowNs);
            probeOutstanding = true;
            retxDeadlineNs = nowNs + rto.rtoNs();
            work++;
        }
        int rail;
        while ((rail = rails.dueProbe(nowNs, config.deadRailProbeIntervalNs())) >= 0) {
            sendProbe(rail, nowNs);
            work++;
        }
        return work;
    }

    /** Sends again the VFRAGs whose local completion is overdue; one pass counts as one retry of the rail, however many. */
    private int localCompletionTimers(long nowNs) {
        int work = 0;
        for (int psn = send.una(); psn - send.nextPsn() < 0; psn++) {
            if (!send.isLocalDone(psn) && !send.isSacked(psn) && nowNs - send.lastSentNs(psn) >= config.localCompletionTimeoutNs()) {
                if (work++ == 0) {
                    rails.countRetry();
                    if (rails.exhausted(nowNs, config.maxRetriesPerRail(), config.railTimeoutNs())) {
                        failover(nowNs);
                        return work;
                    }
                }
                if (!retx.retransmit(psn, nowNs)) {
                    return work;
                }
            }
        }
        return work;
    }

    private boolean wantsPeer() {
        return send.inFlight() > 0 || send.hasPending() || (expectingInbound && !receive.finReceived());
    }

    private long keepaliveDeadlineNs() {
        return lastHeardNs + (send.blockedOnCredit() ? persistIntervalNs : config.keepaliveNs());
    }

    /** Moves the peer's traffic off the current rail. @return false when no rail is left (the endpoint failed) */
    private boolean failover(long nowNs) {
        int failedRail = rails.current();
        int retries = rails.retries();
        if (rails.failCurrent(nowNs, config.deadRailProbeIntervalNs()) < 0) {
            failure = new RdmaTransportException("peer " + peerName + " is unreachable: every rail failed, each after more than "
                + config.maxRetriesPerRail() + " retransmission timeouts in a row without progress and no ACK for railTimeoutNs="
                + config.railTimeoutNs() / 1_000_000 + " ms: " + rails.describeFailed() + "; " + send.inFlight()
                + " VFRAGs in flight from PSN " + Integer.toUnsignedString(send.una()) + ", " + retx.vfragsRetransmitted()
                + " retransmissions, " + timeouts + " timeouts (last rail " + failedRail + " after " + retries + " retries)",
                WcStatus.RETRY_EXC_ERR, null);
            return false;
        }
        failovers++;
        rto.reset();
        if (send.inFlight() > 0) {
            retx.retransmitFrom(send.una(), nowNs, Long.MAX_VALUE);
        }
        if (probeOutstanding) {
            sendProbe(rails.current(), nowNs);
        }
        return true;
    }

    private void sendProbe(int rail, long nowNs) {
        int len = DrDatagram.encode(controlView, 0, DrDatagram.PROBE, 0, 0, localId, 0, rail, nowNs, crc);
        sink.send(rail, control, len, 0);
    }

    /** The earliest timer, ns, or {@code Long.MAX_VALUE}. */
    long nextDeadlineNs() {
        long d = retxDeadlineNs;
        if (send.inFlight() == 0 && !probeOutstanding && wantsPeer()) {
            d = Math.min(d, keepaliveDeadlineNs());
        }
        d = Math.min(d, rails.nextProbeDeadlineNs());
        for (int psn = send.una(); psn - send.nextPsn() < 0; psn++) {
            if (!send.isLocalDone(psn) && !send.isSacked(psn)) {
                d = Math.min(d, send.lastSentNs(psn) + config.localCompletionTimeoutNs());
            }
        }
        return d;
    }

    /** The error that ended the endpoint because every rail failed, or null. */
    @Nullable RdmaTransportException failure() {
        return failure;
    }

    long timeouts() {
        return timeouts;
    }

    long failovers() {
        return failovers;
    }

    long railsRevived() {
        return railsRevived;
    }
}
