package io.rdmaflux.ud.dr;

import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.zip.CRC32C;

/**
 * The sending half of one peer's DR state (seed 003 &sect;4.2): the messages queued, their fragmentation into
 * VFRAGs of at most {@link DrConfig#vfragPayloadBytes()} bytes, one PSN per VFRAG, and the VFRAGs in flight
 * (sent, not yet acknowledged), each with its encoded datagram, send times, transmission count and SACK mark.
 *
 * <p>The window: PSNs in [{@link #una()}, {@link #nextPsn()}), at most {@link DrConfig#windowVfrags()} of them,
 * and never at or beyond the credit limit the peer's ACKs advertise (its free receive buffers).
 *
 * <p>Memory: {@code windowVfrags} datagram buffers of {@code datagramBytes}, allocated on first use. Not
 * thread-safe.
 */
final class SendWindow {
    /** Hears RTT samples taken under Karn's rule. */
    interface RttListener {
        void onRttSample(long rttNs);
    }

    private final DrConfig config;
    private final int sourceId;
    private final int mask;
    private final byte[][] datagrams;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final int[] lengths;
    private final long[] firstSentNs;
    private final long[] lastSentNs;
    private final int[] transmissions;
    /** The order of each VFRAG's last transmission (first or repair) among all transmissions. */
    private final long[] xmitSeq;
    /** Slots whose last transmission was a timeout's blind repair: which transmission arrived is ambiguous. */
    private final boolean[] blind;
    /** Slots that were beyond an ACK's SACK reach while in flight: acknowledged late, they give no RTT sample. */
    private final boolean[] unreported;
    private final boolean[] sacked;
    private final boolean[] localDone;
    private final CRC32C crc = new CRC32C();
    private final ArrayDeque<MessageSource> queue = new ArrayDeque<>();
    private int headOffset;
    private boolean finQueued;
    private boolean finSent;
    private int una;
    private int nextPsn;
    private int creditLimit;
    private long queuedBytes;
    private int unsent;
    private int sackedCount;
    /** The last PSN of every message fragmented and not yet acknowledged, oldest first. */
    private final ArrayDeque<Integer> messageEnds = new ArrayDeque<>();
    private long messagesAcknowledged;
    private long nextXmitSeq;
    /** The latest transmission known to have arrived (RFC 8985's RACK.xmit_ts, as an order); -1 before any. */
    private long deliveredXmitSeq = -1;
    /** PSNs below it (from una) were marked {@link #unreported} when an ACK could not reach them. */
    private int unreportedFrom;

    SendWindow(DrConfig config, int sourceId) {
        this.config = config;
        this.sourceId = sourceId;
        // the ring spans 4 windows: VFRAGs the peer SACKed leave the window (the "pipe" of RFC 6675 section 2) but keep
        // their slot until the cumulative ACK passes them, so the sender keeps sending while a hole is repaired
        int cap = Integer.highestOneBit(Math.max(1, 4 * config.windowVfrags() - 1)) << 1;
        this.mask = cap - 1;
        this.datagrams = new byte[cap][];
        this.lengths = new int[cap];
        this.firstSentNs = new long[cap];
        this.lastSentNs = new long[cap];
        this.transmissions = new int[cap];
        this.xmitSeq = new long[cap];
        this.blind = new boolean[cap];
        this.unreported = new boolean[cap];
        this.sacked = new boolean[cap];
        this.localDone = new boolean[cap];
        this.una = config.firstPsn();
        this.nextPsn = una;
        this.unreportedFrom = una;
        this.creditLimit = una + config.initialCreditVfrags();
    }

    /** Queues a whole message; the array is kept until its last VFRAG is fragmented. */
    void enqueue(byte[] message) {
        enqueue(MessageSource.of(message));
    }

    /** Queues a whole message; its bytes are read as its VFRAGs are made, until its last one is. */
    void enqueue(MessageSource message) {
        if (finQueued) {
            throw new IllegalStateException("the stream was finished; no message may follow it");
        }
        queue.add(message);
        queuedBytes += message.length();
    }

    /** Queues the end of stream after every queued message. */
    void finish() {
        finQueued = true;
    }

    int queuedMessages() {
        return queue.size();
    }

    long queuedBytes() {
        return queuedBytes;
    }

    /** Whether there is something to fragment (a message or the FIN). */
    boolean hasPending() {
        return !queue.isEmpty() || (finQueued && !finSent);
    }

    /** Whether a new VFRAG may be sent now: pending data, room in the window and credit. */
    boolean canFragment() {
        return hasPending() && pipe() < config.windowVfrags() && nextPsn - una <= mask && nextPsn - creditLimit < 0;
    }

    /** VFRAGs sent and neither acknowledged nor SACKed: what counts against the window. */
    int pipe() {
        return nextPsn - una - sackedCount;
    }

    /** Whether pending data waits for credit only (the peer's buffers are full): the sender probes it. */
    boolean blockedOnCredit() {
        return hasPending() && nextPsn - creditLimit >= 0;
    }

    /** Encodes the next VFRAG into its slot and returns its PSN; call only when {@link #canFragment()}. */
    int fragmentNext(long nowNs) {
        int psn = nextPsn;
        int i = psn & mask;
        byte[] d = datagrams[i];
        if (d == null) {
            d = datagrams[i] = new byte[config.datagramBytes()];
        }
        view.wrap(d);
        int length;
        if (queue.isEmpty()) {
            length = DrDatagram.encode(view, 0, DrDatagram.DATA, DrDatagram.FLAG_FIRST | DrDatagram.FLAG_LAST | DrDatagram.FLAG_FIN,
                0, sourceId, psn, 0, 0, crc);
            finSent = true;
        } else {
            MessageSource m = queue.peek();
            int messageLength = m.length();
            int chunk = Math.min(messageLength - headOffset, config.vfragPayloadBytes());
            int flags = headOffset == 0 ? DrDatagram.FLAG_FIRST : 0;
            m.copyTo(headOffset, view, DrDatagram.HEADER_BYTES, chunk);
            headOffset += chunk;
            if (headOffset == messageLength) {
                flags |= DrDatagram.FLAG_LAST;
                messageEnds.add(psn);
                queue.poll();
                queuedBytes -= messageLength;
                headOffset = 0;
            }
            length = DrDatagram.encode(view, 0, DrDatagram.DATA, flags, chunk, sourceId, psn, messageLength, 0, crc);
        }
        lengths[i] = length;
        firstSentNs[i] = nowNs;
        lastSentNs[i] = nowNs;
        transmissions[i] = 1;
        xmitSeq[i] = nextXmitSeq++;
        blind[i] = false;
        unreported[i] = false;
        sacked[i] = false;
        localDone[i] = false;
        nextPsn = psn + 1;
        return psn;
    }

    /**
     * An ACK arrived: everything below {@code cumulativePsn} is acknowledged, the PSNs of {@code sack}'s set bits
     * (bit i: {@code cumulativePsn + 1 + i}) are held by the peer, and it may send below {@code limitPsn}.
     *
     * @return whether it acknowledged anything new (progress)
     */
    boolean onAck(int cumulativePsn, long sack, int limitPsn, long nowNs, RttListener rtt) {
        boolean progress = false;
        if (limitPsn - creditLimit > 0) {
            creditLimit = limitPsn;
        }
        if (cumulativePsn - nextPsn > 0 || cumulativePsn - una < 0 && sack == 0) {
            return false; // acknowledges PSNs never sent, or an old ACK: ignore
        }
        while (cumulativePsn - una > 0) {
            int i = una & mask;
            if (!sacked[i]) {
                delivered(i, nowNs, rtt);
            }
            transmissions[i] = 0;
            if (sacked[i]) {
                sacked[i] = false;
                sackedCount--;
            }
            una++;
            progress = true;
        }
        while (!messageEnds.isEmpty() && messageEnds.peek() - una < 0) {
            messageEnds.poll();
            messagesAcknowledged++;
        }
        for (int b = 0; sack != 0 && b < 64; b++, sack >>>= 1) {
            int psn = cumulativePsn + 1 + b;
            if ((sack & 1) != 0 && psn - una >= 0 && psn - nextPsn < 0) {
                int i = psn & mask;
                if (!sacked[i]) {
                    sacked[i] = true;
                    sackedCount++;
                    progress = true;
                    delivered(i, nowNs, rtt);
                }
            }
        }
        // the VFRAGs beyond this ACK's reach may have arrived long before an ACK can say so: no RTT sample from them
        int reach = una + RetransmitPolicy.SACK_REACH;
        if (unreportedFrom - reach < 0) {
            unreportedFrom = reach;
        }
        for (; unreportedFrom - nextPsn < 0; unreportedFrom++) {
            unreported[unreportedFrom & mask] = true;
        }
        return progress;
    }

    /**
     * Slot {@code i} is newly known to have arrived: an RTT sample if it was sent once (Karn) and always within an
     * ACK's reach (else its acknowledgement waited for a hole before it), and the latest transmission known to have
     * arrived moves up to its last one unless that was a blind repair (either transmission may have arrived).
     */
    private void delivered(int i, long nowNs, RttListener rtt) {
        if (transmissions[i] == 0) {
            return;
        }
        if (transmissions[i] == 1 && !unreported[i]) {
            rtt.onRttSample(nowNs - firstSentNs[i]);
        }
        if (transmissions[i] == 1 || !blind[i]) {
            deliveredXmitSeq = Math.max(deliveredXmitSeq, xmitSeq[i]);
        }
    }

    /**
     * Whether VFRAG {@code psn} (sent, not acknowledged, not SACKed) is lost by RACK's rule (RFC 8985 &sect;6.2, with
     * an allowance for reordering counted in transmissions instead of time): a transmission made at least
     * {@code reorderXmits} after its last one has arrived. Datagrams of one rail leave in order, so a later one's
     * arrival means this one's is not coming; a repair still in the send queue is not declared lost.
     */
    boolean lostByLaterArrival(int psn, int reorderXmits) {
        int i = psn & mask;
        return transmissions[i] > 0 && !sacked[i] && deliveredXmitSeq - xmitSeq[i] >= reorderXmits;
    }

    /** Whole messages acknowledged (every VFRAG of each), in sending order. */
    long messagesAcknowledged() {
        return messagesAcknowledged;
    }

    /** The oldest PSN not acknowledged. */
    int una() {
        return una;
    }

    /** The PSN the next new VFRAG gets. */
    int nextPsn() {
        return nextPsn;
    }

    int creditLimit() {
        return creditLimit;
    }

    int inFlight() {
        return nextPsn - una;
    }

    /** Whether every message and the FIN (if queued) were sent and acknowledged. */
    boolean allAcknowledged() {
        return !hasPending() && una == nextPsn;
    }

    /** Whether the FIN was queued, sent and acknowledged. */
    boolean finAcknowledged() {
        return finSent && una == nextPsn;
    }

    boolean isSacked(int psn) {
        return sacked[psn & mask];
    }

    byte[] datagram(int psn) {
        return datagrams[psn & mask];
    }

    int length(int psn) {
        return lengths[psn & mask];
    }

    long lastSentNs(int psn) {
        return lastSentNs[psn & mask];
    }

    int transmissions(int psn) {
        return transmissions[psn & mask];
    }

    /**
     * Marks a retransmission of {@code psn} at {@code nowNs} (its local completion pending again).
     *
     * @param blindRepair sent on a timeout rather than because the SACKs showed it lost
     */
    void markRetransmitted(int psn, long nowNs, boolean blindRepair) {
        int i = psn & mask;
        if (transmissions[i] == 0) {
            unsent--;
            transmissions[i] = 1;
        }
        transmissions[i]++;
        xmitSeq[i] = nextXmitSeq++;
        blind[i] = blindRepair;
        lastSentNs[i] = nowNs;
        localDone[i] = false;
    }

    /** A VFRAG the sink refused (back-pressured): it is sent again before any new one, and gives no RTT sample. */
    void markUnsent(int psn) {
        int i = psn & mask;
        transmissions[i] = 0;
        localDone[i] = true;
        unsent++;
    }

    /** VFRAGs fragmented but refused by the sink, waiting for their first transmission. */
    int unsent() {
        return unsent;
    }

    /** The first transmission of a VFRAG the sink had refused went out at {@code nowNs}. */
    void markFirstSent(int psn, long nowNs, boolean localDoneNow) {
        int i = psn & mask;
        transmissions[i] = 1;
        xmitSeq[i] = nextXmitSeq++;
        blind[i] = false;
        firstSentNs[i] = nowNs;
        lastSentNs[i] = nowNs;
        localDone[i] = localDoneNow;
        unsent--;
    }

    /** The sink reported {@code psn}'s local completion. */
    void markLocalDone(int psn) {
        if (psn - una >= 0 && psn - nextPsn < 0) {
            localDone[psn & mask] = true;
        }
    }

    boolean isLocalDone(int psn) {
        return localDone[psn & mask];
    }
}
