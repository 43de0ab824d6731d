package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.verbs.PortAddress;
import io.rsocket.DuplexConnection;
import io.rsocket.transport.ClientTransport;
import reactor.core.publisher.Mono;

import java.util.Objects;

/**
 * An RSocket {@link ClientTransport} that connects over rdmaflux: each {@link #connect()} opens one
 * {@code RdmaConnection} from {@code node} to the {@link RdmaServerTransport} at {@code address} with the
 * given {@link ConnectionSpec} (rails, channel kind, striping) and wraps it in an
 * {@link RdmaDuplexConnection}.
 *
 * <pre>{@code
 * RSocket rsocket = RSocketConnector.connectWith(
 *     RdmaClientTransport.create(node, serverAddress).spec(ConnectionSpec.rails(2))).block();
 * }</pre>
 *
 * <p><b>Frame length:</b> {@link #maxFrameLength()} (default 1 MiB, rdmaflux's default
 * {@code maxMessageBytes}) is what RSocket checks every payload against; a frame above the node's
 * rendezvous threshold travels by rendezvous (one RDMA WRITE into a registered buffer of the peer). It
 * must not exceed the peer node's {@code maxMessageBytes}: {@code connect()} checks that and fails
 * otherwise. For larger payloads set RSocket's fragmentation ({@code RSocketConnector.fragment(mtu)}).
 *
 * <p>Immutable and thread-safe; the {@code spec}, {@code allocator} and {@code maxFrameLength} methods
 * return a new transport.
 */
public final class RdmaClientTransport implements ClientTransport {
    private final RdmaNode node;
    private final PortAddress address;
    private final ConnectionSpec spec;
    private final ByteBufAllocator alloc;
    private final int maxFrameLength;

    private RdmaClientTransport(RdmaNode node, PortAddress address, ConnectionSpec spec, ByteBufAllocator alloc, int maxFrameLength) {
        this.node = node;
        this.address = address;
        this.spec = spec;
        this.alloc = alloc;
        this.maxFrameLength = maxFrameLength;
    }

    /** A transport to the server at {@code address}: one rail, Netty's default allocator, 1 MiB frames. */
    public static RdmaClientTransport create(RdmaNode node, PortAddress address) {
        return new RdmaClientTransport(Objects.requireNonNull(node, "node"), Objects.requireNonNull(address, "address"),
            ConnectionSpec.defaults(), ByteBufAllocator.DEFAULT, FrameLimits.DEFAULT_MAX_FRAME_LENGTH);
    }

    /** The same transport opening its connections with {@code spec} (e.g. {@code ConnectionSpec.rails(2)}). */
    public RdmaClientTransport spec(ConnectionSpec spec) {
        return new RdmaClientTransport(node, address, Objects.requireNonNull(spec, "spec"), alloc, maxFrameLength);
    }

    /** The same transport, allocating received frames from {@code alloc} (what {@code DuplexConnection.alloc()} returns). */
    public RdmaClientTransport allocator(ByteBufAllocator alloc) {
        return new RdmaClientTransport(node, address, spec, Objects.requireNonNull(alloc, "alloc"), maxFrameLength);
    }

    /**
     * The same transport with a frame limit of {@code bytes}.
     *
     * @throws IllegalArgumentException if {@code bytes} is outside [64, 16 777 215]
     */
    public RdmaClientTransport maxFrameLength(int bytes) {
        return new RdmaClientTransport(node, address, spec, alloc, FrameLimits.check(bytes));
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    /**
     * Opens a connection when subscribed.
     *
     * @return the connection; errors as {@code RdmaNode.connect} does (refused, unreachable, timed out, a
     *     closed node), or with {@link IllegalStateException} when {@link #maxFrameLength()} exceeds the
     *     peer's {@code maxMessageBytes}
     */
    @Override
    public Mono<DuplexConnection> connect() {
        return Mono.defer(() -> node.connect(address, spec))
            .map(c -> new RdmaDuplexConnection(FrameLimits.requireFits(c, maxFrameLength), alloc, RdmaSocketAddress.of(address)));
    }

    @Override
    public String toString() {
        return "RdmaClientTransport{" + node.name() + " -> " + address + ", " + spec + "}";
    }
}
