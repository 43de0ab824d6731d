package io.rdmaflux.verbs;

import java.util.List;

/**
 * An RDMA device (HCA, {@code ibv_context}).
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> closed with its provider; {@link #close()}
 * closes everything allocated from it.
 */
public interface Device extends AutoCloseable {
    /** The device name, unique within its provider (e.g. {@code mlx5_0}, {@code soft0}). */
    String name();

    /** The ports of this device, numbered from 1 as in verbs. */
    List<Port> ports();

    /**
     * Port {@code portNumber} (1-based).
     *
     * @throws VerbsException if there is no such port; the message gives the valid range
     */
    default Port port(int portNumber) {
        List<Port> ports = ports();
        if (portNumber < 1 || portNumber > ports.size()) {
            throw new VerbsException("port " + portNumber + " does not exist on device '" + name()
                + "'; valid port numbers are 1.." + ports.size());
        }
        return ports.get(portNumber - 1);
    }

    /** What this device can do. */
    DeviceCapabilities capabilities();

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    ProtectionDomain allocateProtectionDomain();

    /**
     * Creates a completion queue ({@code ibv_create_cq}).
     *
     * @param capacity the number of completions it holds, in [1, {@link DeviceCapabilities#maxCqEntries()}]
     * @throws VerbsException if capacity is out of range
     */
    CompletionQueue createCompletionQueue(int capacity);

    @Override
    void close();
}
