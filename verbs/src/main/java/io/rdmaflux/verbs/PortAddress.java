package io.rdmaflux.verbs;

import java.util.Objects;

/**
 * Where a port can be reached on its fabric, the soft provider's stand-in for LID/GID.
 *
 * <ul>
 *   <li>in-JVM fabric: {@code mem://<device>:<port number>}</li>
 *   <li>IP fabric: {@code net://<ip address>:<udp/tcp port>}</li>
 * </ul>
 *
 * @param fabric {@code mem} or {@code net} (providers may add their own)
 * @param host   device name (mem) or IP address / host name (net)
 * @param port   port number (mem) or UDP/TCP port (net), in [0, 65535]
 */
public record PortAddress(String fabric, String host, int port) {
    public PortAddress {
        Objects.requireNonNull(fabric, "fabric");
        Objects.requireNonNull(host, "host");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in [0, 65535] but it was " + port);
        }
    }

    /**
     * Parses {@code fabric://host:port}.
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static PortAddress parse(String text) {
        int sep = text.indexOf("://");
        int colon = text.lastIndexOf(':');
        if (sep <= 0 || colon <= sep + 3 || colon == text.length() - 1) {
            throw new IllegalArgumentException("port address '" + text
                + "' is not of the form fabric://host:port, e.g. mem://soft0:1 or net://10.0.0.1:7471");
        }
        String host = text.substring(sep + 3, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new PortAddress(text.substring(0, sep), host, Integer.parseInt(text.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port address '" + text + "' has a port that is not a number", e);
        }
    }

    @Override
    public String toString() {
        return fabric + "://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
