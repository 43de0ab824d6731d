package io.rdmaflux.verbs;

/**
 * A completion queue ({@code ibv_cq}). Several QPs may share one. Completions of one QP's send
 * queue arrive in posting order, as do those of its receive queue.
 *
 * <p><b>Overflow:</b> a completion that does not fit moves every QP using this CQ to ERROR (as a
 * CQ overrun does on hardware); size the CQ for the outstanding signaled work requests.
 *
 * <p><b>Concurrency:</b> {@link #poll} is called by one thread at a time; providers may add
 * completions from their own threads concurrently.
 */
public interface CompletionQueue extends AutoCloseable {
    /** Capacity in completions. */
    int capacity();

    /**
     * Hands up to {@code max} completions to {@code sink}, in order ({@code ibv_poll_cq}).
     *
     * @return how many were handed over (0 when empty)
     * @throws VerbsException if the CQ is closed
     */
    int poll(int max, CompletionSink sink);

    /**
     * Asks the provider to call {@code hint} after each completion it adds to this CQ, on the thread that
     * adds it (so it must be cheap and must not block: a flag store). Unlike {@code ibv_req_notify_cq} it
     * stays armed. Replaces an earlier hint.
     *
     * @return whether the provider calls it; false (the default) if completions appear only to a poll (a
     *         hardware CQ without a completion channel), and the consumer must keep polling
     */
    default boolean arrivalHint(Runnable hint) {
        return false;
    }

    /** Closes the CQ; idempotent. */
    @Override
    void close();
}
