package io.rdmaflux.core;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FailureAndCancelTest {
    @Test
    void peerPortDownErrorsBothTheSendMonoAndTheReceiveFlux() {
        try (InvokerPair p = InvokerPair.open()) {
            p.server.receive().subscribe(RdmaMessage::release);
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicReference<Throwable> receiveError = new AtomicReference<>();
            p.client.receive().subscribe(RdmaMessage::release, receiveError::set);
            p.drive();
            // the client holds credits from the server's demand; the server's link then dies
            ((SoftPort) p.soft.b().devices().get(0).port(1)).setState(PortState.DOWN);
            p.client.send(Flux.range(0, 1000).map(i -> RdmaMessage.of(new byte[16]))).subscribe(null, sendError::set);
            p.runUntil(() -> sendError.get() != null && receiveError.get() != null);
            assertInstanceOf(RdmaTransportException.class, sendError.get());
            assertTrue(((RdmaException) sendError.get()).status() != null, "the verbs status is carried");
            assertTrue(receiveError.get() instanceof RdmaException, receiveError.get().toString());
            assertTrue(p.client.isDisposed());
        }
    }

    @Test
    void abortErrorsThePeerWithConnectionClosedByPeer() {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicReference<Throwable> peerReceive = new AtomicReference<>();
            AtomicReference<Throwable> localReceive = new AtomicReference<>();
            p.server.receive().subscribe(RdmaMessage::release, peerReceive::set);
            p.client.receive().subscribe(RdmaMessage::release, localReceive::set);
            p.drive();
            p.client.abort();
            p.runUntil(() -> peerReceive.get() != null && localReceive.get() != null);
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, peerReceive.get());
            assertTrue(e.byPeer());
            assertInstanceOf(ConnectionClosedException.class, localReceive.get());
            AtomicReference<Throwable> late = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of("late"))).subscribe(null, late::set);
            p.drive();
            assertInstanceOf(ConnectionClosedException.class, late.get());
        }
    }

    @Test
    void cancellingReceiveClosesTheInboundSideAndReleasesQueuedBuffers() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(8).messageCreditsPerBuffer(1))) {
            List<RdmaMessage> held = new ArrayList<>();
            AtomicInteger arrived = new AtomicInteger();
            Disposable d = p.server.receive().doOnNext(m -> arrived.incrementAndGet()).subscribe(held::add);
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicInteger emitted = new AtomicInteger();
            p.client.send(Flux.range(0, 100).doOnNext(i -> emitted.incrementAndGet()).map(i -> RdmaMessage.of("m" + i)))
                .subscribe(null, sendError::set);
            p.drive();
            assertEquals(8, held.size(), "unbounded demand: every receive buffer fills");
            d.dispose();
            held.forEach(RdmaMessage::release);
            for (int i = 0; i < 20; i++) {
                p.drive();
            }
            assertEquals(8, arrived.get(), "nothing is delivered after cancel");
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
            assertTrue(emitted.get() <= 8 + 16, "the sender stays bounded: " + emitted.get());
            assertThrows(IllegalReferenceCountException.class, () -> held.get(0).release());
        }
    }

    @Test
    void aReceiveSubscriberWhoseOnNextThrowsIsTreatedAsCancelledAndItsErrorIsDropped() {
        List<Throwable> dropped = new ArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(8).messageCreditsPerBuffer(1))) {
            AtomicInteger arrived = new AtomicInteger();
            IllegalStateException boom = new IllegalStateException("subscriber bug");
            p.server.receive().subscribe(new CoreSubscriber<RdmaMessage>() {
                @Override
                public void onSubscribe(Subscription s) {
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(RdmaMessage m) {
                    m.release();
                    if (arrived.incrementAndGet() == 3) {
                        throw boom;
                    }
                }

                @Override
                public void onError(Throwable t) {
                    throw new AssertionError("no onError after the subscriber threw", t);
                }

                @Override
                public void onComplete() {
                    throw new AssertionError("no onComplete after the subscriber threw");
                }
            });
            p.client.send(Flux.range(0, 50).map(i -> RdmaMessage.of("m" + i))).subscribe(null, e -> { });
            for (int i = 0; i < 20; i++) {
                p.drive();
            }
            assertEquals(3, arrived.get(), "nothing is delivered after onNext threw");
            assertEquals(List.of(boom), dropped);
            assertEquals(0, p.serverNode.metrics().buffersOutstanding(), "queued and later messages are released");
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void aSubscriberThatCancelsInsideOnNextGetsNothingMoreAndThePackedFrameItCutShortIsReleased() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(8).messageCreditsPerBuffer(1))) {
            AtomicInteger arrived = new AtomicInteger();
            p.server.receive().subscribe(new CoreSubscriber<RdmaMessage>() {
                private Subscription subscription;

                @Override
                public void onSubscribe(Subscription s) {
                    subscription = s;
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(RdmaMessage m) {
                    m.release();
                    if (arrived.incrementAndGet() == 3) {
                        subscription.cancel();
                    }
                }

                @Override
                public void onError(Throwable t) {
                    throw new AssertionError("no onError after cancel", t);
                }

                @Override
                public void onComplete() {
                    throw new AssertionError("no onComplete after cancel");
                }
            });
            p.client.send(Flux.range(0, 50).map(i -> RdmaMessage.of("m" + i))).subscribe(null, e -> { });
            for (int i = 0; i < 20; i++) {
                p.drive();
            }
            assertEquals(3, arrived.get(), "nothing is delivered after cancel, not even the rest of the frame");
            assertTrue(ConnectionProbe.channel(p.client, 0).packedFramesSent() > 0, "the messages travelled packed");
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void secondReceiveSubscriberIsRejected() {
        try (InvokerPair p = InvokerPair.open()) {
            p.server.receive().subscribe(RdmaMessage::release);
            AtomicReference<Throwable> e = new AtomicReference<>();
            p.server.receive().subscribe(null, e::set);
            IllegalStateException ise = assertInstanceOf(IllegalStateException.class, e.get());
            assertTrue(ise.getMessage().contains("one subscriber"));
        }
    }

    @Test
    void twoRailsCarryMessagesInPsnOrder() {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2), b -> b.receiveBuffers(4))) {
            List<Integer> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.content().getInt(0));
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 500)
                .map(i -> RdmaMessage.write(4, (buf, off, len) -> buf.putInt(off, i)))));
            p.runUntil(() -> sent.completed() && got.size() == 500);
            for (int i = 0; i < 500; i++) {
                assertEquals(i, got.get(i));
            }
            List<? extends Subchannel> rails = p.client.subchannels();
            assertEquals(2, rails.size());
            assertTrue(rails.get(0).bytesSent() > 0 && rails.get(1).bytesSent() > 0, "round robin uses both rails");
        }
    }

    @Test
    void aFailedRailIsReportedToTheSchedulerOnceAndTheSendCompletesOnTheOtherRail() {
        List<Integer> failedRails = new ArrayList<>();
        io.rdmaflux.core.channel.ChannelFactory observing = subchannels -> new io.rdmaflux.core.channel.SubchannelScheduler() {
            private int next;

            @Override
            public int select(int psn, int lengthBytes, Subchannel[] s) {
                for (int i = 0; i < s.length; i++) {
                    int r = (next + i) % s.length;
                    if (s[r].canSend()) {
                        next = r + 1;
                        return r;
                    }
                }
                return -1;
            }

            @Override
            public void onSubchannelFailed(Subchannel subchannel) {
                failedRails.add(subchannel.rail());
            }
        };
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2).striping(observing), b -> b.receiveBuffers(4))) {
            List<Integer> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.content().getInt(0));
                m.release();
            });
            p.drive();
            ((SoftPort) p.soft.b().devices().get(0).port(2)).setState(PortState.DOWN);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 100)
                .map(i -> RdmaMessage.write(16, (buf, off, len) -> buf.putInt(off, i)))));
            try {
                p.runUntil(() -> sent.completed() && got.size() == 100);
            } catch (AssertionError e) {
                throw new AssertionError(got.size() + " " + ConnectionProbe.describe(p.client) + "\n" + ConnectionProbe.describe(p.server), e);
            }
            assertEquals(List.of(1), failedRails, "rail 1 (port 2) failed, once");
            for (int i = 0; i < 100; i++) {
                assertEquals(i, got.get(i));
            }
            assertTrue(!p.client.isDisposed(), "one rail remains: the connection goes on");
        }
    }

    @Test
    void connectWithMoreRailsThanPortsFailsWithAClearMessage() {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicReference<Throwable> e = new AtomicReference<>();
            p.clientNode.connect(p.client.subchannels().get(0).port().address(), ConnectionSpec.rails(3)).subscribe(null, e::set);
            IllegalArgumentException iae = assertInstanceOf(IllegalArgumentException.class, e.get());
            assertTrue(iae.getMessage().contains("3 rails") && iae.getMessage().contains("1 ports"), iae.getMessage());
            IllegalArgumentException rails = assertThrows(IllegalArgumentException.class, () -> ConnectionSpec.rails(0));
            assertTrue(rails.getMessage().contains("rails in [1, 255] required but it was 0")
                && rails.getMessage().contains("at least one rail"), rails.getMessage());
            IllegalArgumentException buffers = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().receiveBuffers(0));
            assertTrue(buffers.getMessage().contains("receiveBuffers in [1, 65536] required but it was 0")
                && buffers.getMessage().contains("at least one receive buffer"), buffers.getMessage());
        }
    }
}
