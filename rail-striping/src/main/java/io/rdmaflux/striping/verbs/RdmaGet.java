package io.rdmaflux.striping.verbs;

/**
 * One get (seed 002: MPI_Get over rails): {@code lengthBytes} from the peer's buffer at
 * {@code offset} into the local buffer at the same {@code offset}, each stripe one RDMA READ on its
 * rail. The local registrations need LOCAL_WRITE, the remote ones REMOTE_READ.
 *
 * @throws IllegalArgumentException if the range lies outside the buffer
 */
public record RdmaGet(RailBuffers buffers, long offset, long lengthBytes) implements RdmaTransfer {
    public RdmaGet {
        RdmaTransfer.checkRange(buffers, offset, lengthBytes, "get");
    }
}
