package io.rdmaflux.verbs;

import java.nio.ByteBuffer;

/**
 * A protection domain ({@code ibv_pd}): memory regions, QPs, SRQs and address handles created from
 * it may be used together; keys from another domain are rejected (LOC_PROT_ERR / REM_ACCESS_ERR).
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} deregisters its regions
 * and destroys its QPs, SRQs and address handles.
 */
public interface ProtectionDomain extends AutoCloseable {
    /** The device this domain belongs to. */
    Device device();

    /**
     * Registers caller-owned memory ({@code ibv_reg_mr}).
     *
     * @param buffer a direct buffer; the region covers {@code [position, limit)}
     * @param access {@link Access} flags
     * @throws VerbsException if the buffer is not direct, is empty, is larger than the device allows,
     *     or the flags are invalid
     */
    MemoryRegion registerMemory(ByteBuffer buffer, int access);

    /**
     * Allocates zeroed off-heap memory and registers it. The memory is freed on deregistration.
     *
     * @param lengthBytes in [1, {@link DeviceCapabilities#maxMemoryRegionBytes()}]
     * @throws VerbsException if the length is out of range or the flags are invalid
     */
    MemoryRegion allocateMemory(long lengthBytes, int access);

    /** Creates a queue pair in RESET. @throws VerbsException if the attributes do not fit this device */
    QueuePair createQueuePair(QpInitAttributes attributes);

    /**
     * Creates a shared receive queue.
     *
     * @throws VerbsException if the device has no SRQ support, or maxWorkRequests is out of range
     */
    SharedReceiveQueue createSharedReceiveQueue(int maxWorkRequests);

    /** Creates a UD address handle to {@code destination} from {@code port}. */
    AddressHandle createAddressHandle(Port port, PortAddress destination);

    @Override
    void close();
}
