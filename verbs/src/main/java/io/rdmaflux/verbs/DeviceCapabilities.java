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
    boolean rdmaRead) {
}
