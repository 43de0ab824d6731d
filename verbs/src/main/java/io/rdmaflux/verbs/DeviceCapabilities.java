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
 * @param atomics              whether RC queue pairs run the 8-byte atomics {@link WrOpcode#ATOMIC_CMP_AND_SWP} and
 *                             {@link WrOpcode#ATOMIC_FETCH_AND_ADD} ({@code ibv_device_attr.atomic_cap} not
 *                             {@code IBV_ATOMIC_NONE}); atomic at the responder with respect to other atomics on
 *                             the same memory ({@code IBV_ATOMIC_HCA}), not to RDMA WRITEs or the owner's CPU stores
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
    boolean orderedWritePlacement,
    boolean atomics) {

    /** Capabilities of a device without atomics. */
    public DeviceCapabilities(int maxQueuePairs, int maxQpWorkRequests, int maxScatterGather, int maxCqEntries,
                              long maxMemoryRegionBytes, long maxMessageBytes, int maxInlineBytes, boolean unreliableDatagram,
                              boolean sharedReceiveQueue, boolean rdmaRead, boolean orderedWritePlacement) {
        this(maxQueuePairs, maxQpWorkRequests, maxScatterGather, maxCqEntries, maxMemoryRegionBytes, maxMessageBytes,
            maxInlineBytes, unreliableDatagram, sharedReceiveQueue, rdmaRead, orderedWritePlacement, false);
    }

    /** Capabilities of a device without atomics that does not vouch for the placement order of RDMA WRITE data. */
    public DeviceCapabilities(int maxQueuePairs, int maxQpWorkRequests, int maxScatterGather, int maxCqEntries,
                              long maxMemoryRegionBytes, long maxMessageBytes, int maxInlineBytes, boolean unreliableDatagram,
                              boolean sharedReceiveQueue, boolean rdmaRead) {
        this(maxQueuePairs, maxQpWorkRequests, maxScatterGather, maxCqEntries, maxMemoryRegionBytes, maxMessageBytes,
            maxInlineBytes, unreliableDatagram, sharedReceiveQueue, rdmaRead, false, false);
    }

    /** These capabilities with {@link #atomics()} set to {@code atomics}. */
    public DeviceCapabilities withAtomics(boolean atomics) {
        return new DeviceCapabilities(maxQueuePairs, maxQpWorkRequests, maxScatterGather, maxCqEntries, maxMemoryRegionBytes,
            maxMessageBytes, maxInlineBytes, unreliableDatagram, sharedReceiveQueue, rdmaRead, orderedWritePlacement, atomics);
    }
}
