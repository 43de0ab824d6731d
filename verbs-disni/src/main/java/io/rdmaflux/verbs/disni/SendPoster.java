package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostSend;
import io.rdmaflux.verbs.ScatterGatherEntry;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;
import org.agrona.collections.Long2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Posts a QP's send work requests through stateful verb calls ({@link SVCPostSend}) built once and
 * re-executed: one call per (opcode, SGE count), each over one {@code ibv_send_wr}. A post changes only
 * what DiSNI 2.0's {@code SendWRMod} exposes (wr_id, send_flags, remote address, rkey, each SGE's
 * address, length and lkey), so in steady state nothing is allocated per work request.
 *
 * <p><b>Deviation:</b> DiSNI 2.0 cannot change a built call's {@code imm_data}, so SEND_WITH_IMM and
 * RDMA_WRITE_WITH_IMM calls are kept per immediate value too, at most {@value #MAX_IMMEDIATE_CALLS} per
 * QP (all freed and rebuilt when that is exceeded): allocation-free while a QP uses few distinct
 * immediates (flags, credit counts), one build per post when every immediate differs. {@link #builds()}
 * counts the builds.
 *
 * <p><b>Concurrency:</b> not thread-safe; the QP's lock guards it.
 */
final class SendPoster {
    /** Most calls kept per QP for opcodes that carry an immediate. */
    static final int MAX_IMMEDIATE_CALLS = 64;

    private final RdmaSeam.Qp qp;
    private final SVCPostSend[][] plain = new SVCPostSend[WrOpcode.values().length][SendWorkRequest.MAX_SGE + 1];
    private final Long2ObjectHashMap<SVCPostSend> withImmediate = new Long2ObjectHashMap<>();
    private long builds;

    SendPoster(RdmaSeam.Qp qp) {
        this.qp = qp;
    }

    /** Stateful verb calls built so far. */
    long builds() {
        return builds;
    }

    /**
     * Posts {@code wr} as native work request {@code nativeWrId}.
     *
     * @param sendFlags {@code IBV_SEND_*} flags
     * @throws IOException when the native post fails
     */
    void post(SendWorkRequest wr, long nativeWrId, int sendFlags) throws IOException {
        WrOpcode op = wr.opcode();
        int n = wr.numSge();
        SVCPostSend call = call(op, n, wr.immediate());
        SVCPostSend.SendWRMod mod = call.getWrMod(0);
        mod.setWr_id(nativeWrId);
        mod.setSend_flags(sendFlags);
        if (op == WrOpcode.RDMA_WRITE || op == WrOpcode.RDMA_WRITE_WITH_IMM || op == WrOpcode.RDMA_READ) {
            SVCPostSend.RdmaMod rdma = mod.getRdmaMod();
            rdma.setRemote_addr(wr.remoteAddress());
            rdma.setRkey(wr.rkey());
        }
        for (int i = 0; i < n; i++) {
            ScatterGatherEntry sge = wr.sge(i);
            SVCPostSend.SgeMod s = mod.getSgeMod(i);
            s.setAddr(sge.address());
            s.setLength(sge.length());
            s.setLkey(sge.lkey());
        }
        call.execute();
    }

    private SVCPostSend call(WrOpcode op, int numSge, int immediate) throws IOException {
        if (op != WrOpcode.SEND_WITH_IMM && op != WrOpcode.RDMA_WRITE_WITH_IMM) {
            SVCPostSend c = plain[op.ordinal()][numSge];
            if (c == null) {
                c = build(op, numSge, 0);
                plain[op.ordinal()][numSge] = c;
            }
            return c;
        }
        long key = ((long) op.ordinal() << 40) | ((long) numSge << 32) | (immediate & 0xFFFF_FFFFL);
        SVCPostSend c = withImmediate.get(key);
        if (c == null) {
            if (withImmediate.size() >= MAX_IMMEDIATE_CALLS) {
                freeImmediateCalls();
            }
            c = build(op, numSge, immediate);
            withImmediate.put(key, c);
        }
        return c;
    }

    private SVCPostSend build(WrOpcode op, int numSge, int immediate) throws IOException {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(NativeCodes.wrOpcode(op));
        wr.setImm_data(NativeCodes.toWireImmediate(immediate));
        LinkedList<IbvSge> sges = new LinkedList<>();
        for (int i = 0; i < numSge; i++) {
            sges.add(new IbvSge());
        }
        wr.setSg_list(sges);
        wr.setNum_sge(numSge);
        builds++;
        return qp.postSend(List.of(wr));
    }

    private void freeImmediateCalls() {
        withImmediate.values().forEach(SVCPostSend::free);
        withImmediate.clear();
    }

    /** Frees every call. */
    void free() {
        for (SVCPostSend[] row : plain) {
            for (int i = 0; i < row.length; i++) {
                @Nullable SVCPostSend c = row[i];
                if (c != null) {
                    c.free();
                    row[i] = null;
                }
            }
        }
        freeImmediateCalls();
    }
}
