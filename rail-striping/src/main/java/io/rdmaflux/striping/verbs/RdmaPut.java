package io.rdmaflux.striping.verbs;

/**
 * One one-sided put: {@code lengthBytes} from the local buffer at {@code offset} to the peer's
 * buffer at the same {@code offset} (seed 002: MPI_Put over rails). Striped, stripe
 * {@code [o, o + n)} is written from local {@code offset + o} to remote {@code offset + o} by one
 * RDMA WRITE on its rail, with that rail's lkey and rkey.
 *
 * @throws IllegalArgumentException if the range lies outside the buffer
 */
public record RdmaPut(RailBuffers buffers, long offset, long lengthBytes) {
    public RdmaPut {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > buffers.lengthBytes()) {
            throw new IllegalArgumentException("put of " + lengthBytes + " bytes at offset " + offset
                + " lies outside the buffer of " + buffers.lengthBytes() + " bytes");
        }
    }
}
