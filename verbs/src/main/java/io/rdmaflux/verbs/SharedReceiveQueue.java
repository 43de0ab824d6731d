package io.rdmaflux.verbs;

/**
 * A shared receive queue ({@code ibv_srq}): one pool of posted receives consumed by every QP
 * created with it, in posting order. Completions go to the receiving QP's receive CQ.
 *
 * <p><b>Concurrency:</b> {@link #postReceive} is thread-safe.
 */
public interface SharedReceiveQueue extends AutoCloseable {
    /** Most receives outstanding at once. */
    int maxWorkRequests();

    /** Receives currently posted and not consumed. */
    int outstanding();

    /**
     * Posts a receive.
     *
     * @return false if the queue already holds {@link #maxWorkRequests()} receives (retry later)
     * @throws VerbsException if the SRQ is closed
     */
    boolean postReceive(ReceiveWorkRequest wr);

    /** Destroys the SRQ; receives still posted are dropped. Idempotent. */
    @Override
    void close();
}
