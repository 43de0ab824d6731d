package io.rdmaflux.core;

import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A test's subscription to a {@link RdmaConnection#send}, keeping how it ended for the test thread to
 * assert. Why not {@code subscribe(null, e -> { throw new AssertionError(e); })}: the error consumer runs
 * where the error is signalled, inside the connection's progress work (the progress thread, or the test
 * thread driving an INVOKER node), and the progress engine catches what it throws and only hands it to its
 * error handler: the test passed. Here the error is recorded, and {@link #completed()} and
 * {@link #assertNoError()} fail the test with it as the cause.
 *
 * <p><b>Concurrency:</b> the outcome is written by whichever thread signals it and read by the test
 * thread.
 */
final class SendOutcome {
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final AtomicBoolean completed = new AtomicBoolean();

    private SendOutcome() {
    }

    /** Subscribes to {@code send} (a connection's {@code send(..)}) now. */
    static SendOutcome of(Mono<Void> send) {
        SendOutcome outcome = new SendOutcome();
        send.subscribe(null, outcome.error::set, () -> outcome.completed.set(true));
        return outcome;
    }

    /**
     * Whether the send completed.
     *
     * @throws AssertionError if it ended with an error (the cause), so a wait on it fails at once
     */
    boolean completed() {
        assertNoError();
        return completed.get();
    }

    /** The error the send ended with, or null (not ended, or completed). */
    Throwable error() {
        return error.get();
    }

    /** @throws AssertionError if the send ended with an error, which is the cause */
    void assertNoError() {
        Throwable e = error.get();
        if (e != null) {
            throw new AssertionError("the send failed: " + e, e);
        }
    }
}
