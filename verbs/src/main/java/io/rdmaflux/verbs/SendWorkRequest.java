package io.rdmaflux.verbs;

import org.jspecify.annotations.Nullable;

/**
 * A send work request ({@code ibv_send_wr}). Mutable and reusable: the provider reads it during
 * {@link QueuePair#postSend} and keeps nothing of it, so callers may reuse one instance for every
 * post (allocation-free hot path). The memory its SGEs name must not change until the work request
 * completes, except for inline sends, whose payload is copied at post time.
 *
 * <ul>
 *   <li>RDMA ops set {@link #remoteAddress(long)} and {@link #rkey(int)}.</li>
 *   <li>Atomics ({@link WrOpcode#isAtomic()}) set those too, their operands {@link #compareAdd(long)} and
 *       {@link #swap(long)}, and one 8-byte SGE for the original value ({@link #fetchAndAdd},
 *       {@link #compareAndSwap} set it all).</li>
 *   <li>UD sends set {@link #addressHandle}, {@link #remoteQpn(int)} and {@link #remoteQkey(int)}.</li>
 *   <li>Unsignaled sends produce a completion only on error, as in verbs.</li>
 * </ul>
 */
public final class SendWorkRequest {
    /** Most SGEs one request carries. */
    public static final int MAX_SGE = 16;

    private long wrId;
    private WrOpcode opcode = WrOpcode.SEND;
    private boolean signaled = true;
    private boolean inline;
    private int immediate;
    private long remoteAddress;
    private int rkey;
    private long compareAdd;
    private long swap;
    private @Nullable AddressHandle addressHandle;
    private int remoteQpn;
    private int remoteQkey;
    private final ScatterGatherEntry[] sgList = new ScatterGatherEntry[MAX_SGE];
    private int numSge;

    public SendWorkRequest() {
        for (int i = 0; i < MAX_SGE; i++) {
            sgList[i] = new ScatterGatherEntry();
        }
    }

    /** Clears everything back to a signaled SEND with no SGEs. */
    public SendWorkRequest reset() {
        wrId = 0;
        opcode = WrOpcode.SEND;
        signaled = true;
        inline = false;
        immediate = 0;
        remoteAddress = 0;
        rkey = 0;
        compareAdd = 0;
        swap = 0;
        addressHandle = null;
        remoteQpn = 0;
        remoteQkey = 0;
        numSge = 0;
        return this;
    }

    public SendWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    public SendWorkRequest opcode(WrOpcode opcode) {
        this.opcode = opcode;
        return this;
    }

    public SendWorkRequest signaled(boolean signaled) {
        this.signaled = signaled;
        return this;
    }

    /** Copy the payload at post time; the total length must not exceed the QP's max inline size. */
    public SendWorkRequest inline(boolean inline) {
        this.inline = inline;
        return this;
    }

    /** Immediate data for SEND_WITH_IMM and RDMA_WRITE_WITH_IMM (32 bits, host order). */
    public SendWorkRequest immediate(int immediate) {
        this.immediate = immediate;
        return this;
    }

    /** Target virtual address at the peer, for RDMA ops. */
    public SendWorkRequest remoteAddress(long remoteAddress) {
        this.remoteAddress = remoteAddress;
        return this;
    }

    /** Remote key of the target region, for RDMA ops. */
    public SendWorkRequest rkey(int rkey) {
        this.rkey = rkey;
        return this;
    }

    /**
     * The first atomic operand ({@code wr.atomic.compare_add}): the value to add for
     * {@link WrOpcode#ATOMIC_FETCH_AND_ADD}, the value to compare with for {@link WrOpcode#ATOMIC_CMP_AND_SWP}.
     */
    public SendWorkRequest compareAdd(long compareAdd) {
        this.compareAdd = compareAdd;
        return this;
    }

    /** The value {@link WrOpcode#ATOMIC_CMP_AND_SWP} stores when the compare matched ({@code wr.atomic.swap}). */
    public SendWorkRequest swap(long swap) {
        this.swap = swap;
        return this;
    }

    /**
     * Makes this an {@link WrOpcode#ATOMIC_FETCH_AND_ADD} of {@code add} on the 8 bytes at {@code remoteAddress}
     * ({@code rkey}); the original value lands in {@code [resultOffset, +8)} of {@code result}. The wr id and
     * signaling are left as they are.
     */
    public SendWorkRequest fetchAndAdd(long remoteAddress, int rkey, long add, MemoryRegion result, long resultOffset) {
        return opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).remoteAddress(remoteAddress).rkey(rkey).compareAdd(add).swap(0)
            .sge(result, resultOffset, Long.BYTES);
    }

    /**
     * Makes this an {@link WrOpcode#ATOMIC_CMP_AND_SWP} on the 8 bytes at {@code remoteAddress} ({@code rkey}):
     * they become {@code swap} if they equal {@code compare}; the original value lands in
     * {@code [resultOffset, +8)} of {@code result}. The wr id and signaling are left as they are.
     */
    public SendWorkRequest compareAndSwap(long remoteAddress, int rkey, long compare, long swap, MemoryRegion result,
                                          long resultOffset) {
        return opcode(WrOpcode.ATOMIC_CMP_AND_SWP).remoteAddress(remoteAddress).rkey(rkey).compareAdd(compare).swap(swap)
            .sge(result, resultOffset, Long.BYTES);
    }

    /** UD destination: address handle, QPN and Q_Key. */
    public SendWorkRequest ud(AddressHandle addressHandle, int remoteQpn, int remoteQkey) {
        this.addressHandle = addressHandle;
        this.remoteQpn = remoteQpn;
        this.remoteQkey = remoteQkey;
        return this;
    }

    /** Replaces the SGE list with one entry. */
    public SendWorkRequest sge(long address, int length, int lkey) {
        numSge = 0;
        return addSge(address, length, lkey);
    }

    /** Replaces the SGE list with one entry covering {@code [offset, offset+length)} of {@code mr}. */
    public SendWorkRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(mr.address() + offset, length, mr.lkey());
    }

    /**
     * Appends an SGE.
     *
     * @throws VerbsException when the list already holds {@link #MAX_SGE} entries
     */
    public SendWorkRequest addSge(long address, int length, int lkey) {
        if (numSge == MAX_SGE) {
            throw new VerbsException("a work request holds at most " + MAX_SGE + " SGEs; split the payload over several work requests");
        }
        sgList[numSge++].set(address, length, lkey);
        return this;
    }

    public SendWorkRequest clearSges() {
        numSge = 0;
        return this;
    }

    public long wrId() {
        return wrId;
    }

    public WrOpcode opcode() {
        return opcode;
    }

    public boolean signaled() {
        return signaled;
    }

    public boolean inline() {
        return inline;
    }

    public int immediate() {
        return immediate;
    }

    public long remoteAddress() {
        return remoteAddress;
    }

    public int rkey() {
        return rkey;
    }

    public long compareAdd() {
        return compareAdd;
    }

    public long swap() {
        return swap;
    }

    public @Nullable AddressHandle addressHandle() {
        return addressHandle;
    }

    public int remoteQpn() {
        return remoteQpn;
    }

    public int remoteQkey() {
        return remoteQkey;
    }

    public int numSge() {
        return numSge;
    }

    /** SGE {@code i}, {@code 0 <= i < numSge()}. */
    public ScatterGatherEntry sge(int i) {
        if (i < 0 || i >= numSge) {
            throw new IndexOutOfBoundsException("sge index " + i + " outside [0, " + numSge + ")");
        }
        return sgList[i];
    }

    /** Total bytes over all SGEs. */
    public long totalLength() {
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            total += sgList[i].length();
        }
        return total;
    }

    @Override
    public String toString() {
        return "send_wr{id=" + wrId + ", " + opcode + (signaled ? "" : ", unsignaled") + (inline ? ", inline" : "")
            + ", sges=" + numSge + ", len=" + totalLength() + "}";
    }
}
