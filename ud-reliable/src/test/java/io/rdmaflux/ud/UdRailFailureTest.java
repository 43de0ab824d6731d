package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.verbs.soft.LossGenerator;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Rails that stop carrying datagrams: failover to a live rail, and every rail dead. */
class UdRailFailureTest {
    private static final RailConfig BLACK_HOLE = RailConfig.builder().loss(LossGenerator.fixedGap(1)).build();

    private static void blackHole(UdPair p, int rail) {
        p.soft.a().softDevice(0).softPort(rail + 1).setRail(BLACK_HOLE);
        p.soft.b().softDevice(0).softPort(rail + 1).setRail(BLACK_HOLE);
    }

    @Test
    void aRailThatLosesEverythingFailsOverAndNothingIsLost() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            int n = 2000;
            AtomicInteger got = new AtomicInteger();
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicInteger expected = new AtomicInteger();
            p.server.receive().subscribe(m -> {
                if (m.toByteArray()[0] != (byte) expected.getAndIncrement()) {
                    error.compareAndSet(null, new AssertionError("out of order at " + got.get()));
                }
                got.incrementAndGet();
                m.release();
            }, error::set);
            p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[] {(byte) (int) i, 1, 2, 3}))).subscribe(null, error::set);
            assertTrue(p.await(() -> got.get() > 100, 1_000_000));
            blackHole(p, 0);
            assertTrue(p.await(() -> got.get() == n || error.get() != null, 5_000_000), "got " + got.get());
            assertTrue(error.get() == null, () -> String.valueOf(error.get()));
        }
    }

    @Test
    void everyRailDeadErrorsTheSendAndTheReceiveNamingThePeerAndTheRetriesWithinTheBound() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicReference<Throwable> receiveError = new AtomicReference<>();
            p.client.receive().subscribe(RdmaMessage::release, receiveError::set);
            p.server.receive().subscribe(RdmaMessage::release);
            // a stream that outlasts the rails: it is still flowing when both die
            p.client.send(Flux.range(0, Integer.MAX_VALUE).map(i -> RdmaMessage.of(new byte[64]))).subscribe(null, sendError::set);
            p.await(() -> false, 2_000);
            blackHole(p, 0);
            blackHole(p, 1);
            long from = p.soft.clock().nanoTime();
            assertTrue(p.await(() -> sendError.get() != null && receiveError.get() != null, 5_000_000));
            long took = p.soft.clock().nanoTime() - from;
            RdmaTransportException e = assertInstanceOf(RdmaTransportException.class, sendError.get());
            assertInstanceOf(RdmaTransportException.class, receiveError.get());
            String all = e.getMessage() + " | suppressed: " + java.util.Arrays.toString(e.getSuppressed()) + " | cause: " + e.getCause();
            assertTrue(all.contains("mem://") && all.contains("retransmission timeouts"), all);
            // each rail's DR gives up within its bound; rails fail independently, in parallel
            long bound = UdSpec.DEFAULTS.dr().failureBoundNs(1) + 1_000_000;
            assertTrue(took <= bound, "failed after " + took + " ns, bound " + bound + ": " + all);
        }
    }
}
