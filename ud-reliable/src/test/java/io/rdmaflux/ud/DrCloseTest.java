package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.ud.dr.DrConfig;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A graceful close over DR rails is as quick as DR's acknowledgement, in virtual time: the connection runs its rails
 * until DR owes the peer nothing ({@code Channel.settled()}). Before, the side that received the last frame closed its
 * queue pair before its coalesced ACK went, and the other side's last send completed only when DR gave up on the rail
 * ({@code railTimeoutNs}, 1.6 s with node defaults: closing a UD or RC + DR connection over the IP fabric took that long,
 * the Connection TCK's 59 tests 64–71 s instead of 1.3–2.2 s). Here the ACK goes only by its 2 ms timer, so a rail closed
 * before it fired shows as a close of 20 ms or more (reliable UD: 32 ms without the fix).
 */
class DrCloseTest {
    @ParameterizedTest
    @EnumSource(value = ChannelKind.class, names = {"RELIABLE_UD", "RC_DR"})
    void aGracefulCloseEndsWithinAFewRoundTripsAndCleanly(ChannelKind kind) {
        // ACKs only by the timer, 2 ms after a VFRAG: a queue pair closed right after the last frame arrived would never send it
        DrConfig dr = UdSpec.DEFAULTS.dr().toBuilder().ackEveryVfrags(64).ackDelayNs(2_000_000).build();
        UdSpec ud = new UdSpec(UdSpec.DEFAULTS.sendQps(), UdSpec.DEFAULTS.receivePoolSlots(), UdSpec.DEFAULTS.sendSlots(), dr);
        RcDrSpec rcDr = new RcDrSpec(32, 32, 65535, RcDrSpec.DEFAULTS.dr().toBuilder().ackEveryVfrags(64).ackDelayNs(2_000_000).build());
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, ud, rcDr, kind, b -> b)) {
            List<byte[]> got = new ArrayList<>();
            AtomicBoolean sent = new AtomicBoolean();
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            }, error::set);
            p.client.send(Flux.fromIterable(UdPair.payloads(5, 50, 3_000)).map(RdmaMessage::of)).subscribe(null, error::set, () -> sent.set(true));
            assertTrue(p.await(() -> sent.get() && got.size() == 50, 1_000_000));
            long start = p.soft.clock().nanoTime();
            p.client.close();
            p.server.close();
            AtomicReference<Throwable> closeError = new AtomicReference<>();
            p.client.onClose().subscribe(null, closeError::set);
            p.server.onClose().subscribe(null, closeError::set);
            assertTrue(p.await(() -> p.client.onClose().toFuture().isDone() && p.server.onClose().toFuture().isDone(), 2_000_000));
            long tookNs = p.soft.clock().nanoTime() - start;
            assertNull(closeError.get(), () -> "closed in error: " + closeError.get());
            assertNull(error.get());
            // the ACK timer is 2 ms; the rails' give-up budget 20 ms (UdSpec.DEFAULTS' railTimeoutNs) or more
            assertTrue(tookNs < 10_000_000, () -> kind + ": the close took " + tookNs + " ns of virtual time");
            assertEquals(50, got.size());
        }
    }
}
