package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaTransportException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@link Dr} operator over a lossy loopback, in virtual time. */
class DrLinkTest {
    private static final DrConfig C = DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES + 100).windowVfrags(16)
        .receiveBufferVfrags(32).initialRtoNs(1_000_000).minRtoNs(200_000).maxRtoNs(20_000_000).maxRetriesPerRail(5)
        .railTimeoutNs(100_000_000).keepaliveNs(100_000_000).build();

    private static byte[] msg(int i) {
        return ("message-" + i + "-" + "x".repeat(i % 300)).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aLossyPathDeliversEveryMessageOnceInOrderAndTheSendMonoCompletesWhenAcknowledged() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        try (LinkPair p = new LinkPair(C, 42, 0.1, 0.05, 0.02, 0.1, vts, () -> vts.now(TimeUnit.NANOSECONDS))) {
            Mono<Void> sent = Flux.range(0, 500).map(DrLinkTest::msg).as(Dr.sendOver(p.a));
            StepVerifier.create(sent.then(Mono.just(1)).zipWith(p.b.receive().collectList()))
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(30)))
                .assertNext(t -> {
                    List<byte[]> got = t.getT2();
                    assertEquals(500, got.size());
                    for (int i = 0; i < 500; i++) {
                        assertEquals(new String(msg(i), StandardCharsets.UTF_8), new String(got.get(i), StandardCharsets.UTF_8));
                    }
                })
                .verifyComplete();
            assertTrue(p.a.stats().vfragsRetransmitted() > 0, "the loss was repaired: " + p.a.stats());
            assertEquals(p.corrupted, p.a.stats().corruptedDropped() + p.b.stats().corruptedDropped()
                + p.a.stats().malformedDropped() + p.b.stats().malformedDropped());
        } finally {
            vts.dispose();
        }
    }

    @Test
    void receiveDemandIsTheSendersCredit() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        try (LinkPair p = new LinkPair(C, 1, 0, 0, 0, 0, vts, () -> vts.now(TimeUnit.NANOSECONDS))) {
            Mono<Void> sent = Flux.range(0, 200).map(i -> new byte[] {i.byteValue()}).as(Dr.sendOver(p.a));
            sent.subscribe();
            StepVerifier.create(p.b.receive(), 0)
                .then(() -> vts.advanceTimeBy(Duration.ofMillis(50)))
                .expectNoEvent(Duration.ofMillis(10))
                .then(() -> {
                    // no demand: the sender stopped at the credit limit, nothing lost, nothing retransmitted
                    assertTrue(p.a.stats().vfragsSent() <= C.receiveBufferVfrags(), p.a.stats().toString());
                    assertEquals(0, p.b.stats().outOfWindowDropped());
                })
                .thenRequest(200)
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(10)))
                .expectNextCount(200)
                .verifyComplete();
            assertEquals(0, p.a.stats().vfragsRetransmitted(), p.a.stats().toString());
        } finally {
            vts.dispose();
        }
    }

    @Test
    void aVanishedPeerErrorsTheSendMonoAndTheReceiveFluxNamingThePeerWithinTheBound() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        try (LinkPair p = new LinkPair(C, 3, 0, 0, 0, 0, vts, () -> vts.now(TimeUnit.NANOSECONDS))) {
            p.vanish();
            Mono<Void> sent = Flux.range(0, 10).map(DrLinkTest::msg).as(Dr.sendOver(p.a));
            StepVerifier.create(sent)
                .then(() -> vts.advanceTimeBy(Duration.ofNanos(C.failureBoundNs(1))))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(RdmaTransportException.class, e);
                    assertTrue(e.getMessage().contains("peer link-b") && e.getMessage().matches("(?s).*rail 0 \\(([6-9]|\\d\\d+) retries, no ACK for 1\\d\\d ms\\).*"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
            StepVerifier.create(p.a.receive())
                .expectError(RdmaTransportException.class)
                .verify(Duration.ofSeconds(5));
        } finally {
            vts.dispose();
        }
    }

    @Test
    void aSecondSendOrReceiveSubscriberIsRefused() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        try (LinkPair p = new LinkPair(C, 1, 0, 0, 0, 0, vts, () -> vts.now(TimeUnit.NANOSECONDS))) {
            p.a.send(Flux.never()).subscribe();
            StepVerifier.create(p.a.send(Flux.empty())).expectError(IllegalStateException.class).verify(Duration.ofSeconds(5));
            p.b.receive().subscribe();
            StepVerifier.create(p.b.receive()).expectError(IllegalStateException.class).verify(Duration.ofSeconds(5));
        } finally {
            vts.dispose();
        }
    }

    @Test
    void aTooLargeMessageFailsTheSendNamingTheLimit() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        DrConfig small = C.toBuilder().maxMessageBytes(10).build();
        try (LinkPair p = new LinkPair(small, 1, 0, 0, 0, 0, vts, () -> vts.now(TimeUnit.NANOSECONDS))) {
            StepVerifier.create(p.a.send(Flux.just(new byte[11])))
                .expectErrorMessage("message of 11 bytes exceeds maxMessageBytes=10; split it or raise DrConfig.maxMessageBytes")
                .verify(Duration.ofSeconds(5));
        } finally {
            vts.dispose();
        }
    }
}
