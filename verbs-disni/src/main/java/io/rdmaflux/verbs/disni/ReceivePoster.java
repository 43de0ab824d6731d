package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostRecv;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.ScatterGatherEntry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.Long2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Posts a QP's receive work requests through stateful verb calls ({@link SVCPostRecv}). DiSNI 2.0's
 * {@code RecvWRMod} changes nothing of a built call, so a call is kept per receive: keyed by the
 * work request id, checked against its SGE list, rebuilt when the list differs. A receive buffer
 * reposted with the same id and SGEs (what channels do with their receive slots) re-executes its call
 * with no allocation.
 *
 * <p>The native wr_id is {@link DisniDevice#RECV_TAG} | the call's index, so a completion (whose opcode
 * verbs leaves undefined on error) is known to be a receive and leads back to the caller's id. At most
 * {@code 4 * maxReceiveWr} calls are kept; beyond that, calls with nothing outstanding are freed.
 *
 * <p><b>Concurrency:</b> not thread-safe; the QP's lock guards it.
 */
final class ReceivePoster {
    private static final class Entry {
        final int index;
        long wrId;
        int numSge;
        final long[] addr = new long[ReceiveWorkRequest.MAX_SGE];
        final int[] len = new int[ReceiveWorkRequest.MAX_SGE];
        final int[] lkey = new int[ReceiveWorkRequest.MAX_SGE];
        @Nullable SVCPostRecv call;
        int outstanding;

        Entry(int index) {
            this.index = index;
        }

        boolean matches(ReceiveWorkRequest wr) {
            if (wr.numSge() != numSge) {
                return false;
            }
            for (int i = 0; i < numSge; i++) {
                ScatterGatherEntry s = wr.sge(i);
                if (s.address() != addr[i] || s.length() != len[i] || s.lkey() != lkey[i]) {
                    return false;
                }
            }
            return true;
        }
    }

    private final RdmaSeam.Qp qp;
    private final int maxEntries;
    private final Long2ObjectHashMap<Entry> byWrId = new Long2ObjectHashMap<>();
    private final List<@Nullable Entry> byIndex = new ArrayList<>();
    private final IntArrayList freeIndices = new IntArrayList();
    private long builds;

    ReceivePoster(RdmaSeam.Qp qp, int maxReceiveWr) {
        this.qp = qp;
        this.maxEntries = 4 * maxReceiveWr;
    }

    /** Stateful verb calls built so far. */
    long builds() {
        return builds;
    }

    /** Posts {@code wr}. @throws IOException when the native post fails */
    void post(ReceiveWorkRequest wr) throws IOException {
        Entry e = byWrId.get(wr.wrId());
        if (e == null || !e.matches(wr)) {
            if (e != null && e.outstanding == 0) {
                release(e);
            }
            if (byWrId.size() >= maxEntries) {
                evictIdle();
            }
            e = build(wr);
            byWrId.put(wr.wrId(), e);
        }
        e.call.execute();
        e.outstanding++;
    }

    /**
     * The caller's wr id of a completed native receive, and the bookkeeping of its completion.
     *
     * @throws IllegalStateException if {@code nativeWrId} names no posted receive
     */
    long completed(long nativeWrId) {
        int index = (int) (nativeWrId & ~DisniDevice.RECV_TAG);
        Entry e = index < byIndex.size() ? byIndex.get(index) : null;
        if (e == null || e.outstanding == 0) {
            throw new IllegalStateException("receive completion with native wr_id 0x" + Long.toHexString(nativeWrId) + " matches no posted receive");
        }
        e.outstanding--;
        long wrId = e.wrId;
        if (e.outstanding == 0 && byWrId.get(wrId) != e) {
            release(e); // superseded by a call with other SGEs while this one was outstanding
        }
        return wrId;
    }

    private Entry build(ReceiveWorkRequest wr) throws IOException {
        int index = freeIndices.isEmpty() ? byIndex.size() : freeIndices.removeAt(freeIndices.size() - 1);
        Entry e = new Entry(index);
        e.wrId = wr.wrId();
        e.numSge = wr.numSge();
        LinkedList<IbvSge> sges = new LinkedList<>();
        for (int i = 0; i < e.numSge; i++) {
            ScatterGatherEntry s = wr.sge(i);
            e.addr[i] = s.address();
            e.len[i] = s.length();
            e.lkey[i] = s.lkey();
            IbvSge sge = new IbvSge();
            sge.setAddr(s.address());
            sge.setLength(s.length());
            sge.setLkey(s.lkey());
            sges.add(sge);
        }
        IbvRecvWR native_ = new IbvRecvWR();
        native_.setWr_id(DisniDevice.RECV_TAG | index);
        native_.setSg_list(sges);
        native_.setNum_sge(e.numSge);
        e.call = qp.postRecv(List.of(native_));
        builds++;
        if (index == byIndex.size()) {
            byIndex.add(e);
        } else {
            byIndex.set(index, e);
        }
        return e;
    }

    private void release(Entry e) {
        if (byWrId.get(e.wrId) == e) {
            byWrId.remove(e.wrId);
        }
        SVCPostRecv c = e.call;
        if (c != null) {
            c.free();
            e.call = null;
        }
        byIndex.set(e.index, null);
        freeIndices.addInt(e.index);
    }

    private void evictIdle() {
        List<Entry> idle = new ArrayList<>();
        for (Entry e : byWrId.values()) {
            if (e.outstanding == 0) {
                idle.add(e);
            }
        }
        idle.forEach(this::release);
    }

    /** Frees every call. */
    void free() {
        for (Entry e : byIndex) {
            if (e != null && e.call != null) {
                e.call.free();
                e.call = null;
            }
        }
        byIndex.clear();
        byWrId.clear();
        freeIndices.clear();
    }
}
