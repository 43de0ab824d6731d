package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A network the soft NICs of one or more {@link SoftProvider}s are attached to: a
 * {@link FrameTransport} plus the connection managers' listener registry. Two providers built
 * on the same fabric are two hosts on one network; that is how tests build a two-node setup.
 *
 * <p>{@link #mem(String)} makes a fresh in-JVM fabric; {@link #shared(String)} returns the JVM-wide
 * fabric of that name (created on first use), which is what {@code RdmaProviders.open("soft")} uses
 * (option {@code fabric}, default {@value #DEFAULT_NAME}), so providers opened by name find each
 * other. A fabric holds no threads and no memory of its own beyond its maps.
 *
 * <p>Device names are unique per fabric: {@link #nextDeviceName()} hands out {@code soft0},
 * {@code soft1}, ...
 *
 * <p><b>Concurrency:</b> thread-safe.
 */
public final class SoftFabric {
    /** Name of the fabric that providers opened through the factory share by default. */
    public static final String DEFAULT_NAME = "default";

    private static final ConcurrentHashMap<String, SoftFabric> SHARED = new ConcurrentHashMap<>();

    private final String name;
    private final FrameTransport transport;
    private final AtomicInteger deviceCounter = new AtomicInteger();
    final ConcurrentHashMap<PortAddress, SoftConnectionManager.ListenerEntry> listeners = new ConcurrentHashMap<>();
    final AtomicInteger serviceCounter = new AtomicInteger(1024);

    private SoftFabric(String name, FrameTransport transport) {
        this.name = name;
        this.transport = transport;
    }

    /** A new, private in-JVM fabric. */
    public static SoftFabric mem(String name) {
        return new SoftFabric(name, new MemTransport(name));
    }

    /** A fabric over another transport (the IP fabric plugs in here). */
    public static SoftFabric over(String name, FrameTransport transport) {
        return new SoftFabric(name, transport);
    }

    /** The JVM-wide in-JVM fabric called {@code name}, created on first use. */
    public static SoftFabric shared(String name) {
        return SHARED.computeIfAbsent(name, SoftFabric::mem);
    }

    public String name() {
        return name;
    }

    /** The transport frames travel on. */
    public FrameTransport transport() {
        return transport;
    }

    /** A device name not yet handed out on this fabric ({@code soft<n>}). */
    public String nextDeviceName() {
        return "soft" + deviceCounter.getAndIncrement();
    }

    /** Listeners currently bound on this fabric, all providers together. */
    public int listenerCount() {
        return listeners.size();
    }

    /** Whether a {@link ConnectionManager} listener is bound at {@code address}. */
    public boolean isListening(PortAddress address) {
        return listeners.containsKey(address);
    }

    @Override
    public String toString() {
        return "SoftFabric{" + name + ", " + transport.fabric() + "}";
    }
}
