package io.rdmaflux.verbs;

import java.util.List;

/**
 * An RDMA provider: the soft (embedded) NIC or DiSNI on hardware. Found by name through
 * {@link RdmaProviders}.
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} closes every device and
 * everything allocated from them, stops the provider's threads, and is idempotent.
 */
public interface RdmaProvider extends AutoCloseable {
    /** The provider's name, e.g. {@code soft} or {@code disni}. */
    String name();

    /** The devices (HCAs) this provider sees, in a stable order. */
    List<Device> devices();

    /**
     * The device with the given name.
     *
     * @throws VerbsException if there is none; the message lists the names that exist
     */
    default Device device(String name) {
        for (Device d : devices()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new VerbsException("no device named '" + name + "' in provider '" + name()
            + "'; devices are " + devices().stream().map(Device::name).toList());
    }

    /** The provider's connection manager (one per provider). */
    ConnectionManager connectionManager();

    /** How this provider's own progress (a soft NIC's agents) is run. Hardware providers say DEDICATED. */
    ThreadingMode threadingMode();

    /**
     * Drives the provider's progress once, in {@link ThreadingMode#INVOKER} mode. Hardware
     * providers progress by themselves and return 0.
     *
     * @param nowNs current time in ns, from the provider's clock
     * @return work done
     */
    int progress(long nowNs);

    @Override
    void close();
}
