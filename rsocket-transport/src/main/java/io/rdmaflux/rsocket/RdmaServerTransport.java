package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rsocket.transport.ServerTransport;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

import java.util.Objects;

/**
 * An RSocket {@link ServerTransport} that listens on an rdmaflux node: {@link #start} binds
 * {@code address} ({@code RdmaNode.bind}; service 0 picks a free one) and hands every accepted
 * {@code RdmaConnection}, as an {@link RdmaDuplexConnection}, to RSocket. The rails and channel kinds of a
 * connection are the ones its client asked for.
 *
 * <pre>{@code
 * RdmaServerChannel server = RSocketServer.create(acceptor)
 *     .bind(RdmaServerTransport.create(node, new PortAddress("mem", device, 0))).block();
 * }</pre>
 *
 * <p><b>Frame length:</b> as {@link RdmaClientTransport#maxFrameLength(int)}; an accepted connection whose
 * client node takes smaller messages is aborted (logged), since RSocket would send it frames it refuses.
 *
 * <p>Immutable and thread-safe; {@code allocator} and {@code maxFrameLength} return a new transport.
 */
public final class RdmaServerTransport implements ServerTransport<RdmaServerChannel> {
    private static final Logger LOG = Loggers.getLogger(RdmaServerTransport.class);
    private final RdmaNode node;
    private final PortAddress address;
    private final ByteBufAllocator alloc;
    private final int maxFrameLength;

    private RdmaServerTransport(RdmaNode node, PortAddress address, ByteBufAllocator alloc, int maxFrameLength) {
        this.node = node;
        this.address = address;
        this.alloc = alloc;
        this.maxFrameLength = maxFrameLength;
    }

    /** A transport listening at {@code address} of {@code node}: Netty's default allocator, 1 MiB frames. */
    public static RdmaServerTransport create(RdmaNode node, PortAddress address) {
        return new RdmaServerTransport(Objects.requireNonNull(node, "node"), Objects.requireNonNull(address, "address"),
            ByteBufAllocator.DEFAULT, FrameLimits.DEFAULT_MAX_FRAME_LENGTH);
    }

    /** The same transport, allocating received frames from {@code alloc} (what {@code DuplexConnection.alloc()} returns). */
    public RdmaServerTransport allocator(ByteBufAllocator alloc) {
        return new RdmaServerTransport(node, address, Objects.requireNonNull(alloc, "alloc"), maxFrameLength);
    }

    /**
     * The same transport with a frame limit of {@code bytes}.
     *
     * @throws IllegalArgumentException if {@code bytes} is outside [64, 16 777 215]
     */
    public RdmaServerTransport maxFrameLength(int bytes) {
        return new RdmaServerTransport(node, address, alloc, FrameLimits.check(bytes));
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    /**
     * Binds when subscribed.
     *
     * @return the listening channel; errors as {@code RdmaNode.bind} does (address in use or not local, a
     *     closed node)
     */
    @Override
    public Mono<RdmaServerChannel> start(ConnectionAcceptor acceptor) {
        Objects.requireNonNull(acceptor, "acceptor");
        return Mono.fromCallable(() -> {
            RdmaServer server = node.bind(address);
            Disposable accepting = server.accept().subscribe(c -> accept(c, acceptor));
            return new RdmaServerChannel(server, accepting);
        });
    }

    private void accept(RdmaConnection c, ConnectionAcceptor acceptor) {
        RdmaDuplexConnection dc;
        try {
            dc = new RdmaDuplexConnection(FrameLimits.requireFits(c, maxFrameLength), alloc, new RdmaSocketAddress(c.toString()));
        } catch (IllegalStateException e) {
            LOG.warn("refused an RSocket connection: {}", e.getMessage());
            return;
        }
        acceptor.apply(dc).subscribe(null, e -> {
            LOG.debug("RSocket acceptor failed on {}", dc, e);
            dc.dispose();
        });
    }

    @Override
    public String toString() {
        return "RdmaServerTransport{" + node.name() + " at " + address + "}";
    }
}
