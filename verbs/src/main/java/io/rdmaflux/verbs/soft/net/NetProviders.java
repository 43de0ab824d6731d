package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftProvider;

/**
 * Builds soft providers on the IP fabric.
 *
 * <pre>{@code
 * // two rails: port 1 on 10.77.1.1, port 2 on 10.77.2.1, any free UDP/TCP ports
 * SoftProvider p = NetProviders.builder(NetTransportConfig.builder().address("10.77.1.1").address("10.77.2.1").build())
 *     .name("host-a").build();
 * // or by name: RdmaProviders.open("soft", Map.of("fabric", "net", "addresses", "10.77.1.1,10.77.2.1"))
 * }</pre>
 * The provider gets one device with one port per configured address (rail), a fresh
 * {@link NetTransport}, and a {@link NetConnectionManager}; everything else is the ordinary
 * {@link SoftProvider.Builder} (threading, clock, rail model, more ports).
 */
public final class NetProviders {
    private NetProviders() {
    }

    /** A provider builder on a new net fabric bound as {@code config} says. */
    public static SoftProvider.Builder builder(NetTransportConfig config) {
        return SoftProvider.builder()
            .fabric(NetTransport.fabric("net", config))
            .portsPerDevice(config.addresses().size())
            .connectionManager(NetConnectionManager::new);
    }

    /**
     * The configuration the {@code soft} provider factory builds from its options.
     *
     * @param addresses comma-separated local IPs, one per port (rail); null means 127.0.0.1
     * @param basePort  first UDP/TCP port, or null / "0" for any free ones
     * @throws VerbsException naming the bad value
     */
    public static NetTransportConfig config(@org.jspecify.annotations.Nullable String addresses,
                                            @org.jspecify.annotations.Nullable String basePort) {
        NetTransportConfig.Builder b = NetTransportConfig.builder();
        if (addresses != null) {
            for (String a : addresses.split(",")) {
                if (a.isBlank()) {
                    throw new VerbsException("soft provider option addresses='" + addresses
                        + "' has an empty entry; give comma-separated IPs, e.g. 10.77.1.1,10.77.2.1");
                }
                b.address(a.trim());
            }
        }
        if (basePort != null) {
            try {
                b.basePort(Integer.parseInt(basePort.trim()));
            } catch (NumberFormatException e) {
                throw new VerbsException("soft provider option basePort='" + basePort + "' is not a port number", e);
            }
        }
        return b.build();
    }
}
