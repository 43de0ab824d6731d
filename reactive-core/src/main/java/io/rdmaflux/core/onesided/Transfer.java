package io.rdmaflux.core.onesided;

import io.rdmaflux.verbs.MemoryRegion;

/**
 * One put or get of the streaming form ({@link OneSided#transfers}): {@code lengthBytes} bytes between
 * {@code [localOffset, +lengthBytes)} of a local registered region and {@code [remoteOffset,
 * +lengthBytes)} of a region the peer exposed.
 *
 * @param put          true: RDMA WRITE local to remote; false: RDMA READ remote to local
 * @param local        registered with the connection's node ({@code RdmaNode.registerMemory})
 * @param localOffset  bytes from the local region's start, &gt;= 0
 * @param remote       a region from the peer ({@link OneSided#remoteRegions()})
 * @param remoteOffset bytes from the remote region's start, &gt;= 0
 * @param lengthBytes  bytes, &gt; 0
 */
public record Transfer(boolean put, MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
    /** A put of {@code lengthBytes} from {@code local} at {@code localOffset} to {@code remote} at {@code remoteOffset}. */
    public static Transfer put(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return new Transfer(true, local, localOffset, remote, remoteOffset, lengthBytes);
    }

    /** A get of {@code lengthBytes} from {@code remote} at {@code remoteOffset} into {@code local} at {@code localOffset}. */
    public static Transfer get(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return new Transfer(false, local, localOffset, remote, remoteOffset, lengthBytes);
    }
}
