package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.VerbsException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which hosts a net-fabric node hears: a list of address blocks in CIDR notation
 * ({@code 10.77.0.0/16}, {@code 127.0.0.1}, {@code ::1/128}); an empty list admits every host (the
 * default). What it covers: TCP connections to a NIC port (RC streams: refused, closed at once),
 * UDP datagrams to a NIC port (UD: dropped) and TCP connections to a connection manager listener
 * (connect requests: closed before the request is read), each counted
 * ({@link NetTransport#peersRefused()}, {@link NetConnectionManager#requestsRefused()}).
 *
 * <p>It filters on the source IP the kernel reports, nothing stronger: it keeps out hosts that are
 * merely on the network, not one that can forge a permitted source address (the net fabric is not
 * authenticated or encrypted; see the README). Immutable, thread-safe.
 */
public final class NetPeerFilter {
    private static final NetPeerFilter ANY = new NetPeerFilter(List.of());

    private record Block(byte[] network, int prefixBits) {
        boolean contains(byte[] ip) {
            if (ip.length != network.length) {
                return false;
            }
            int full = prefixBits / 8;
            for (int i = 0; i < full; i++) {
                if (ip[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefixBits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (8 - rest)) & 0xFF;
            return (ip[full] & mask) == (network[full] & mask);
        }
    }

    private final List<Block> blocks;

    private NetPeerFilter(List<Block> blocks) {
        this.blocks = blocks;
    }

    /** Admits every host. */
    public static NetPeerFilter any() {
        return ANY;
    }

    /**
     * Admits the hosts in {@code cidrs}: each an IP literal, optionally with {@code /prefix}
     * (IPv4 0..32, IPv6 0..128).
     *
     * @throws VerbsException naming the entry that is not an IP literal or has a bad prefix
     */
    public static NetPeerFilter of(List<String> cidrs) {
        List<Block> list = new ArrayList<>();
        for (String c : cidrs) {
            list.add(parse(c));
        }
        return new NetPeerFilter(List.copyOf(list));
    }

    private static Block parse(String cidr) {
        String s = cidr.trim();
        int slash = s.indexOf('/');
        String ip = slash < 0 ? s : s.substring(0, slash);
        // a literal only: a host name would be resolved here, once, which a filter must not depend on
        if (ip.isEmpty() || !(ip.indexOf(':') >= 0 || ip.chars().allMatch(ch -> ch == '.' || Character.isDigit(ch)))) {
            throw new VerbsException("peer filter entry '" + cidr + "' is not an IP literal; give e.g. 10.77.1.0/24, 127.0.0.1 or ::1/128");
        }
        byte[] network;
        try {
            network = InetAddress.getByName(ip).getAddress();
        } catch (UnknownHostException e) {
            throw new VerbsException("peer filter entry '" + cidr + "' is not an IP literal; give e.g. 10.77.1.0/24", e);
        }
        int max = network.length * 8;
        int prefix = max;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(s.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > max) {
                throw new VerbsException("peer filter entry '" + cidr + "' has prefix '" + s.substring(slash + 1)
                    + "'; give a number in [0, " + max + "]");
            }
        }
        return new Block(network, prefix);
    }

    /** Whether {@code address} may talk to this node. */
    public boolean admits(InetAddress address) {
        if (blocks.isEmpty()) {
            return true;
        }
        byte[] ip = address.getAddress();
        for (Block b : blocks) {
            if (b.contains(ip)) {
                return true;
            }
        }
        return false;
    }

    /** Whether every host is admitted (no list). */
    public boolean admitsAny() {
        return blocks.isEmpty();
    }

    @Override
    public String toString() {
        if (blocks.isEmpty()) {
            return "any";
        }
        List<String> out = new ArrayList<>();
        for (Block b : blocks) {
            try {
                out.add(InetAddress.getByAddress(b.network).getHostAddress() + "/" + b.prefixBits);
            } catch (UnknownHostException e) {
                out.add("?");
            }
        }
        return out.toString();
    }
}
