package io.rdmaflux.striping.verbs;

/**
 * A one-sided transfer between a local and a remote buffer over rails (seed 002): an
 * {@link RdmaPut} (RDMA WRITE, local to remote, loads the outbound direction) or an
 * {@link RdmaGet} (RDMA READ, remote to local, loads the inbound direction). Striped, stripe
 * {@code [o, o + n)} moves bytes {@code offset + o ..} of both buffers.
 */
public sealed interface RdmaTransfer permits RdmaPut, RdmaGet {
    RailBuffers buffers();

    /** Offset in both buffers, bytes. */
    long offset();

    long lengthBytes();

    /** Checks the range, for the records' constructors. */
    static void checkRange(RailBuffers buffers, long offset, long lengthBytes, String what) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > buffers.lengthBytes()) {
            throw new IllegalArgumentException(what + " of " + lengthBytes + " bytes at offset " + offset
                + " lies outside the buffer of " + buffers.lengthBytes() + " bytes");
        }
    }
}
