package io.rdmaflux.samples;

import io.rdmaflux.core.RailSpec;
import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * Where the rails of the two in-JVM soft hosts are: each host has {@code devices} soft NICs of
 * {@code portsPerDevice} ports, the sender's named {@code tx0, tx1, ..}, the receiver's {@code rx0, rx1, ..};
 * the sender's node uses {@link #senderRails()} and the receiver's the same ports of its own devices. From
 * {@code --rails N --devices D} (rail {@code i} on device {@code i mod D}, port {@code i / D + 1}: two rails
 * over two devices, or over two ports of one) or from {@code --rails tx0:1,tx1:1} (device:port[:paths] of the
 * sender's devices).
 *
 * @param devices        soft NICs per host, 1..16
 * @param portsPerDevice ports per NIC, 1..16
 * @param senderRails    the sender node's rails, in rail order
 * @param nicThreadPerDevice whether the soft provider runs each NIC's engine on a thread of its own
 *                           ({@code --nic-threads per-device}, seed 004's offload) instead of one for all
 */
record SoftRailLayout(int devices, int portsPerDevice, List<RailSpec> senderRails, boolean nicThreadPerDevice) {
    SoftRailLayout(int devices, int portsPerDevice, List<RailSpec> senderRails) {
        this(devices, portsPerDevice, senderRails, false);
    }

    /** This layout with each NIC's engine on a thread of its own ({@code per}) or one thread for all. */
    SoftRailLayout nicThreadPerDevice(boolean per) {
        return new SoftRailLayout(devices, portsPerDevice, senderRails, per);
    }

    /** The most soft NICs per host. */
    static final int MAX_DEVICES = 16;

    /** {@code rails} rails spread over {@code devices} devices, round robin. */
    static SoftRailLayout ofCount(int rails, int devices) {
        checkDevices(devices);
        List<RailSpec> list = new ArrayList<>();
        for (int i = 0; i < rails; i++) {
            list.add(RailSpec.of("tx" + (i % devices), i / devices + 1));
        }
        return new SoftRailLayout(devices, (rails + devices - 1) / devices, List.copyOf(list));
    }

    /**
     * The rails {@code text} names ({@code tx<k>:port[:paths]}, comma-separated), on {@code devices} NICs per host
     * (null: as many as the rails name).
     *
     * @throws UserError naming the bad entry and the fix
     */
    static SoftRailLayout parse(String text, @Nullable Integer devices) {
        List<RailSpec> rails;
        try {
            rails = RailSpec.parseList(text);
        } catch (IllegalArgumentException e) {
            throw new UserError("--rails " + text + ": " + e.getMessage());
        }
        int maxDevice = 0;
        int maxPort = 1;
        for (RailSpec r : rails) {
            int d = deviceIndex(r.device(), text);
            maxDevice = Math.max(maxDevice, d);
            maxPort = Math.max(maxPort, r.port());
        }
        int n = devices != null ? devices : maxDevice + 1;
        checkDevices(n);
        if (maxDevice >= n) {
            throw new UserError("--rails " + text + " names device tx" + maxDevice + " but --devices " + n + " gives tx0..tx" + (n - 1)
                + "; raise --devices or name fewer devices");
        }
        if (maxPort > 16) {
            throw new UserError("--rails " + text + " names port " + maxPort + "; the in-JVM soft NICs have ports 1..16");
        }
        return new SoftRailLayout(n, maxPort, rails);
    }

    private static int deviceIndex(String device, String text) {
        if (device.startsWith("tx")) {
            try {
                return Integer.parseInt(device.substring(2));
            } catch (NumberFormatException e) {
                // falls through to the error below
            }
        }
        throw new UserError("--rails " + text + " names device '" + device + "'; the in-JVM soft run names the sender's NICs tx0, tx1, .. "
            + "(the receiver's rx0, rx1, .. mirror them), e.g. --rails tx0:1,tx1:1");
    }

    private static void checkDevices(int devices) {
        if (devices < 1 || devices > MAX_DEVICES) {
            throw new UserError("--devices must be in 1.." + MAX_DEVICES + " but it was " + devices);
        }
    }

    /** The rails of the connection: one per path of each rail entry. */
    int railCount() {
        return senderRails.stream().mapToInt(RailSpec::paths).sum();
    }

    /** The receiver node's rails: the sender's ports on the receiver's devices. */
    List<RailSpec> receiverRails() {
        return senderRails.stream().map(r -> new RailSpec("rx" + r.device().substring(2), r.port(), r.paths())).toList();
    }

    /** Device names of the one soft provider both hosts are on: the sender's, then the receiver's. */
    List<String> deviceNames() {
        List<String> names = new ArrayList<>();
        for (int d = 0; d < devices; d++) {
            names.add("tx" + d);
        }
        for (int d = 0; d < devices; d++) {
            names.add("rx" + d);
        }
        return names;
    }

    /** For each connection rail in order: {device index, port} of the sender (a port with paths once per path). */
    List<int[]> railPorts() {
        List<int[]> ports = new ArrayList<>();
        for (RailSpec r : senderRails) {
            for (int p = 0; p < r.paths(); p++) {
                ports.add(new int[] {Integer.parseInt(r.device().substring(2)), r.port()});
            }
        }
        return ports;
    }

    /** e.g. {@code 2 devices x 1 port, rails tx0:1,tx1:1}. */
    String describe() {
        return devices + (devices == 1 ? " device" : " devices") + " x " + portsPerDevice + (portsPerDevice == 1 ? " port" : " ports")
            + ", rails " + String.join(",", senderRails.stream().map(RailSpec::toString).toList())
            + (nicThreadPerDevice ? ", a NIC thread per device" : "");
    }
}
