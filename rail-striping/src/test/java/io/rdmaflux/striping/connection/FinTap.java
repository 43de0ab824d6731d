package io.rdmaflux.striping.connection;

import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.FinFrameCodec;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftPort;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A soft-provider {@link FrameTransport} around an in-JVM one that records every rdmaflux FIN frame
 * a NIC transmits (an RC SEND whose payload is a FIN, seed 000 §5.3), read off the wire: the port
 * it goes to, the message's PSN and the stripe fields. A frame the RC requester re-transmits (same
 * queue pair, same RC PSN) is recorded once. Called on the NICs' engine threads; read after the run.
 */
final class FinTap implements FrameTransport {
    /** One FIN: sent to port {@code port} of the peer, for message {@code psn}, stripe {@code index} of {@code stripes}. */
    record Fin(int port, int psn, int index, int stripes, int stripeOffset, int stripeLength) {
    }

    private final FrameTransport inner;
    private final SoftFabric softFabric;
    private final List<Fin> fins = new ArrayList<>();
    private final Set<List<Integer>> seen = new HashSet<>();

    /** A fabric named {@code name} whose frames go over a fresh in-JVM transport through this tap. */
    FinTap(String name) {
        this.inner = SoftFabric.mem(name + "-inner").transport();
        this.softFabric = SoftFabric.over(name, this);
    }

    /** The fabric to give both providers ({@code SoftProvider.Builder.fabric}). */
    SoftFabric softFabric() {
        return softFabric;
    }

    synchronized List<Fin> fins() {
        return List.copyOf(fins);
    }

    private synchronized void record(SoftFrame frame) {
        if (frame.type != io.rdmaflux.verbs.soft.FrameType.SEND || frame.payloadCount == 0
            || frame.payloadLengths[0] < FinFrameCodec.LENGTH || frame.route == null) {
            return;
        }
        UnsafeBuffer b = new UnsafeBuffer(frame.payloadBuffers[0], frame.payloadOffsets[0], frame.payloadLengths[0]);
        if (b.getByte(FrameHeader.TYPE_OFFSET) != FrameType.FIN.code()
            || !seen.add(List.of(frame.destinationQpn, frame.psn, frame.route.destination().port()))) {
            return;
        }
        fins.add(new Fin(frame.route.destination().port(), FrameHeader.psn(b, 0), FinFrameCodec.stripeIndex(b, 0),
            FinFrameCodec.stripes(b, 0), FinFrameCodec.stripeOffset(b, 0),
            FinFrameCodec.stripeLength(b, 0)));
    }

    @Override
    public String fabric() {
        return inner.fabric();
    }

    @Override
    public Attachment attach(SoftDevice nic) {
        Attachment a = inner.attach(nic);
        return new Attachment() {
            @Override
            public PortAddress bind(SoftPort port) {
                return a.bind(port);
            }

            @Override
            public Route resolve(PortAddress address) {
                return a.resolve(address);
            }

            @Override
            public void transmit(SoftFrame frame) {
                record(frame);
                a.transmit(frame);
            }

            @Override
            public void flush() {
                a.flush();
            }

            @Override
            public int poll(long nowNs, int limit) {
                return a.poll(nowNs, limit);
            }

            @Override
            public boolean awaitWork(long timeoutNs) {
                return a.awaitWork(timeoutNs);
            }

            @Override
            public void wakeup() {
                a.wakeup();
            }

            @Override
            public void close() {
                a.close();
            }
        };
    }
}
