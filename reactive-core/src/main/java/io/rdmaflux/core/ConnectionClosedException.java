package io.rdmaflux.core;

/**
 * The connection was closed or aborted (locally or by the peer) while a send or receive was still
 * active, or a send was attempted on a closed connection.
 */
public class ConnectionClosedException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final boolean byPeer;

    public ConnectionClosedException(String message, boolean byPeer) {
        super(Category.CLOSED, message);
        this.byPeer = byPeer;
    }

    /** Whether the peer closed or aborted (rather than this side). */
    public boolean byPeer() {
        return byPeer;
    }
}
