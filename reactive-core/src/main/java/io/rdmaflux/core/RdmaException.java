package io.rdmaflux.core;

import io.rdmaflux.verbs.WcStatus;
import org.jspecify.annotations.Nullable;

/**
 * The root of the errors rdmaflux signals on the data path ({@code onError}) and throws on the setup
 * path. Every instance has a {@link Category} and, when a verbs work completion caused it, the
 * completion's {@link WcStatus}.
 *
 * <p>Subclasses: {@link RdmaTransportException} (a QP error or an error completion: the peer died,
 * the path broke), {@link ConnectionClosedException} (closed or aborted by either side),
 * {@link MessageTooLargeException}, {@link IllegalReferenceCountException},
 * {@link RdmaProtocolException} (the peer broke the protocol), {@link UnsupportedCapabilityException},
 * {@link io.rdmaflux.core.frame.FrameFormatException} and
 * {@link io.rdmaflux.core.reorder.ReorderWindowOverflowException}.
 */
public class RdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What kind of failure this is. */
    public enum Category {
        /** Bad configuration or argument on the setup path. */
        CONFIGURATION,
        /** The peer sent something the protocol does not allow. */
        PROTOCOL,
        /** The transport failed: an error completion or a QP in ERROR. */
        TRANSPORT,
        /** The connection was closed or aborted. */
        CLOSED,
        /** A message exceeded the negotiated maximum message size. */
        MESSAGE_SIZE,
        /** A reference count was used wrongly (double release, use after release). */
        REFERENCE_COUNT,
        /** A reorder window overflowed. */
        REORDER,
        /**
         * A one-sided operation named remote memory it may not touch: past the end of an exposed region,
         * without the access right, or after the region was revoked ({@code onesided.RemoteAccessException}).
         */
        REMOTE_ACCESS,
        /**
         * A connection could not be established (a lazy connection's first use: nothing listens, the peer
         * refused, the connect timed out); the connection manager's error is the cause.
         */
        CONNECT,
        /**
         * An unexpected exception on the progress thread (a bug in rdmaflux or in a channel kind): the
         * connection it happened in is aborted, so no send or receive waits forever on state it left
         * half updated; the exception is the cause.
         */
        INTERNAL,
        /**
         * An operation needs a capability the provider or channel does not have (e.g. atomics on a
         * provider without them: {@link UnsupportedCapabilityException}); nothing was posted.
         */
        UNSUPPORTED
    }

    private final Category category;
    private final @Nullable WcStatus status;

    public RdmaException(Category category, String message, @Nullable WcStatus status, @Nullable Throwable cause) {
        super(message, cause);
        this.category = category;
        this.status = status;
    }

    public RdmaException(Category category, String message) {
        this(category, message, null, null);
    }

    public Category category() {
        return category;
    }

    /** The verbs completion status behind this error, or {@code null} when no completion caused it. */
    public @Nullable WcStatus status() {
        return status;
    }
}
