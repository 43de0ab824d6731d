package io.rdmaflux.core;

import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;

/**
 * {@link RdmaConnection#receive()}: the connection's inbound messages as a {@code Flux} with one
 * subscriber. {@code request(n)} becomes message credits for the peer (through {@link InboundDelivery});
 * signals come from the progress thread.
 *
 * <p><b>Multiple subscriptions:</b> a second subscriber gets {@link IllegalStateException}.
 * <b>Discard support:</b> messages queued for the subscriber are released on cancel or error.
 */
final class ReceiveFlux extends Flux<RdmaMessage> implements Scannable {
    private final DefaultRdmaConnection connection;
    private final InboundDelivery delivery;

    ReceiveFlux(DefaultRdmaConnection connection, InboundDelivery delivery) {
        this.connection = connection;
        this.delivery = delivery;
    }

    @Override
    public void subscribe(CoreSubscriber<? super RdmaMessage> actual) {
        delivery.subscribe(actual, new ReceiveSubscription(this, delivery));
    }

    @Override
    public @Nullable Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return "receive(" + connection.name() + ")";
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    /** The subscription the one subscriber holds; {@link Scannable} as Reactor's operators are. */
    static final class ReceiveSubscription implements org.reactivestreams.Subscription, Scannable {
        private final ReceiveFlux parent;
        private final InboundDelivery delivery;

        ReceiveSubscription(ReceiveFlux parent, InboundDelivery delivery) {
            this.parent = parent;
            this.delivery = delivery;
        }

        @Override
        public void request(long n) {
            delivery.request(n);
        }

        @Override
        public void cancel() {
            delivery.cancel();
        }

        @Override
        public @Nullable Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return parent;
            }
            if (key == Attr.ACTUAL) {
                return delivery.actual();
            }
            if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
                return delivery.requested();
            }
            if (key == Attr.BUFFERED) {
                return delivery.buffered();
            }
            if (key == Attr.TERMINATED) {
                return delivery.isTerminated();
            }
            if (key == Attr.CANCELLED) {
                return delivery.isCancelled();
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.ASYNC;
            }
            return null;
        }
    }
}
