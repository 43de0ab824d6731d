package io.rdmaflux.ud;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.ud.dr.DrStats;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Credits over the shared UD receive pool: per-peer grants, the fairness rule, a slow subscriber. */
class UdSharedPoolTest {
    private static final UdSpec SMALL_POOL = new UdSpec(4, 64, 256, UdSpec.DEFAULTS.dr());
    private static final int PEERS = 8;

    @Test
    void eachPeerGetsAnEvenShareAndASlowSubscriberHoldsBackOnlyItsOwnSender() {
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, SMALL_POOL, b -> b)) {
            List<RdmaConnection[]> pairs = new ArrayList<>();
            pairs.add(new RdmaConnection[] {p.client, p.server});
            RdmaServer listener = p.serverNode.bind(new PortAddress("mem", ((SoftProvider) p.soft.b()).devices().get(0).name(), 0));
            List<RdmaConnection> accepted = new ArrayList<>();
            Disposable acc = listener.accept().subscribe(accepted::add);
            for (int i = 1; i < PEERS; i++) {
                AtomicReference<RdmaConnection> c = new AtomicReference<>();
                p.clientNode.connect(listener.address(), ConnectionSpec.rails(1).channelKind(ChannelKind.RELIABLE_UD)).subscribe(c::set);
                int want = i;
                assertTrue(p.await(() -> c.get() != null && accepted.size() == want, 1_000_000));
                pairs.add(new RdmaConnection[] {c.get(), accepted.get(i - 1)});
            }
            acc.dispose();
            listener.close();
            p.await(() -> false, 10); // each channel's duty cycle applies its new grant
            // the fairness rule: (64 - 64/8) / 8 = 7 VFRAGs of credit per peer on the server's rail
            assertEquals(PEERS, p.serverProvider.openChannels().size());
            for (UdChannel ch : p.serverProvider.openChannels()) {
                assertEquals(7, ch.receiveGrantVfrags(), ch.toString());
            }
            int n = 300;
            AtomicInteger[] got = new AtomicInteger[PEERS];
            AtomicInteger done = new AtomicInteger();
            List<BaseSubscriber<RdmaMessage>> slow = new ArrayList<>();
            for (int i = 0; i < PEERS; i++) {
                AtomicInteger g = got[i] = new AtomicInteger();
                RdmaConnection[] c = pairs.get(i);
                if (i == 0) {
                    BaseSubscriber<RdmaMessage> s = new BaseSubscriber<>() {
                        @Override
                        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                            request(1);
                        }

                        @Override
                        protected void hookOnNext(RdmaMessage m) {
                            g.incrementAndGet();
                            m.release();
                        }
                    };
                    slow.add(s);
                    c[1].receive().subscribe(s);
                } else {
                    c[1].receive().subscribe(m -> {
                        g.incrementAndGet();
                        m.release();
                    });
                }
                c[0].send(Flux.range(0, n).map(k -> RdmaMessage.of(new byte[1000]))).subscribe(null, e -> { }, done::incrementAndGet);
            }
            assertTrue(p.await(() -> {
                for (int i = 1; i < PEERS; i++) {
                    if (got[i].get() < n) {
                        return false;
                    }
                }
                return true;
            }, 3_000_000), "the other peers finished while one subscriber stalled");
            assertEquals(1, got[0].get(), "the stalled subscriber got what it asked for");
            long dropped = p.soft.b().softDevice(0).udDatagramsDropped();
            assertEquals(0, dropped, "no datagram dropped for want of a posted receive");
            for (UdChannel ch : p.clientProvider.openChannels()) {
                DrStats s = ch.drStats();
                assertEquals(0, s.vfragsRetransmitted(), "nothing lost, nothing retransmitted: " + s);
            }
            slow.get(0).request(Long.MAX_VALUE);
            assertTrue(p.await(() -> got[0].get() == n, 3_000_000), "the slow peer catches up: " + got[0].get());
            for (int i = 1; i < PEERS; i++) {
                RdmaConnection[] c = pairs.get(i);
                c[0].close();
                c[1].close();
            }
            p.await(() -> pairs.stream().skip(1).allMatch(c -> c[0].onClose().toFuture().isDone() && c[1].onClose().toFuture().isDone()), 500_000);
        }
    }
}
