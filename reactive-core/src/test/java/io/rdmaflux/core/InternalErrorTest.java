package io.rdmaflux.core;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An unexpected exception on the progress thread (here: a striping policy that throws) aborts the
 * connection it happened in with {@link RdmaException.Category#INTERNAL}, so the send fails naming the
 * cause and the peer hears the abort, instead of both waiting forever on half-updated state.
 */
class InternalErrorTest {
    @Test
    void aThrowingSchedulerAbortsItsConnectionAndTheSendFailsWithTheCause() {
        AtomicBoolean armed = new AtomicBoolean();
        IllegalStateException boom = new IllegalStateException("boom from the scheduler");
        SubchannelScheduler throwing = (psn, lengthBytes, subchannels) -> {
            if (armed.get()) {
                throw boom;
            }
            return 0;
        };
        ConnectionSpec spec = ConnectionSpec.defaults().striping(subchannels -> throwing);
        try (InvokerPair p = InvokerPair.open(1, spec, b -> { })) {
            AtomicReference<Throwable> peerReceive = new AtomicReference<>();
            p.server.receive().subscribe(RdmaMessage::release, peerReceive::set);
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(Flux.just(RdmaMessage.of("ok"))).subscribe(v -> { }, sendError::set, () -> sent.set(true));
            p.runUntil(sent::get);

            armed.set(true);
            p.client.send(Flux.just(RdmaMessage.of("bad"))).subscribe(v -> { }, sendError::set);
            p.runUntil(() -> sendError.get() != null && peerReceive.get() != null);
            RdmaException e = assertInstanceOf(RdmaException.class, sendError.get());
            assertEquals(RdmaException.Category.INTERNAL, e.category());
            assertSame(boom, e.getCause());
            assertTrue(e.getMessage().contains("boom from the scheduler"), e.getMessage());
            assertInstanceOf(RdmaException.class, peerReceive.get());
            assertTrue(p.client.isDisposed());
        }
    }
}
