package io.rdmaflux.core;

import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

import java.util.List;

/**
 * A {@code receive()} subscriber that requests a fixed number of messages when it subscribes and keeps
 * each one it gets in {@code held}, unreleased: the test decides when they are released (and
 * {@link #cancel()}s when it wants the inbound side closed). Signals come on the thread that drives the
 * node, in tests the test thread.
 */
final class HoldingSubscriber extends BaseSubscriber<RdmaMessage> {
    private final long initialRequest;
    private final List<RdmaMessage> held;

    HoldingSubscriber(long initialRequest, List<RdmaMessage> held) {
        this.initialRequest = initialRequest;
        this.held = held;
    }

    @Override
    protected void hookOnSubscribe(Subscription s) {
        s.request(initialRequest);
    }

    @Override
    protected void hookOnNext(RdmaMessage m) {
        held.add(m);
    }
}
