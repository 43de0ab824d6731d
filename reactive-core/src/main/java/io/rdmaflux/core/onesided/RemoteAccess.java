package io.rdmaflux.core.onesided;

/**
 * The rights a peer gets on an exposed region: RDMA READ (its gets), RDMA WRITE (its puts), atomics
 * (its {@link OneSided#fetchAndAdd} and {@link OneSided#compareAndSwap}), or a combination. They are
 * enforced twice: the user's side refuses an operation the rights do not allow before posting anything
 * ({@link RemoteAccessException}), and the region's memory registration on the owner's side carries only
 * the matching remote access flags (READ: REMOTE_READ, WRITE: REMOTE_WRITE, ATOMIC: REMOTE_ATOMIC), so
 * the owner's NIC rejects such an operation (REM_ACCESS_ERR) even from a peer that skips the first check.
 */
public enum RemoteAccess {
    /** The peer may get (RDMA READ) from the region. */
    READ(0x1),
    /** The peer may put (RDMA WRITE) into the region. */
    WRITE(0x2),
    /** The peer may get and put. */
    READ_WRITE(0x3),
    /** The peer may run atomics on the region's 8-byte words, and nothing else. */
    ATOMIC(0x4),
    /** The peer may get, and run atomics (e.g. counters the peer increments and reads). */
    READ_ATOMIC(0x5),
    /** The peer may put, and run atomics. */
    WRITE_ATOMIC(0x6),
    /** The peer may get, put and run atomics. */
    READ_WRITE_ATOMIC(0x7);

    private static final RemoteAccess[] BY_BITS = {null, READ, WRITE, READ_WRITE, ATOMIC, READ_ATOMIC, WRITE_ATOMIC, READ_WRITE_ATOMIC};

    private final int bits;

    RemoteAccess(int bits) {
        this.bits = bits;
    }

    public boolean allowsRead() {
        return (bits & 0x1) != 0;
    }

    public boolean allowsWrite() {
        return (bits & 0x2) != 0;
    }

    /** Whether the peer may run atomics (fetch-and-add, compare-and-swap) on the region. */
    public boolean allowsAtomic() {
        return (bits & 0x4) != 0;
    }

    /** The access bits of the REGION_EXPOSE frame: bit 0 READ, bit 1 WRITE, bit 2 ATOMIC. */
    public int wireBits() {
        return bits;
    }

    /** These rights plus atomics (e.g. {@code READ.withAtomic()} is {@link #READ_ATOMIC}). */
    public RemoteAccess withAtomic() {
        return BY_BITS[bits | 0x4];
    }

    /**
     * The access of the frame's bits.
     *
     * @throws IllegalArgumentException if {@code bits} is not in 1..7
     */
    public static RemoteAccess ofWireBits(int bits) {
        if (bits < 1 || bits > 7) {
            throw new IllegalArgumentException("access bits 1 (READ), 2 (WRITE), 4 (ATOMIC) or a combination (1..7) required but they were "
                + bits);
        }
        return BY_BITS[bits];
    }
}
