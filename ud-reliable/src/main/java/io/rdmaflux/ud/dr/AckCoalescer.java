package io.rdmaflux.ud.dr;

import org.agrona.concurrent.UnsafeBuffer;

import java.util.zip.CRC32C;

/**
 * The receiver's side of DR acknowledgement for one peer (seed 003 &sect;4.2): when an ACK (cumulative PSN = the
 * ESN, 64-bit SACK bitmap, credit limit) is owed and sending it. ACKs are coalesced: one per
 * {@link DrConfig#ackEveryVfrags()} new in-order VFRAGs or {@link DrConfig#ackDelayNs()} after the first
 * unacknowledged one (the ACK timer); at once on a hole, a duplicate, a VFRAG beyond the credit, a FIN or a PROBE
 * (answered on the rail it came on, echoing its timestamp); and as a window update when the credit limit grew by a
 * quarter of {@link DrConfig#receiveBufferVfrags()} since the last one advertised.
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by its {@link DrEndpoint}.
 */
final class AckCoalescer {
    private final DrConfig config;
    private final int localId;
    private final DatagramSink sink;
    private final ReceiveWindow receive;
    private final byte[] control = new byte[DrDatagram.HEADER_BYTES];
    private final UnsafeBuffer controlView = new UnsafeBuffer(control);
    private final CRC32C crc = new CRC32C();

    private int ackPending;
    private long ackDeadlineNs = Long.MAX_VALUE;
    private boolean ackNow;
    private int probeReplyRail = -1;
    private long probeEchoNs;
    private int ackRail;
    private int advertisedLimit;
    private long acksSent;

    AckCoalescer(DrConfig config, int localId, DatagramSink sink, ReceiveWindow receive) {
        this.config = config;
        this.localId = localId;
        this.sink = sink;
        this.receive = receive;
        this.advertisedLimit = config.firstPsn() + config.initialCreditVfrags(); // what the peer assumes before our first ACK
    }

    /** A DATA datagram arrived on {@code rail}: ACKs go back on it. */
    void dataOn(int rail) {
        ackRail = rail;
    }

    /** A new VFRAG at the ESN arrived at {@code nowNs}: starts the ACK timer, or owes an ACK now when enough are due. */
    void newInOrder(long nowNs) {
        if (ackPending++ == 0) {
            ackDeadlineNs = nowNs + config.ackDelayNs();
        }
        if (ackPending >= config.ackEveryVfrags() || receive.heldOutOfOrder() > 0 || receive.finReceived()) {
            ackNow = true;
        }
    }

    /** An ACK is owed at once (a hole, a duplicate, a VFRAG beyond the credit). */
    void ackNow() {
        ackNow = true;
    }

    /** A PROBE arrived on {@code rail} carrying {@code echoNs}: answered by an ACK flagged as a probe reply. */
    void probeFrom(int rail, long echoNs) {
        probeReplyRail = rail;
        probeEchoNs = echoNs;
    }

    /** Sends the probe reply and the ACK that are due. @return ACKs sent */
    int acknowledge(long nowNs) {
        int work = 0;
        if (probeReplyRail >= 0) {
            if (sendAck(probeReplyRail, DrDatagram.FLAG_PROBE_REPLY, probeEchoNs)) {
                probeReplyRail = -1;
                work++;
            }
        }
        boolean timerDue = ackPending > 0 && nowNs - ackDeadlineNs >= 0;
        if (ackNow || timerDue || windowUpdateDue()) {
            if (sendAck(ackRail, 0, 0)) {
                work++;
            }
        }
        return work;
    }

    private boolean windowUpdateDue() {
        return receive.creditLimit() - advertisedLimit >= Math.max(1, config.receiveBufferVfrags() / 4);
    }

    private boolean sendAck(int rail, int flags, long echo) {
        int limit = receive.creditLimit();
        int len = DrDatagram.encode(controlView, 0, DrDatagram.ACK, flags, 0, localId, receive.esn(), limit, receive.sack(), crc);
        if (sink.send(rail, control, len, 0) == DatagramSink.BACK_PRESSURED) {
            return false;
        }
        acksSent++;
        advertisedLimit = limit;
        ackPending = 0;
        ackNow = false;
        ackDeadlineNs = Long.MAX_VALUE;
        return true;
    }

    /** The ACK timer's deadline, ns, or {@code Long.MAX_VALUE} when no in-order VFRAG waits for an ACK. */
    long deadlineNs() {
        return ackPending > 0 ? ackDeadlineNs : Long.MAX_VALUE;
    }

    /** Whether any ACK is owed: VFRAGs not acknowledged yet (coalescing), or one due at once. */
    boolean owed() {
        return ackPending > 0 || hasImmediateWork();
    }

    /** Whether an ACK or probe reply is owed without waiting for a timer. */
    boolean hasImmediateWork() {
        return ackNow || probeReplyRail >= 0 || windowUpdateDue();
    }

    /** The credit limit last advertised to the peer (PSN). */
    int advertisedLimit() {
        return advertisedLimit;
    }

    long acksSent() {
        return acksSent;
    }
}
