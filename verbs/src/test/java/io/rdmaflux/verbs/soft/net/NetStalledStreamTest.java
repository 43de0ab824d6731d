package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An RC QP pair whose TCP connection stops carrying anything (as one in TCP's retransmission backoff behind a
 * link that went down and came back: the kernel retries only when its backed-off timer fires, seconds later)
 * recovers within about one RC retry timeout: the requester's ACK timer expiry replaces the connection
 * ({@link NetAttachment#routeStalled}), and the peer moves its own send half onto the new one when it reads
 * the route renew. The stall is the transport's test seam ({@link InboundStream#stalledForTest}), set at both
 * ends of every connection open at that moment and never lifted, so the old connections stay silent however
 * long the test runs; connections opened later are not stalled (the link is back). Real loopback sockets,
 * INVOKER passes, bounded waits.
 */
@ExtendWith(NoLeaksExtension.class)
class NetStalledStreamTest {
    private static final long RETRY_TIMEOUT_NS = 200_000_000L;
    /** 8 expiries (1.6 s) before RETRY_EXC_ERR: far beyond the bound asserted, so a miss cannot pass by luck. */
    private static final int RETRY_COUNT = 7;

    private final NetHosts hosts = new NetHosts();
    /** The old connections never carry the route release, so they end at the linger bound: keep it short. */
    private static final NetTransportConfig CONFIG = NetTransportConfig.builder().releaseLingerNs(300_000_000L).build();

    @AfterEach
    void close() {
        hosts.close();
    }

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

        QueuePair qp() {
            return pd.createQueuePair(QpInitAttributes.builder(QpType.RC, provider.devices().get(0).port(1)).cq(cq)
                .retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(RETRY_COUNT).build());
        }
    }

    private List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> got = new ArrayList<>();
        hosts.runUntil(() -> {
            cq.poll(n - got.size(), wc -> got.add(wc.copy()));
            return got.size() >= n;
        });
        return got;
    }

    /** {@code from} SENDs 64 bytes to {@code to}; returns the ns until both completions were seen, asserting SUCCESS. */
    private long send(Side from, QueuePair fromQp, Side to, QueuePair toQp, long id) {
        assertTrue(toQp.postReceive(new ReceiveWorkRequest().wrId(id).sge(to.mr, 128, 128)));
        long start = hosts.clock.nanoTime();
        assertTrue(fromQp.postSend(new SendWorkRequest().wrId(id).opcode(WrOpcode.SEND).sge(from.mr, 0, 64)));
        List<WorkCompletion> sent = await(from.cq, 1);
        long took = hosts.clock.nanoTime() - start;
        List<WorkCompletion> received = await(to.cq, 1);
        assertEquals(WcStatus.SUCCESS, sent.get(0).status(), sent::toString);
        assertEquals(WcStatus.SUCCESS, received.get(0).status(), received::toString);
        return took;
    }

    private void stallEveryOpenConnection(Side... sides) {
        for (Side s : sides) {
            for (NetAttachment a : hosts.transportOf(s.provider).attachments) {
                a.stallOpenStreamsForTest();
            }
        }
    }

    @Test
    void aStalledConnectionIsReplacedAndBothDirectionsFlowWithinOneRetryTimeout() {
        Side a = new Side(hosts.host("a", CONFIG));
        Side b = new Side(hosts.host("b", CONFIG));
        QueuePair qa = a.qp();
        QueuePair qb = b.qp();
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        send(a, qa, b, qb, 1);
        send(b, qb, a, qa, 2);
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        assertEquals(0, ta.streamsRenewed() + tb.streamsRenewed(), "no stall yet");

        stallEveryOpenConnection(a, b);
        long took = send(a, qa, b, qb, 3);
        // one ACK timer expiry, a loopback connect and a round trip; the old connection never speaks again
        assertTrue(took < 2 * RETRY_TIMEOUT_NS, "the SEND took " + took / 1_000_000 + " ms after the stall");
        assertTrue(ta.streamsRenewed() >= 1, "a replaced its stalled connection");
        assertTrue(tb.streamsRenewedByPeer() >= 1, "b read the route renew");

        // b's send half moved onto a's new connection when it read the renew: its SEND needs no stall of its own
        long back = send(b, qb, a, qa, 4);
        assertTrue(back < RETRY_TIMEOUT_NS, "b's SEND took " + back / 1_000_000 + " ms");
        assertEquals(0, tb.streamsRenewed(), "b never stalled");
        assertEquals(0, ta.streamsBroken() + tb.streamsBroken(), "no route reported broken");
        assertEquals(QpState.RTS, qa.state());
        assertEquals(QpState.RTS, qb.state());

        // the retired connections go with the QPs, as the active one does
        qa.close();
        qb.close();
        hosts.runUntil(() -> ta.openStreams() == 0 && tb.openStreams() == 0);
    }

    @Test
    void aStalledConnectionInTheAcknowledgementDirectionIsReplacedToo() {
        Side a = new Side(hosts.host("a", CONFIG));
        Side b = new Side(hosts.host("b", CONFIG));
        QueuePair qa = a.qp();
        QueuePair qb = b.qp();
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        send(a, qa, b, qb, 1);
        NetTransport ta = hosts.transportOf(a.provider);
        NetTransport tb = hosts.transportOf(b.provider);
        // only b's end stalls: a's requests arrive, b's acknowledgements do not
        stallEveryOpenConnection(b);
        long took = send(a, qa, b, qb, 2);
        assertTrue(took < 2 * RETRY_TIMEOUT_NS, "the SEND took " + took / 1_000_000 + " ms after the stall");
        assertTrue(ta.streamsRenewed() >= 1);
        for (int i = 0; i < 5; i++) {
            send(a, qa, b, qb, 10 + i);
            send(b, qb, a, qa, 20 + i);
        }
        assertEquals(0, ta.streamsBroken() + tb.streamsBroken());
        qa.close();
        qb.close();
        hosts.runUntil(() -> ta.openStreams() == 0 && tb.openStreams() == 0);
    }
}
