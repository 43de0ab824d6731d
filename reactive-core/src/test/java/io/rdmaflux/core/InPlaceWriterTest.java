package io.rdmaflux.core;

import io.rdmaflux.core.internal.rc.RcSubchannelAccess;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.verbs.MemoryRegion;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaMessage#write}: the writer fills the registered memory the frame or the rendezvous WRITE
 * is sent from, once, with no staging copy in between. Each call records the absolute address it
 * wrote to, which must lie in the rail's registered send buffers (DATA) or the node's registered
 * rendezvous staging pool (large messages).
 */
class InPlaceWriterTest {
    private static final int BUFFER_BYTES = 1024;

    /** Where a writer was asked to write: the absolute address, whether the buffer was on the heap, the length. */
    private record Target(long address, boolean heap, int length) {
    }

    private static RdmaMessage recording(int length, int seed, List<Target> targets) {
        return RdmaMessage.write(length, (MutableDirectBuffer buf, int off, int len) -> {
            targets.add(new Target(buf.addressOffset() + off, buf.byteArray() != null, len));
            for (int k = 0; k < len; k++) {
                buf.putByte(off + k, (byte) (seed + k));
            }
        });
    }

    private static byte[] expected(int length, int seed) {
        byte[] b = new byte[length];
        for (int k = 0; k < length; k++) {
            b[k] = (byte) (seed + k);
        }
        return b;
    }

    private static boolean inside(long address, int length, long start, long bytes) {
        return address >= start && address + length <= start + bytes;
    }

    @Test
    void aOneFrameMessageIsWrittenOnceStraightIntoARegisteredSendBufferBehindTheHeader() {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES))) {
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            List<Target> targets = new ArrayList<>();
            SendOutcome sent = SendOutcome.of(p.client.send(Mono.just(recording(300, 5, targets))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertArrayEquals(expected(300, 5), got.get(0));
            assertEquals(1, targets.size(), "written once: no scratch copy materialized first");
            Target t = targets.get(0);
            MemoryRegion send = RcSubchannelAccess.sendRegion(ConnectionProbe.channel(p.client, 0));
            assertTrue(!t.heap() && inside(t.address(), t.length(), send.address(), send.length()),
                "writer wrote to " + Long.toHexString(t.address()) + ", outside the registered send buffers at "
                    + Long.toHexString(send.address()) + " (+" + send.length() + ")");
            assertEquals(FrameHeader.LENGTH, (t.address() - send.address()) % BUFFER_BYTES, "the payload right behind a frame header");
        }
    }

    @Test
    void messagesPackedIntoOneFrameAreEachWrittenInPlaceBehindTheirLengthPrefix() {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES))) {
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            List<Target> targets = new ArrayList<>();
            int n = 10;
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> recording(16, i, targets))));
            p.runUntil(() -> sent.completed() && got.size() == n);
            assertEquals(n, targets.size());
            MemoryRegion send = RcSubchannelAccess.sendRegion(ConnectionProbe.channel(p.client, 0));
            for (int i = 0; i < n; i++) {
                assertArrayEquals(expected(16, i), got.get(i));
                Target t = targets.get(i);
                assertTrue(!t.heap() && inside(t.address(), 16, send.address(), send.length()), "message " + i);
                if (i > 0 && t.address() - targets.get(i - 1).address() != 16 + DataFrameCodec.PACKED_PREFIX_BYTES) {
                    // a new frame: its first message starts behind the header and the first length prefix
                    assertEquals(FrameHeader.LENGTH + DataFrameCodec.PACKED_PREFIX_BYTES, (t.address() - send.address()) % BUFFER_BYTES,
                        "message " + i);
                }
            }
        }
    }

    @Test
    void aRendezvousMessageIsWrittenOnceStraightIntoTheRegisteredStagingPool() {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES).maxMessageBytes(64 * 1024))) {
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            List<Target> targets = new ArrayList<>();
            SendOutcome sent = SendOutcome.of(p.client.send(Mono.just(recording(40_000, 3, targets))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertArrayEquals(expected(40_000, 3), got.get(0));
            assertEquals(1, targets.size(), "written once");
            Target t = targets.get(0);
            var staging = p.clientNode.rendezvousPool(false).memory();
            assertTrue(!t.heap() && inside(t.address(), t.length(), staging.addressOffset(), staging.capacity()),
                "writer wrote to " + Long.toHexString(t.address()) + ", outside the registered staging pool");
            assertEquals(0, (t.address() - staging.addressOffset()) % p.clientNode.rendezvousPool(false).slotBytes(),
                "at the start of a staging slot");
        }
    }
}
