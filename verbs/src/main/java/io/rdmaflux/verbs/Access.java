package io.rdmaflux.verbs;

/**
 * Memory region access flags ({@code ibv_access_flags}); combine with {@code |}. Local read is
 * always allowed.
 */
public final class Access {
    /** The NIC may write the region for local operations (receives, RDMA READ responses). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the region; requires {@link #LOCAL_WRITE}, as in verbs. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Peers may RDMA READ from the region. */
    public static final int REMOTE_READ = 1 << 2;
    /**
     * Peers may run atomics (compare-and-swap, fetch-and-add) on the region's 8-byte words
     * ({@code IBV_ACCESS_REMOTE_ATOMIC}); requires {@link #LOCAL_WRITE}, as in verbs. A provider without
     * atomics ({@link DeviceCapabilities#atomics()} false) accepts the flag and never posts an atomic.
     */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Every flag. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private Access() {
    }

    /**
     * Checks a flag combination.
     *
     * @throws VerbsException if unknown bits are set, or REMOTE_WRITE or REMOTE_ATOMIC is asked without LOCAL_WRITE
     */
    public static int validate(int access) {
        if ((access & ~ALL) != 0) {
            throw new VerbsException("access flags 0x" + Integer.toHexString(access)
                + " contain unknown bits; use Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC");
        }
        if ((access & REMOTE_WRITE) != 0 && (access & LOCAL_WRITE) == 0) {
            throw new VerbsException("access flags 0x" + Integer.toHexString(access)
                + " ask for REMOTE_WRITE without LOCAL_WRITE; add Access.LOCAL_WRITE (verbs requires both)");
        }
        if ((access & REMOTE_ATOMIC) != 0 && (access & LOCAL_WRITE) == 0) {
            throw new VerbsException("access flags 0x" + Integer.toHexString(access)
                + " ask for REMOTE_ATOMIC without LOCAL_WRITE; add Access.LOCAL_WRITE (verbs requires both)");
        }
        return access;
    }

    /** A readable form, e.g. {@code LOCAL_WRITE|REMOTE_READ}. */
    public static String toString(int access) {
        StringBuilder sb = new StringBuilder();
        if ((access & LOCAL_WRITE) != 0) sb.append("LOCAL_WRITE|");
        if ((access & REMOTE_WRITE) != 0) sb.append("REMOTE_WRITE|");
        if ((access & REMOTE_READ) != 0) sb.append("REMOTE_READ|");
        if ((access & REMOTE_ATOMIC) != 0) sb.append("REMOTE_ATOMIC|");
        return sb.length() == 0 ? "LOCAL_READ" : sb.substring(0, sb.length() - 1);
    }
}
