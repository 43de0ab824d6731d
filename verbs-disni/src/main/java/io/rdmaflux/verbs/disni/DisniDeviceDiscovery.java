package io.rdmaflux.verbs.disni;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The IP addresses through which {@code rdma_cm} reaches each RDMA device: for every device under
 * {@code /sys/class/infiniband/<dev>}, the net devices in {@code <dev>/device/net/} (IPoIB {@code ib0},
 * or the RoCE Ethernet port), and their IPv4 addresses. DiSNI has no {@code ibv_get_device_list}; a
 * device is opened by binding a CM id to one of its addresses.
 */
final class DisniDeviceDiscovery {
    private DisniDeviceDiscovery() {
    }

    /** The addresses found on this host, in device order; empty where there are none. */
    static List<InetAddress> discover() {
        return discover(DisniProbe.SYSFS_DEVICES, DisniDeviceDiscovery::ipv4Of);
    }

    /** As {@link #discover()}, with the sysfs root and the net-device lookup injected. */
    static List<InetAddress> discover(Path sysfsDevices, Function<String, List<InetAddress>> addressesOfNetDevice) {
        List<InetAddress> out = new ArrayList<>();
        for (String device : DisniProbe.devices(sysfsDevices)) {
            Path net = sysfsDevices.resolve(device).resolve("device").resolve("net");
            if (!Files.isDirectory(net)) {
                continue;
            }
            try (Stream<Path> netdevs = Files.list(net)) {
                for (String netdev : netdevs.map(p -> p.getFileName().toString()).sorted().toList()) {
                    for (InetAddress a : addressesOfNetDevice.apply(netdev)) {
                        if (!out.contains(a)) {
                            out.add(a);
                        }
                    }
                }
            } catch (IOException e) {
                // an unreadable device is skipped; the user can still name addresses
            }
        }
        return out;
    }

    private static List<InetAddress> ipv4Of(String netdev) {
        try {
            @Nullable NetworkInterface nif = NetworkInterface.getByName(netdev);
            if (nif == null) {
                return List.of();
            }
            return Collections.list(nif.getInetAddresses()).stream().filter(a -> a instanceof Inet4Address).toList();
        } catch (SocketException e) {
            return List.of();
        }
    }
}
