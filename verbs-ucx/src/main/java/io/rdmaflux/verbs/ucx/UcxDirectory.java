package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Where a {@code ucx://<device>:<port>} address leads: device name to UCP worker address (the UCX
 * analogue of an HCA's LID/GID) and port count. Two kinds of entry:
 * <ul>
 *   <li><b>local</b>: a device of a provider using this directory ({@link #publish} at attach,
 *       {@link #withdraw} at close);</li>
 *   <li><b>learned</b>: a device of another process, taken from a connection-manager exchange
 *       ({@link #learn}; {@link UcxConnectionManager} carries each side's worker addresses in the
 *       private data, {@link UcxPeerAddresses}). Learned entries stay for the directory's lifetime
 *       (a few hundred bytes per remote device): queue pairs may resolve the address at any later
 *       time, as an address handle outlives the {@code rdma_cm} exchange that produced it.</li>
 * </ul>
 * With {@code cm=jvm} every provider of the JVM shares {@link #JVM} (today's in-JVM mode); with
 * {@code cm=tcp} each provider has its own, so it reaches other providers only through what the TCP
 * connection manager told it, in this JVM or another.
 *
 * <p><b>Concurrency:</b> thread-safe; entries are immutable (their worker-address buffers are written once, before publication, and only read with absolute gets after).
 */
final class UcxDirectory {
    /** The JVM-wide directory of {@code cm=jvm} providers. */
    static final UcxDirectory JVM = new UcxDirectory("this JVM");

    /** Largest worker address accepted from a peer, bytes (UCX's are ~80 B over tcp, a few hundred with RDMA devices). */
    static final int MAX_WORKER_ADDRESS_BYTES = 2048;

    private final String scope;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    /** @param scope what the directory spans, for error messages ({@code this JVM}, {@code provider x}) */
    UcxDirectory(String scope) {
        this.scope = scope;
    }

    /**
     * One device: its worker address (direct, exactly its capacity, never written after creation, as {@code UcpEndpointParams.setUcpAddress}
     * needs), the port count a peer announced (0 for a local device), and the attachment when it is local.
     */
    record Entry(String device, ByteBuffer workerAddress, int learnedPorts, @Nullable UcxAttachment local) {
        /** The device's port count (a local NIC's is read live: it attaches before its ports exist). */
        int ports() {
            return local != null ? local.nic().ports().size() : learnedPorts;
        }

        /** The worker address as bytes. */
        byte[] workerAddressBytes() {
            byte[] out = new byte[workerAddress.capacity()];
            workerAddress.get(0, out);
            return out;
        }
    }

    /**
     * Publishes a local device.
     *
     * @throws VerbsException when the name is taken (in use by another device, or learned from a peer)
     */
    void publish(UcxAttachment a) {
        Entry e = new Entry(a.nic().name(), directCopy(a.workerAddressBytes()), 0, a);
        if (entries.putIfAbsent(e.device(), e) != null) {
            throw new VerbsException("a device named '" + e.device() + "' is already known to the UCX directory of " + scope
                + "; device names must be unique (leave them to the ucx provider)");
        }
    }

    /** Removes a local device (no-op when it is not the one published). */
    void withdraw(UcxAttachment a) {
        entries.computeIfPresent(a.nic().name(), (k, e) -> e.local() == a ? null : e);
    }

    /** The local device named {@code device}, or null. */
    @Nullable UcxAttachment local(String device) {
        Entry e = entries.get(device);
        return e == null ? null : e.local();
    }

    /**
     * Records a device of a peer. Learning the same device again with the same worker address is a no-op.
     *
     * @throws VerbsException naming the device when the name is that of a local device, or is already
     *                        known with another worker address (two peers claiming one name), or when
     *                        the port count or address size is out of range
     */
    void learn(String device, byte[] workerAddress, int ports) {
        if (device.isEmpty() || ports < 1 || ports > 16 || workerAddress.length == 0 || workerAddress.length > MAX_WORKER_ADDRESS_BYTES) {
            throw new VerbsException("peer device '" + device + "' announced " + ports + " ports and a " + workerAddress.length
                + "-byte UCX worker address; expected a name, 1..16 ports and 1.." + MAX_WORKER_ADDRESS_BYTES + " bytes");
        }
        Entry fresh = new Entry(device, directCopy(workerAddress), ports, null);
        Entry known = entries.putIfAbsent(device, fresh);
        if (known == null) {
            return;
        }
        if (known.local() != null) {
            throw new VerbsException("a peer announced device '" + device + "', the name of a device of " + scope
                + "; the two providers share a directory, or the peer copies names (use cm=tcp on both ends)");
        }
        if (known.ports() != ports || !Arrays.equals(known.workerAddressBytes(), workerAddress)) {
            throw new VerbsException("a peer announced device '" + device + "' with a UCX worker address or port count other than the one "
                + scope + " learned before; two peers claim one device name");
        }
    }

    /**
     * The entry for {@code address}'s device, checked.
     *
     * @throws VerbsException naming the address when it is not {@code ucx://}, names no known device, or
     *                        names a port the device does not have
     */
    Entry lookup(PortAddress address) {
        if (!UcxFrameTransport.FABRIC.equals(address.fabric())) {
            throw new VerbsException("address " + address + " is not on the UCX fabric; use ucx://<device>:<port>");
        }
        Entry target = entries.get(address.host());
        if (target == null) {
            throw new VerbsException("no UCX device '" + address.host() + "' known to " + scope + " (address " + address
                + "); known devices are " + List.copyOf(entries.keySet()) + " (with cm=jvm the ucx provider reaches devices of this JVM; "
                + "with cm=tcp, devices of peers it exchanged a connection request with)");
        }
        if (address.port() < 1 || address.port() > target.ports()) {
            throw new VerbsException("address " + address + " names port " + address.port() + " but device '"
                + address.host() + "' has ports 1.." + target.ports());
        }
        return target;
    }

    /** Number of entries (local and learned). */
    int size() {
        return entries.size();
    }

    private static ByteBuffer directCopy(byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes.length);
        b.put(0, bytes);
        return b;
    }

    @Override
    public String toString() {
        return "UcxDirectory{" + scope + ", " + entries.size() + " devices}";
    }
}
