package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The send queue of one {@code disni} QP: a ring of {@code maxSendWr} slots indexed by the post's
 * sequence number, which is also the native wr_id. A slot keeps the caller's wr id and opcode, so a
 * native completion (an error one included, whose opcode verbs leaves undefined) maps back, and a
 * signaled completion retires every unsignaled post before it. Sends posted before the connection is
 * ESTABLISHED are held in their slot (a copy; an inline payload is copied into a staging region at post
 * time, as the NIC would) and posted in order by {@link #postHeld}.
 *
 * <p>{@code retired ≤ posted natively ≤ posted}; outstanding = posted − retired ≤ maxSendWr.
 *
 * <p><b>Concurrency:</b> not thread-safe; the QP's lock guards it.
 */
final class SendQueue {
    private final DisniProtectionDomain pd;
    private final DisniCompletionQueue cq;
    private final int qpn;
    private final int capacity;
    private final int maxInline;
    private final long[] wrIds;
    private final WrOpcode[] opcodes;
    private final @Nullable SendWorkRequest[] held;
    private long posted;
    private long postedNatively;
    private long retired;
    private @Nullable DisniMemoryRegion staging;

    SendQueue(DisniProtectionDomain pd, DisniCompletionQueue cq, int qpn, int capacity, int maxInline) {
        this.pd = pd;
        this.cq = cq;
        this.qpn = qpn;
        this.capacity = capacity;
        this.maxInline = maxInline;
        this.wrIds = new long[capacity];
        this.opcodes = new WrOpcode[capacity];
        this.held = new SendWorkRequest[capacity];
    }

    static int flags(SendWorkRequest wr) {
        return (wr.signaled() ? NativeCodes.SEND_SIGNALED : 0) | (wr.inline() ? NativeCodes.SEND_INLINE : 0);
    }

    private int slot(long seq) {
        return (int) (seq % capacity);
    }

    /** Whether sends are held (posted but not yet posted natively). */
    boolean holding() {
        return postedNatively < posted;
    }

    /** Whether {@code maxSendWr} posts are outstanding. */
    boolean full() {
        return posted - retired >= capacity;
    }

    /** Whether an inline send held now would need the staging region, and it does not exist yet. */
    boolean needsStaging(SendWorkRequest wr) {
        return wr.inline() && staging == null;
    }

    /** A new region for held inline payloads (registered in the QP's PD). */
    DisniMemoryRegion newStagingRegion() {
        return (DisniMemoryRegion) pd.allocateMemory((long) capacity * Math.max(1, maxInline), Access.LOCAL_WRITE);
    }

    /** Takes {@code region} as the staging region (called when {@link #needsStaging} said so). */
    void adoptStaging(DisniMemoryRegion region) {
        staging = region;
    }

    /** Removes the staging region (to deregister on close). */
    @Nullable DisniMemoryRegion takeStaging() {
        DisniMemoryRegion s = staging;
        staging = null;
        return s;
    }

    /**
     * Posts {@code wr} natively through {@code poster}, or holds it when {@code poster} is null. The
     * caller checked {@link #full()}.
     *
     * @throws IOException when the native post fails (nothing is recorded then)
     */
    void post(SendWorkRequest wr, @Nullable SendPoster poster) throws IOException {
        long seq = posted;
        int slot = slot(seq);
        if (poster != null) {
            poster.post(wr, seq, flags(wr));
            postedNatively = seq + 1;
        } else {
            hold(slot, wr);
        }
        wrIds[slot] = wr.wrId();
        opcodes[slot] = wr.opcode();
        posted = seq + 1;
    }

    /** Posts the held sends in order. @throws IOException when a native post fails */
    void postHeld(SendPoster poster) throws IOException {
        while (postedNatively < posted) {
            SendWorkRequest wr = held[slot(postedNatively)];
            poster.post(wr, postedNatively, flags(wr));
            postedNatively++;
        }
    }

    /** Completes every held send: WR_FLUSH_ERR, the first RETRY_EXC_ERR with {@code failure} when given. */
    void failHeld(@Nullable String failure) {
        boolean first = true;
        for (long s = postedNatively; s < posted; s++) {
            int slot = slot(s);
            boolean cause = first && failure != null;
            cq.add(wrIds[slot], cause ? WcStatus.RETRY_EXC_ERR : WcStatus.WR_FLUSH_ERR, NativeCodes.sendCompletionOpcode(opcodes[slot]),
                0, false, 0, qpn, cause ? failure : "flushed: QP " + qpn + " is in ERROR");
            first = false;
        }
        postedNatively = posted;
        retired = posted;
    }

    /** Maps the native completion of post {@code seq}; retires it and every unsignaled post before it. */
    void completed(long seq, WcStatus status, int byteLength, String detail) {
        int slot = slot(seq);
        retired = Math.max(retired, seq + 1);
        cq.add(wrIds[slot], status, NativeCodes.sendCompletionOpcode(opcodes[slot]), byteLength, false, 0, qpn, detail);
    }

    private void hold(int slot, SendWorkRequest wr) {
        SendWorkRequest copy = held[slot];
        if (copy == null) {
            copy = new SendWorkRequest();
            held[slot] = copy;
        }
        copy.reset().wrId(wr.wrId()).opcode(wr.opcode()).signaled(wr.signaled()).inline(wr.inline()).immediate(wr.immediate())
            .remoteAddress(wr.remoteAddress()).rkey(wr.rkey());
        DisniMemoryRegion stage = staging;
        if (wr.inline() && stage != null && stageInline(wr, stage, slot)) {
            copy.sge(stage.address() + (long) slot * maxInline, (int) wr.totalLength(), stage.lkey());
            return;
        }
        for (int i = 0; i < wr.numSge(); i++) {
            copy.addSge(wr.sge(i).address(), wr.sge(i).length(), wr.sge(i).lkey());
        }
    }

    /** Copies an inline payload into its staging slot; false if an SGE lies in no region of the PD (left as is). */
    private boolean stageInline(SendWorkRequest wr, DisniMemoryRegion stage, int slot) {
        int at = slot * maxInline;
        ByteBuffer dst = stage.buffer();
        for (int i = 0; i < wr.numSge(); i++) {
            if (pd.regionContaining(wr.sge(i).address(), wr.sge(i).length()) == null) {
                return false;
            }
        }
        for (int i = 0; i < wr.numSge(); i++) {
            DisniMemoryRegion src = pd.regionContaining(wr.sge(i).address(), wr.sge(i).length());
            dst.put(at, src.buffer(), (int) (wr.sge(i).address() - src.address()), wr.sge(i).length());
            at += wr.sge(i).length();
        }
        return true;
    }
}
