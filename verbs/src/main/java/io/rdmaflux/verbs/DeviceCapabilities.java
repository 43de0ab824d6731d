package io.rdmaflux.verbs;

/**
 * What a device supports ({@code ibv_device_attr} subset).
 *
 * @param maxQueuePairs        most QPs at once
 * @param maxQpWorkRequests    most outstanding work requests per send or receive queue
 * @param maxScatterGather     most SGEs per work request
 * @param maxCqEntries         largest completion queue
 * @param maxMemoryRegionBytes largest single memory region, in bytes
 * @param maxMessageBytes      largest RC message, in bytes
 * @param maxInlineBytes       largest inline send payload, in bytes
 * @param unreliableDatagram   whether UD QPs are supported
 * @param sharedReceiveQueue   whether SRQs are supported
 * @param rdmaRead             whether RDMA READ is supported
 * @param orderedWritePlacement whether the last 8 bytes of an RDMA WRITE into a contiguous, 8-byte aligned
 *                             target become visible to a reader on the target host only after every other
 *                             byte of the WRITE (so a flag in the last word may signal the WRITE's arrival,
 *                             seed 001 &sect;4.2). The soft provider places them so (a store fence before the
 *                             last word); providers that cannot vouch for it report false, and a protocol
 *                             relying on a tail flag must verify the data (a checksum) instead
 */
public record DeviceCapabilities(
    int maxQueuePairs,
    int maxQpWorkRequests,
    int maxScatterGather,
    int maxCqEntries,
    long maxMemoryRegionBytes,
    long maxMessageBytes,
    int maxInlineBytes,
    boolean unreliableDatagram,
    boolean sharedReceiveQueue,
    boolean rdmaRead,
    boolean orderedWritePlacement) {

    /** Capabilities of a device that does not vouch for the placement order of RDMA WRITE data. */
    public DeviceCapabilities(int maxQueuePairs, int maxQpWorkRequests, int maxScatterGather, int maxCqEntries,
                              long maxMemoryRegionBytes, long maxMessageBytes, int maxInlineBytes, boolean unreliableDatagram,
                              boolean sharedReceiveQueue, boolean rdmaRead) {
        this(maxQueuePairs, maxQpWorkRequests, maxScatterGather, maxCqEntries, maxMemoryRegionBytes, maxMessageBytes,
            maxInlineBytes, unreliableDatagram, sharedReceiveQueue, rdmaRead, false);
    }
}
