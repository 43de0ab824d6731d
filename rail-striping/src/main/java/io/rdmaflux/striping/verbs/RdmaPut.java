package io.rdmaflux.striping.verbs;

/**
 * One put (seed 002: MPI_Put over rails): {@code lengthBytes} from the local buffer at
 * {@code offset} to the peer's buffer at the same {@code offset}, each stripe one RDMA WRITE on its
 * rail with that rail's lkey and rkey.
 *
 * @throws IllegalArgumentException if the range lies outside the buffer
 */
public record RdmaPut(RailBuffers buffers, long offset, long lengthBytes) implements RdmaTransfer {
    public RdmaPut {
        RdmaTransfer.checkRange(buffers, offset, lengthBytes, "put");
    }
}
