package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.TestFrames;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The net fabric releases an RC QP pair's TCP connection when its QPs are destroyed (the route release,
 * see {@link NetTransport}): the process's open file descriptors come back to where they were, the peer's
 * other QPs and the destroyed QP's partner are not failed by it, a new QP that reuses the QPN while a
 * release is in flight gets a fresh connection, and a host that dies (no release) is still taken for dead.
 * Real loopback sockets driven by INVOKER passes; every wait is for a condition, bounded.
 */
@ExtendWith(NoLeaksExtension.class)
class NetRouteReleaseTest {
    private static final long HOUR_NS = 3_600_000_000_000L;
    /** Descriptors the JVM itself may open meanwhile (a jar, a class file); a leak of 2 per pair dwarfs it. */
    private static final int FD_SLACK = 4;

    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    /** One host's protection domain, completion queue and a small region to send from and into. */
    private static final class Side {
        final SoftProvider provider;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;

        Side(SoftProvider provider) {
            this.provider = provider;
            this.pd = provider.devices().get(0).allocateProtectionDomain();
            this.cq = provider.devices().get(0).createCompletionQueue(256);
            this.mr = pd.allocateMemory(256, Access.LOCAL_WRITE);
        }

        QueuePair qp(UnaryOperator<QpInitAttributes.Builder> attrs) {
            return pd.createQueuePair(attrs.apply(QpInitAttributes.builder(QpType.RC, provider.devices().get(0).port(1)).cq(cq)).build());
        }
    }

    private static QueuePair[] connect(Side a, Side b, UnaryOperator<QpInitAttributes.Builder> attrs) {
        QueuePair qa = a.qp(attrs);
        QueuePair qb = b.qp(attrs);
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        return new QueuePair[] {qa, qb};
    }

    private static QueuePair[] connect(Side a, Side b) {
        return connect(a, b, x -> x.retryTimeoutNs(HOUR_NS));
    }

    /** {@code n} completions from {@code cq}, progressing every host meanwhile. */
    private List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> got = new ArrayList<>();
        hosts.runUntil(() -> {
            cq.poll(n - got.size(), wc -> got.add(wc.copy()));
            return got.size() >= n;
        });
        return got;
    }

    /** A SEND each way on the pair; both sides see SUCCESS for their send and their receive. */
    private void exchange(Side a, Side b, QueuePair[] qp, long id) {
        assertTrue(qp[0].postReceive(new ReceiveWorkRequest().wrId(id).sge(a.mr, 128, 128)));
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(id).sge(b.mr, 128, 128)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(id).opcode(WrOpcode.SEND).sge(a.mr, 0, 64)));
        assertTrue(qp[1].postSend(new SendWorkRequest().wrId(id).opcode(WrOpcode.SEND).sge(b.mr, 0, 64)));
        List<WorkCompletion> atA = await(a.cq, 2);
        List<WorkCompletion> atB = await(b.cq, 2);
        assertTrue(atA.stream().allMatch(w -> w.status() == WcStatus.SUCCESS), atA::toString);
        assertTrue(atB.stream().allMatch(w -> w.status() == WcStatus.SUCCESS), atB::toString);
    }

    /** Connections of {@code a}'s and {@code b}'s (each side opens one when both send in one pass). */
    private int openStreams(Side a, Side b) {
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        hosts.runUntil(() -> ta.openStreams() == tb.openStreams());
        return ta.openStreams();
    }

    private void awaitOpenStreams(Side a, Side b, int each) {
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        hosts.runUntil(() -> ta.openStreams() == each && tb.openStreams() == each);
    }

    private static long openFds() {
        Path fd = Path.of("/proc/self/fd");
        assumeTrue(Files.isDirectory(fd), "needs /proc/self/fd (Linux)");
        try (Stream<Path> s = Files.list(fd)) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void destroyingQueuePairsClosesTheirConnectionsAndFileDescriptorsComeBack() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] lasting = connect(a, b);
        exchange(a, b, lasting, 1);
        int lastingStreams = openStreams(a, b);
        // one cycle first, so classes loaded from jars (and their descriptors) are not counted as a leak
        QueuePair[] warm = connect(a, b);
        exchange(a, b, warm, 2);
        warm[0].close();
        warm[1].close();
        awaitOpenStreams(a, b, lastingStreams);
        long baseline = openFds();
        int pairs = 40;
        for (int i = 0; i < pairs; i++) {
            QueuePair[] qp = connect(a, b);
            exchange(a, b, qp, 10 + i);
            // either side may go first, or both in one pass
            qp[i % 2].close();
            if (i % 3 != 0) {
                hosts.progress();
            }
            qp[1 - i % 2].close();
        }
        awaitOpenStreams(a, b, lastingStreams);
        long after = openFds();
        assertTrue(after <= baseline + FD_SLACK, "open fds " + baseline + " before " + pairs + " QP pairs, " + after + " after");
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        assertEquals(0, ta.streamsBroken() + tb.streamsBroken(), "a release is not a broken stream");
        assertEquals(0, ta.releasesTimedOut() + tb.releasesTimedOut());
        assertTrue(ta.streamsReleased() + tb.streamsReleased() >= pairs + 1, "released " + ta.streamsReleased() + " + " + tb.streamsReleased());
        assertEquals(QpState.RTS, lasting[0].state());
        assertEquals(QpState.RTS, lasting[1].state());
        exchange(a, b, lasting, 100);
        lasting[0].close();
        lasting[1].close();
        awaitOpenStreams(a, b, 0);
    }

    @Test
    void thePartnerOfADestroyedQueuePairIsNotFailedAndFailsOnlyWhenItSendsAgain() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] qp = connect(a, b, x -> x.retryCount(1).retryTimeoutNs(20_000_000L));
        exchange(a, b, qp, 1);
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(7).sge(b.mr, 128, 128)));
        NetTransport tb = hosts.transportOf(b.provider);
        qp[0].close();
        hosts.runUntil(() -> tb.streamsReleasedByPeer() >= 1);
        awaitOpenStreams(a, b, 0);
        for (int i = 0; i < 100; i++) {
            hosts.progress();
        }
        assertEquals(QpState.RTS, qp[1].state(), "b's QP is not failed by the release");
        assertEquals(0, b.cq.poll(4, wc -> { }), "its posted receive is not flushed");
        assertEquals(0, tb.streamsBroken());
        // as on InfiniBand: a send to a destroyed QP is retried, then fails
        assertTrue(qp[1].postSend(new SendWorkRequest().wrId(8).opcode(WrOpcode.SEND).sge(b.mr, 0, 64)));
        List<WorkCompletion> failed = await(b.cq, 2);
        assertEquals(WcStatus.RETRY_EXC_ERR, failed.stream().filter(w -> w.wrId() == 8).findFirst().orElseThrow().status(), failed::toString);
        assertEquals(WcStatus.WR_FLUSH_ERR, failed.stream().filter(w -> w.wrId() == 7).findFirst().orElseThrow().status(), failed::toString);
        qp[1].close();
        awaitOpenStreams(a, b, 0);
    }

    @Test
    void connectionsBothSidesOpenedForOnePairAreReleasedToo() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] qp = connect(a, b);
        assertTrue(qp[0].postReceive(new ReceiveWorkRequest().wrId(1).sge(a.mr, 128, 128)));
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(1).sge(b.mr, 128, 128)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(a.mr, 0, 64)));
        assertTrue(qp[1].postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(b.mr, 0, 64)));
        // each transmits in its first pass, before it could accept the other's connection
        long now = hosts.clock.nanoTime();
        a.provider.progress(now);
        b.provider.progress(now);
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        assertEquals(2, ta.streamsOpened() + tb.streamsOpened(), "one connection opened by each side");
        assertTrue(await(a.cq, 2).stream().allMatch(w -> w.status() == WcStatus.SUCCESS));
        assertTrue(await(b.cq, 2).stream().allMatch(w -> w.status() == WcStatus.SUCCESS));
        awaitOpenStreams(a, b, 2);
        qp[0].close();
        awaitOpenStreams(a, b, 0);
        assertEquals(0, ta.streamsBroken() + tb.streamsBroken());
        assertEquals(QpState.RTS, qp[1].state());
        qp[1].close();
        for (int i = 0; i < 10; i++) {
            hosts.progress();
        }
        assertEquals(0, ta.openStreams() + tb.openStreams());
    }

    @Test
    void aNewQueuePairReusingTheQpnWhileAReleaseIsInFlightGetsAFreshConnection() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] old = connect(a, b);
        exchange(a, b, old, 1);
        int qpnA = old[0].localEndpoint().qpn();
        int qpnB = old[1].localEndpoint().qpn();
        // a releases and half-closes; b has not read the release yet when its own QP goes and a new pair comes
        old[0].close();
        a.provider.progress(hosts.clock.nanoTime());
        old[1].close();
        QueuePair[] fresh = connect(a, b);
        assertEquals(qpnA, fresh[0].localEndpoint().qpn(), "the QPN is reused");
        assertEquals(qpnB, fresh[1].localEndpoint().qpn(), "the QPN is reused");
        // b sends first, so its route looks for a connection a opened for the pair
        assertTrue(fresh[0].postReceive(new ReceiveWorkRequest().wrId(3).sge(a.mr, 128, 128)));
        assertTrue(fresh[1].postSend(new SendWorkRequest().wrId(4).opcode(WrOpcode.SEND).sge(b.mr, 0, 64)));
        assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status());
        assertEquals(WcStatus.SUCCESS, await(b.cq, 1).get(0).status());
        exchange(a, b, fresh, 5);
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        assertTrue(openStreams(a, b) > 0);
        assertEquals(0, ta.streamsBroken() + tb.streamsBroken());
        fresh[0].close();
        fresh[1].close();
        awaitOpenStreams(a, b, 0);
    }

    @Test
    void aPeerThatDiesWithoutAReleaseStillFailsTheQueuePairsToIt() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] gone = connect(a, b);
        exchange(a, b, gone, 1);
        gone[0].close();
        gone[1].close();
        QueuePair[] qp = connect(a, b);
        exchange(a, b, qp, 2);
        assertTrue(qp[0].postReceive(new ReceiveWorkRequest().wrId(3).sge(a.mr, 128, 128)));
        awaitOpenStreams(a, b, openStreams(a, b));
        assertTrue(hosts.transportOf(a.provider).openStreams() > 0);
        hosts.kill(b.provider);
        List<WorkCompletion> flushed = await(a.cq, 1);
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.get(0).status(), flushed::toString);
        assertTrue(flushed.get(0).detail().contains("the peer closed the stream"), flushed::toString);
        assertEquals(QpState.ERROR, qp[0].state());
        assertTrue(hosts.transportOf(a.provider).streamsBroken() >= 1);
        qp[0].close();
        hosts.runUntil(() -> hosts.transportOf(a.provider).openStreams() == 0);
    }

    /**
     * The peer here is a bare TCP socket that plays a QP (it sends one SEND) and then neither reads nor
     * closes: the release frame is on the wire after the ACK, then FIN, and the released stream is
     * closed at the linger bound.
     */
    @Test
    void aReleaseIsAFrameThenFinAndAPeerThatNeverClosesIsCutOffAtTheLingerBound() throws IOException {
        Side a = new Side(hosts.host("a", NetTransportConfig.builder().releaseLingerNs(50_000_000L).build()));
        NetTransport ta = hosts.transportOf(a.provider);
        QueuePair qa = a.qp(x -> x.retryTimeoutNs(HOUR_NS));
        PortAddress at = qa.localEndpoint().address();
        try (SocketChannel peer = SocketChannel.open()) {
            peer.bind(new InetSocketAddress("127.0.0.1", 0));
            int peerPort = ((InetSocketAddress) peer.getLocalAddress()).getPort();
            qa.connect(new QpEndpoint(new PortAddress("net", "127.0.0.1", peerPort), 5, 100, 4096));
            assertTrue(qa.postReceive(new ReceiveWorkRequest().wrId(1).sge(a.mr, 0, 64)));
            peer.connect(new InetSocketAddress(at.host(), at.port()));
            ByteBuffer send = NetFrameCodec.direct(NetFrameCodec.HEADER_BYTES + 8);
            SoftFrame f = TestFrames.newFrame();
            f.type = FrameType.SEND;
            f.sourceQpn = 5;
            f.destinationQpn = qa.localEndpoint().qpn();
            f.psn = 100;
            f.length = 8;
            NetFrameCodec.encodeHeader(f, send, 0);
            f.release();
            while (send.hasRemaining()) {
                peer.write(send);
            }
            assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status(), "the SEND from the bare socket is received");
            ByteBuffer in = NetFrameCodec.direct(4 * NetFrameCodec.HEADER_BYTES);
            peer.configureBlocking(false);
            hosts.runUntil(() -> read(peer, in) >= 0 && in.position() >= NetFrameCodec.HEADER_BYTES);
            assertEquals(FrameType.ACK.ordinal(), in.get(NetFrameCodec.TYPE_OFFSET), "a answers on the socket the peer opened");
            qa.close();
            hosts.runUntil(() -> read(peer, in) < 0);
            assertEquals(2 * NetFrameCodec.HEADER_BYTES, in.position(), "an ACK, then the release, then FIN");
            assertTrue(NetFrameCodec.isRouteRelease(in, NetFrameCodec.HEADER_BYTES));
            assertEquals(5, in.getInt(NetFrameCodec.HEADER_BYTES + NetFrameCodec.DESTINATION_QPN_OFFSET));
            hosts.runUntil(() -> ta.openStreams() == 0);
            assertEquals(1, ta.releasesTimedOut());
            assertEquals(0, ta.streamsBroken());
        }
    }

    @Test
    void aLingerBoundThatIsNotPositiveIsRefusedNamingTheValue() {
        VerbsException e = assertThrows(VerbsException.class, () -> NetTransportConfig.builder().releaseLingerNs(0));
        assertTrue(e.getMessage().contains("releaseLingerNs must be > 0 but it was 0"), e.getMessage());
    }

    /** Reads what arrived into {@code b}; the count read, or -1 at EOF. */
    private static int read(SocketChannel ch, ByteBuffer b) {
        try {
            return ch.read(b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
