package io.rdmaflux.core;

import io.rdmaflux.verbs.WcStatus;
import org.jspecify.annotations.Nullable;

/**
 * The transport under a connection failed: an error work completion (e.g.
 * {@link WcStatus#RETRY_EXC_ERR} when the peer is gone, {@link WcStatus#WR_FLUSH_ERR} after the QP
 * went to ERROR) or a verbs call that failed on the data path. Signalled to both the send
 * {@code Mono} and the receive {@code Flux} of the connection, which is then closed.
 */
public class RdmaTransportException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public RdmaTransportException(String message, @Nullable WcStatus status, @Nullable Throwable cause) {
        super(Category.TRANSPORT, message, status, cause);
    }
}
