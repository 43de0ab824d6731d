package io.rdmaflux.core.internal.onesided;

/**
 * One RDMA WRITE (put) or READ (get) of an operation on one rail: {@code [offset, +lengthBytes)} of the
 * operation's range. Its number ({@link #slot}) is the WRITE's completion tag or the READ's token while
 * it is posted; a fragment whose rail failed is posted again, on a surviving rail, under a new number.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class Fragment {
    final OneSidedOp op;
    /** Bytes from the start of the operation's range. */
    final long offset;
    final int lengthBytes;
    /** The rail planned or posted on. */
    int rail;
    /** Number in the {@link FragmentTable} while posted, else -1. */
    int slot = -1;

    Fragment(OneSidedOp op, long offset, int lengthBytes, int rail) {
        this.op = op;
        this.offset = offset;
        this.lengthBytes = lengthBytes;
        this.rail = rail;
    }
}
