package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.WcStatus;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The local memory behind a QP's send work requests: the SGEs of each {@link SendRing} slot checked
 * against the QP's protection domain ({@link RegionCheck}), gathered into what leaves (an inline copy
 * at post time, a frame's gather list, a datagram's own payload) and scattered into by what comes back
 * (an RDMA READ response's data, an atomic's original value). A bad SGE marks its slot LOC_PROT_ERR
 * ({@link SendRing#markError}) or is reported as a reason string; nothing here throws.
 *
 * <p>Thread-safety: {@link #copyInline} runs on the posting thread under the QP's post lock, before the
 * slot is published; everything else on the NIC's engine thread, after the slot is published, through the
 * engine's view of the send queue ({@link SendRing#engineTail}).
 */
final class SendSges {
    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final SendRing sq;

    SendSges(SoftDevice device, SoftProtectionDomain pd, SendRing sq) {
        this.device = device;
        this.pd = pd;
        this.sq = sq;
    }

    /**
     * Copies an inline payload at post time into the poster's generation {@code p} of the send queue: verbs
     * lets the caller reuse the memory as soon as post returns.
     */
    void copyInline(SendRing.Slots p, int slot) {
        ByteBuffer dst = p.inlineData;
        int pos = slot * p.inlineStride;
        for (int k = 0; k < p.numSge[slot]; k++) {
            int i = p.sgeIndex(slot, k);
            int len = p.sgeLength[i];
            SoftMemoryRegion mr = device.lookupLocal(p.sgeLkey[i]);
            String problem = RegionCheck.local(pd, mr, p.sgeLkey[i], p.sgeAddress[i], len, false);
            if (problem != null) {
                p.markError(slot, WcStatus.LOC_PROT_ERR, "inline SGE " + k + ": " + problem);
                return;
            }
            if (len > 0 && dst != null) {
                dst.put(pos, mr.base, (int) (p.sgeAddress[i] - mr.address()), len);
            }
            pos += len;
        }
    }

    /** Checks a slot's SGEs at transmit; marks the slot with LOC_PROT_ERR when one is bad. */
    void validate(int slot, boolean write) {
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            String problem = RegionCheck.local(pd, device.lookupLocal(sq.sgeLkey[i]), sq.sgeLkey[i], sq.sgeAddress[i],
                sq.sgeLength[i], write);
            if (problem != null) {
                sq.markError(slot, WcStatus.LOC_PROT_ERR, "SGE " + k + ": " + problem);
                return;
            }
        }
    }

    /** RDMA READ and atomics: the local SGEs receive data, so they need LOCAL_WRITE. */
    boolean checkReadTargets(int slot) {
        validate(slot, true);
        return sq.error[slot] == SendRing.NO_ERROR;
    }

    /**
     * Puts a slot's payload into the frame's gather list, checking each SGE (one key lookup per SGE);
     * on a bad SGE marks the slot LOC_PROT_ERR and returns false.
     */
    boolean gather(int slot, SoftFrame f) {
        if (sq.inline[slot]) {
            if (sq.length[slot] > 0) {
                f.addPayload(sq.inlineData, slot * sq.inlineStride, sq.length[slot]);
            }
            return true;
        }
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            int len = sq.sgeLength[i];
            int lkey = sq.sgeLkey[i];
            long addr = sq.sgeAddress[i];
            SoftMemoryRegion mr = device.lookupLocal(lkey);
            if (mr == null || mr.lkey() != lkey || !mr.isValid() || mr.pd() != pd || !mr.contains(addr, len)) {
                sq.markError(slot, WcStatus.LOC_PROT_ERR, "SGE " + k + ": " + RegionCheck.local(pd, mr, lkey, addr, len, false));
                return false;
            }
            if (len > 0) {
                f.addPayload(mr.base, (int) (addr - mr.address()), len, addr);
            }
        }
        return true;
    }

    /** Copies a datagram's payload ({@code len} bytes, SGEs already validated) into {@code own} from 0. */
    void copyDatagram(int slot, ByteBuffer own, int len) {
        if (sq.inline[slot]) {
            if (len > 0) {
                own.put(0, sq.inlineData, slot * sq.inlineStride, len);
            }
            return;
        }
        int pos = 0;
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            int l = sq.sgeLength[i];
            if (l > 0) {
                SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
                own.put(pos, mr.base, (int) (sq.sgeAddress[i] - mr.address()), l);
            }
            pos += l;
        }
    }

    /** Writes an atomic's original value into its 8-byte SGE; null, or why the SGE cannot take it. */
    @Nullable String placeAtomicResult(int slot, long original) {
        int i = sq.sgeIndex(slot, 0);
        SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
        String problem = RegionCheck.local(pd, mr, sq.sgeLkey[i], sq.sgeAddress[i], Long.BYTES, true);
        if (problem != null) {
            return sq.op(slot) + " result SGE: " + problem;
        }
        SoftAtomics.putNative(mr.base, (int) (sq.sgeAddress[i] - mr.address()), original);
        return null;
    }

    /** Scatters an RDMA READ response's data into the slot's SGEs; null, or why an SGE cannot take it. */
    @Nullable String scatterReadResponse(int slot, SoftFrame f) {
        SoftDevice.Scratch s = device.scratch;
        int count = 0;
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
            String problem = RegionCheck.local(pd, mr, sq.sgeLkey[i], sq.sgeAddress[i], sq.sgeLength[i], true);
            if (problem != null) {
                return "RDMA READ target SGE " + k + ": " + problem;
            }
            s.buffers[count] = mr.base;
            s.addresses[count] = sq.sgeAddress[i];
            s.lengths[count] = sq.sgeLength[i];
            count++;
        }
        int len = Math.min(f.length, sq.length[slot]);
        NativeMemory.scatter(f, s.addresses, s.lengths, count, len);
        return null;
    }
}
