package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.ud.dr.DrConfig;
import io.rdmaflux.ud.dr.DrDatagram;
import io.rdmaflux.ud.dr.DrEndpoint;
import io.rdmaflux.ud.dr.DrStats;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.ud.dr.MessagePlacement;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.util.ArrayDeque;

/**
 * A queue pair with RC semantics made of a {@link DrEndpoint} over a {@link DatagramRail} &mdash; a share of the
 * node's UD rail ({@link UdPort}) or an RC queue pair of its own ({@link RcDatagramRail}): what the RC send/receive
 * channel runs on when its rail's kind is {@link io.rdmaflux.core.channel.ChannelKind#RELIABLE_UD} (or
 * {@link io.rdmaflux.core.channel.ChannelKind#RC_DR}). Each work request becomes one DR message
 * ({@link WorkRequestMessage}: a 24-byte header, then the bytes gathered from its scatter/gather list), fragmented into VFRAGs, acknowledged,
 * retransmitted, checked by CRC32C and delivered in order (seed 003 &sect;4.2):
 * <ul>
 * <li>SEND / SEND_WITH_IMM: consumes the oldest posted receive, like RC &mdash; of this queue pair, or of the
 *     {@link DatagramSharedReceiveQueue} it was created with (the node's shared pool); when none is posted the
 *     message waits in DR and its credit holds the peer back (no receiver-not-ready retries needed).</li>
 * <li>RDMA_WRITE / RDMA_WRITE_WITH_IMM: the receiving side places the bytes itself, only inside a window a CTS of
 *     its node granted ({@link WriteGrants}); anything else fails the queue pair with REM_ACCESS_ERR.</li>
 * <li>RDMA_READ and the atomics: refused ({@link io.rdmaflux.core.channel.ChannelCapabilities#rdmaRead()} is false for the kind).</li>
 * </ul>
 * <b>One copy on receipt.</b> The message that is next in order, with no earlier one waiting for a receive, is placed
 * by DR VFRAG by VFRAG straight into its destination ({@link MessagePlacement}): a SEND's posted receive (taken when
 * its first VFRAG arrives, if its first scatter/gather entry holds it), a WRITE's granted window. Otherwise (no
 * receive posted yet, a receive of several entries, a malformed or unauthorised message) DR reassembles it on the
 * heap and it is placed from there when a receive is posted, as before.
 * A send completes (signalled ones make a completion) when DR acknowledged its whole message, in posting order,
 * as RC's do. When DR gives up on the peer ({@link DrEndpoint#failure()}) the queue pair goes to ERROR: the oldest
 * outstanding send completes with RETRY_EXC_ERR, everything else with WR_FLUSH_ERR.
 *
 * <p>{@link #localEndpoint()} is the rail's ({@link DatagramRail#localEndpoint}): on UD the rail's UD queue pair number
 * as {@code qpn} and this queue pair's tag as {@code startPsn} (a UD share has no PSN of its own to announce: DR's
 * PSNs start at {@link DrConfig#firstPsn()}); on RC the carrying RC queue pair's. Its {@code mtuBytes} is the largest
 * datagram the rail takes: DR sends the peer none larger.
 *
 * <p><b>Concurrency:</b> the progress thread of the node; not thread-safe.
 */
final class ReliableDatagramQp implements QueuePair {
    static final int MESSAGE_HEADER_BYTES = WorkRequestMessage.HEADER_BYTES;

    private record PendingSend(long wrId, WrOpcode opcode, boolean signaled, int length) {
    }

    private final DatagramRail rail;
    private final WriteGrants grants;
    private final QpInitAttributes attributes;
    private final DatagramCompletionQueue cq;
    private final DrConfig config;
    private final int qpNumber;
    private final ArrayDeque<PendingSend> sends = new ArrayDeque<>();
    private final ArrayDeque<PostedReceive> receives = new ArrayDeque<>();
    /** The node's shared receive queue of the rail's reliable UD channels this queue pair consumes instead of its own receives, or null. */
    private final @Nullable DatagramSharedReceiveQueue srq;
    private final WorkRequestMessage codec = new WorkRequestMessage();
    private QpState state = QpState.RESET;
    private @Nullable DrEndpoint endpoint;
    private @Nullable QpEndpoint remote;
    private long completedSends;
    private byte @Nullable [] stalled;
    private long nowNs;
    private boolean closed;
    private volatile int receiveShare = Integer.MAX_VALUE;
    private final Placement placement = new Placement();

    ReliableDatagramQp(DatagramRail rail, WriteGrants grants, QpInitAttributes attributes, DatagramCompletionQueue cq, DrConfig config) {
        if (attributes.type() != QpType.RC) {
            throw new VerbsException("a reliable datagram queue pair emulates RC only, not " + attributes.type());
        }
        this.rail = rail;
        this.grants = grants;
        this.attributes = attributes;
        this.cq = cq;
        if (attributes.srq() != null && !(attributes.srq() instanceof DatagramSharedReceiveQueue)) {
            throw new VerbsException("a reliable UD queue pair consumes only a shared receive queue made for reliable UD channels "
                + "(UdChannelProvider.createSharedReceiveQueue), not " + attributes.srq());
        }
        this.srq = (DatagramSharedReceiveQueue) attributes.srq();
        // DR gives up on the peer no sooner than the RC transport the node asked for would ((retryCount + 1) x
        // retryTimeoutNs without an ACK): a loaded host's stalled progress thread must not look like a dead peer sooner
        // on UD than on RC
        this.config = config.toBuilder().datagramBytes(Math.min(config.datagramBytes(), rail.drDatagramBytes()))
            .maxRtoNs(Math.max(config.maxRtoNs(), attributes.retryTimeoutNs()))
            .maxRetriesPerRail(Math.max(config.maxRetriesPerRail(), Math.min(1000, attributes.retryCount())))
            .railTimeoutNs(Math.max(config.railTimeoutNs(), (attributes.retryCount() + 1L) * attributes.retryTimeoutNs())).build();
        this.qpNumber = rail.register(this);
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public QpType type() {
        return QpType.RC;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public Port port() {
        return rail.port();
    }

    @Override
    public QpInitAttributes attributes() {
        return attributes;
    }

    @Override
    public QpEndpoint localEndpoint() {
        return rail.localEndpoint(qpNumber);
    }

    @Override
    public void init() {
        require(QpState.RESET, "init");
        state = QpState.INIT;
    }

    @Override
    public void readyToReceive(QpEndpoint peer) {
        require(QpState.INIT, "readyToReceive");
        int peerId = rail.connect(qpNumber, peer);
        this.remote = peer;
        String name = rail.describe(peer);
        // the peer's rail may take smaller datagrams than ours (its MTU, or its RC DR slots follow its bufferBytes)
        DrConfig c = peer.mtuBytes() > DrDatagram.HEADER_BYTES && peer.mtuBytes() < config.datagramBytes()
            ? config.toBuilder().datagramBytes(peer.mtuBytes()).build() : config;
        this.endpoint = new DrEndpoint(c, qpNumber, peerId, name, 1, (r, d, len, psn) -> rail.send(peer, d, len, this, psn), nowNs);
        endpoint.receiveBudget(receiveShare);
        endpoint.placement(placement);
        state = QpState.RTR;
    }

    @Override
    public void readyToReceive() {
        throw new VerbsException("QP " + qpNumber + " has RC semantics; call readyToReceive(remote endpoint)");
    }

    @Override
    public void readyToSend() {
        require(QpState.RTR, "readyToSend");
        state = QpState.RTS;
    }

    private void require(QpState s, String what) {
        if (closed || state != s) {
            throw new VerbsException("QP " + qpNumber + " cannot " + what + " in state " + (closed ? "CLOSED" : state) + "; it needs " + s);
        }
    }

    @Override
    public void toError() {
        fail(WcStatus.WR_FLUSH_ERR, "moved to ERROR");
    }

    @Override
    public boolean postSend(SendWorkRequest wr) {
        if (closed || (state != QpState.RTS && state != QpState.ERROR)) {
            throw new VerbsException("QP " + qpNumber + " cannot post a send in state " + (closed ? "CLOSED" : state));
        }
        WrOpcode op = wr.opcode();
        if (op == WrOpcode.RDMA_READ) {
            throw new VerbsException("a reliable UD queue pair carries no RDMA READ (ChannelKind.RELIABLE_UD has no READ rendezvous)");
        }
        if (op.isAtomic()) {
            throw new VerbsException("a reliable UD queue pair carries no atomics (" + op + "): DR messages have no response to bring "
                + "the original value back; run atomics over an RC rail");
        }
        if (state == QpState.ERROR) {
            cq.add(new WorkCompletion().set(wr.wrId(), WcStatus.WR_FLUSH_ERR, sendOpcode(op), 0, false, 0, qpNumber, 0, "QP in ERROR"));
            return true;
        }
        if (sends.size() >= attributes.maxSendWr()) {
            return false;
        }
        long total = wr.totalLength();
        if (total + MESSAGE_HEADER_BYTES > config.maxMessageBytes()) {
            cq.add(new WorkCompletion().set(wr.wrId(), WcStatus.LOC_LEN_ERR, sendOpcode(op), 0, false, 0, qpNumber, 0,
                "work request of " + total + " bytes exceeds the DR message limit of " + (config.maxMessageBytes() - MESSAGE_HEADER_BYTES)));
            return true;
        }
        // an inline request's buffer is the poster's again once posted: copy it now; any other is read in place
        // as DR makes the VFRAGs (it stays unchanged until this request completes, after DR's acknowledgement)
        if (wr.inline()) {
            endpoint().offer(codec.encode(wr, (int) total));
        } else {
            endpoint().offer(codec.source(wr, (int) total));
        }
        sends.add(new PendingSend(wr.wrId(), op, wr.signaled(), (int) total));
        return true;
    }

    private static WcOpcode sendOpcode(WrOpcode op) {
        return op == WrOpcode.RDMA_WRITE || op == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RDMA_WRITE : WcOpcode.SEND;
    }

    @Override
    public boolean postReceive(ReceiveWorkRequest wr) {
        if (closed || state == QpState.RESET) {
            throw new VerbsException("QP " + qpNumber + " cannot post a receive in state " + (closed ? "CLOSED" : state));
        }
        if (state == QpState.ERROR) {
            cq.add(new WorkCompletion().set(wr.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpNumber, 0, "QP in ERROR"));
            return true;
        }
        if (srq != null) {
            throw new VerbsException("QP " + qpNumber + " consumes a shared receive queue; post receives to it, not to the queue pair");
        }
        if (receives.size() + (placement.receive != null ? 1 : 0) >= attributes.maxReceiveWr()) {
            return false;
        }
        receives.add(PostedReceive.of(wr));
        return true;
    }

    /**
     * Whether this queue pair owes its peer nothing more: no ACK owed for what arrived and none of its datagrams still
     * in a send slot. Before a connection closes its rails it runs them until this holds (the peer's last sends
     * complete only with this side's ACK, which a queue pair closed a moment too early would never send); a queue
     * pair in ERROR is settled.
     */
    boolean settled() {
        DrEndpoint ep = endpoint;
        return ep == null || closed || state == QpState.ERROR || (!ep.ackOwed() && !rail.sending(this));
    }

    /** What carries this queue pair's datagrams. */
    DatagramRail rail() {
        return rail;
    }

    /** A datagram for this queue pair arrived on the rail. */
    void onDatagram(DirectBuffer buffer, int offset, int length, long nowNs) {
        DrEndpoint ep = endpoint;
        if (ep != null && state != QpState.ERROR && !closed) {
            ep.onDatagram(0, buffer, offset, length, nowNs);
        }
    }

    /**
     * The RC queue pair that carried this queue pair's datagrams failed (its retries ran out, or the peer's went
     * away): this one fails with {@code status}, as an RC queue pair whose transport gave up.
     */
    void onRailFailure(WcStatus status, String detail) {
        fail(status, detail);
    }

    /** This peer's grant from the rail's receive pool, VFRAGs (see {@link UdPort#sharePerPeer()}). */
    void receiveShare(int vfrags) {
        receiveShare = vfrags;
    }

    void onLocalCompletion(int psn) {
        DrEndpoint ep = endpoint;
        if (ep != null) {
            ep.onLocalCompletion(psn);
        }
    }

    /** Runs DR, completes acknowledged sends, places arrived messages. @return work done */
    int doWork(long nowNs) {
        this.nowNs = nowNs;
        DrEndpoint ep = endpoint;
        if (ep == null || closed || state == QpState.ERROR) {
            return 0;
        }
        if (ep.receiveBudget() != Math.min(receiveShare, config.receiveBufferVfrags())) {
            ep.receiveBudget(receiveShare);
        }
        int work = ep.doWork(nowNs);
        long acked = ep.messagesAcknowledged();
        while (completedSends < acked) {
            PendingSend p = sends.poll();
            completedSends++;
            if (p != null && p.signaled) {
                cq.add(new WorkCompletion().set(p.wrId, WcStatus.SUCCESS, sendOpcode(p.opcode), p.length, false, 0, qpNumber, 0, ""));
            }
            work++;
        }
        int placed = 0;
        while (state != QpState.ERROR) {
            byte[] m = stalled != null ? stalled : ep.poll();
            if (m == null) {
                break;
            }
            stalled = null;
            if (!place(m)) {
                stalled = m;
                break;
            }
            ep.recycle(m); // placed: its bytes are in registered memory now
            placed++;
        }
        if (placed > 0) {
            work += placed + ep.doWork(nowNs);
        }
        RdmaException failure = ep.failure();
        if (failure != null && state != QpState.ERROR) {
            fail(WcStatus.RETRY_EXC_ERR, failure.getMessage());
            work++;
        }
        return work;
    }

    /** When DR must run next, ns ({@code Long.MAX_VALUE}: only new input gives it work). */
    long nextDeadlineNs() {
        DrEndpoint ep = endpoint;
        return ep == null || state == QpState.ERROR ? Long.MAX_VALUE : ep.nextDeadlineNs();
    }

    /** @return false when it needs a receive and none is posted */
    private boolean place(byte[] m) {
        WorkRequestMessage c = codec;
        if (!c.decode(m)) {
            fail(WcStatus.REM_INV_REQ_ERR, "malformed work request message from the peer (op " + c.op + ", length " + c.length + ")");
            return true;
        }
        int op = c.op;
        int imm = c.imm;
        int length = c.length;
        if (c.isWrite()) {
            if (!grants.allows(c.rkey, c.address, length)) {
                fail(WcStatus.REM_ACCESS_ERR, "the peer's RDMA WRITE of " + length + " bytes at 0x" + Long.toHexString(c.address)
                    + " with rkey 0x" + Integer.toHexString(c.rkey) + " lies in no window a CTS granted");
                return true;
            }
            c.place(m);
            if (op == WorkRequestMessage.OP_WRITE) {
                return true;
            }
        }
        // with a shared receive queue a buffer is taken only for a message that is here (or, by Placement, whose
        // first VFRAG is), by the queue pair placing it: a closed or failed queue pair gives back what it took
        PostedReceive r = srq != null ? srq.take() : receives.poll();
        if (r == null) {
            return false;
        }
        if (op == WorkRequestMessage.OP_WRITE_IMM) {
            cq.add(new WorkCompletion().set(r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, true, imm, qpNumber, 0, ""));
            return true;
        }
        if (length > r.total()) {
            cq.add(new WorkCompletion().set(r.wrId(), WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, qpNumber, 0,
                "message of " + length + " bytes exceeds the posted receive of " + r.total()));
            fail(WcStatus.WR_FLUSH_ERR, "a receive was too short");
            return true;
        }
        c.scatter(m, r.addresses(), r.lengths());
        cq.add(new WorkCompletion().set(r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, length, op == WorkRequestMessage.OP_SEND_IMM, op == WorkRequestMessage.OP_SEND_IMM ? imm : 0,
            qpNumber, 0, ""));
        return true;
    }

    /**
     * The destination of the message DR is placing: a posted receive taken for a SEND (or a WRITE with immediate),
     * the granted window of a WRITE. Checks are those of {@link #place}; a message they would refuse is left to it.
     */
    private final class Placement implements MessagePlacement {
        private final UnsafeBuffer target = new UnsafeBuffer(new byte[0]);
        private @Nullable PostedReceive receive;
        private int op;
        private int imm;
        private int length;

        @Override
        public @Nullable MutableDirectBuffer begin(int messageLength, DirectBuffer firstVfrag, int offset, int vfragLength) {
            WorkRequestMessage c = codec;
            if (stalled != null || closed || state == QpState.ERROR || vfragLength < MESSAGE_HEADER_BYTES
                || !c.decodeHeader(firstVfrag, offset, messageLength) || c.length == 0) {
                return null;
            }
            if (c.isWrite() && !grants.allows(c.rkey, c.address, c.length)) {
                return null;
            }
            if (c.op != WorkRequestMessage.OP_WRITE) {
                PostedReceive r = srq != null ? srq.take() : receives.poll();
                if (r == null) {
                    return null;
                }
                receive = r;
                if (c.op != WorkRequestMessage.OP_WRITE_IMM && (r.lengths().length == 0 || r.lengths()[0] < c.length)) {
                    giveBack();
                    return null;
                }
                if (c.op != WorkRequestMessage.OP_WRITE_IMM) {
                    target.wrap(r.addresses()[0], c.length);
                }
            }
            if (c.isWrite()) {
                target.wrap(c.address, c.length);
            }
            op = c.op;
            imm = c.imm;
            length = c.length;
            return target;
        }

        @Override
        public int skipBytes() {
            return MESSAGE_HEADER_BYTES;
        }

        @Override
        public void placed() {
            PostedReceive r = receive;
            receive = null;
            if (r == null) {
                return; // a WRITE: nothing completes on this side
            }
            if (op == WorkRequestMessage.OP_WRITE_IMM) {
                cq.add(new WorkCompletion().set(r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, true, imm, qpNumber, 0, ""));
            } else {
                boolean withImm = op == WorkRequestMessage.OP_SEND_IMM;
                cq.add(new WorkCompletion().set(r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, length, withImm, withImm ? imm : 0, qpNumber, 0, ""));
            }
        }

        @Override
        public void abandoned() {
            giveBack();
        }

        /** A receive taken for a message that will not complete goes back where it came from, at the head. */
        void giveBack() {
            PostedReceive r = receive;
            receive = null;
            if (r != null) {
                if (srq != null) {
                    srq.giveBack(r);
                } else {
                    receives.addFirst(r);
                }
            }
        }
    }

    /** To ERROR: the oldest outstanding send completes with {@code status}, the rest and every receive flushed. */
    private void fail(WcStatus status, String detail) {
        if (state == QpState.ERROR) {
            return;
        }
        state = QpState.ERROR;
        boolean first = true;
        for (PendingSend p; (p = sends.poll()) != null; ) {
            cq.add(new WorkCompletion().set(p.wrId, first ? status : WcStatus.WR_FLUSH_ERR, sendOpcode(p.opcode), 0, false, 0, qpNumber, 0,
                first ? detail : "flushed"));
            first = false;
        }
        placement.giveBack();
        for (PostedReceive r; (r = receives.poll()) != null; ) {
            cq.add(new WorkCompletion().set(r.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpNumber, 0, "flushed"));
        }
        stalled = null;
    }

    private DrEndpoint endpoint() {
        DrEndpoint ep = endpoint;
        if (ep == null) {
            throw new VerbsException("QP " + qpNumber + " is not connected");
        }
        return ep;
    }

    /** This peer's credit grant now, VFRAGs, or -1 before it connected. */
    int receiveBudget() {
        DrEndpoint ep = endpoint;
        return ep == null ? -1 : ep.receiveBudget();
    }

    /** The DR counters of this queue pair's peer, or null before it connected. */
    @Nullable DrStats stats() {
        DrEndpoint ep = endpoint;
        return ep == null ? null : ep.stats();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        placement.giveBack();
        sends.clear();
        receives.clear();
        rail.release(qpNumber);
    }

    @Override
    public String toString() {
        return "ReliableDatagramQp{tag=" + qpNumber + ", state=" + state + ", remote=" + remote + "}";
    }
}
