package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import java.nio.ByteBuffer;

/**
 * The send side of a UD {@link SoftQueuePair}: consumes the {@link SendRing} the {@link SendPoster}
 * fills, one datagram per work request. A datagram leaves at once and its send completes when it
 * leaves, so one index ({@code head}: next to send, and oldest not completed) is all the state. Above
 * the port MTU a send completes with LOC_LEN_ERR and the QP stays in RTS (hardware would put the send
 * queue in an error state; keeping the QP usable is what a datagram layer above wants and does not hide
 * the error); a bad SGE completes with LOC_PROT_ERR. The port's UD faults (loss, corruption,
 * duplication, reordering; {@link RailConfig}) act here. Reception is in {@link SoftResponder}.
 *
 * <p>Thread-safety: the NIC's engine thread only.
 */
final class UdSender {
    private final SoftDevice device;
    private final SoftPort port;
    private final SendRing sq;
    private final SendSges sges;
    private final ErrorFlush errors;
    private final SoftCompletionQueue sendCq;
    private final int qpn;
    private long head;

    UdSender(SoftQueuePair qp, SoftDevice device, SoftPort port, SendRing sq, SendSges sges, ErrorFlush errors) {
        this.device = device;
        this.port = port;
        this.sq = sq;
        this.sges = sges;
        this.errors = errors;
        this.sendCq = qp.sendCq;
        this.qpn = qp.qpn;
    }

    /** Every posted work request sent and completed. */
    boolean idle() {
        return head == sq.tail.get();
    }

    /** In RTS: sends and completes posted datagrams while the rail and the send CQ take them. */
    int doSends(long nowNs) {
        long tail = sq.engineTail();
        int n = 0;
        while (head < tail) {
            int slot = (int) head & sq.mask;
            if (sq.error[slot] == SendRing.NO_ERROR && !sq.inline[slot]) {
                sges.validate(slot, false);
            }
            int len = sq.length[slot];
            int mtu = port.engineRail().mtuBytes();
            if (sq.error[slot] == SendRing.NO_ERROR && len > mtu) {
                sq.markError(slot, WcStatus.LOC_LEN_ERR, "UD datagram of " + len + " bytes exceeds the port MTU of " + mtu
                    + " bytes; fragment it");
            }
            boolean error = sq.error[slot] != SendRing.NO_ERROR;
            if ((error || sq.signaled[slot]) && !sendCq.hasRoom()) {
                break;
            }
            if (!error) {
                if (!port.mayTransmit(nowNs)) {
                    break;
                }
                transmitDatagram(slot, len, nowNs);
            }
            if (error) {
                sendCq.add(sq.wrId[slot], SendRing.WC_STATUSES[sq.error[slot]], WcOpcode.SEND, len, false, 0, qpn, 0,
                    sq.errorDetail[slot]);
            } else if (sq.signaled[slot]) {
                sendCq.add(sq.wrId[slot], WcStatus.SUCCESS, WcOpcode.SEND, len, false, 0, qpn, 0, "");
            }
            sq.ah[slot] = null;
            head++;
            n++;
        }
        if (n > 0) {
            sq.head.lazySet(head);
        }
        return n;
    }

    private void transmitDatagram(int slot, int len, long nowNs) {
        long arrival = port.depart(nowNs, len);
        SoftAddressHandle ah = sq.ah[slot];
        if (!port.isUp() || ah == null || port.udLost(nowNs, len)) {
            return;
        }
        SoftFrame f = device.claimFrame();
        f.type = FrameType.UD_SEND;
        f.route = ah.route;
        f.sourceQpn = qpn;
        f.destinationQpn = sq.remoteQpn[slot];
        f.qkey = sq.remoteQkey[slot];
        f.hasImmediate = sq.hasImm[slot];
        f.immediate = sq.imm[slot];
        f.length = len;
        f.sentAtNs = nowNs;
        ByteBuffer own = f.ownPayload(len);
        sges.copyDatagram(slot, own, len);
        if (len > 0) {
            f.addPayload(own, 0, len);
        }
        int corrupt = port.udCorruptOffset(len);
        if (corrupt >= 0) {
            own.put(corrupt, (byte) (own.get(corrupt) ^ 0x5A));
        }
        boolean reorder = port.udReorder();
        f.deliverAtNs = reorder ? arrival + port.engineRail().reorderDelayNs() : device.monotoneArrival(port, arrival);
        SoftFrame dup = port.udDuplicate() ? device.claimFrame() : null;
        if (dup != null) {
            dup.copyFrom(f);
            dup.deliverAtNs = device.monotoneArrival(port, arrival);
        }
        device.attachment().transmit(f);
        if (dup != null) {
            device.attachment().transmit(dup);
        }
    }

    /** In ERROR: completes every posted work request with WR_FLUSH_ERR, and the receives ({@link ErrorFlush}). */
    int flush() {
        long from = head;
        head = errors.flushSends(head, head);
        return (int) (head - from) + errors.flushReceives();
    }
}
