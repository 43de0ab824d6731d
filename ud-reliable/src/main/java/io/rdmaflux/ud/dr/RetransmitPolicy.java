package io.rdmaflux.ud.dr;

import java.util.Arrays;

/**
 * Which unacknowledged VFRAGs a DR sender sends again, and when (seed 003 &sect;4.2, with RFC 6298 / RFC 6675 /
 * RFC 8985 ideas where DR is silent). {@link RetransmitMode#SELECTIVE}: after an ACK, within the SACK's reach
 * ([una, una + 64]: nothing is known beyond it), a VFRAG sent once is lost when at least three later VFRAGs are held
 * and it was sent at least an SRTT ago (the RTO before a first sample); a VFRAG already repaired is lost again only
 * when a transmission made at least two after its repair arrived (RACK's rule, {@link SendWindow#lostByLaterArrival}),
 * so a repair still queued behind the window is not sent a third time, and a lost repair is found one round trip
 * later instead of at the RTO. On a timeout only the SACK's reach is resent (VFRAGs beyond it may well have arrived).
 * {@link RetransmitMode#GO_BACK_N}: after three duplicate ACKs (the oldest unacknowledged VFRAG last sent at least an
 * SRTT ago), everything from the oldest unacknowledged PSN. On a timeout or a failover the {@link DrEndpoint} calls
 * {@link #retransmitFrom}. Retransmissions go on the peer's current rail; a back-pressured sink stops a pass (the
 * rest goes on a later timer or ACK).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by its {@link DrEndpoint}.
 */
final class RetransmitPolicy {
    static final int FAST_RETRANSMIT_SACKS = 3;
    /** Transmissions after a repair that must arrive before the repair counts as lost (a reordering allowance). */
    static final int REPAIR_REORDER_XMITS = 2;
    /** PSNs from the cumulative one an ACK reports on: itself and its 64-bit SACK. */
    static final int SACK_REACH = 65;
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
        int top = send.una() + Math.min(send.inFlight(), SACK_REACH) - 1;
        for (int psn = top; psn - send.una() >= 0; psn--) {
            if (send.isSacked(psn)) {
                above++;
            } else if (send.transmissions(psn) == 1 ? above >= FAST_RETRANSMIT_SACKS && nowNs - send.lastSentNs(psn) >= recent
                : send.lostByLaterArrival(psn, REPAIR_REORDER_XMITS)) {
                if (holes == due.length) {
                    due = holeScratch = Arrays.copyOf(due, due.length * 2);
                }
                due[holes++] = psn;
            }
        }
        for (int h = holes - 1; h >= 0; h--) { // oldest first
            if (!send(due[h], nowNs, false)) {
                return;
            }
        }
    }

    /**
     * Retransmits the unacknowledged VFRAGs from {@code from} (always {@code from} itself) last sent at or before
     * {@code sentBeforeNs}: in selective mode only those within the SACK's reach of {@code from} (beyond it the
     * receiver may hold them: the ACKs could not say), in go-back-N every one, SACKed too (its receiver kept none).
     */
    void retransmitFrom(int from, long nowNs, long sentBeforeNs) {
        boolean gbn = mode == RetransmitMode.GO_BACK_N;
        int end = gbn ? send.nextPsn() : from + SACK_REACH;
        for (int psn = from; psn - send.nextPsn() < 0 && psn - end < 0; psn++) {
            if ((gbn || !send.isSacked(psn)) && (psn == from || send.lastSentNs(psn) - sentBeforeNs <= 0)) {
                if (!retransmit(psn, nowNs)) {
                    return;
                }
            }
        }
    }

    /** Sends VFRAG {@code psn} again on the current rail after a timeout. @return false if the sink is back-pressured */
    boolean retransmit(int psn, long nowNs) {
        return send(psn, nowNs, true);
    }

    /** @param blind a timeout's repair, not one the SACKs asked for: its arrival is ambiguous for RACK */
    private boolean send(int psn, long nowNs, boolean blind) {
        byte[] d = send.datagram(psn);
        int r = sink.send(rails.current(), d, send.length(psn), psn);
        if (r == DatagramSink.BACK_PRESSURED) {
            return false;
        }
        vfragsRetransmitted++;
        send.markRetransmitted(psn, nowNs, blind);
        if (r == DatagramSink.SENT) {
            send.markLocalDone(psn);
        }
        return true;
    }

    long vfragsRetransmitted() {
        return vfragsRetransmitted;
    }
}
