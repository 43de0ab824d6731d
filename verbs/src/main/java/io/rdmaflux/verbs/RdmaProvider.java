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

    /**
     * {@link ThreadingMode#INVOKER} mode, for the thread that drives {@link #progress(long)}: hands the NIC the
     * work requests posted since its last pass (the doorbells rung) now, without polling for arrivals, timers or
     * anything else a pass does. A node calls it at the end of each duty cycle, so that what its connections
     * posted in the cycle goes on the wire before the next cycle starts rather than at the start of it (the soft
     * provider over IP writes it to the socket here). {@link #progress(long)} still does it too. Hardware
     * providers ring their doorbell at post time and return 0, as the default does.
     *
     * @param nowNs current time in ns, from the provider's clock
     * @return work done (work requests transmitted)
     */
    default int transmitPosted(long nowNs) {
        return 0;
    }

    /**
     * {@link ThreadingMode#INVOKER} mode, for the thread that drives {@link #progress(long)} and found
     * nothing to do: blocks until the provider may have work (a frame arrived on one of its sockets),
     * until {@link #wakeup()} is called, or for at most about {@code timeoutNs}, in the manner of
     * Netty's event loop blocking in its {@code Selector}. A provider that cannot block this way, or
     * not now (several NICs, timed work due sooner than it can time a wait), returns {@code false} at
     * once and the caller idles its own way (parks); the default does so.
     *
     * <p>Waits may end early for no reason (spuriously), so the caller runs a duty cycle after each.
     * Timed work of the provider (retransmission timers, held frames) runs at most about
     * {@code timeoutNs} late; callers pass the bound they would park for (1 ms by default).
     *
     * @param timeoutNs the longest wait, ns; a provider may round it up to its timer granularity (1 ms
     *                  for a Java {@code Selector})
     * @return true if the provider waited (possibly cut short), false if it cannot wait and returned at once
     */
    default boolean awaitWork(long timeoutNs) {
        return false;
    }

    /**
     * Ends an {@link #awaitWork(long)} in progress on another thread, or, if none is in progress,
     * makes the next one return at once (as {@code Selector.wakeup()} does). Thread-safe; costs a
     * system call for a provider that waits on sockets, so callers only call it when the driving
     * thread may be waiting. The default does nothing.
     */
    default void wakeup() {
    }

    @Override
    void close();
}
