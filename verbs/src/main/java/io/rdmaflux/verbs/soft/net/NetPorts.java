package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftPort;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The bound ports of one {@link NetAttachment}: each NIC port's UDP socket and TCP listener, bound on
 * the port's IP and registered with the attachment's selector; the connections peers open to them,
 * accepted through the {@link NetPeerFilter}; and the choice of the port towards a destination.
 *
 * <p><b>Concurrency:</b> {@link #bind} runs at setup under the attachment's lock; the rest on the
 * engine thread, and {@link #close} once, when the attachment closes.
 */
final class NetPorts {
    private final NetTransport transport;
    private final SoftDevice nic;
    private final NetAttachment owner;
    private final Selector selector;
    private final NetPeerFilter filter;
    /** The attachment's receive halves (shared with it): an accepted connection joins them. */
    private final List<InboundStream> inbound;
    private final List<BoundPort> ports = new ArrayList<>();

    NetPorts(NetTransport transport, SoftDevice nic, NetAttachment owner, Selector selector, List<InboundStream> inbound) {
        this.transport = transport;
        this.nic = nic;
        this.owner = owner;
        this.selector = selector;
        this.filter = transport.config.peerFilter();
        this.inbound = inbound;
    }

    /** One bound NIC port: its UDP socket and TCP listener. */
    static final class BoundPort {
        final int number;
        final InetAddress ip;
        final DatagramChannel udp;
        final ServerSocketChannel tcp;
        final PortAddress address;

        BoundPort(int number, InetAddress ip, DatagramChannel udp, ServerSocketChannel tcp, PortAddress address) {
            this.number = number;
            this.ip = ip;
            this.udp = udp;
            this.tcp = tcp;
            this.address = address;
        }
    }

    /** Binds {@code port}'s UDP socket and TCP listener; on failure closes the attachment and throws. */
    PortAddress bind(SoftPort port) {
        NetTransportConfig cfg = transport.config;
        InetAddress ip = cfg.addressOfPort(port.number());
        int wanted = cfg.basePort() == 0 ? 0 : cfg.basePort() + port.number() - 1;
        if (wanted > 65535) {
            throw new VerbsException("port " + port.number() + " of device '" + nic.name() + "' would bind UDP/TCP port " + wanted
                + " (basePort " + cfg.basePort() + " + " + (port.number() - 1) + "), above 65535; lower basePort");
        }
        IOException last = null;
        for (int attempt = 0; attempt < (wanted == 0 ? 16 : 1); attempt++) {
            ServerSocketChannel tcp = null;
            DatagramChannel udp = null;
            try {
                tcp = ServerSocketChannel.open();
                tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                tcp.bind(new InetSocketAddress(ip, wanted), 64);
                int actual = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
                udp = DatagramChannel.open(ip instanceof java.net.Inet6Address
                    ? java.net.StandardProtocolFamily.INET6 : java.net.StandardProtocolFamily.INET);
                udp.setOption(StandardSocketOptions.SO_RCVBUF, cfg.udpReceiveBufferBytes());
                udp.setOption(StandardSocketOptions.SO_SNDBUF, cfg.udpSendBufferBytes());
                udp.bind(new InetSocketAddress(ip, actual));
                tcp.configureBlocking(false);
                udp.configureBlocking(false);
                BoundPort bp = new BoundPort(port.number(), ip, udp, tcp, new PortAddress(NetTransport.FABRIC, ip.getHostAddress(), actual));
                tcp.register(selector, SelectionKey.OP_ACCEPT, bp);
                udp.register(selector, SelectionKey.OP_READ, bp);
                ports.add(bp);
                return bp.address;
            } catch (IOException e) {
                NetAttachment.closeQuietly(tcp);
                NetAttachment.closeQuietly(udp);
                last = e;
                if (!(e instanceof BindException)) {
                    break;
                }
            }
        }
        String where = "net://" + ip.getHostAddress() + ":" + wanted;
        // the NIC does not come up when a port fails to bind, and nothing else would close us
        owner.close();
        if (last instanceof BindException) {
            throw new VerbsException("cannot bind port " + port.number() + " of device '" + nic.name() + "' at " + where + ": "
                + last.getMessage() + " (address in use, or " + ip.getHostAddress() + " is not an address of this host); "
                + "pick a free basePort, 0 for any, or a local IP", last);
        }
        throw new VerbsException("cannot bind port " + port.number() + " of device '" + nic.name() + "' at " + where + ": " + last, last);
    }

    /** The bound port whose IP shares the longest prefix with {@code destination} (the rail towards it). */
    BoundPort portFor(InetAddress destination) {
        byte[] d = destination.getAddress();
        BoundPort best = ports.get(0);
        int bestBits = -1;
        for (BoundPort p : ports) {
            byte[] a = p.ip.getAddress();
            if (a.length != d.length) {
                continue;
            }
            int bits = 0;
            for (int i = 0; i < a.length; i++) {
                int x = (a[i] ^ d[i]) & 0xFF;
                if (x == 0) {
                    bits += 8;
                    continue;
                }
                bits += Integer.numberOfLeadingZeros(x) - 24;
                break;
            }
            if (bits > bestBits) {
                bestBits = bits;
                best = p;
            }
        }
        return best;
    }

    InetAddress localAddressFor(InetAddress destination) {
        return portFor(destination).ip;
    }

    void accept(BoundPort p) {
        try {
            SocketChannel ch;
            while ((ch = p.tcp.accept()) != null) {
                if (!admitted(ch)) {
                    transport.peersRefused.incrementAndGet();
                    NetAttachment.closeQuietly(ch);
                    continue;
                }
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (transport.config.tcpBufferBytes() > 0) {
                    ch.setOption(StandardSocketOptions.SO_RCVBUF, transport.config.tcpBufferBytes());
                }
                InboundStream s = new InboundStream(transport, nic, ch, owner);
                s.key(ch.register(selector, SelectionKey.OP_READ, s));
                inbound.add(s);
            }
        } catch (IOException e) {
            // a connection reset before accept completed; the listener itself stays usable
            transport.streamsBroken.incrementAndGet();
        }
    }

    private boolean admitted(SocketChannel ch) {
        if (filter.admitsAny()) {
            return true;
        }
        try {
            return filter.admits(((InetSocketAddress) ch.getRemoteAddress()).getAddress());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Closes every port's listener and UDP socket. */
    void close() {
        for (BoundPort p : ports) {
            NetAttachment.closeQuietly(p.tcp);
            NetAttachment.closeQuietly(p.udp);
        }
    }

    List<PortAddress> addresses() {
        return ports.stream().map(p -> p.address).toList();
    }
}
