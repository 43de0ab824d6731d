package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DatagramSink;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The DR datagrams of one connection rail carried by an RC queue pair of its own
 * ({@link io.rdmaflux.core.channel.ChannelKind#RC_DR}): DR's end-to-end CRC32C and acknowledgement over RC, for
 * the errors the transport does not see (seed 003 &sect;3.1: DR checks data "once it reaches main memory"; IB's
 * link-level checks end at the NIC). Each datagram is one RC SEND from a registered send slot into a posted
 * receive slot; a received datagram is handed to DR (which copies or places it) and its slot re-posted at once, as the UD
 * rail's pool is (&sect;4.1).
 *
 * <p><b>Credit:</b> the queue pair's DR receive share is the receive slots less an eighth kept for ACKs and probes
 * ({@link UdPort#sharePerPeer()}'s rule with one peer), so the peer's DATA in flight never exceeds the posted receives
 * and no SEND waits in receiver-not-ready retries for want of one.
 *
 * <p><b>Failure:</b> a SEND that completes in error (the RC queue pair's retries ran out: the peer is gone) fails the
 * DR queue pair at once with that status ({@link ReliableDatagramQp#onRailFailure}), without waiting for DR's own
 * timers.
 *
 * <p><b>Memory:</b> {@code (receiveSlots + sendSlots) x slotBytes} registered, one completion queue and one queue pair
 * per connection rail (a UD rail's are per node).
 *
 * <p><b>Concurrency:</b> the progress thread of the node; not thread-safe.
 */
final class RcDatagramRail extends SlottedDatagramRail {
    private final Port port;
    private final int slotBytes;
    private final int receiveSlots;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final DatagramSlots slots;
    private final SendWorkRequest swr = new SendWorkRequest();
    private @Nullable ReliableDatagramQp owner;
    private long unclaimedDropped;

    /**
     * Makes the RC queue pair (in INIT, receives posted), its completion queue and slot memory in {@code pd}.
     *
     * @param attributes the DR queue pair's attributes: their retry and RNR settings are the carrier's
     * @param slotBytes  bytes of one datagram slot (the largest DR datagram), in [64, 65535]
     * @throws io.rdmaflux.verbs.VerbsException if the device refuses a resource (nothing is left allocated)
     */
    RcDatagramRail(ProtectionDomain pd, QpInitAttributes attributes, int receiveSlots, int sendSlots, int slotBytes) {
        if (slotBytes < 64 || slotBytes > 65535) {
            throw new IllegalArgumentException("slotBytes in [64, 65535] required but it was " + slotBytes);
        }
        this.port = attributes.port();
        this.slotBytes = slotBytes;
        this.receiveSlots = receiveSlots;
        CompletionQueue c = null;
        DatagramSlots m = null;
        QueuePair q = null;
        try {
            c = pd.device().createCompletionQueue(receiveSlots + sendSlots + 16);
            m = new DatagramSlots(pd, receiveSlots, sendSlots, slotBytes);
            q = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, port).cq(c).maxReceiveWr(receiveSlots).maxSendWr(sendSlots)
                .retryCount(attributes.retryCount()).retryTimeoutNs(attributes.retryTimeoutNs())
                .rnrRetryCount(attributes.rnrRetryCount()).rnrTimeoutNs(attributes.rnrTimeoutNs()).build());
            q.init();
        } catch (RuntimeException e) {
            if (q != null) {
                q.close();
            }
            if (m != null) {
                m.close();
            }
            if (c != null) {
                c.close();
            }
            throw e;
        }
        this.cq = c;
        this.slots = m;
        this.qp = q;
        for (int i = 0; i < receiveSlots; i++) {
            slots.postReceive(qp, i);
        }
    }

    @Override
    public Port port() {
        return port;
    }

    @Override
    public int drDatagramBytes() {
        return slotBytes;
    }

    /** One user: the DR queue pair of this connection rail; its number is the RC queue pair's. */
    @Override
    public int register(ReliableDatagramQp user) {
        if (owner != null) {
            throw new IllegalStateException("an RC datagram rail carries one queue pair; it has " + owner);
        }
        owner = user;
        user.receiveShare(Math.max(1, receiveSlots - receiveSlots / 8));
        return qp.qpNumber();
    }

    @Override
    public QpEndpoint localEndpoint(int qpNumber) {
        QpEndpoint e = qp.localEndpoint();
        return new QpEndpoint(e.address(), e.qpn(), e.startPsn(), slotBytes);
    }

    /**
     * Moves the RC queue pair to RTR and RTS towards the peer's; the peer's DR id is its RC queue pair number. The
     * endpoint's {@code mtuBytes} is the peer's slot size: DR sends it no larger datagram ({@link ReliableDatagramQp}).
     */
    @Override
    public String describe(QpEndpoint peer) {
        return peer.address() + " (RC QP " + peer.qpn() + ")";
    }

    @Override
    public int connect(int qpNumber, QpEndpoint peer) {
        qp.readyToReceive(peer);
        qp.readyToSend();
        return peer.qpn();
    }

    @Override
    public int send(QpEndpoint peer, byte[] datagram, int length, ReliableDatagramQp from, int psn) {
        if (closed || length > slotBytes) {
            return DatagramSink.BACK_PRESSURED;
        }
        int slot = slots.takeSend(0, datagram, length, from, psn);
        if (slot < 0) {
            return DatagramSink.BACK_PRESSURED;
        }
        swr.reset().wrId(DatagramSlots.SEND_BIT | slot).opcode(WrOpcode.SEND).signaled(true).sge(slots.sendAddress(slot), length, slots.sendLkey());
        if (!qp.postSend(swr)) {
            slots.untake(slot);
            return DatagramSink.BACK_PRESSURED;
        }
        return DatagramSink.POSTED;
    }

    @Override
    CompletionQueue completionQueue() {
        return cq;
    }

    @Override
    DatagramSlots slots() {
        return slots;
    }

    @Override
    QueuePair receiveQueuePair() {
        return qp;
    }

    @Override
    void onSendCompleted(@Nullable ReliableDatagramQp from, WorkCompletion wc) {
        if (from != null && !wc.isSuccess() && wc.status() != WcStatus.WR_FLUSH_ERR) {
            from.onRailFailure(wc.status(), "the RC queue pair " + qp.qpNumber() + " carrying its DR datagrams failed: "
                + wc.status() + (wc.detail().isEmpty() ? "" : " (" + wc.detail() + ")"));
        }
    }

    @Override
    void onReceived(UnsafeBuffer recv, int offset, int length) {
        ReliableDatagramQp user = owner;
        if (user != null) {
            user.onDatagram(recv, offset, length, nowNs);
        } else {
            unclaimedDropped++;
        }
    }

    /** Closes the queue pair, its completion queue and memory: the rail has one user. Idempotent. */
    @Override
    public void release(int qpNumber) {
        if (closed) {
            return;
        }
        closed = true;
        owner = null;
        qp.close();
        cq.close();
        slots.close();
    }

    /** Datagrams that arrived with no queue pair to take them (before connect or after close), dropped. */
    @Override
    public long foreignDropped() {
        return unclaimedDropped;
    }

    @Override
    public String toString() {
        return "RcDatagramRail{rcQpn=" + qp.qpNumber() + ", slots=" + receiveSlots + "x" + slotBytes + " B}";
    }
}
