package io.rdmaflux.verbs;

/**
 * A receive work request ({@code ibv_recv_wr}). Mutable and reusable like {@link SendWorkRequest}:
 * the provider copies what it needs during {@code postReceive}.
 */
public final class ReceiveWorkRequest {
    /** Most SGEs one receive carries. */
    public static final int MAX_SGE = 4;

    private long wrId;
    private final ScatterGatherEntry[] sgList = new ScatterGatherEntry[MAX_SGE];
    private int numSge;

    public ReceiveWorkRequest() {
        for (int i = 0; i < MAX_SGE; i++) {
            sgList[i] = new ScatterGatherEntry();
        }
    }

    public ReceiveWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    /** Replaces the SGE list with one entry. */
    public ReceiveWorkRequest sge(long address, int length, int lkey) {
        numSge = 0;
        return addSge(address, length, lkey);
    }

    /** Replaces the SGE list with one entry covering {@code [offset, offset+length)} of {@code mr}. */
    public ReceiveWorkRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(mr.address() + offset, length, mr.lkey());
    }

    /**
     * Appends an SGE.
     *
     * @throws VerbsException when the list already holds {@link #MAX_SGE} entries
     */
    public ReceiveWorkRequest addSge(long address, int length, int lkey) {
        if (numSge == MAX_SGE) {
            throw new VerbsException("a receive work request holds at most " + MAX_SGE + " SGEs");
        }
        sgList[numSge++].set(address, length, lkey);
        return this;
    }

    public long wrId() {
        return wrId;
    }

    public int numSge() {
        return numSge;
    }

    public ScatterGatherEntry sge(int i) {
        if (i < 0 || i >= numSge) {
            throw new IndexOutOfBoundsException("sge index " + i + " outside [0, " + numSge + ")");
        }
        return sgList[i];
    }

    /** Total capacity in bytes over all SGEs. */
    public long totalLength() {
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            total += sgList[i].length();
        }
        return total;
    }

    @Override
    public String toString() {
        return "recv_wr{id=" + wrId + ", sges=" + numSge + ", len=" + totalLength() + "}";
    }
}
