package io.rdmaflux.ud.dr;

import java.util.Arrays;

/**
 * Which unacknowledged VFRAGs a DR sender sends again, and when (seed 003 &sect;4.2, with RFC 6298 / RFC 6675 ideas
 * where DR is silent). {@link RetransmitMode#SELECTIVE}: after an ACK, every VFRAG the SACK shows missing with at
 * least three later VFRAGs held and whose last transmission is older than the SRTT (the RTO before a first sample);
 * {@link RetransmitMode#GO_BACK_N}: after three duplicate ACKs (the oldest unacknowledged VFRAG last sent at least an
 * SRTT ago), everything from the oldest unacknowledged PSN. On a timeout or a failover the {@link DrEndpoint} calls
 * {@link #retransmitFrom}. Retransmissions go on the peer's current rail; a back-pressured sink stops a pass (the
 * rest goes on a later timer or ACK).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by its {@link DrEndpoint}.
 */
final class RetransmitPolicy {
    static final int FAST_RETRANSMIT_SACKS = 3;
    static final int DUP_ACK_THRESHOLD = 3;

    private final RetransmitMode mode;
    private final DatagramSink sink;
    private final SendWindow send;
    private final RailSet rails;
    private final RtoEstimator rto;
    private int[] holeScratch = new int[64];
    private int dupAcks;
    private long vfragsRetransmitted;

    RetransmitPolicy(RetransmitMode mode, DatagramSink sink, SendWindow send, RailSet rails, RtoEstimator rto) {
        this.mode = mode;
        this.sink = sink;
        this.send = send;
        this.rails = rails;
        this.rto = rto;
    }

    /** An ACK moved the cumulative PSN or the SACK forward. */
    void progress() {
        dupAcks = 0;
    }

    /** An ACK (not a probe reply) repeated the cumulative PSN while VFRAGs are in flight. */
    void duplicateAck() {
        dupAcks++;
    }

    /** After an ACK was applied: the fast retransmissions of the mode. */
    void afterAck(long nowNs) {
        if (mode == RetransmitMode.SELECTIVE) {
            retransmitSackHoles(nowNs);
        } else if (dupAcks >= DUP_ACK_THRESHOLD && nowNs - send.lastSentNs(send.una()) >= recentNs()) {
            dupAcks = 0;
            retransmitFrom(send.una(), nowNs, Long.MAX_VALUE);
        }
    }

    /** How long after sending a VFRAG its ACK may reasonably still come: the SRTT, or the RTO before a sample, ns. */
    private long recentNs() {
        long s = rto.srttNs();
        return s < 0 ? rto.rtoNs() : Math.max(s, RtoEstimator.GRANULARITY_NS);
    }

    private void retransmitSackHoles(long nowNs) {
        if (send.inFlight() == 0) {
            return;
        }
        long recent = recentNs();
        int above = 0; // VFRAGs SACKed above the one looked at: counted from the top down, one pass
        int holes = 0;
        int[] due = holeScratch;
        for (int psn = send.nextPsn() - 1; psn - send.una() >= 0; psn--) {
            if (send.isSacked(psn)) {
                above++;
            } else if (above >= FAST_RETRANSMIT_SACKS && nowNs - send.lastSentNs(psn) >= recent) {
                if (holes == due.length) {
                    due = holeScratch = Arrays.copyOf(due, due.length * 2);
                }
                due[holes++] = psn;
            }
        }
        for (int h = holes - 1; h >= 0; h--) { // oldest first
            if (!retransmit(due[h], nowNs)) {
                return;
            }
        }
    }

    /**
     * Retransmits the unacknowledged VFRAGs from {@code from} (always {@code from} itself) last sent at or before
     * {@code sentBeforeNs}; SACKed ones too in go-back-N, whose receiver kept none of them.
     */
    void retransmitFrom(int from, long nowNs, long sentBeforeNs) {
        boolean gbn = mode == RetransmitMode.GO_BACK_N;
        for (int psn = from; psn - send.nextPsn() < 0; psn++) {
            if ((gbn || !send.isSacked(psn)) && (psn == from || send.lastSentNs(psn) - sentBeforeNs <= 0)) {
                if (!retransmit(psn, nowNs)) {
                    return;
                }
            }
        }
    }

    /** Sends VFRAG {@code psn} again on the current rail. @return false if the sink is back-pressured */
    boolean retransmit(int psn, long nowNs) {
        byte[] d = send.datagram(psn);
        int r = sink.send(rails.current(), d, send.length(psn), psn);
        if (r == DatagramSink.BACK_PRESSURED) {
            return false;
        }
        vfragsRetransmitted++;
        send.markRetransmitted(psn, nowNs);
        if (r == DatagramSink.SENT) {
            send.markLocalDone(psn);
        }
        return true;
    }

    long vfragsRetransmitted() {
        return vfragsRetransmitted;
    }
}
