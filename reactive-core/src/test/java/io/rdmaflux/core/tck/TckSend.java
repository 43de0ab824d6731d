package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * One {@code send} of TCK messages {@code first .. first + count - 1} ({@link TckPayload}), subscribed at
 * once, recording how it ended and how many messages it took from its publisher. Optionally checks, at
 * every message the connection takes, that it took no more than a bound the receiver's counters allow
 * at that moment (credits can only follow the receiver's demand and released buffers, so the bound read
 * later is never smaller than the one that applied: no false alarm from the threads' timing).
 */
public final class TckSend {
    private final ConnectionTckFixture fx;
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicBoolean completed = new AtomicBoolean();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final AtomicReference<String> boundViolation = new AtomicReference<>();

    private TckSend(ConnectionTckFixture fx) {
        this.fx = fx;
    }

    /** Sends messages {@code first ..} from {@code c}; {@code sizeOf} maps a sequence number to its length. */
    public static TckSend start(ConnectionTckFixture fx, RdmaConnection c, int first, int count, IntUnaryOperator sizeOf) {
        return start(fx, c, first, count, sizeOf, null);
    }

    /** As {@link #start(ConnectionTckFixture, RdmaConnection, int, int, IntUnaryOperator)}, checking {@code bound} at each message taken. */
    public static TckSend start(ConnectionTckFixture fx, RdmaConnection c, int first, int count, IntUnaryOperator sizeOf, LongSupplier bound) {
        TckSend s = new TckSend(fx);
        Flux<RdmaMessage> messages = Flux.range(first, count)
            .doOnNext(i -> s.took(bound))
            .map(i -> TckPayload.message(i, sizeOf.applyAsInt(i)));
        s.subscribe(c, messages);
        return s;
    }

    /**
     * As {@link #start(ConnectionTckFixture, RdmaConnection, int, int, IntUnaryOperator, LongSupplier)}, and the
     * publisher signals {@code error} after its {@code count} messages.
     */
    public static TckSend startFailing(ConnectionTckFixture fx, RdmaConnection c, int first, int count, IntUnaryOperator sizeOf,
                                       Throwable error, LongSupplier bound) {
        TckSend s = new TckSend(fx);
        Flux<RdmaMessage> messages = Flux.range(first, count)
            .doOnNext(i -> s.took(bound))
            .map(i -> TckPayload.message(i, sizeOf.applyAsInt(i)))
            .concatWith(Flux.error(error));
        s.subscribe(c, messages);
        return s;
    }

    private void subscribe(RdmaConnection c, Flux<RdmaMessage> messages) {
        c.send(messages).subscribe(null, e -> {
            error.set(e);
            fx.signal();
        }, () -> {
            completed.set(true);
            fx.signal();
        });
    }

    private void took(LongSupplier bound) {
        long n = emitted.incrementAndGet();
        if (bound != null) {
            long b = bound.getAsLong();
            if (n > b) {
                boundViolation.compareAndSet(null, "the sender took message " + n + " from its publisher while the bound was " + b);
            }
        }
    }

    public long emitted() {
        return emitted.get();
    }

    public boolean completed() {
        return completed.get();
    }

    public Throwable error() {
        return error.get();
    }

    public boolean terminated() {
        return completed.get() || error.get() != null;
    }

    /** @throws AssertionError with the send's error as cause unless it completed */
    public void assertCompleted() {
        Throwable e = error.get();
        if (e != null) {
            throw new AssertionError("the send failed: " + e, e);
        }
        if (!completed.get()) {
            throw new AssertionError("the send has not completed (took " + emitted() + " messages)");
        }
    }

    /** @throws AssertionError if the connection ever took more from the publisher than the bound allowed */
    public void assertBoundHeld() {
        String v = boundViolation.get();
        if (v != null) {
            throw new AssertionError(v);
        }
    }

    @Override
    public String toString() {
        return "send{emitted=" + emitted() + ", completed=" + completed.get() + ", error=" + error.get() + "}";
    }
}
