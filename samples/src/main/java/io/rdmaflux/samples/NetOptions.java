package io.rdmaflux.samples;

import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.Collections;
import java.util.List;

/**
 * The two-process options every sample command shares ({@code --listen}, {@code --connect},
 * {@code --addresses}, {@code --timeout-s}), as a picocli mixin, and their validation in one place.
 * The connection they lead to is {@link NetRails#listen} / {@link NetRails#connect}.
 */
final class NetOptions {
    static final int MAX_TIMEOUT_S = 86_400;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
        description = "Two processes over the IP fabric: serve one run for a peer that connects here (port 0 picks a free port and prints it), "
            + "then exit. Run the same command with --connect on the other side.")
    @Nullable String listen;

    @Option(names = "--connect", paramLabel = "HOST:PORT",
        description = "Two processes over the IP fabric: run against a peer started with --listen at HOST:PORT.")
    @Nullable String connect;

    @Option(names = "--addresses", paramLabel = "IP,IP",
        description = "Over the IP fabric: one local IP per rail (the rail count), e.g. 10.77.1.1,10.77.2.1 (default: 127.0.0.1 for each of --rails).")
    @Nullable String addresses;

    @Option(names = "--timeout-s", paramLabel = "S",
        description = "With --listen/--connect: give up after S seconds (waiting for the peer included), 1..86400 (default ${DEFAULT-VALUE}).")
    int timeoutS = 600;

    /**
     * What the options say, validated.
     *
     * @param listen    where to listen, or null
     * @param connect   where to connect, or null; at most one of the two is set
     * @param addresses local IP per rail when {@code --addresses} was given or a peer mode is on (default 127.0.0.1 per rail), else null
     * @param timeout   the whole run's bound in peer mode
     */
    record Parsed(NetRails.@Nullable HostPort listen, NetRails.@Nullable HostPort connect, @Nullable List<String> addresses,
                  Duration timeout) {
        boolean peerMode() {
            return listen != null || connect != null;
        }
    }

    /** Whether {@code --listen} or {@code --connect} was given. */
    boolean peerMode() {
        return listen != null || connect != null;
    }

    /**
     * Validates the options.
     *
     * @param rails          {@code --rails}, the default rail count when no {@code --addresses} are given
     * @param ipFabricOnly   what the error says {@code --addresses} needs when given without a peer
     *                       mode, or null when {@code --addresses} is fine without one
     * @throws UserError naming the flag and the value: both peer modes, a bad {@code host:port},
     *                   a bad address list, {@code --timeout-s} out of range
     */
    Parsed parse(int rails, @Nullable String ipFabricOnly) {
        if (listen != null && connect != null) {
            throw new UserError("--listen and --connect exclude each other: one process listens, the other connects");
        }
        if (!peerMode() && addresses != null && ipFabricOnly != null) {
            throw new UserError("--addresses applies to " + ipFabricOnly + " only");
        }
        if (timeoutS < 1 || timeoutS > MAX_TIMEOUT_S) {
            throw new UserError("--timeout-s must be in 1..86400 but it was " + timeoutS);
        }
        NetRails.HostPort l = listen != null ? NetRails.HostPort.parse("--listen", listen) : null;
        NetRails.HostPort c = connect != null ? NetRails.HostPort.parse("--connect", connect) : null;
        if (c != null && c.port() == 0) {
            throw new UserError("--connect " + connect + ": port 0 is for --listen (pick any free port); give the port the listener printed");
        }
        List<String> addrs = null;
        if (addresses != null) {
            addrs = NetRails.parseAddresses(addresses);
        } else if (peerMode()) {
            addrs = Collections.nCopies(Math.max(1, Math.min(rails, 16)), "127.0.0.1");
        }
        return new Parsed(l, c, addrs, Duration.ofSeconds(timeoutS));
    }
}
