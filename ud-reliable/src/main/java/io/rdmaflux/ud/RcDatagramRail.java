package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DatagramSink;
import io.rdmaflux.ud.dr.DrDatagram;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
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
 * receive slot; a received datagram is handed to DR (which copies it) and its slot re-posted at once, as the UD
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
final class RcDatagramRail implements DatagramRail, CompletionSink {
    private static final long SEND_BIT = 1L << 40;

    private final Port port;
    private final int slotBytes;
    private final int receiveSlots;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion recvMemory;
    private final MemoryRegion sendMemory;
    private final UnsafeBuffer sendView;
    private final UnsafeBuffer recvView;
    private final int[] freeSend;
    private int freeSendCount;
    private final int[] sendPsn;
    private final boolean[] sendIsData;
    private final SendWorkRequest swr = new SendWorkRequest();
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest();
    private @Nullable ReliableDatagramQp owner;
    private long nowNs;
    private long malformedDropped;
    private boolean closed;

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
        MemoryRegion rm = null;
        MemoryRegion sm = null;
        QueuePair q = null;
        try {
            c = pd.device().createCompletionQueue(receiveSlots + sendSlots + 16);
            rm = pd.allocateMemory((long) receiveSlots * slotBytes, Access.LOCAL_WRITE);
            sm = pd.allocateMemory((long) sendSlots * slotBytes, Access.LOCAL_WRITE);
            q = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, port).cq(c).maxReceiveWr(receiveSlots).maxSendWr(sendSlots)
                .retryCount(attributes.retryCount()).retryTimeoutNs(attributes.retryTimeoutNs())
                .rnrRetryCount(attributes.rnrRetryCount()).rnrTimeoutNs(attributes.rnrTimeoutNs()).build());
            q.init();
        } catch (RuntimeException e) {
            if (q != null) {
                q.close();
            }
            if (sm != null) {
                sm.close();
            }
            if (rm != null) {
                rm.close();
            }
            if (c != null) {
                c.close();
            }
            throw e;
        }
        this.cq = c;
        this.recvMemory = rm;
        this.sendMemory = sm;
        this.qp = q;
        this.recvView = view(rm, receiveSlots * slotBytes);
        this.sendView = new UnsafeBuffer(sm.address(), sendSlots * slotBytes);
        this.freeSend = new int[sendSlots];
        for (int i = 0; i < sendSlots; i++) {
            freeSend[i] = sendSlots - 1 - i;
        }
        this.freeSendCount = sendSlots;
        this.sendPsn = new int[sendSlots];
        this.sendIsData = new boolean[sendSlots];
        for (int i = 0; i < receiveSlots; i++) {
            postReceive(i);
        }
    }

    /**
     * A view of {@code length} bytes of {@code region}, over its direct {@code ByteBuffer} where it has one at the same
     * address, so that DR's CRC32C of a received datagram reads the memory in place ({@code CRC32C.update(ByteBuffer)})
     * instead of copying it to an array first; over the bare address otherwise.
     */
    static UnsafeBuffer view(MemoryRegion region, int length) {
        java.nio.ByteBuffer b = region.buffer();
        if (b.isDirect() && b.capacity() >= length && org.agrona.BufferUtil.address(b) == region.address()) {
            return new UnsafeBuffer(b, 0, length);
        }
        return new UnsafeBuffer(region.address(), length);
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
    public int connect(int qpNumber, QpEndpoint peer) {
        qp.readyToReceive(peer);
        qp.readyToSend();
        return peer.qpn();
    }

    @Override
    public int send(QpEndpoint peer, byte[] datagram, int length, ReliableDatagramQp from, int psn) {
        if (closed || freeSendCount == 0 || length > slotBytes) {
            return DatagramSink.BACK_PRESSURED;
        }
        int slot = freeSend[--freeSendCount];
        int off = slot * slotBytes;
        sendView.putBytes(off, datagram, 0, length);
        sendPsn[slot] = psn;
        sendIsData[slot] = length > 4 && datagram[4] == DrDatagram.DATA;
        swr.reset().wrId(SEND_BIT | slot).opcode(WrOpcode.SEND).signaled(true).sge(sendMemory.address() + off, length, sendMemory.lkey());
        if (!qp.postSend(swr)) {
            freeSend[freeSendCount++] = slot;
            return DatagramSink.BACK_PRESSURED;
        }
        return DatagramSink.POSTED;
    }

    @Override
    public int poll(long nowNs) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        int total = 0;
        int n;
        while ((n = cq.poll(64, this)) > 0) {
            total += n;
        }
        return total;
    }

    @Override
    public void onCompletion(WorkCompletion wc) {
        long id = wc.wrId();
        ReliableDatagramQp user = owner;
        if ((id & SEND_BIT) != 0) {
            int slot = (int) (id & 0xFFFF_FFFFL);
            freeSend[freeSendCount++] = slot;
            if (user == null) {
                return;
            }
            if (wc.isSuccess()) {
                if (sendIsData[slot]) {
                    user.onLocalCompletion(sendPsn[slot]);
                }
            } else if (wc.status() != WcStatus.WR_FLUSH_ERR) {
                user.onRailFailure(wc.status(), "the RC queue pair " + qp.qpNumber() + " carrying its DR datagrams failed: "
                    + wc.status() + (wc.detail().isEmpty() ? "" : " (" + wc.detail() + ")"));
            }
            return;
        }
        if (!wc.isSuccess()) {
            return; // flushed: the queue pair went to ERROR or closed
        }
        int slot = (int) id;
        if (user != null) {
            user.onDatagram(recvView, slot * slotBytes, wc.byteLength(), nowNs);
        } else {
            malformedDropped++;
        }
        postReceive(slot);
    }

    private void postReceive(int slot) {
        rwr.wrId(slot).sge(recvMemory.address() + (long) slot * slotBytes, slotBytes, recvMemory.lkey());
        qp.postReceive(rwr);
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
        sendMemory.close();
        recvMemory.close();
    }

    /** Datagrams that arrived with no queue pair to take them (before connect or after close), dropped. */
    @Override
    public long foreignDropped() {
        return malformedDropped;
    }

    @Override
    public String toString() {
        return "RcDatagramRail{rcQpn=" + qp.qpNumber() + ", slots=" + receiveSlots + "x" + slotBytes + " B}";
    }
}
