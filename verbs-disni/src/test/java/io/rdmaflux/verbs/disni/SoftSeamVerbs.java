package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The verbs half of {@link SoftSeam}: contexts, PDs, MRs, CQs and QPs as soft-provider objects, and
 * DiSNI's stateful verb calls as classes that keep the work requests they were built from (as DiSNI
 * serializes them) and let a {@code getWrMod} change exactly what DiSNI 2.0's lets change.
 *
 * <p>Native QP numbers are the soft QP's plus {@value #QPN_OFFSET}, so a provider that confused them
 * with its own QP numbers would be caught. Error completions carry opcode {@value #UNDEFINED_OPCODE}
 * (verbs leaves it undefined), so a provider that relied on it would be caught too.
 */
final class SoftSeamVerbs {
    static final int QPN_OFFSET = 0x40000;
    static final int UNDEFINED_OPCODE = 0x7F;

    private final SoftSeam seam;

    SoftSeamVerbs(SoftSeam seam) {
        this.seam = seam;
    }

    RdmaSeam.Context context(Device device) {
        return new RdmaSeam.Context() {
            @Override
            public RdmaSeam.Pd allocPd() {
                return new Pd(device.allocateProtectionDomain());
            }

            @Override
            public RdmaSeam.Cq createCq(int entries) {
                return new Cq(device.createCompletionQueue(entries));
            }
        };
    }

    Qp createQp(Device device, RdmaSeam.Pd pd, RdmaSeam.Cq cq, IbvQPInitAttr a, RdmaSeam.QpTimers timers) throws IOException {
        if (a.getQp_type() != NativeCodes.QPT_RC) {
            throw new IOException("rdma_create_qp: EINVAL (qp_type " + a.getQp_type() + ", this double has RC only)");
        }
        if (a.getSend_cq() != null || a.getRecv_cq() != null) {
            throw new IOException("rdma_create_qp: the double takes the CQ as a parameter; the attributes name a DiSNI IbvCQ");
        }
        try {
            QpInitAttributes attrs = QpInitAttributes.builder(QpType.RC, device.port(1)).cq(((Cq) cq).soft)
                .maxSendWr(a.cap().getMax_send_wr()).maxReceiveWr(a.cap().getMax_recv_wr()).maxInlineBytes(a.cap().getMax_inline_data())
                .retryCount(timers.retryCount()).retryTimeoutNs(timers.retryTimeoutNs()).rnrRetryCount(timers.rnrRetryCount())
                .rnrTimeoutNs(timers.rnrTimeoutNs()).build();
            QueuePair soft = ((Pd) pd).soft.createQueuePair(attrs);
            soft.init(); // rdma_create_qp leaves a QP on a bound id in INIT
            synchronized (seam) {
                seam.counters.qpsCreated++;
            }
            return new Qp(soft);
        } catch (VerbsException e) {
            throw new IOException("rdma_create_qp: " + e.getMessage(), e);
        }
    }

    static final class Pd implements RdmaSeam.Pd {
        final ProtectionDomain soft;

        Pd(ProtectionDomain soft) {
            this.soft = soft;
        }

        @Override
        public RdmaSeam.Mr regMr(ByteBuffer buffer, int access) throws IOException {
            try {
                MemoryRegion mr = soft.registerMemory(buffer, NativeCodes.spiAccess(access));
                return new RdmaSeam.Mr() {
                    @Override
                    public long address() {
                        return mr.address();
                    }

                    @Override
                    public int length() {
                        return (int) mr.length();
                    }

                    @Override
                    public int lkey() {
                        return mr.lkey();
                    }

                    @Override
                    public int rkey() {
                        return mr.rkey();
                    }

                    @Override
                    public void dereg() {
                        mr.deregister();
                    }
                };
            } catch (VerbsException e) {
                throw new IOException("ibv_reg_mr: " + e.getMessage(), e);
            }
        }

        @Override
        public void dealloc() {
            soft.close();
        }
    }

    final class Cq implements RdmaSeam.Cq {
        final CompletionQueue soft;

        Cq(CompletionQueue soft) {
            this.soft = soft;
        }

        @Override
        public SVCPollCq poll(IbvWC[] wcs) {
            seam.counters.pollCallsBuilt++;
            return new PollCall(soft, wcs);
        }

        @Override
        public void destroy() {
            soft.close();
        }
    }

    /** ibv_poll_cq over the soft CQ, filling the caller's IbvWC objects with verbs.h codes. */
    final class PollCall extends SVCPollCq implements CompletionSink {
        private final CompletionQueue cq;
        private final IbvWC[] wcs;
        private int polls;
        private boolean valid = true;

        PollCall(CompletionQueue cq, IbvWC[] wcs) {
            this.cq = cq;
            this.wcs = wcs;
        }

        @Override
        public SVCPollCq execute() throws IOException {
            if (!valid) {
                throw new IOException("ibv_poll_cq: the stateful call was freed");
            }
            seam.counters.pollExecutes++;
            polls = 0;
            cq.poll(wcs.length, this);
            return this;
        }

        @Override
        public void onCompletion(WorkCompletion wc) {
            IbvWC n = wcs[polls++];
            boolean ok = wc.isSuccess();
            n.setWr_id(wc.wrId());
            n.setStatus(NativeCodes.nativeStatus(wc.status()));
            n.setOpcode(ok ? NativeCodes.nativeWcOpcode(wc.opcode()) : UNDEFINED_OPCODE);
            n.setByte_len(wc.byteLength());
            n.setImm_data(wc.immediate());
            n.setWc_flags(wc.hasImmediate() ? NativeCodes.WC_FLAG_WITH_IMM : 0);
            n.setQp_num(wc.qpNumber() + QPN_OFFSET);
            n.setSrc_qp(0);
            n.setVendor_err(ok ? 0 : 0x81);
        }

        @Override
        public int getPolls() {
            return polls;
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public SVCPollCq free() {
            valid = false;
            return this;
        }
    }

    final class Qp implements RdmaSeam.Qp {
        final QueuePair soft;

        Qp(QueuePair soft) {
            this.soft = soft;
        }

        @Override
        public int qpNum() {
            return soft.qpNumber() + QPN_OFFSET;
        }

        @Override
        public SVCPostSend postSend(List<IbvSendWR> wrs) {
            seam.counters.sendCallsBuilt++;
            return new PostSendCall(this, wrs);
        }

        @Override
        public SVCPostRecv postRecv(List<IbvRecvWR> wrs) {
            seam.counters.recvCallsBuilt++;
            return new PostRecvCall(this, wrs);
        }

        void destroy() {
            soft.close();
            synchronized (seam) {
                seam.counters.qpsDestroyed++;
            }
        }
    }

    /** A serialized ibv_send_wr: the fields DiSNI 2.0 lets a SendWRMod change are mutable, the rest fixed. */
    static final class SendWr implements SVCPostSend.SendWRMod, SVCPostSend.RdmaMod {
        private long wrId;
        private int sendFlags;
        private final int opcode;
        private final int immData;
        private long remoteAddr;
        private int rkey;
        private int reserved;
        private final Sge[] sges;

        SendWr(IbvSendWR wr) {
            wrId = wr.getWr_id();
            sendFlags = wr.getSend_flags();
            opcode = wr.getOpcode();
            immData = wr.getImm_data();
            remoteAddr = wr.getRdma().getRemote_addr();
            rkey = wr.getRdma().getRkey();
            sges = new Sge[wr.getNum_sge()];
            for (int i = 0; i < sges.length; i++) {
                sges[i] = new Sge(wr.getSg_list().get(i));
            }
        }

        @Override public void setWr_id(long v) { wrId = v; }
        @Override public void setSend_flags(int v) { sendFlags = v; }
        @Override public long getWr_id() { return wrId; }
        @Override public int getNum_sge() { return sges.length; }
        @Override public int getOpcode() { return opcode; }
        @Override public int getSend_flags() { return sendFlags; }
        @Override public SVCPostSend.RdmaMod getRdmaMod() { return this; }
        @Override public SVCPostSend.SgeMod getSgeMod(int i) { return sges[i]; }
        @Override public void setRemote_addr(long v) { remoteAddr = v; }
        @Override public long getRemote_addr() { return remoteAddr; }
        @Override public void setRkey(int v) { rkey = v; }
        @Override public int getRkey() { return rkey; }
        @Override public void setReserved(int v) { reserved = v; }
        @Override public int getReserved() { return reserved; }
    }

    static final class Sge implements SVCPostSend.SgeMod {
        private long addr;
        private int length;
        private int lkey;

        Sge(IbvSge s) {
            addr = s.getAddr();
            length = s.getLength();
            lkey = s.getLkey();
        }

        @Override public void setAddr(long v) { addr = v; }
        @Override public long getAddr() { return addr; }
        @Override public void setLength(int v) { length = v; }
        @Override public int getLength() { return length; }
        @Override public void setLkey(int v) { lkey = v; }
        @Override public int getLkey() { return lkey; }
    }

    private static void postable(QueuePair qp, String call, boolean send) throws IOException {
        QpState s = qp.state();
        if (s == QpState.RESET || (send && (s == QpState.INIT || s == QpState.RTR))) {
            throw new IOException(call + ": EINVAL (QP in " + s + ")");
        }
    }

    /** ibv_post_send of a fixed list of work requests, translated onto the soft QP at each execute. */
    final class PostSendCall extends SVCPostSend {
        private final Qp qp;
        private final SendWr[] wrs;
        private final SendWorkRequest soft = new SendWorkRequest();
        private boolean valid = true;

        PostSendCall(Qp qp, List<IbvSendWR> list) {
            this.qp = qp;
            this.wrs = new SendWr[list.size()];
            for (int i = 0; i < wrs.length; i++) {
                IbvSendWR w = list.get(i);
                if (w.getNum_sge() != w.getSg_list().size()) {
                    throw new IllegalArgumentException("ibv_send_wr num_sge " + w.getNum_sge() + " but " + w.getSg_list().size() + " SGEs");
                }
                wrs[i] = new SendWr(w);
            }
        }

        @Override
        public SVCPostSend execute() throws IOException {
            if (!valid) {
                throw new IOException("ibv_post_send: the stateful call was freed");
            }
            postable(qp.soft, "ibv_post_send", true);
            seam.counters.sendExecutes++;
            for (SendWr w : wrs) {
                soft.reset().wrId(w.wrId).opcode(NativeCodes.wrOpcode(w.opcode))
                    .signaled((w.sendFlags & NativeCodes.SEND_SIGNALED) != 0).inline((w.sendFlags & NativeCodes.SEND_INLINE) != 0)
                    .immediate(w.immData).remoteAddress(w.remoteAddr).rkey(w.rkey);
                for (Sge s : w.sges) {
                    soft.addSge(s.addr, s.length, s.lkey);
                }
                try {
                    if (!qp.soft.postSend(soft)) {
                        throw new IOException("ibv_post_send: ENOMEM (send queue full)");
                    }
                } catch (VerbsException e) {
                    throw new IOException("ibv_post_send: " + e.getMessage(), e);
                }
            }
            return this;
        }

        @Override
        public SendWRMod getWrMod(int i) throws IOException {
            if (!valid) {
                throw new IOException("getWrMod: the stateful call was freed");
            }
            return wrs[i];
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public SVCPostSend free() {
            valid = false;
            return this;
        }
    }

    /** ibv_post_recv of a fixed list of work requests (DiSNI 2.0 lets nothing of them change). */
    final class PostRecvCall extends SVCPostRecv {
        private final Qp qp;
        private final ReceiveWorkRequest[] wrs;
        private boolean valid = true;

        PostRecvCall(Qp qp, List<IbvRecvWR> list) {
            this.qp = qp;
            this.wrs = new ReceiveWorkRequest[list.size()];
            int k = 0;
            for (IbvRecvWR w : list) {
                ReceiveWorkRequest r = new ReceiveWorkRequest().wrId(w.getWr_id());
                if (w.getNum_sge() != w.getSg_list().size()) {
                    throw new IllegalArgumentException("ibv_recv_wr num_sge " + w.getNum_sge() + " but " + w.getSg_list().size() + " SGEs");
                }
                for (IbvSge s : w.getSg_list()) {
                    r.addSge(s.getAddr(), s.getLength(), s.getLkey());
                }
                wrs[k++] = r;
            }
        }

        @Override
        public SVCPostRecv execute() throws IOException {
            if (!valid) {
                throw new IOException("ibv_post_recv: the stateful call was freed");
            }
            postable(qp.soft, "ibv_post_recv", false);
            seam.counters.recvExecutes++;
            for (ReceiveWorkRequest r : wrs) {
                try {
                    if (!qp.soft.postReceive(r)) {
                        throw new IOException("ibv_post_recv: ENOMEM (receive queue full)");
                    }
                } catch (VerbsException e) {
                    throw new IOException("ibv_post_recv: " + e.getMessage(), e);
                }
            }
            return this;
        }

        @Override
        public RecvWRMod getWrMod(int i) {
            long id = wrs[i].wrId();
            return () -> id;
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public SVCPostRecv free() {
            valid = false;
            return this;
        }
    }
}
