package io.rdmaflux.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One entry of {@link RdmaNode.Builder#rails}: a port of a device, and how many paths (RC queue pairs
 * per connection) it carries. A node's rails may come from several devices (HCAs), so that a connection
 * stripes over several NICs (seed 000 &sect;4.2: a virtual subchannel per HCA, per port, or per path of a
 * port). Each path is one rail of the node, named {@code device:port} (one path) or
 * {@code device:port/p} (path {@code p} from 0, when the port has several), the names
 * {@link ConnectionSpec#rails(String...)} picks rails by.
 *
 * <pre>{@code
 * RailSpec.of("mlx5_0", 1)                 // port 1 of mlx5_0
 * RailSpec.of("soft1", 1).paths(2)         // two paths on port 1 of soft1: rails soft1:1/0 and soft1:1/1
 * RailSpec.parseList("soft0:1,soft1:1:2")  // the same as text, as the CLIs take it
 * }</pre>
 *
 * <p>Immutable; {@link #paths(int)} returns a new value.
 *
 * @param device the device name as the provider lists it ({@code RdmaProvider.devices()})
 * @param port   the port number, from 1
 * @param paths  queue pairs per connection on this port, in [1, {@value #MAX_PATHS}]
 */
public record RailSpec(String device, int port, int paths) {
    /** The most paths one port carries. */
    public static final int MAX_PATHS = 16;

    /**
     * @throws IllegalArgumentException naming the value and the fix
     */
    public RailSpec {
        Objects.requireNonNull(device, "device");
        if (device.isBlank() || device.indexOf(':') >= 0 || device.indexOf(',') >= 0) {
            throw new IllegalArgumentException("rail device name '" + device + "' must be a device name without ':' or ','"
                + " (e.g. soft0 or mlx5_0); see RdmaProvider.devices() for the names");
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("rail port in [1, 255] required but it was " + port + " (device " + device
                + "); ports are numbered from 1");
        }
        if (paths < 1 || paths > MAX_PATHS) {
            throw new IllegalArgumentException("rail paths in [1, " + MAX_PATHS + "] required but it was " + paths + " (" + device + ":"
                + port + "); a path is one queue pair per connection on the port, use 1 for a plain rail");
        }
    }

    /** Port {@code port} of {@code device}, one path. */
    public static RailSpec of(String device, int port) {
        return new RailSpec(device, port, 1);
    }

    /** This rail with {@code n} paths (queue pairs per connection on the port, seed 000 &sect;4.2). */
    public RailSpec paths(int n) {
        return new RailSpec(device, port, n);
    }

    /**
     * Parses {@code device:port} or {@code device:port:paths}, e.g. {@code soft0:1} or {@code mlx5_1:1:2}.
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static RailSpec parse(String text) {
        Objects.requireNonNull(text, "text");
        String[] parts = text.trim().split(":", -1);
        if (parts.length < 2 || parts.length > 3 || parts[0].isBlank()) {
            throw new IllegalArgumentException("rail '" + text + "' is not device:port[:paths]; write e.g. soft0:1 or mlx5_0:1:2"
                + " (device name, port number from 1, optional number of paths)");
        }
        int port = number(text, "port", parts[1]);
        int paths = parts.length == 3 ? number(text, "paths", parts[2]) : 1;
        try {
            return new RailSpec(parts[0].trim(), port, paths);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rail '" + text + "': " + e.getMessage(), e);
        }
    }

    /**
     * Parses a comma-separated list of {@link #parse rails}, e.g. {@code soft0:1,soft1:1}.
     *
     * @throws IllegalArgumentException naming the bad entry, or if the list is empty
     */
    public static List<RailSpec> parseList(String text) {
        Objects.requireNonNull(text, "text");
        List<RailSpec> rails = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("rails '" + text + "' has an empty entry; write device:port[:paths] entries separated by"
                    + " commas, e.g. soft0:1,soft1:1");
            }
            rails.add(parse(part));
        }
        return List.copyOf(rails);
    }

    private static int number(String text, String what, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("rail '" + text + "' has " + what + " '" + value + "', not a whole number; write"
                + " device:port[:paths], e.g. soft0:1 or mlx5_0:1:2", e);
        }
    }

    /** {@code device:port}, or {@code device:port:paths} with several paths (the form {@link #parse} reads). */
    @Override
    public String toString() {
        return device + ":" + port + (paths > 1 ? ":" + paths : "");
    }
}
