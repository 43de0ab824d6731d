package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code disni} provider's options, as given to {@code RdmaProviders.open("disni", options)}.
 *
 * <ul>
 *   <li>{@code addresses}: comma-separated IP addresses, one per device (rail): the address of the
 *       RDMA NIC's net device (IPoIB or RoCE). DiSNI reaches a device only through {@code rdma_cm} on one
 *       of its addresses; default: the IPv4 addresses of every RDMA device's net devices found under
 *       {@code /sys/class/infiniband} ({@link DisniDeviceDiscovery}).</li>
 *   <li>{@code threading}: {@code dedicated} (default; one thread runs the CM event loop and drains
 *       the devices' CQs) or {@code invoker} (the caller drives {@code progress}).</li>
 *   <li>{@code mtu}: the path MTU reported for the ports, bytes (256..4096, default 4096): DiSNI has no
 *       {@code ibv_query_port}, so ports report what is configured.</li>
 *   <li>{@code bandwidth}: the port bandwidth reported, bytes/s (default 12_500_000_000, 100 Gb/s).</li>
 *   <li>{@code latency}: the one-way latency reported, ns (default 1000).</li>
 *   <li>{@code maxInline}: the largest inline send, bytes (default 256; a QP asks the NIC for its own maxInlineBytes, and rdma_create_qp fails if the NIC cannot).</li>
 *   <li>{@code cqEntries}: entries of each device's one native CQ (default 16384); the QPs of a device
 *       together may not have more send and receive work requests outstanding.</li>
 *   <li>{@code cmTimeoutMs}: address and route resolution timeout, ms (default 2000).</li>
 * </ul>
 *
 * @param addresses   one per device
 * @param threading   DEDICATED or INVOKER
 * @param mtuBytes    reported path MTU, bytes
 * @param bandwidthBytesPerSec reported bandwidth, bytes/s
 * @param latencyNs   reported one-way latency, ns
 * @param maxInlineBytes largest inline send, bytes
 * @param cqEntries   entries of each device's native CQ
 * @param cmTimeoutMs resolution timeout, ms
 */
record DisniOptions(List<InetAddress> addresses, ThreadingMode threading, int mtuBytes, long bandwidthBytesPerSec,
                    long latencyNs, int maxInlineBytes, int cqEntries, int cmTimeoutMs) {
    private static final Set<String> KEYS = Set.of("addresses", "threading", "mtu", "bandwidth", "latency", "maxInline",
        "cqEntries", "cmTimeoutMs");

    DisniOptions {
        addresses = List.copyOf(addresses);
        if (addresses.isEmpty()) {
            throw new VerbsException("provider 'disni' found no RDMA device address; pass addresses=IP[,IP...] "
                + "(the IPoIB or RoCE address of each NIC)");
        }
    }

    /** Options for the given addresses with every other option at its default, INVOKER threading. */
    static DisniOptions invoker(List<InetAddress> addresses) {
        return new DisniOptions(addresses, ThreadingMode.INVOKER, 4096, 12_500_000_000L, 1000, 256, 16384, 2000);
    }

    /**
     * Parses {@code options}.
     *
     * @param discovered the addresses to use when {@code addresses} is not given
     * @throws VerbsException naming the first unknown key or bad value and what is accepted
     */
    static DisniOptions parse(Map<String, String> options, List<InetAddress> discovered) {
        for (String key : options.keySet()) {
            if (!KEYS.contains(key)) {
                throw new VerbsException("unknown option '" + key + "' for provider 'disni'; known options are " + KEYS.stream().sorted().toList());
            }
        }
        List<InetAddress> addresses = discovered;
        String given = options.get("addresses");
        if (given != null) {
            addresses = new ArrayList<>();
            for (String a : given.split(",")) {
                addresses.add(ip(a.trim()));
            }
        }
        ThreadingMode threading = switch (options.getOrDefault("threading", "dedicated").toLowerCase(Locale.ROOT)) {
            case "dedicated" -> ThreadingMode.DEDICATED;
            case "invoker" -> ThreadingMode.INVOKER;
            default -> throw new VerbsException("option threading='" + options.get("threading")
                + "' for provider 'disni' is not one of dedicated, invoker");
        };
        int mtu = (int) number(options, "mtu", 4096, 256, 4096);
        if (Integer.bitCount(mtu) != 1) {
            throw new VerbsException("option mtu=" + mtu + " for provider 'disni' is not one of 256, 512, 1024, 2048, 4096");
        }
        return new DisniOptions(addresses, threading, mtu, number(options, "bandwidth", 12_500_000_000L, 1, Long.MAX_VALUE),
            number(options, "latency", 1000, 1, Long.MAX_VALUE), (int) number(options, "maxInline", 256, 0, 1024),
            (int) number(options, "cqEntries", 16384, 1, 1 << 22), (int) number(options, "cmTimeoutMs", 2000, 1, 600_000));
    }

    private static InetAddress ip(String text) {
        if (text.isEmpty() || !(Character.isDigit(text.charAt(0)) || text.indexOf(':') >= 0)) {
            throw new VerbsException("option addresses holds '" + text + "', which is not an IP address literal; "
                + "give the IPoIB/RoCE address of each NIC, e.g. addresses=192.0.2.10,192.0.2.11");
        }
        try {
            return InetAddress.getByName(text); // a literal: no name lookup
        } catch (UnknownHostException e) {
            throw new VerbsException("option addresses holds '" + text + "', which is not an IP address: " + e.getMessage(), e);
        }
    }

    private static long number(Map<String, String> options, String key, long dflt, long min, long max) {
        String v = options.get(key);
        if (v == null) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            n = Long.MIN_VALUE;
        }
        if (n < min || n > max) {
            throw new VerbsException("option " + key + "='" + v + "' for provider 'disni' must be a whole number in [" + min + ", " + max + "]");
        }
        return n;
    }
}
