package io.rdmaflux.core;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.RdmaProvider;

import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A node's rails and the devices they are on: per device (HCA) one protection domain, in which the
 * node registers its memory once per device (a multi-device node registers each of its regions on every
 * device, one registration and one key pair per device); per rail the port, the device and the rail's
 * name ({@code device:port}, or {@code device:port/p} for path {@code p} of a port with several paths,
 * seed 000 &sect;4.2).
 *
 * <p><b>Concurrency:</b> immutable after construction. <b>Lifecycle:</b> {@link #close()} (by the node,
 * last) closes the protection domains.
 */
final class NodeRails implements AutoCloseable {
    private final List<Device> devices;
    private final ProtectionDomain[] pds;
    private final Port[] ports;
    private final int[] deviceOfRail;
    private final List<String> names;

    private NodeRails(List<Device> devices, ProtectionDomain[] pds, Port[] ports, int[] deviceOfRail, List<String> names) {
        this.devices = devices;
        this.pds = pds;
        this.ports = ports;
        this.deviceOfRail = deviceOfRail;
        this.names = names;
    }

    /**
     * Opens the devices {@code specs} name and allocates one protection domain on each.
     *
     * @throws IllegalArgumentException if the rails span devices and {@code bufferBytes} cannot hold their CTS
     * @throws io.rdmaflux.verbs.VerbsException if a device or port does not exist
     */
    static NodeRails open(RdmaProvider provider, List<RailSpec> specs, int bufferBytes) {
        List<Device> devices = new ArrayList<>();
        List<Port> ports = new ArrayList<>();
        List<Integer> deviceIndex = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (RailSpec s : specs) {
            Device d = provider.device(s.device());
            Port port = d.port(s.port());
            int di = devices.indexOf(d);
            if (di < 0) {
                di = devices.size();
                devices.add(d);
            }
            for (int p = 0; p < s.paths(); p++) {
                ports.add(port);
                deviceIndex.add(di);
                names.add(s.device() + ":" + s.port() + (s.paths() > 1 ? "/" + p : ""));
            }
        }
        ProtectionDomain[] pds = new ProtectionDomain[devices.size()];
        try {
            for (int i = 0; i < pds.length; i++) {
                pds[i] = devices.get(i).allocateProtectionDomain();
            }
        } catch (RuntimeException e) {
            for (ProtectionDomain pd : pds) {
                if (pd != null) {
                    pd.close();
                }
            }
            throw e;
        }
        NodeRails rails = new NodeRails(List.copyOf(devices), pds, ports.toArray(new Port[0]),
            deviceIndex.stream().mapToInt(Integer::intValue).toArray(), List.copyOf(names));
        int ctsBytes = io.rdmaflux.core.frame.CtsFrameCodec.length(rails.railCount());
        if (devices.size() > 1 && ctsBytes > bufferBytes) {
            rails.close();
            // a connection over several devices sends a CTS with one rkey per rail, which must fit a buffer
            throw new IllegalArgumentException("bufferBytes " + bufferBytes + " cannot hold the " + ctsBytes + "-byte CTS of " + rails.railCount()
                + " rails over " + devices.size() + " devices (one rkey per rail); raise bufferBytes to at least " + ctsBytes);
        }
        return rails;
    }

    /**
     * The rails of a node's builder: those given to {@code rails(..)} ({@code railSpecs}), else {@code ports} of
     * {@code device} (or the provider's first device).
     *
     * @throws IllegalArgumentException if rails were given with a device or ports too, or a port twice
     */
    static List<RailSpec> specs(RdmaProvider provider, @Nullable List<RailSpec> railSpecs, @Nullable String device, int[] ports,
                                boolean portsGiven) {
        if (railSpecs != null) {
            if (device != null || portsGiven) {
                throw new IllegalArgumentException("rails(" + railSpecs + ") cannot be combined with device(..) or ports(..); name"
                    + " each rail's device in rails(..), e.g. rails(RailSpec.of(\"soft0\", 1), RailSpec.of(\"soft0\", 2))");
            }
            requireDistinct(railSpecs);
            return railSpecs;
        }
        String d = device != null ? device : provider.devices().get(0).name();
        List<RailSpec> list = new ArrayList<>();
        for (int port : ports) {
            list.add(RailSpec.of(d, port));
        }
        return list;
    }

    /**
     * Checks that each port is given once ({@code RdmaNode.Builder.rails} requires it; {@code ports(1, 1)} is
     * still two rails on port 1).
     *
     * @throws IllegalArgumentException naming the port given twice and the fix
     */
    static void requireDistinct(List<RailSpec> specs) {
        Set<String> seen = new HashSet<>();
        for (RailSpec s : specs) {
            if (!seen.add(s.device() + ":" + s.port())) {
                throw new IllegalArgumentException("rail " + s.device() + ":" + s.port() + " is given twice; give each port once and"
                    + " use RailSpec.of(\"" + s.device() + "\", " + s.port() + ").paths(n) for n queue pairs on it");
            }
        }
    }

    int railCount() {
        return ports.length;
    }

    Port port(int rail) {
        return ports[rail];
    }

    /** Index (into {@link #devices()}) of the device rail {@code rail} is on. */
    int deviceOf(int rail) {
        return deviceOfRail[rail];
    }

    /** The protection domain of rail {@code rail}'s device. */
    ProtectionDomain pdOfRail(int rail) {
        return pds[deviceOfRail[rail]];
    }

    /** The devices, in the order their first rail was given. */
    List<Device> devices() {
        return devices;
    }

    /** One protection domain per device, in {@link #devices()} order. */
    List<ProtectionDomain> pds() {
        return List.of(pds);
    }

    List<Port> ports() {
        return List.of(ports);
    }

    /** Rail names, in rail order: {@code device:port} or {@code device:port/path}. */
    List<String> names() {
        return names;
    }

    /**
     * The node rails a connection uses: the first {@code spec.rails()}, or those {@code spec} names.
     *
     * @throws IllegalArgumentException naming the rail count or the unknown rail, the node's rails and the fix
     */
    int[] select(ConnectionSpec spec, String nodeName) {
        List<String> wanted = spec.railNames();
        if (wanted.isEmpty()) {
            if (spec.rails() > ports.length) {
                throw new IllegalArgumentException("spec asks for " + spec.rails() + " rails but node " + nodeName + " has "
                    + ports.length + " ports (rails " + names + "); add rails with RdmaNode.Builder.rails(..) or ports(..), or use fewer rails");
            }
            int[] first = new int[spec.rails()];
            for (int i = 0; i < first.length; i++) {
                first[i] = i;
            }
            return first;
        }
        int[] chosen = new int[wanted.size()];
        for (int i = 0; i < chosen.length; i++) {
            String w = wanted.get(i);
            int r = names.indexOf(w);
            if (r < 0 && w.endsWith("/0")) {
                // path 0 of a port with one path is the port itself
                r = names.indexOf(w.substring(0, w.length() - 2));
            }
            if (r < 0) {
                throw new IllegalArgumentException("spec names rail '" + w + "' but node " + nodeName + " has rails " + names
                    + "; pick rails by these names in ConnectionSpec.rails(..), or add it with RdmaNode.Builder.rails(..)");
            }
            for (int j = 0; j < i; j++) {
                if (chosen[j] == r) {
                    throw new IllegalArgumentException("spec names rail '" + w + "' twice; name each rail once (a port with"
                        + " several paths has rails " + w + "/0, /1, ..)");
                }
            }
            chosen[i] = r;
        }
        return chosen;
    }

    /** How the rails {@code nodeRails} of a connection map onto this node's devices. */
    RailDevices railDevices(int[] nodeRails) {
        int[] d = new int[nodeRails.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = deviceOfRail[nodeRails[i]];
        }
        return new RailDevices(d);
    }

    @Override
    public void close() {
        for (ProtectionDomain pd : pds) {
            pd.close();
        }
    }

    @Override
    public String toString() {
        return names.toString();
    }
}
