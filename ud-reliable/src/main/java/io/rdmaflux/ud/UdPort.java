package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DatagramSink;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One node's UD resources on one rail (seed 003 &sect;4): a single UD receive queue pair whose static pool of
 * {@link UdSpec#receivePoolSlots()} buffers is shared by every peer and re-posted as soon as a datagram was
 * handed on (&sect;4.1), {@link UdSpec#sendQps()} UD send queue pairs used in round robin, a pool of registered
 * send buffers, and one address handle per peer port, made on first use. No per-peer queue pair: a peer costs an
 * address handle and its {@link ReliableDatagramQp}'s DR state.
 *
 * <p><b>Wire:</b> every datagram is a 4-byte little-endian tag, the receiving {@link ReliableDatagramQp}'s number
 * (the UD BTL's tag of &sect;4.2, widened from one byte to name the receiver), then a DR datagram. A datagram
 * whose tag names no queue pair here is dropped and counted ({@link #foreignDropped()}).
 *
 * <p><b>Concurrency:</b> {@link #poll} and {@link #send} on the progress thread of the node that owns the
 * protection domain; {@link #register}/{@link #unregister} may come from the setup path.
 */
final class UdPort extends SlottedDatagramRail {
    static final int QKEY = 0x0D0D0003;
    static final int TAG_BYTES = 4;

    private final ProtectionDomain pd;
    private final Port port;
    private final UdSpec spec;
    private final int slotBytes;
    private final CompletionQueue cq;
    private final QueuePair recvQp;
    private final QueuePair[] sendQps;
    private final DatagramSlots slots;
    private final Map<PortAddress, AddressHandle> handles = new HashMap<>();
    private final Map<Integer, ReliableDatagramQp> qps = new ConcurrentHashMap<>();
    private final SendWorkRequest swr = new SendWorkRequest();
    private int nextSendQp;
    /**
     * The next queue pair number (tag) of any rail of this process: unique across rail incarnations (a rail is
     * closed when its last queue pair leaves and made again for the next), starting at a random value, 24 bits,
     * never 0. The tag is also the DR source id, so a datagram of an earlier connection that the network held
     * back (a kernel's neighbour queue while a link was down delivers it seconds later) names a tag no later
     * queue pair has, on either side, and is dropped as foreign; with tags restarting at 1 on each new rail it
     * was taken in by the next connection between the same two nodes (fault matrix, netns column).
     */
    private static final java.util.concurrent.atomic.AtomicInteger NEXT_TAG =
        new java.util.concurrent.atomic.AtomicInteger(java.util.concurrent.ThreadLocalRandom.current().nextInt(1, 1 << 24));
    private int users;
    private long foreignDropped;
    private long sendErrors;

    UdPort(ProtectionDomain pd, Port port, UdSpec spec) {
        this.pd = pd;
        this.port = port;
        this.spec = spec;
        this.slotBytes = port.mtuBytes();
        int pool = spec.receivePoolSlots();
        int sends = spec.sendSlots();
        CompletionQueue c = null;
        QueuePair r = null;
        QueuePair[] s = new QueuePair[spec.sendQps()];
        DatagramSlots m = null;
        try {
            c = pd.device().createCompletionQueue(pool + sends + 16);
            m = new DatagramSlots(pd, pool, sends, slotBytes);
            r = pd.createQueuePair(QpInitAttributes.builder(QpType.UD, port).cq(c).maxReceiveWr(pool).maxSendWr(1).qkey(QKEY).build());
            r.init();
            for (int i = 0; i < s.length; i++) {
                s[i] = pd.createQueuePair(QpInitAttributes.builder(QpType.UD, port).cq(c).maxReceiveWr(1).maxSendWr(sends).qkey(QKEY).build());
                s[i].init();
                s[i].readyToReceive();
                s[i].readyToSend();
            }
        } catch (RuntimeException e) {
            for (QueuePair q : s) {
                if (q != null) {
                    q.close();
                }
            }
            if (r != null) {
                r.close();
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
        this.recvQp = r;
        this.sendQps = s;
        this.slots = m;
        for (int i = 0; i < pool; i++) {
            slots.postReceive(recvQp, i);
        }
        recvQp.readyToReceive();
        recvQp.readyToSend();
    }

    @Override
    public Port port() {
        return port;
    }

    ProtectionDomain pd() {
        return pd;
    }

    /** The UD queue pair peers address every datagram to. */
    int receiveQpNumber() {
        return recvQp.qpNumber();
    }

    /** Largest DR datagram (the UD MTU minus the tag), bytes. */
    @Override
    public int drDatagramBytes() {
        return Math.min(65535, slotBytes - TAG_BYTES);
    }

    /** Datagrams whose tag named no queue pair of this rail, dropped. */
    @Override
    public long foreignDropped() {
        return foreignDropped;
    }

    /** UD sends that completed in error (lost: DR retransmits). */
    long sendErrors() {
        return sendErrors;
    }

    /** Free send buffers now. */
    int freeSendBuffers() {
        return slots.freeSendSlots();
    }

    @Override
    public synchronized int register(ReliableDatagramQp qp) {
        int n;
        do {
            n = NEXT_TAG.getAndIncrement() & 0xFF_FFFF;
        } while (n == 0 || qps.containsKey(n));
        qps.put(n, qp);
        users++;
        regrant();
        return n;
    }

    /**
     * The credit grant of each peer from the shared pool (the fairness rule): the pool minus a reserve of one
     * eighth for control datagrams (ACKs, probes), divided evenly among the queue pairs on this rail, at least one
     * VFRAG each. So the DATA datagrams all peers may have in flight to this rail never exceed the pool, whatever
     * the progress thread's delays (no datagram dropped for want of a posted receive), and no peer's share depends
     * on another's traffic: a busy peer cannot starve a quiet one, and a slow subscriber (its messages waiting for
     * receives its RC credits have not posted) holds back only its own sender's credit.
     */
    int sharePerPeer() {
        int pool = spec.receivePoolSlots();
        return Math.max(1, (pool - pool / 8) / Math.max(1, users));
    }

    private void regrant() {
        int share = sharePerPeer();
        for (ReliableDatagramQp qp : qps.values()) {
            qp.receiveShare(share);
        }
    }

    /** The rail's UD receive queue pair as {@code qpn}, the queue pair's tag as {@code startPsn}. */
    @Override
    public QpEndpoint localEndpoint(int qpNumber) {
        return new QpEndpoint(port.address(), recvQp.qpNumber(), qpNumber, drDatagramBytes());
    }

    @Override
    public String describe(QpEndpoint peer) {
        return peer.address() + " (UD QP " + peer.qpn() + ", tag " + peer.startPsn() + ")";
    }

    /** Nothing to connect (an address handle is made on the first send); the peer's DR id is its tag. */
    @Override
    public int connect(int qpNumber, QpEndpoint peer) {
        return peer.startPsn();
    }

    @Override
    public int send(QpEndpoint peer, byte[] datagram, int length, ReliableDatagramQp owner, int psn) {
        return send(peer.address(), peer.qpn(), peer.startPsn(), datagram, length, owner, psn);
    }

    @Override
    public void release(int qpNumber) {
        if (unregister(qpNumber)) {
            UdChannelProvider.closeRail(this);
        }
    }

    /** Whether no queue pair uses this rail. */
    synchronized boolean idle() {
        return users == 0;
    }

    /** @return whether the last user left (the caller then closes this rail) */
    synchronized boolean unregister(int qpNumber) {
        if (qps.remove(qpNumber) != null) {
            users--;
            regrant();
        }
        slots.forget(qpNumber);
        return users == 0;
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
        return recvQp;
    }

    @Override
    void onSendCompleted(@Nullable ReliableDatagramQp from, WorkCompletion wc) {
        if (!wc.isSuccess()) {
            sendErrors++; // as lost on the wire: no local completion, the DR timers recover it
        }
    }

    /** The first 4 bytes are the tag of the queue pair the datagram is for. */
    @Override
    void onReceived(UnsafeBuffer recv, int offset, int length) {
        ReliableDatagramQp qp = length >= TAG_BYTES ? qps.get(recv.getInt(offset, ByteOrder.LITTLE_ENDIAN)) : null;
        if (qp != null) {
            qp.onDatagram(recv, offset + TAG_BYTES, length - TAG_BYTES, nowNs);
        } else {
            foreignDropped++;
        }
    }

    /**
     * Sends one DR datagram to queue pair {@code remoteTag} behind UD queue pair {@code remoteQpn} at {@code to}.
     *
     * @return {@link DatagramSink#POSTED}, or {@link DatagramSink#BACK_PRESSURED} when no send buffer is free
     */
    int send(PortAddress to, int remoteQpn, int remoteTag, byte[] datagram, int length, @Nullable ReliableDatagramQp owner, int psn) {
        if (closed || length + TAG_BYTES > slotBytes) {
            return DatagramSink.BACK_PRESSURED;
        }
        int slot = slots.takeSend(TAG_BYTES, datagram, length, owner, psn);
        if (slot < 0) {
            return DatagramSink.BACK_PRESSURED;
        }
        slots.sendRegion().putInt(slot * slotBytes, remoteTag, ByteOrder.LITTLE_ENDIAN);
        AddressHandle ah = handles.computeIfAbsent(to, a -> pd.createAddressHandle(port, a));
        swr.reset().wrId(DatagramSlots.SEND_BIT | slot).opcode(io.rdmaflux.verbs.WrOpcode.SEND).signaled(true)
            .sge(slots.sendAddress(slot), length + TAG_BYTES, slots.sendLkey()).ud(ah, remoteQpn, QKEY);
        QueuePair qp = sendQps[nextSendQp];
        nextSendQp = (nextSendQp + 1) % sendQps.length;
        if (!qp.postSend(swr)) {
            slots.untake(slot);
            return DatagramSink.BACK_PRESSURED;
        }
        return DatagramSink.POSTED;
    }

    /** Destroys the queue pairs, address handles, memory and completion queue; idempotent. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (QueuePair q : sendQps) {
            q.close();
        }
        recvQp.close();
        for (AddressHandle ah : handles.values()) {
            ah.close();
        }
        handles.clear();
        cq.close();
        slots.close();
    }

    @Override
    public String toString() {
        return "UdPort{port=" + port.address() + ", udQpn=" + recvQp.qpNumber() + ", pool=" + spec.receivePoolSlots()
            + ", sendQps=" + sendQps.length + ", peers=" + handles.size() + "}";
    }
}
