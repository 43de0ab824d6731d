package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rendezvous message the receiver discards (a CTS with DISCARD: its inbound side closed while the
 * RTS waited for a message buffer) ends its send but is no delivery for the scheduler: it goes to
 * {@link SubchannelScheduler#onMessageDiscarded}, never to {@code onMessageCompleted}, so a striping
 * policy counts no bytes for it and sees no rate. INVOKER mode, virtual time.
 */
class DiscardedRendezvousTest {
    private static final int POOL = 2;
    private static final int LARGE_BYTES = 30_000;

    /** Rail 0 whenever it can send; records what it hears. */
    private static final class Recording implements SubchannelScheduler {
        final List<Integer> completed = new ArrayList<>();
        final List<Integer> discarded = new ArrayList<>();
        final List<Integer> discardedLengths = new ArrayList<>();

        @Override
        public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
            return subchannels[0].canSend() ? 0 : -1;
        }

        @Override
        public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
            completed.add(psn);
        }

        @Override
        public void onMessageDiscarded(Subchannel subchannel, int psn, int lengthBytes) {
            assertEquals(0, subchannel.rail(), "reported on the RTS's subchannel");
            discarded.add(psn);
            discardedLengths.add(lengthBytes);
        }
    }

    @Test
    void aMessageTheReceiverDiscardsIsReportedAsDiscardedNotAsCarried() {
        AtomicReference<Recording> scheduler = new AtomicReference<>();
        ChannelFactory f = subchannels -> {
            Recording r = new Recording();
            scheduler.set(r);
            return r;
        };
        try (InvokerPair p = InvokerPair.open(1, ConnectionSpec.defaults().striping(f),
            b -> b.bufferBytes(4096).receiveBuffers(8).maxMessageBytes(64 * 1024).rendezvousBuffers(POOL))) {
            List<RdmaMessage> held = new ArrayList<>();
            HoldingSubscriber sub = new HoldingSubscriber(Long.MAX_VALUE, held);
            p.server.receive().subscribe(sub);
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 8).map(i -> RdmaMessage.of(new byte[LARGE_BYTES]))).subscribe(null, error::set);
            p.drive();
            assertEquals(POOL, held.size(), "the consumer holds every message buffer; later RTSs wait");
            Recording r = scheduler.get();
            assertEquals(List.of(0, 1), r.completed);
            assertEquals(List.of(), r.discarded);

            // the waiting RTSs get a discarding CTS
            sub.cancel();
            p.drive();
            held.forEach(RdmaMessage::release);
            p.drive();

            assertNotNull(error.get(), "the send ends naming the messages not delivered");
            assertEquals(List.of(0, 1), r.completed, "discarded messages reported as carried: " + r.completed);
            assertFalse(r.discarded.isEmpty(), "no RTS waited for a buffer: nothing was tested");
            for (int i = 0; i < r.discarded.size(); i++) {
                assertTrue(r.discarded.get(i) >= POOL, "PSN " + r.discarded.get(i) + " was delivered");
                assertEquals(LARGE_BYTES, r.discardedLengths.get(i));
            }
            assertEquals(r.discarded.stream().distinct().count(), r.discarded.size(), "each discarded once: " + r.discarded);
            assertEquals(r.completed.size(), p.client.metrics().messagesDelivered(), "a discarded message is not counted delivered");
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse(), "the staging slots of the discarded messages are back");
        }
    }
}
