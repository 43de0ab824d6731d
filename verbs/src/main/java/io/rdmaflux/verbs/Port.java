package io.rdmaflux.verbs;

/**
 * A port of a {@link Device}: one rail. Carries the rail model the soft provider shapes traffic
 * with; hardware providers report what the port says ({@code ibv_query_port}).
 *
 * <p><b>Concurrency:</b> thread-safe.
 */
public interface Port {
    /** The device this port belongs to. */
    Device device();

    /** The port number, from 1. */
    int number();

    /** Where peers reach this port. */
    PortAddress address();

    /** Link state. */
    PortState state();

    /** Path MTU in bytes of payload, one of 256, 512, 1024, 2048, 4096. UD datagrams are limited to it. */
    int mtuBytes();

    /** Link bandwidth in bytes/s. */
    long bandwidthBytesPerSec();

    /** One-way latency in ns. */
    long latencyNs();

    /**
     * Whether RDMA WRITEs arriving on this port place their last 8 bytes after the rest (see
     * {@link DeviceCapabilities#orderedWritePlacement()}); by default what the device says. A port with a
     * fault model that tears WRITEs reports false.
     */
    default boolean orderedWritePlacement() {
        return device().capabilities().orderedWritePlacement();
    }
}
