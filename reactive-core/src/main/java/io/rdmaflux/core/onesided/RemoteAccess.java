package io.rdmaflux.core.onesided;

/**
 * The rights a peer gets on an exposed region: RDMA READ (its gets), RDMA WRITE (its puts), or both.
 * They are enforced twice: the user's side refuses an operation the rights do not allow before posting
 * anything ({@link RemoteAccessException}), and the region's memory registration on the owner's side
 * carries only the matching remote access flags, so the owner's NIC rejects such an operation
 * (REM_ACCESS_ERR) even from a peer that skips the first check.
 */
public enum RemoteAccess {
    /** The peer may get (RDMA READ) from the region. */
    READ(0x1),
    /** The peer may put (RDMA WRITE) into the region. */
    WRITE(0x2),
    /** The peer may get and put. */
    READ_WRITE(0x3);

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

    /** The access bits of the REGION_EXPOSE frame: bit 0 READ, bit 1 WRITE. */
    public int wireBits() {
        return bits;
    }

    /**
     * The access of the frame's bits.
     *
     * @throws IllegalArgumentException if {@code bits} is not 1, 2 or 3
     */
    public static RemoteAccess ofWireBits(int bits) {
        return switch (bits) {
            case 0x1 -> READ;
            case 0x2 -> WRITE;
            case 0x3 -> READ_WRITE;
            default -> throw new IllegalArgumentException("access bits 1 (READ), 2 (WRITE) or 3 (READ_WRITE) required but they were " + bits);
        };
    }
}
