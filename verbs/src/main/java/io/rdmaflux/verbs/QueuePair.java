package io.rdmaflux.verbs;

/**
 * A queue pair ({@code ibv_qp}), RC or UD.
 *
 * <p><b>States:</b> created in RESET; {@link #init()} → INIT (receives may be posted);
 * {@link #readyToReceive(QpEndpoint)} (RC) or {@link #readyToReceive()} (UD) → RTR;
 * {@link #readyToSend()} → RTS (sends may be posted). {@link #connect(QpEndpoint)} does all three.
 * Any failure (transport retries exhausted, RNR retries exhausted, port down, CQ overrun) or
 * {@link #toError()} moves it to ERROR, which completes every outstanding and newly posted work
 * request with {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p><b>Ordering:</b> an RC QP delivers and completes its sends in posting order.
 *
 * <p><b>Errors:</b> posting in a state that does not allow it, or on a closed QP, throws
 * {@link VerbsException}; problems with the request's memory or the peer are error completions
 * (LOC_PROT_ERR, LOC_LEN_ERR, REM_ACCESS_ERR, RNR_RETRY_EXC_ERR, RETRY_EXC_ERR).
 *
 * <p><b>Concurrency:</b> posting is thread-safe, but posting order across threads is whatever the
 * threads make it; one poster per QP is the fast path.
 */
public interface QueuePair extends AutoCloseable {
    /** The QP number, unique within the device (24 bits). */
    int qpNumber();

    QpType type();

    QpState state();

    /** The port this QP sends from. */
    Port port();

    /** The attributes it was created with. */
    QpInitAttributes attributes();

    /** What a peer needs to connect to this QP. */
    QpEndpoint localEndpoint();

    /** RESET → INIT. @throws VerbsException from any other state */
    void init();

    /** RC: INIT → RTR, connected to {@code remote}. @throws VerbsException from another state, or for UD */
    void readyToReceive(QpEndpoint remote);

    /** UD: INIT → RTR. @throws VerbsException from another state, or for RC */
    void readyToReceive();

    /** RTR → RTS. @throws VerbsException from another state */
    void readyToSend();

    /** RC: RESET/INIT → RTS connected to {@code remote}; UD: {@code remote} is ignored. */
    default void connect(QpEndpoint remote) {
        if (state() == QpState.RESET) {
            init();
        }
        if (type() == QpType.RC) {
            readyToReceive(remote);
        } else {
            readyToReceive();
        }
        readyToSend();
    }

    /** Moves the QP to ERROR, flushing outstanding work requests. */
    void toError();

    /**
     * Posts a send work request ({@code ibv_post_send}).
     *
     * @return false when the send queue already holds {@code maxSendWr} outstanding requests (poll
     *     completions and retry)
     * @throws VerbsException when the QP is closed, not yet in RTS, or the request is malformed for
     *     the QP type (e.g. RDMA on UD, a UD send without an address handle); the message names it
     */
    boolean postSend(SendWorkRequest wr);

    /**
     * Posts a receive work request ({@code ibv_post_recv}).
     *
     * @return false when the receive queue already holds {@code maxReceiveWr} receives
     * @throws VerbsException when the QP is closed, in RESET, or uses an SRQ
     */
    boolean postReceive(ReceiveWorkRequest wr);

    /** Destroys the QP ({@code ibv_destroy_qp}); outstanding requests are dropped. Idempotent. */
    @Override
    void close();
}
