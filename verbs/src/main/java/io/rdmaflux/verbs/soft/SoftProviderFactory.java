package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviderFactory;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link java.util.ServiceLoader} entry of the soft provider: name {@code soft}, priority 0 (any
 * hardware provider wins {@code auto}), always available.
 *
 * <p>Options (all optional):
 * <table>
 *   <caption>soft provider options</caption>
 *   <tr><th>key</th><th>value</th><th>default</th></tr>
 *   <tr><td>{@code name}</td><td>instance name (thread {@code rdmaflux-soft-<name>})</td><td>{@code soft<n>}</td></tr>
 *   <tr><td>{@code fabric}</td><td>name of the JVM-wide in-JVM fabric to join, or {@code net} for the IP fabric</td><td>{@code default}</td></tr>
 *   <tr><td>{@code addresses}</td><td>(net) comma-separated local IPs, one port (rail) each</td><td>127.0.0.1</td></tr>
 *   <tr><td>{@code basePort}</td><td>(net) UDP/TCP port of port 1, the next ports following; 0 = any free</td><td>0</td></tr>
 *   <tr><td>{@code devices}</td><td>number of devices, 1..64</td><td>1</td></tr>
 *   <tr><td>{@code ports}</td><td>ports (rails) per device, 1..16</td><td>1</td></tr>
 *   <tr><td>{@code bandwidth}</td><td>bytes/s per port, or {@code unshaped}</td><td>unshaped</td></tr>
 *   <tr><td>{@code latency}</td><td>one-way latency per port, ns</td><td>0</td></tr>
 *   <tr><td>{@code mtu}</td><td>256, 512, 1024, 2048 or 4096</td><td>4096</td></tr>
 *   <tr><td>{@code threading}</td><td>{@code dedicated} or {@code invoker}</td><td>dedicated</td></tr>
 * </table>
 */
public final class SoftProviderFactory implements RdmaProviderFactory {
    /** The option keys this factory understands. */
    public static final Set<String> OPTIONS = Set.of("name", "fabric", "addresses", "basePort", "devices", "ports", "bandwidth", "latency", "mtu", "threading");

    @Override
    public String name() {
        return SoftProvider.NAME;
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public Optional<String> unavailableReason() {
        return Optional.empty();
    }

    @Override
    public RdmaProvider open(Map<String, String> options) {
        for (String key : options.keySet()) {
            if (!OPTIONS.contains(key)) {
                throw new VerbsException("unknown soft provider option '" + key + "'; known options are " + OPTIONS.stream().sorted().toList());
            }
        }
        SoftProvider.Builder b = SoftProvider.builder();
        String name = options.get("name");
        if (name != null) {
            b.name(name);
        }
        String fabric = options.getOrDefault("fabric", SoftFabric.DEFAULT_NAME);
        int defaultPorts = 1;
        if ("net".equals(fabric)) {
            NetTransportConfig net = NetProviders.config(options.get("addresses"), options.get("basePort"));
            b = NetProviders.builder(net);
            if (name != null) {
                b.name(name);
            }
            defaultPorts = net.addresses().size();
        } else if (options.containsKey("addresses") || options.containsKey("basePort")) {
            throw new VerbsException("soft provider options addresses/basePort apply to fabric=net only, but fabric='" + fabric + "'");
        } else {
            b.fabric(SoftFabric.shared(fabric));
        }
        b.devices((int) number(options, "devices", 1));
        b.portsPerDevice((int) number(options, "ports", defaultPorts));
        RailConfig.Builder rail = RailConfig.builder();
        String bw = options.get("bandwidth");
        if (bw != null && !bw.equalsIgnoreCase("unshaped")) {
            rail.bandwidthBytesPerSec(number(options, "bandwidth", 0));
        }
        rail.latencyNs(number(options, "latency", 0));
        rail.mtuBytes((int) number(options, "mtu", 4096));
        b.rail(rail.build());
        String threading = options.getOrDefault("threading", "dedicated").toLowerCase(Locale.ROOT);
        switch (threading) {
            case "dedicated" -> b.threadingMode(ThreadingMode.DEDICATED);
            case "invoker" -> b.threadingMode(ThreadingMode.INVOKER);
            default -> throw new VerbsException("soft provider option threading='" + threading
                + "' is not supported; use 'dedicated' or 'invoker'");
        }
        return b.build();
    }

    private static long number(Map<String, String> options, String key, long dflt) {
        String v = options.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new VerbsException("soft provider option " + key + "='" + v + "' is not a whole number", e);
        }
    }
}
