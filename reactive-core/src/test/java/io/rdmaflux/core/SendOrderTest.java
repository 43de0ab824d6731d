package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A send publisher may emit on its own threads, and synchronously inside {@code request(n)} on the
 * progress thread (the connection keeps the latter in a plain ring, the former in a queue): whatever
 * the mix, messages leave in the order the publisher emitted them.
 */
class SendOrderTest {

    /**
     * Emits message {@code i} on a thread of its own (joined before going on, so signals stay serial) when
     * {@code i % 3 == 0}, else synchronously inside {@code request}: a message emitted on another thread
     * and not yet transmitted is followed, in the same {@code request}, by messages emitted on the
     * progress thread, which must not overtake it.
     */
    private static final class MixedThreadPublisher implements Publisher<RdmaMessage> {
        private final int count;

        MixedThreadPublisher(int count) {
            this.count = count;
        }

        @Override
        public void subscribe(Subscriber<? super RdmaMessage> s) {
            s.onSubscribe(new Subscription() {
                private int next;
                private boolean done;

                @Override
                public void request(long n) {
                    for (long k = 0; k < n && next < count; k++) {
                        int i = next++;
                        RdmaMessage m = RdmaMessage.of("m" + i);
                        if (i % 3 == 0) {
                            Thread t = new Thread(() -> s.onNext(m), "other-emitter");
                            t.start();
                            try {
                                t.join();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new IllegalStateException(e);
                            }
                        } else {
                            s.onNext(m);
                        }
                    }
                    if (next == count && !done) {
                        done = true;
                        s.onComplete();
                    }
                }

                @Override
                public void cancel() {
                    next = count;
                }
            });
        }
    }

    @Test
    void messagesEmittedOnTheProgressThreadNeverOvertakeOnesEmittedOnAnotherThread() {
        int count = 300;
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(16).sendQueue(8))) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                m.release();
            });
            AtomicReference<Throwable> error = new AtomicReference<>();
            boolean[] sent = new boolean[1];
            p.client.send(new MixedThreadPublisher(count)).subscribe(null, error::set, () -> sent[0] = true);
            p.runUntil(() -> (sent[0] && got.size() == count) || error.get() != null);
            assertNull(error.get());
            for (int i = 0; i < count; i++) {
                assertEquals("m" + i, got.get(i), "message " + i);
            }
        }
    }
}
