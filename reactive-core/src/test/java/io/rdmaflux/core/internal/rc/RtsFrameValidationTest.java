package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.frame.FrameFormatException;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.RtsFrameCodec;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An RTS that does not fit its layout (an RTS is a header alone) fails the rail as a protocol error
 * naming the frame, like a malformed CTS or FIN, and never reaches the connection as a rendezvous
 * request. The peer is a raw queue pair posting hand-made frames; INVOKER mode, virtual time.
 */
class RtsFrameValidationTest {
    private static final int BUFFER_BYTES = 256;

    /** Records the RTSs and the failure; nothing else is expected. */
    private static final class Recording implements ChannelEvents {
        @Override
        public int takeMessageCreditTotal() {
            return 0;
        }

        @Override
        public void onMessageCreditTotal(int total15) {
        }

        final List<String> rts = new ArrayList<>();
        RdmaException failure;

        @Override
        public void onData(Channel subchannel, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                           boolean first, boolean last, int messageLength) {
            throw new AssertionError("no DATA frame was sent");
        }

        @Override
        public void onRtsRead(Channel subchannel, int psn, int messageLength, long address, int rkey) {
            throw new AssertionError("no RTS_READ was sent");
        }

        @Override
        public void onReadFin(Channel subchannel, int psn, int messageLength, int flags) {
            throw new AssertionError("no READ_FIN was sent");
        }

        @Override
        public void onReadCompleted(Channel subchannel, long token) {
            throw new AssertionError("no RDMA READ was posted");
        }

        @Override
        public void onPackedData(Channel subchannel, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
            throw new AssertionError("no DATA frame was sent");
        }

        @Override
        public void onRts(Channel subchannel, int psn, int messageLength) {
            rts.add(psn + ":" + messageLength);
        }

        @Override
        public void onCts(Channel subchannel, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        }

        @Override
        public void onFin(Channel subchannel, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        }

        @Override
        public void onSendCompleted(Channel subchannel, long token) {
        }

        @Override
        public void onPeerClose(Channel subchannel, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        }

        @Override
        public void onPeerInboundClosed(Channel subchannel, int firstUndeliveredPsn) {
        }

        @Override
        public void onPeerRailDown(Channel subchannel, int failedRail) {
        }

        @Override
        public void onFailure(Channel subchannel, RdmaException error) {
            failure = error;
        }
    }

    @Test
    void anRtsCarryingAPayloadFailsTheRailNamingTheFrame() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            ProtectionDomain peerPd = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pd = nodes.b().devices().get(0).allocateProtectionDomain();
            RcSubchannel rail = new RcSubchannel(0, pd, nodes.b().devices().get(0).port(1), BUFFER_BYTES, 4, 2, 4, 1,
                QpTimeouts.DEFAULTS, 0);
            CompletionQueue peerCq = nodes.a().devices().get(0).createCompletionQueue(32);
            QueuePair peer = peerPd.createQueuePair(SoftTwoNodes.rc(nodes.a(), peerCq).maxSendWr(8).maxReceiveWr(8).build());
            MemoryRegion frames = peerPd.allocateMemory(4 * BUFFER_BYTES, Access.LOCAL_WRITE);
            try {
                peer.init();
                // receives for what the rail sends back (CREDIT frames)
                for (int i = 2; i < 4; i++) {
                    peer.postReceive(new ReceiveWorkRequest().wrId(i).sge(frames, (long) i * BUFFER_BYTES, BUFFER_BYTES));
                }
                Recording listener = new Recording();
                rail.events(listener);
                rail.grantInitialCredits(4);
                peer.connect(rail.localEndpoint());
                rail.connect(peer.localEndpoint(), BUFFER_BYTES, 4, 0, false);
                UnsafeBuffer out = new UnsafeBuffer(frames.address(), 2 * BUFFER_BYTES);

                int wellFormed = RtsFrameCodec.encode(out, 0, 0, 0, 5_000);
                peer.postSend(new SendWorkRequest().wrId(0).opcode(WrOpcode.SEND).signaled(true).sge(frames, 0, wellFormed));
                nodes.runUntil(() -> rail.doWork(nodes.clock().nanoTime()) >= 0 && !listener.rts.isEmpty(), 1_000, 100_000);
                assertEquals(List.of("0:5000"), listener.rts, "a well-formed RTS reaches the connection");

                // an RTS claiming 4 payload bytes, and carrying them: the header is consistent, the layout is not
                RtsFrameCodec.encode(out, BUFFER_BYTES, 1, 0, 5_000);
                out.putInt(BUFFER_BYTES + FrameHeader.PAYLOAD_LENGTH_OFFSET, 4, ByteOrder.LITTLE_ENDIAN);
                out.putInt(BUFFER_BYTES + RtsFrameCodec.LENGTH, 0xBAD);
                peer.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).signaled(true)
                    .sge(frames, BUFFER_BYTES, RtsFrameCodec.LENGTH + 4));
                nodes.runUntil(() -> rail.doWork(nodes.clock().nanoTime()) >= 0 && (listener.failure != null || listener.rts.size() > 1),
                    1_000, 100_000);

                assertEquals(List.of("0:5000"), listener.rts, "the malformed RTS reached the connection");
                FrameFormatException e = assertInstanceOf(FrameFormatException.class, listener.failure);
                assertEquals(RdmaException.Category.PROTOCOL, e.category());
                assertTrue(e.getMessage().contains("RTS frame carries 4 payload bytes but its layout has 0"), e.getMessage());
                assertTrue(rail.isFailed());
            } finally {
                rail.close();
                peer.close();
                peerCq.close();
                frames.close();
                pd.close();
                peerPd.close();
            }
        }
    }
}
