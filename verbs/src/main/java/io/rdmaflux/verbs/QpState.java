package io.rdmaflux.verbs;

/**
 * Queue pair states ({@code ibv_qp_state} subset) and the verbs transitions:
 * RESET → INIT → RTR → RTS, any → ERROR, ERROR → RESET.
 *
 * <p>Receives may be posted from INIT on; sends from RTS on. In ERROR every outstanding and newly
 * posted work request completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public enum QpState {
    RESET,
    INIT,
    /** Ready to receive. */
    RTR,
    /** Ready to send. */
    RTS,
    ERROR
}
