package io.rdmaflux.ud;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.ud.dr.DatagramSink;
import io.rdmaflux.ud.dr.DrDatagram;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link ReliableDatagramQp} consuming a {@link DatagramSharedReceiveQueue} (a node with a shared receive queue):
 * a SEND of several VFRAGs takes one receive of the queue when its first VFRAG arrives and is placed into it VFRAG by
 * VFRAG; a message abandoned midway (DR gives up on a silent peer) or cut short by closing the queue pair gives that
 * receive back to the head of the queue, where the next message finds it. Two queue pairs on a test wire whose
 * datagrams the test hands over one by one or drops; virtual time, no threads.
 */
class SharedReceiveQueuePlacementTest {
    /** DR datagram of the wire: 100 bytes of VFRAG payload. */
    private static final int DATAGRAM_BYTES = DrDatagram.HEADER_BYTES + 100;
    /** VFRAGs of the SEND: the initial credit of {@link UdSpec#DEFAULTS}, so all leave at once. */
    private static final int VFRAGS = 4;
    /** A SEND of 376 bytes: with its work-request header a 400-byte DR message, {@link #VFRAGS} full VFRAGs. */
    private static final int PAYLOAD_BYTES = VFRAGS * (DATAGRAM_BYTES - DrDatagram.HEADER_BYTES) - ReliableDatagramQp.MESSAGE_HEADER_BYTES;
    private static final int RECEIVES = 3;
    private static final int RECEIVE_BYTES = 512;
    /** Where a DR datagram names its type (see {@link DrDatagram}'s layout). */
    private static final int TYPE_OFFSET = 4;

    private final Wire wire = new Wire();
    private final DatagramCompletionQueue senderCq = new DatagramCompletionQueue(64);
    private final DatagramCompletionQueue receiverCq = new DatagramCompletionQueue(64);
    private final DatagramSharedReceiveQueue srq = new DatagramSharedReceiveQueue(16);
    private final UnsafeBuffer source = new UnsafeBuffer(ByteBuffer.allocateDirect(PAYLOAD_BYTES));
    private final UnsafeBuffer[] receiveBuffers = new UnsafeBuffer[RECEIVES];
    private final byte[] payload = new byte[PAYLOAD_BYTES];
    private ReliableDatagramQp sender;
    private ReliableDatagramQp receiver;
    private long nowNs = 1_000_000;

    @BeforeEach
    void connect() {
        for (int i = 0; i < PAYLOAD_BYTES; i++) {
            payload[i] = (byte) (i * 31 + 7);
        }
        source.putBytes(0, payload);
        ReceiveWorkRequest rwr = new ReceiveWorkRequest();
        for (int i = 0; i < RECEIVES; i++) {
            receiveBuffers[i] = new UnsafeBuffer(ByteBuffer.allocateDirect(RECEIVE_BYTES));
            assertTrue(srq.postReceive(rwr.wrId(100 + i).sge(receiveBuffers[i].addressOffset(), RECEIVE_BYTES, 0)));
        }
        sender = new ReliableDatagramQp(wire.a, new WriteGrants(), QpInitAttributes.builder(QpType.RC, wire.a.port).cq(senderCq).build(),
            senderCq, UdSpec.DEFAULTS.dr());
        receiver = new ReliableDatagramQp(wire.b, new WriteGrants(),
            QpInitAttributes.builder(QpType.RC, wire.b.port).cq(receiverCq).srq(srq).build(), receiverCq, UdSpec.DEFAULTS.dr());
        sender.init();
        receiver.init();
        sender.readyToReceive(receiver.localEndpoint());
        receiver.readyToReceive(sender.localEndpoint());
        sender.readyToSend();
        receiver.readyToSend();
    }

    @AfterEach
    void close() {
        sender.close();
        receiver.close();
        srq.close();
        senderCq.close();
        receiverCq.close();
    }

    /** Posts the SEND and runs the sender once: its {@link #VFRAGS} DATA VFRAGs are on the wire to the receiver. */
    private void sendOneMessage() {
        assertTrue(sender.postSend(new SendWorkRequest().wrId(7).opcode(WrOpcode.SEND).signaled(true)
            .sge(source.addressOffset(), PAYLOAD_BYTES, 0)));
        sender.doWork(nowNs);
        assertEquals(VFRAGS, wire.toB.stream().filter(SharedReceiveQueuePlacementTest::isData).count(), "DATA VFRAGs on the wire");
    }

    private static boolean isData(byte[] datagram) {
        return datagram[TYPE_OFFSET] == DrDatagram.DATA;
    }

    /** Hands the receiver the datagrams to it up to and including the next DATA VFRAG, and runs it. */
    private void deliverOneVfragToReceiver() {
        byte[] d;
        do {
            d = wire.toB.poll();
            assertNotNull(d, "a DATA VFRAG on the wire");
            receiver.onDatagram(new UnsafeBuffer(d), 0, d.length, nowNs);
        } while (!isData(d));
        receiver.doWork(nowNs);
    }

    /** Runs both queue pairs, handing over what is on the wire, in virtual time (deadline to deadline) until {@code done}. */
    private void runUntil(BooleanSupplier done, String what) {
        long limitNs = nowNs + 60_000_000_000L;
        wire.run(this);
        while (!done.getAsBoolean()) {
            long next = Math.min(sender.nextDeadlineNs(), receiver.nextDeadlineNs());
            assertTrue(next != Long.MAX_VALUE && next < limitNs, what + " within a virtual minute: " + sender + ", " + receiver);
            nowNs = Math.max(nowNs, next);
            wire.run(this);
        }
    }

    private static List<WorkCompletion> drain(DatagramCompletionQueue cq) {
        List<WorkCompletion> out = new ArrayList<>();
        cq.poll(Integer.MAX_VALUE, wc -> out.add(wc.copy()));
        return out;
    }

    @Test
    void aSendOfSeveralVfragsTakesOneSharedReceiveAtItsFirstVfragAndLandsWholeInIt() {
        sendOneMessage();
        deliverOneVfragToReceiver();
        assertEquals(1, receiver.stats().vfragsReceived());
        assertEquals(RECEIVES - 1, srq.outstanding(), "one receive taken at the first VFRAG");
        assertEquals(List.of(), drain(receiverCq), "nothing completes before the last VFRAG");
        for (int v = 2; v <= VFRAGS; v++) {
            deliverOneVfragToReceiver();
            assertEquals(v, receiver.stats().vfragsReceived());
            assertEquals(RECEIVES - 1, srq.outstanding(), "still one receive taken after VFRAG " + v);
            if (v < VFRAGS) {
                assertEquals(List.of(), drain(receiverCq), "nothing completes before the last VFRAG (after " + v + ")");
            }
        }
        List<WorkCompletion> got = drain(receiverCq);
        assertEquals(1, got.size(), "completions: " + got);
        WorkCompletion wc = got.get(0);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(WcOpcode.RECV, wc.opcode());
        assertEquals(100, wc.wrId(), "the oldest posted receive");
        assertEquals(PAYLOAD_BYTES, wc.byteLength());
        byte[] landed = new byte[PAYLOAD_BYTES];
        receiveBuffers[0].getBytes(0, landed);
        assertArrayEquals(payload, landed, "the message's bytes in the receive's buffer");
        for (int i = 1; i < RECEIVES; i++) {
            assertEquals(0L, receiveBuffers[i].getLong(0), "receive " + i + " untouched");
        }
        // the sender's send completes once the receiver's ACK reaches it
        List<WorkCompletion> sent = new ArrayList<>();
        runUntil(() -> {
            sent.addAll(drain(senderCq));
            return !sent.isEmpty();
        }, "the send completes");
        assertEquals(1, sent.size(), "sender completions: " + sent);
        assertEquals(WcStatus.SUCCESS, sent.get(0).status());
        assertEquals(RECEIVES - 1, srq.outstanding(), "the completed receive is the consumer's now");
    }

    @Test
    void aMessageAbandonedWhenThePeerFallsSilentGivesItsSharedReceiveBack() {
        sendOneMessage();
        deliverOneVfragToReceiver();
        deliverOneVfragToReceiver();
        assertEquals(RECEIVES - 1, srq.outstanding(), "taken at the first VFRAG");
        wire.cut(); // the last VFRAGs, every retransmission, ACK and probe from now on are lost
        runUntil(() -> receiver.state() == QpState.ERROR && sender.state() == QpState.ERROR, "DR gives up on both sides");
        assertEquals(RECEIVES, srq.outstanding(), "the abandoned message's receive is back in the queue");
        List<WorkCompletion> got = drain(receiverCq);
        assertTrue(got.stream().noneMatch(wc -> wc.opcode() == WcOpcode.RECV), "a shared receive is neither completed nor flushed: " + got);
        List<WorkCompletion> sent = drain(senderCq);
        assertEquals(1, sent.size(), "sender completions: " + sent);
        assertEquals(WcStatus.RETRY_EXC_ERR, sent.get(0).status(), "the sender gave up");
        PostedReceive head = srq.take();
        assertNotNull(head);
        assertEquals(100, head.wrId(), "given back at the head, where it was taken");
        srq.giveBack(head);
    }

    @Test
    void closingTheQueuePairInTheMiddleOfAMessageGivesItsSharedReceiveBack() {
        sendOneMessage();
        deliverOneVfragToReceiver();
        deliverOneVfragToReceiver();
        deliverOneVfragToReceiver();
        assertEquals(RECEIVES - 1, srq.outstanding(), "taken at the first VFRAG");
        receiver.close();
        assertEquals(RECEIVES, srq.outstanding(), "the partial message's receive is back in the queue");
        assertTrue(drain(receiverCq).stream().noneMatch(wc -> wc.opcode() == WcOpcode.RECV), "the receive did not complete");
        PostedReceive head = srq.take();
        assertNotNull(head);
        assertEquals(100, head.wrId(), "given back at the head, where it was taken");
        srq.giveBack(head);
    }

    /**
     * Two {@link DatagramRail}s joined by a wire: each datagram is copied into its receiver's inbox and left there
     * until the test hands it over ({@link #toB}) or {@link #run} does; {@link #cut()} drops everything after.
     */
    private static final class Wire {
        final ArrayDeque<byte[]> toA = new ArrayDeque<>();
        final ArrayDeque<byte[]> toB = new ArrayDeque<>();
        final End a = new End(1, toB);
        final End b = new End(2, toA);
        boolean cut;

        void cut() {
            cut = true;
            toA.clear();
            toB.clear();
        }

        /** Runs both queue pairs at the test's time, handing over whatever is on the wire, until the wire is empty. */
        void run(SharedReceiveQueuePlacementTest t) {
            while (true) {
                t.sender.doWork(t.nowNs);
                t.receiver.doWork(t.nowNs);
                if (toA.isEmpty() && toB.isEmpty()) {
                    return;
                }
                for (byte[] d; (d = toB.poll()) != null; ) {
                    t.receiver.onDatagram(new UnsafeBuffer(d), 0, d.length, t.nowNs);
                }
                for (byte[] d; (d = toA.poll()) != null; ) {
                    t.sender.onDatagram(new UnsafeBuffer(d), 0, d.length, t.nowNs);
                }
            }
        }

        final class End implements DatagramRail {
            final int qpNumber;
            final ArrayDeque<byte[]> out;
            final Port port;

            End(int qpNumber, ArrayDeque<byte[]> out) {
                this.qpNumber = qpNumber;
                this.out = out;
                this.port = new TestPort(new PortAddress("test", "node" + qpNumber, 1));
            }

            @Override
            public Port port() {
                return port;
            }

            @Override
            public int drDatagramBytes() {
                return DATAGRAM_BYTES;
            }

            @Override
            public int register(ReliableDatagramQp qp) {
                return qpNumber;
            }

            @Override
            public QpEndpoint localEndpoint(int n) {
                return new QpEndpoint(port.address(), 0, n, DATAGRAM_BYTES);
            }

            @Override
            public String describe(QpEndpoint peer) {
                return peer.address().toString();
            }

            @Override
            public int connect(int n, QpEndpoint peer) {
                return peer.startPsn();
            }

            @Override
            public int send(QpEndpoint peer, byte[] datagram, int length, ReliableDatagramQp owner, int psn) {
                if (!cut) {
                    out.add(Arrays.copyOf(datagram, length));
                }
                return DatagramSink.SENT;
            }

            @Override
            public boolean sending(ReliableDatagramQp owner) {
                return false;
            }

            @Override
            public int poll(long nowNs) {
                return 0;
            }

            @Override
            public void release(int n) {
            }

            @Override
            public long foreignDropped() {
                return 0;
            }
        }
    }

    /** A port that only names itself: the wire above carries the datagrams. */
    private record TestPort(PortAddress address) implements Port {
        @Override
        public Device device() {
            throw new UnsupportedOperationException("a test wire's port has no device");
        }

        @Override
        public int number() {
            return 1;
        }

        @Override
        public PortState state() {
            return PortState.ACTIVE;
        }

        @Override
        public int mtuBytes() {
            return DATAGRAM_BYTES;
        }

        @Override
        public long bandwidthBytesPerSec() {
            return 1_000_000_000L;
        }

        @Override
        public long latencyNs() {
            return 1_000;
        }
    }
}
