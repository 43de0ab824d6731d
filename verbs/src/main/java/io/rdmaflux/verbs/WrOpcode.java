package io.rdmaflux.verbs;

/**
 * Send work request opcodes ({@code ibv_wr_opcode} subset).
 *
 * <p><b>Atomics</b> ({@link #ATOMIC_CMP_AND_SWP}, {@link #ATOMIC_FETCH_AND_ADD}), as
 * {@code IBV_WR_ATOMIC_*}: RC only, on a device whose {@link DeviceCapabilities#atomics()} is true.
 * The target is the 8 bytes at {@link SendWorkRequest#remoteAddress(long)}, which must be 8-byte
 * aligned, in a region registered with {@link Access#REMOTE_ATOMIC} ({@link SendWorkRequest#rkey(int)});
 * the work request has exactly one SGE of exactly 8 bytes, into which the NIC writes the target's value
 * from before the operation (so the SGE's region needs {@link Access#LOCAL_WRITE}). The operands are
 * {@link SendWorkRequest#compareAdd(long)} and {@link SendWorkRequest#swap(long)}. The 8 bytes are a
 * 64-bit integer in the byte order of the host the memory is on (the soft provider: native order). A
 * misaligned address or an SGE list other than one 8-byte entry completes with a local error
 * (LOC_QP_OP_ERR, LOC_LEN_ERR) without being sent; a missing REMOTE_ATOMIC right, a bad rkey or an
 * address outside the region completes with REM_ACCESS_ERR.
 */
public enum WrOpcode {
    SEND,
    SEND_WITH_IMM,
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    RDMA_READ,
    /** If the remote 8 bytes equal {@code compareAdd}, replace them with {@code swap}; returns the original value. */
    ATOMIC_CMP_AND_SWP,
    /** Add {@code compareAdd} to the remote 8 bytes (wrapping); returns the original value. */
    ATOMIC_FETCH_AND_ADD;

    /** Whether this is one of the two atomic opcodes. */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }
}
