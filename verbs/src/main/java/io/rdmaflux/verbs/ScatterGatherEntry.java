package io.rdmaflux.verbs;

/**
 * One scatter/gather element ({@code ibv_sge}): {@code length} bytes at virtual address
 * {@code address} of the region with local key {@code lkey}. Mutable so work requests can be
 * reused without allocation.
 */
public final class ScatterGatherEntry {
    private long address;
    private int length;
    private int lkey;

    public ScatterGatherEntry() {
    }

    public ScatterGatherEntry(long address, int length, int lkey) {
        set(address, length, lkey);
    }

    /** An entry covering {@code [offset, offset + length)} of a region. */
    public static ScatterGatherEntry of(MemoryRegion mr, long offset, int length) {
        return new ScatterGatherEntry(mr.address() + offset, length, mr.lkey());
    }

    public ScatterGatherEntry set(long address, int length, int lkey) {
        this.address = address;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    public ScatterGatherEntry set(MemoryRegion mr, long offset, int length) {
        return set(mr.address() + offset, length, mr.lkey());
    }

    public long address() {
        return address;
    }

    /** Length in bytes. */
    public int length() {
        return length;
    }

    public int lkey() {
        return lkey;
    }

    @Override
    public String toString() {
        return "sge{addr=0x" + Long.toHexString(address) + ", len=" + length + ", lkey=0x" + Integer.toHexString(lkey) + "}";
    }
}
